//! Command line: wrk2's flags (getopt-style, so `-t2 -c64 -d12s -R2000` and
//! options after the URL work as in wrk2) plus perflab's extensions, all from one
//! table (`FLAGS`), and the checks that relate flags to each other.

use crate::batching::Slack;
use crate::flags;
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
    /// `--ramp A:B`: growth from A to B over the duration.
    Ramp { from: f64, to: f64, curve: Curve },
}

/// `--ramp-curve`: how a ramp goes from A to B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Curve {
    /// A constant increase per second.
    #[default]
    Linear,
    /// A constant factor per second: rate(t) = A·(B/A)^(t/d).
    Exp,
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
    /// How late a request may go out so that one wake-up sends several.
    pub slack: Slack,
    /// `--stop-on-p99`: end the window once `stop_intervals` intervals in a row have a
    /// corrected p99 above this (µs).
    pub stop_on_p99_us: Option<u64>,
    pub stop_intervals: u32,
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
    /// `--options-json`: print the flag table.
    OptionsJson,
}

/// Everything the flags set, before the checks that relate flags to each other.
/// Fields with a default start from it (see `FLAGS`).
#[derive(Default)]
struct Opts {
    /// Long names of the flags the user gave.
    given: Vec<&'static str>,
    threads: usize,
    connections: usize,
    duration_us: u64,
    rate: Option<f64>,
    script: Option<PathBuf>,
    headers: Vec<String>,
    latency: bool,
    u_latency: bool,
    batch_latency: bool,
    timeout_us: u64,
    help: bool,
    version: bool,
    options_json: bool,
    warmup_us: u64,
    json: Option<PathBuf>,
    hdr_log: Option<PathBuf>,
    hdr_interval_us: u64,
    steps: Option<[f64; 3]>,
    step_us: Option<u64>,
    ramp: Option<[f64; 2]>,
    ramp_curve: Curve,
    slack: Option<Slack>,
    stop_on_p99_us: Option<u64>,
    stop_intervals: u32,
}

impl Opts {
    fn given(&self, long: &str) -> bool {
        self.given.contains(&long)
    }
}

use flags::{Default as D, Group::*, Kind::*, Spec};

