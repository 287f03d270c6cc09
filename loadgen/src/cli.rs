//! Command line: wrk2's flags (getopt-style, so `-t2 -c64 -d12s -R2000` and
//! options after the URL work as in wrk2) plus perflab's extensions.

use crate::units::{parse_duration_us, parse_metric};
use std::path::PathBuf;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How the request rate changes during the measured window.
#[derive(Clone, Debug, PartialEq)]
pub enum RateShape {
    /// One rate for the whole run (`-R`).
    Constant(f64),
    /// `--rate-steps A:B:S`: rates A, A+S, … up to B, each held for `step_us`.
    Steps { rates: Vec<f64>, step_us: u64 },
    /// `--ramp A:B`: linear growth from A to B over the duration.
    Ramp { from: f64, to: f64 },
}

#[derive(Clone, Debug)]
pub struct Config {
    pub threads: usize,
    pub connections: usize,
    /// Length of the measured window (after warm-up), microseconds.
    pub duration_us: u64,
    pub shape: RateShape,
    pub script: Option<PathBuf>,
    pub headers: Vec<String>,
    pub latency: bool,
    pub u_latency: bool,
    /// wrk2's `-B`: with pipelined requests, record only the last response of a batch.
    pub batch_latency: bool,
    pub timeout_us: u64,
    pub url: String,
    /// Arguments for the script's `init(args)`: `args[0]` is the URL like in wrk.
    pub script_args: Vec<String>,
    pub warmup_us: u64,
    pub json: Option<PathBuf>,
    pub hdr_log: Option<PathBuf>,
    pub hdr_interval_us: u64,
    /// How late a request may go out so that one wake-up sends several (0: on time).
    pub send_slack_us: u64,
}

impl Config {
    /// The rate at the start of the run (also used during warm-up).
    pub fn initial_rate(&self) -> f64 {
        match &self.shape {
            RateShape::Constant(r) => *r,
            RateShape::Steps { rates, .. } => rates[0],
            RateShape::Ramp { from, .. } => *from,
        }
    }
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    Run(Box<Config>),
    Help,
    Version,
}

pub fn usage() -> String {
    format!(
        "perflab-load {VERSION}: a wrk2-compatible open-loop HTTP load generator

Sends requests on a fixed schedule and measures each latency from the time the
request was due (no coordinated omission), runs wrk Lua scripts unchanged and
prints wrk2's report.

Usage: perflab-load -R <rate> [options] <url> [-- script args...]

wrk2 options:
  -c, --connections <N>    connections to keep open, all threads together   [10]
  -d, --duration <T>       length of the measured window                     [10s]
  -t, --threads <N>        worker threads                                    [2]
  -R, --rate <N>           requests per second, all connections together
                           (required; with --rate-steps/--ramp: the first rate)
  -s, --script <FILE>      wrk Lua script (setup/init/delay/request/response/done)
  -H, --header <H>         add a header, \"Name: value\" (repeatable)
  -L, --latency            print the latency distribution and percentile spectrum
  -U, --u_latency          also print uncorrected latency (from the actual send)
  -B, --batch_latency      pipelined scripts: record only the last response
      --timeout <T>        a response this late counts as a timeout; also how
                           long the end of the run waits for late answers    [2s]
  -v, --version            print the version
  -h, --help               print this help

perflab extensions:
      --warmup <T>         send load at the first rate this long before the
                           window, without recording it                      [0]
      --json <FILE>        write a JSON summary (rates, counts, errors, status
                           codes, percentiles in us, per-step results)
      --hdr-log <FILE>     write HdrHistogram interval logs (v1.3; corrected,
                           and Tag=uncorrected with -U)
      --hdr-interval <T>   interval length of --hdr-log (at least 10ms)      [1s]
      --rate-steps <A:B:S> rates A, A+S, ... B in one run, one step each
      --step-duration <T>  length of each step                [-d / steps, or 10s]
      --ramp <A:B>         rate grows linearly from A to B over -d
      --send-slack <T>     let a request go up to T late so one wake-up sends
                           several: less generator CPU at mid rates, like
                           wrk2's 1 ms timer; the lateness is in the corrected
                           latency (at most 10ms)                             [0]

Numbers take SI suffixes (10k, 1.5M); times take units (500ms, 10s, 2m, 1h; a
bare number is seconds). Arguments after the URL, or after \"--\", go to the
script's init(args); args[0] is the URL, as in wrk. Only http:// URLs.
Exit status: 0 after a run (also after SIGINT/SIGTERM, which print the results so
far), 1 on bad input (before any request is sent) or a Lua error during the run.
"
    )
}

fn err(flag: &str, msg: impl std::fmt::Display) -> String {
    format!("{flag}: {msg}")
}

fn parse_count(flag: &str, v: &str) -> Result<usize, String> {
    let n = parse_metric(v).map_err(|e| err(flag, e))?;
    if n < 1.0 || n.fract() != 0.0 || n > 1e6 {
        return Err(err(flag, format!("must be a whole number between 1 and 1M, got '{v}'")));
    }
    Ok(n as usize)
}

fn parse_rate(flag: &str, v: &str) -> Result<f64, String> {
    let r = parse_metric(v).map_err(|e| err(flag, e))?;
    if r <= 0.0 {
        return Err(err(flag, format!("the rate must be greater than 0, got '{v}'")));
    }
    if r > 1e8 {
        return Err(err(flag, format!("the rate {v} is beyond what one machine can send")));
    }
    Ok(r)
}

fn parse_time(flag: &str, v: &str, allow_zero: bool) -> Result<u64, String> {
    let us = parse_duration_us(v).map_err(|e| err(flag, e))?;
    if us == 0 && !allow_zero {
        return Err(err(flag, format!("must be longer than 0, got '{v}'")));
    }
    Ok(us)
}

fn parse_rate_list<const N: usize>(flag: &str, v: &str, form: &str) -> Result<[f64; N], String> {
    let parts: Vec<&str> = v.split(':').collect();
    if parts.len() != N {
        return Err(err(flag, format!("expected {form}, got '{v}'")));
    }
    let mut out = [0.0; N];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = parse_rate(flag, p)?;
    }
    Ok(out)
}

/// Flags that take a value, with their long and short names.
const VALUE_FLAGS: &[(&str, Option<char>)] = &[
    ("connections", Some('c')),
    ("duration", Some('d')),
    ("threads", Some('t')),
    ("rate", Some('R')),
    ("script", Some('s')),
    ("header", Some('H')),
    ("timeout", Some('T')),
    ("warmup", None),
    ("json", None),
    ("hdr-log", None),
    ("hdr-interval", None),
    ("rate-steps", None),
    ("step-duration", None),
    ("ramp", None),
    ("send-slack", None),
];
const SWITCHES: &[(&str, Option<char>)] = &[
    ("latency", Some('L')),
    ("u_latency", Some('U')),
    ("batch_latency", Some('B')),
    ("version", Some('v')),
    ("help", Some('h')),
];

#[derive(Default)]
struct Raw {
    values: Vec<(String, String)>,
    switches: Vec<String>,
    positional: Vec<String>,
}