/// Every flag, once: names, help, default and parser. The help text, the
/// `--options-json` output and the docs table (docs/architecture.md §5) come from here.
const FLAGS: &[Spec<Opts>] = &[
    Spec {
        long: "connections",
        short: Some('c'),
        value: Some("N"),
        kind: Count,
        group: Wrk2,
        default: D::Value("10"),
        choices: &[],
        help: "connections kept open, all threads together",
        apply: |o, f, v| {
            o.connections = parse_count(f, v)?;
            Ok(())
        },
    },
    Spec {
        long: "duration",
        short: Some('d'),
        value: Some("DUR"),
        kind: Duration,
        group: Wrk2,
        default: D::Value("10s"),
        choices: &[],
        help: "length of the measured window",
        apply: |o, f, v| {
            o.duration_us = parse_time(f, v, false)?;
            Ok(())
        },
    },
    Spec {
        long: "threads",
        short: Some('t'),
        value: Some("N"),
        kind: Count,
        group: Wrk2,
        default: D::Value("2"),
        choices: &[],
        help: "worker threads",
        apply: |o, f, v| {
            o.threads = parse_count(f, v)?;
            Ok(())
        },
    },
    Spec {
        long: "rate",
        short: Some('R'),
        value: Some("N"),
        kind: Rate,
        group: Wrk2,
        default: D::None,
        choices: &[],
        help: "requests per second, all connections together (required; with --rate-steps/--ramp: the first rate)",
        apply: |o, f, v| {
            o.rate = Some(parse_rate(f, v)?);
            Ok(())
        },
    },
    Spec {
        long: "script",
        short: Some('s'),
        value: Some("FILE"),
        kind: Path,
        group: Wrk2,
        default: D::None,
        choices: &[],
        help: "wrk Lua script (setup/init/delay/request/response/done)",
        apply: |o, _, v| {
            o.script = Some(PathBuf::from(v));
            Ok(())
        },
    },
    Spec {
        long: "header",
        short: Some('H'),
        value: Some("H"),
        kind: Text,
        group: Wrk2,
        default: D::None,
        choices: &[],
        help: "add a header, \"Name: value\" (repeatable)",
        apply: |o, f, v| {
            if !v.contains(':') {
                return Err(err(f, format!("expected \"Name: value\", got '{v}'")));
            }
            o.headers.push(v.to_string());
            Ok(())
        },
    },
    Spec {
        long: "latency",
        short: Some('L'),
        value: None,
        kind: Switch,
        group: Wrk2,
        default: D::None,
        choices: &[],
        help: "print the latency distribution and percentile spectrum",
        apply: |o, _, _| {
            o.latency = true;
            Ok(())
        },
    },
    Spec {
        long: "u_latency",
        short: Some('U'),
        value: None,
        kind: Switch,
        group: Wrk2,
        default: D::None,
        choices: &[],
        help: "also print uncorrected latency (from the actual send); implies -L",
        apply: |o, _, _| {
            o.u_latency = true;
            o.latency = true;
            Ok(())
        },
    },
    Spec {
        long: "batch_latency",
        short: Some('B'),
        value: None,
        kind: Switch,
        group: Wrk2,
        default: D::None,
        choices: &[],
        help: "pipelined scripts: record only the last response of a batch",
        apply: |o, _, _| {
            o.batch_latency = true;
            Ok(())
        },
    },
    Spec {
        long: "timeout",
        short: Some('T'),
        value: Some("DUR"),
        kind: Duration,
        group: Wrk2,
        default: D::Value("2s"),
        choices: &[],
        help: "a response this late counts as a timeout; also how long the end of the run waits for late answers",
        apply: |o, f, v| {
            o.timeout_us = parse_time(f, v, false)?;
            Ok(())
        },
    },
    Spec {
        long: "version",
        short: Some('v'),
        value: None,
        kind: Switch,
        group: Wrk2,
        default: D::None,
        choices: &[],
        help: "print the version",
        apply: |o, _, _| {
            o.version = true;
            Ok(())
        },
    },
    Spec {
        long: "help",
        short: Some('h'),
        value: None,
        kind: Switch,
        group: Wrk2,
        default: D::None,
        choices: &[],
        help: "print this help",
        apply: |o, _, _| {
            o.help = true;
            Ok(())
        },
    },
    Spec {
        long: "warmup",
        short: None,
        value: Some("DUR"),
        kind: Duration,
        group: Perflab,
        default: D::Value("0"),
        choices: &[],
        help: "send load at the first rate this long before the window, without recording it",
        apply: |o, f, v| {
            o.warmup_us = parse_time(f, v, true)?;
            Ok(())
        },
    },
    Spec {
        long: "json",
        short: None,
        value: Some("FILE"),
        kind: Path,
        group: Perflab,
        default: D::None,
        choices: &[],
        help: "write the JSON summary: counts, rates, latencies in us, schedule lag, own CPU, steps, intervals",
        apply: |o, _, v| {
            o.json = Some(PathBuf::from(v));
            Ok(())
        },
    },
    Spec {
        long: "hdr-log",
        short: None,
        value: Some("FILE"),
        kind: Path,
        group: Perflab,
        default: D::None,
        choices: &[],
        help: "write interval histograms, HdrHistogram log format v1.3 (corrected; Tag=uncorrected with -U)",
        apply: |o, _, v| {
            o.hdr_log = Some(PathBuf::from(v));
            Ok(())
        },
    },
    Spec {
        long: "hdr-interval",
        short: None,
        value: Some("DUR"),
        kind: Duration,
        group: Perflab,
        default: D::Value("1s"),
        choices: &[],
        help: "interval length of --hdr-log (at least 10ms)",
        apply: |o, f, v| {
            o.hdr_interval_us = parse_time(f, v, false)?;
            if o.hdr_interval_us < 10_000 {
                return Err(err(f, format!("must be at least 10ms, got '{v}'")));
            }
            Ok(())
        },
    },
    Spec {
        long: "rate-steps",
        short: None,
        value: Some("A:B:S"),
        kind: Rates,
        group: Perflab,
        default: D::None,
        choices: &[],
        help: "rates A, A+S, ... B (requests/s) within one run, each step --step-duration long",
        apply: |o, f, v| {
            o.steps = Some(parse_rate_list::<3>(f, v, "A:B:S (first rate, last rate, step)")?);
            Ok(())
        },
    },
    Spec {
        long: "step-duration",
        short: None,
        value: Some("DUR"),
        kind: Duration,
        group: Perflab,
        default: D::Text("-d / steps"),
        choices: &[],
        help: "length of each rate step",
        apply: |o, f, v| {
            o.step_us = Some(parse_time(f, v, false)?);
            Ok(())
        },
    },
    Spec {
        long: "ramp",
        short: None,
        value: Some("A:B"),
        kind: Rates,
        group: Perflab,
        default: D::None,
        choices: &[],
        help: "rate grows from A to B over -d (see --ramp-curve)",
        apply: |o, f, v| {
            o.ramp = Some(parse_rate_list::<2>(f, v, "A:B (start rate, end rate)")?);
            Ok(())
        },
    },
    Spec {
        long: "ramp-curve",
        short: None,
        value: Some("CURVE"),
        kind: Choice,
        group: Perflab,
        default: D::Value("linear"),
        choices: &["linear", "exp"],
        help: "shape of --ramp: linear, or exp (the rate grows by a constant factor per second)",
        apply: |o, f, v| {
            o.ramp_curve = match v {
                "linear" => Curve::Linear,
                "exp" => Curve::Exp,
                _ => return Err(err(f, format!("expected linear or exp, got '{v}'"))),
            };
            Ok(())
        },
    },
    Spec {
        long: "stop-on-p99",
        short: None,
        value: Some("DUR"),
        kind: Duration,
        group: Perflab,
        default: D::None,
        choices: &[],
        help: "end the measured window early (then drain as usual) once --stop-intervals consecutive \
               hdr-log intervals have a corrected p99 above DUR",
        apply: |o, f, v| {
            o.stop_on_p99_us = Some(parse_time(f, v, false)?);
            Ok(())
        },
    },
    Spec {
        long: "stop-intervals",
        short: None,
        value: Some("N"),
        kind: Count,
        group: Perflab,
        default: D::Value("2"),
        choices: &[],
        help: "consecutive intervals above --stop-on-p99 that end the window",
        apply: |o, f, v| {
            o.stop_intervals = parse_count(f, v)? as u32;
            Ok(())
        },
    },
    Spec {
        long: "send-slack",
        short: None,
        value: Some("DUR/auto"),
        kind: Duration,
        group: Perflab,
        default: D::Value("auto"),
        choices: &[],
        help: "a request may go out this late (at most 10ms) so that one wake-up sends several; \
               auto: 1/8 of a connection's interval between requests up to 100us; the lateness \
               stays in the corrected latency",
        apply: |o, f, v| {
            if v == "auto" {
                o.slack = Some(Slack::Auto);
                return Ok(());
            }
            let us = parse_time(f, v, true).map_err(|e| format!("{e} (or auto)"))?;
            if us > 10_000 {
                return Err(err(f, format!("must be at most 10ms (it delays requests), got '{v}'")));
            }
            o.slack = Some(Slack::Fixed(us * 1000));
            Ok(())
        },
    },
    Spec {
        long: "options-json",
        short: None,
        value: None,
        kind: Switch,
        group: Perflab,
        default: D::None,
        choices: &[],
        help: "print this list of flags as JSON and exit",
        apply: |o, _, _| {
            o.options_json = true;
            Ok(())
        },
    },
];