fn tokenize(args: &[String]) -> Result<Raw, String> {
    let mut raw = Raw::default();
    let mut i = 0;
    let mut only_positional = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if only_positional || a == "-" || !a.starts_with('-') {
            raw.positional.push(a.clone());
            continue;
        }
        if a == "--" {
            only_positional = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            // wrk spells it u_latency; accept the dashed form too.
            let name = if name == "u-latency" {
                "u_latency"
            } else if name == "batch-latency" {
                "batch_latency"
            } else {
                name
            };
            if VALUE_FLAGS.iter().any(|(l, _)| *l == name) {
                let v = match inline {
                    Some(v) => v,
                    None => {
                        let v = args.get(i).ok_or_else(|| format!("--{name}: missing value"))?;
                        i += 1;
                        v.clone()
                    }
                };
                raw.values.push((name.to_string(), v));
            } else if SWITCHES.iter().any(|(l, _)| *l == name) {
                if inline.is_some() {
                    return Err(format!("--{name}: takes no value"));
                }
                raw.switches.push(name.to_string());
            } else {
                return Err(format!("unknown flag '--{name}'"));
            }
            continue;
        }
        // Short options, possibly clustered (-LU) or with an attached value (-t2).
        let chars: Vec<char> = a[1..].chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            j += 1;
            if let Some((long, _)) = VALUE_FLAGS.iter().find(|(_, s)| *s == Some(c)) {
                let rest: String = chars[j..].iter().collect();
                let v = if !rest.is_empty() {
                    rest
                } else {
                    let v = args.get(i).ok_or_else(|| format!("-{c} (--{long}): missing value"))?;
                    i += 1;
                    v.clone()
                };
                raw.values.push((long.to_string(), v));
                break;
            } else if let Some((long, _)) = SWITCHES.iter().find(|(_, s)| *s == Some(c)) {
                raw.switches.push(long.to_string());
            } else {
                return Err(format!("unknown flag '-{c}'"));
            }
        }
    }
    Ok(raw)
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let raw = tokenize(args)?;
    if raw.switches.iter().any(|s| s == "help") {
        return Ok(Command::Help);
    }
    if raw.switches.iter().any(|s| s == "version") {
        return Ok(Command::Version);
    }

    let mut threads = 2usize;
    let mut connections = 10usize;
    let mut duration_us: Option<u64> = None;
    let mut rate: Option<f64> = None;
    let mut script = None;
    let mut headers = Vec::new();
    let mut timeout_us = 2_000_000u64;
    let mut warmup_us = 0u64;
    let mut json = None;
    let mut hdr_log = None;
    let mut hdr_interval_us = 1_000_000u64;
    let mut steps: Option<[f64; 3]> = None;
    let mut step_us: Option<u64> = None;
    let mut ramp: Option<[f64; 2]> = None;
    let mut send_slack_us = 0u64;

    for (name, v) in &raw.values {
        let flag = match VALUE_FLAGS.iter().find(|(l, _)| l == name) {
            Some((l, Some(s))) => format!("-{s}/--{l}"),
            _ => format!("--{name}"),
        };
        let flag = flag.as_str();
        match name.as_str() {
            "connections" => connections = parse_count(flag, v)?,
            "threads" => threads = parse_count(flag, v)?,
            "duration" => duration_us = Some(parse_time(flag, v, false)?),
            "rate" => rate = Some(parse_rate(flag, v)?),
            "script" => script = Some(PathBuf::from(v)),
            "header" => {
                if !v.contains(':') {
                    return Err(err(flag, format!("expected \"Name: value\", got '{v}'")));
                }
                headers.push(v.clone())
            }
            "timeout" => timeout_us = parse_time(flag, v, false)?,
            "warmup" => warmup_us = parse_time(flag, v, true)?,
            "json" => json = Some(PathBuf::from(v)),
            "hdr-log" => hdr_log = Some(PathBuf::from(v)),
            "hdr-interval" => {
                hdr_interval_us = parse_time(flag, v, false)?;
                if hdr_interval_us < 10_000 {
                    return Err(err(flag, format!("must be at least 10ms, got '{v}'")));
                }
            }
            "rate-steps" => steps = Some(parse_rate_list::<3>(flag, v, "A:B:S (first rate, last rate, step)")?),
            "step-duration" => step_us = Some(parse_time(flag, v, false)?),
            "ramp" => ramp = Some(parse_rate_list::<2>(flag, v, "A:B (start rate, end rate)")?),
            "send-slack" => {
                send_slack_us = parse_time(flag, v, true)?;
                if send_slack_us > 10_000 {
                    return Err(err(flag, format!("must be at most 10ms (it delays requests), got '{v}'")));
                }
            }
            _ => unreachable!("flag table and match disagree: {name}"),
        }
    }

    let mut positional = raw.positional.into_iter();
    let url = positional.next().ok_or("missing URL (e.g. http://127.0.0.1:8080/)")?;
    let mut script_args = vec![url.clone()];
    script_args.extend(positional);

    if connections < threads {
        return Err(format!(
            "-c/--connections ({connections}) must be at least -t/--threads ({threads}): each thread needs a connection"
        ));
    }
    if steps.is_some() && ramp.is_some() {
        return Err("--rate-steps and --ramp cannot be combined".into());
    }
    if step_us.is_some() && steps.is_none() {
        return Err("--step-duration: only meaningful with --rate-steps".into());
    }

    let shape = if let Some([a, b, s]) = steps {
        let mut rates = Vec::new();
        let up = b >= a;
        let mut k = 0u64;
        loop {
            let r = if up { a + s * k as f64 } else { a - s * k as f64 };
            if (up && r > b * (1.0 + 1e-12)) || (!up && r < b * (1.0 - 1e-12)) || r <= 0.0 {
                break;
            }
            rates.push(r);
            k += 1;
            if rates.len() > 100_000 {
                return Err("--rate-steps: more than 100000 steps".into());
            }
        }
        let step_us = match (step_us, duration_us) {
            (Some(s), Some(d)) if s * rates.len() as u64 != d => {
                return Err(format!(
                    "-d/--duration ({}) does not match {} steps x --step-duration ({}); give one of them",
                    crate::units::format_time_us(d as f64),
                    rates.len(),
                    crate::units::format_time_us(s as f64)
                ));
            }
            (Some(s), _) => s,
            (None, Some(d)) => d / rates.len() as u64,
            (None, None) => 10_000_000 / rates.len() as u64,
        };
        if step_us == 0 {
            return Err("--step-duration: too short for this many steps".into());
        }
        if let Some(r) = rate
            && (r - rates[0]).abs() > 1e-9 * r
        {
            return Err(format!("-R/--rate ({r}) differs from the first step of --rate-steps ({})", rates[0]));
        }
        duration_us = Some(step_us * rates.len() as u64);
        RateShape::Steps { rates, step_us }
    } else if let Some([a, b]) = ramp {
        if let Some(r) = rate
            && (r - a).abs() > 1e-9 * r
        {
            return Err(format!("-R/--rate ({r}) differs from the start of --ramp ({a})"));
        }
        RateShape::Ramp { from: a, to: b }
    } else {
        match rate {
            Some(r) => RateShape::Constant(r),
            None => return Err("-R/--rate is required: the number of requests per second, e.g. -R 2000".into()),
        }
    };

    Ok(Command::Run(Box::new(Config {
        threads,
        connections,
        duration_us: duration_us.unwrap_or(10_000_000),
        shape,
        script,
        headers,
        latency: raw.switches.iter().any(|s| s == "latency" || s == "u_latency"),
        u_latency: raw.switches.iter().any(|s| s == "u_latency"),
        batch_latency: raw.switches.iter().any(|s| s == "batch_latency"),
        timeout_us,
        url,
        script_args,
        warmup_us,
        json,
        hdr_log,
        hdr_interval_us,
        send_slack_us,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Config, String> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&v)? {
            Command::Run(c) => Ok(*c),
            other => Err(format!("not a run: {other:?}")),
        }
    }

    #[test]
    fn wrk2_style_flags() {
        let c = run(&["-t2", "-c64", "-d12s", "-R10000", "-s", "get.lua", "-L", "http://127.0.0.1:8081"]).unwrap();
        assert_eq!((c.threads, c.connections, c.duration_us), (2, 64, 12_000_000));
        assert_eq!(c.shape, RateShape::Constant(10_000.0));
        assert!(c.latency && !c.u_latency);
        assert_eq!(c.script_args, vec!["http://127.0.0.1:8081"]);
    }

    #[test]
    fn options_after_url_and_script_args() {
        let c = run(&["http://h/", "-R", "1k", "-U", "--", "a", "-b"]).unwrap();
        assert!(c.latency && c.u_latency);
        assert_eq!(c.shape, RateShape::Constant(1000.0));
        assert_eq!(c.script_args, vec!["http://h/", "a", "-b"]);
    }

    #[test]
    fn bad_inputs_name_the_flag() {
        assert!(run(&["-x", "http://h/"]).unwrap_err().contains("-x"));
        assert!(run(&["--frobnicate", "http://h/"]).unwrap_err().contains("--frobnicate"));
        assert!(run(&["-R", "0", "http://h/"]).unwrap_err().contains("-R/--rate"));
        assert!(run(&["-R", "-5", "http://h/"]).unwrap_err().contains("-R/--rate"));
        assert!(run(&["-R", "10", "-d", "soon", "http://h/"]).unwrap_err().contains("-d/--duration"));
        assert!(run(&["-R", "10", "-t", "4", "-c", "2", "http://h/"]).unwrap_err().contains("-c/--connections"));
        assert!(run(&["-R", "10"]).unwrap_err().contains("missing URL"));
        assert!(run(&["http://h/"]).unwrap_err().contains("-R/--rate is required"));
        assert!(run(&["-R", "10", "-t"]).unwrap_err().contains("missing value"));
    }

    #[test]
    fn rate_steps_and_ramp() {
        let c = run(&["--rate-steps", "1000:3000:1000", "--step-duration", "5s", "http://h/"]).unwrap();
        assert_eq!(c.shape, RateShape::Steps { rates: vec![1000.0, 2000.0, 3000.0], step_us: 5_000_000 });
        assert_eq!(c.duration_us, 15_000_000);
        assert_eq!(c.initial_rate(), 1000.0);
        let c = run(&["--rate-steps", "1k:2k:500", "-d", "30s", "http://h/"]).unwrap();
        assert_eq!(c.shape, RateShape::Steps { rates: vec![1000.0, 1500.0, 2000.0], step_us: 10_000_000 });
        assert!(run(&["--rate-steps", "1k:2k", "http://h/"]).is_err());
        let c = run(&["--ramp", "100:200", "-d", "4s", "http://h/"]).unwrap();
        assert_eq!(c.shape, RateShape::Ramp { from: 100.0, to: 200.0 });
        assert!(run(&["--ramp", "100:200", "-R", "300", "http://h/"]).is_err());
    }
}