pub fn usage() -> String {
    format!(
        "perflab-load {VERSION}: a wrk2-compatible open-loop HTTP load generator

Sends requests on a fixed schedule and measures each latency from the time the
request was due (no coordinated omission), runs wrk Lua scripts unchanged and
prints wrk2's report.

Usage: perflab-load -R <rate> [options] <url> [-- script args...]

wrk2 options:
{}
perflab extensions:
{}
Numbers take SI suffixes (10k, 1.5M); times take units (500ms, 10s, 2m, 1h; a
bare number is seconds). Arguments after the URL, or after \"--\", go to the
script's init(args); args[0] is the URL, as in wrk. Only http:// URLs.
Exit status: 0 after a run (also after SIGINT/SIGTERM, which print the results
so far), 1 on bad input (before any request is sent) or a Lua error in the run.
",
        flags::usage_block(FLAGS, flags::Group::Wrk2),
        flags::usage_block(FLAGS, flags::Group::Perflab)
    )
}

/// `--options-json`: the flag table as JSON.
pub fn options_json() -> String {
    let mut text = serde_json::to_string_pretty(&flags::options_json("perflab-load", FLAGS)).expect("serializable");
    text.push('\n');
    text
}

/// The rows of docs/architecture.md §5's flag table, as the table says they must read.
#[cfg(test)]
pub fn extension_rows() -> Vec<String> {
    FLAGS.iter().filter(|s| s.group == flags::Group::Perflab).map(flags::markdown_row).collect()
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

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let tokens = flags::tokenize(FLAGS, args)?;
    let mut o = Opts::default();
    for s in FLAGS {
        if let D::Value(v) = s.default {
            (s.apply)(&mut o, &s.display(), v).expect("a flag's default parses");
        }
    }
    for (spec, v) in &tokens.flags {
        (spec.apply)(&mut o, &spec.display(), v)?;
        o.given.push(spec.long);
    }
    if o.help {
        return Ok(Command::Help);
    }
    if o.version {
        return Ok(Command::Version);
    }
    if o.options_json {
        return Ok(Command::OptionsJson);
    }

    let mut positional = tokens.positional.into_iter();
    let url = positional.next().ok_or("missing URL (e.g. http://127.0.0.1:8080/)")?;
    let mut script_args = vec![url.clone()];
    script_args.extend(positional);

    let (threads, connections) = (o.threads, o.connections);
    if connections < threads {
        return Err(format!(
            "-c/--connections ({connections}) must be at least -t/--threads ({threads}): each thread needs a connection"
        ));
    }
    if o.steps.is_some() && o.ramp.is_some() {
        return Err("--rate-steps and --ramp cannot be combined".into());
    }
    if o.step_us.is_some() && o.steps.is_none() {
        return Err("--step-duration: only meaningful with --rate-steps".into());
    }
    if o.given("ramp-curve") && o.ramp.is_none() {
        return Err("--ramp-curve: only meaningful with --ramp".into());
    }
    if o.given("stop-intervals") && o.stop_on_p99_us.is_none() {
        return Err("--stop-intervals: only meaningful with --stop-on-p99".into());
    }

    let mut duration_us = o.duration_us;
    let shape = if let Some([a, b, s]) = o.steps {
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
        let step_us = match o.step_us {
            Some(s) if o.given("duration") && s * rates.len() as u64 != duration_us => {
                return Err(format!(
                    "-d/--duration ({}) does not match {} steps x --step-duration ({}); give one of them",
                    crate::units::format_time_us(duration_us as f64),
                    rates.len(),
                    crate::units::format_time_us(s as f64)
                ));
            }
            Some(s) => s,
            None => duration_us / rates.len() as u64,
        };
        if step_us == 0 {
            return Err("--step-duration: too short for this many steps".into());
        }
        if let Some(r) = o.rate
            && (r - rates[0]).abs() > 1e-9 * r
        {
            return Err(format!("-R/--rate ({r}) differs from the first step of --rate-steps ({})", rates[0]));
        }
        duration_us = step_us * rates.len() as u64;
        RateShape::Steps { rates, step_us }
    } else if let Some([a, b]) = o.ramp {
        if let Some(r) = o.rate
            && (r - a).abs() > 1e-9 * r
        {
            return Err(format!("-R/--rate ({r}) differs from the start of --ramp ({a})"));
        }
        RateShape::Ramp { from: a, to: b, curve: o.ramp_curve }
    } else {
        match o.rate {
            Some(r) => RateShape::Constant(r),
            None => return Err("-R/--rate is required: the number of requests per second, e.g. -R 2000".into()),
        }
    };

    Ok(Command::Run(Box::new(Config {
        threads,
        connections,
        duration_us,
        shape,
        script: o.script,
        headers: o.headers,
        latency: o.latency,
        u_latency: o.u_latency,
        batch_latency: o.batch_latency,
        timeout_us: o.timeout_us,
        url,
        script_args,
        warmup_us: o.warmup_us,
        json: o.json,
        hdr_log: o.hdr_log,
        hdr_interval_us: o.hdr_interval_us,
        slack: o.slack.unwrap_or(Slack::Auto),
        stop_on_p99_us: o.stop_on_p99_us,
        stop_intervals: o.stop_intervals,
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
        assert_eq!(c.shape, RateShape::Ramp { from: 100.0, to: 200.0, curve: Curve::Linear });
        let c = run(&["--ramp", "1k:1M", "--ramp-curve", "exp", "http://h/"]).unwrap();
        assert_eq!(c.shape, RateShape::Ramp { from: 1000.0, to: 1e6, curve: Curve::Exp });
        assert!(run(&["-R1", "--ramp-curve", "exp", "http://h/"]).unwrap_err().contains("only meaningful with --ramp"));
        assert!(
            run(&["--ramp", "1:2", "--ramp-curve", "log", "http://h/"]).unwrap_err().contains("--ramp-curve: expected")
        );
        assert!(run(&["--ramp", "100:200", "-R", "300", "http://h/"]).is_err());
    }

    #[test]
    fn defaults_come_from_the_table() {
        let c = run(&["-R1", "http://h/"]).unwrap();
        assert_eq!((c.threads, c.connections, c.duration_us, c.timeout_us), (2, 10, 10_000_000, 2_000_000));
        assert_eq!((c.warmup_us, c.hdr_interval_us), (0, 1_000_000));
        let help = usage();
        assert!(help.contains("[10]") && help.contains("[10s]") && help.contains("[2s]"), "{help}");
        assert!(help.lines().all(|l| l.chars().count() <= 79), "{help}");
        let v: serde_json::Value = serde_json::from_str(&options_json()).unwrap();
        assert_eq!(v["program"], "perflab-load");
        let rate = v["options"].as_array().unwrap().iter().find(|o| o["long"] == "rate").unwrap();
        assert_eq!((rate["short"].as_str(), rate["value"].as_str()), (Some("R"), Some("N")));
        assert!(rate["default"].is_null());
        // Every flag is reachable by its long name (and short name) in the parser.
        for o in v["options"].as_array().unwrap() {
            assert!(flags::find_long(FLAGS, o["long"].as_str().unwrap()).is_some());
        }
    }

    #[test]
    fn switches_and_dashed_aliases() {
        let c = run(&["-R1", "--u-latency", "--batch-latency", "http://h/"]).unwrap();
        assert!(c.u_latency && c.latency && c.batch_latency);
        assert!(matches!(parse(&["--options-json".to_string()]), Ok(Command::OptionsJson)));
        assert!(parse(&["-h".to_string(), "--bogus".to_string()]).is_err());
        assert!(
            run(&["-R1", "--json=x", "--latency=1", "http://h/"]).unwrap_err().contains("--latency: takes no value")
        );
    }

    /// docs/architecture.md §5 lists exactly the extensions, as the table defines them.
    #[test]
    fn architecture_doc_lists_the_extensions() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
        let doc = std::fs::read_to_string(&path).expect("docs/architecture.md next to loadgen/");
        let section = doc.split("\n## 5.").nth(1).expect("section 5").split("\n## 6.").next().unwrap();
        let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `--")).collect();
        let expected = extension_rows();
        assert_eq!(rows, expected, "docs/architecture.md §5 should list:\n{}", expected.join("\n"));
    }
}
