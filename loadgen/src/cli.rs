//! Command line: wrk2's flags (getopt-style, so `-t2 -c64 -d12s -R2000` and
//! options after the URL work as in wrk2) plus perflab's extensions, all from one
//! table (`FLAGS`): parsing each flag's value into `options::FlagValues`, `--help`,
//! `--options-json` and the docs check. What the values mean together, and the
//! checks between flags, are `options`'.

use crate::batching::{self, Slack};
use crate::flags::{self, Default::*, Kind::*, Spec, flag};
use crate::options::{Config, Curve, FlagValues, Segment};
use crate::start_at;
use crate::units::{parse_duration_us, parse_metric};
use std::path::PathBuf;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    Run(Box<Config>),
    Help,
    Version,
    /// `--options-json`: print the flag table.
    OptionsJson,
}

/// `--hdr-interval` is at least this long (µs): shorter intervals cost more than they show.
const MIN_HDR_INTERVAL_US: u64 = 10_000;

/// Every flag, once: names, value, kind, default, help and parser. The help text, the
/// `--options-json` output and the docs table (docs/contracts/generator.md §5) come from here.
#[rustfmt::skip]
const FLAGS: &[Spec<FlagValues>] = &[
    flag!(Wrk2, "-c", "--connections", "N", Count, Value("10"), "connections kept open, all threads together",
        |o, v| o.connections = count(v)?),
    flag!(Wrk2, "-d", "--duration", "DUR", Duration, Value("10s"), "length of the measured window",
        |o, v| o.duration_us = time(v)?),
    flag!(Wrk2, "-t", "--threads", "N", Count, Value("2"), "worker threads",
        |o, v| o.threads = count(v)?),
    flag!(Wrk2, "-R", "--rate", "N", Rate, Absent,
        "requests per second, all connections together (required; with --rate-steps/--ramp: the first rate)",
        |o, v| o.rate = Some(rate(v)?)),
    flag!(Wrk2, "-s", "--script", "FILE", Path, Absent, "wrk Lua script (setup/init/delay/request/response/done)",
        |o, v| o.script = Some(PathBuf::from(v))),
    flag!(Wrk2, "-H", "--header", "H", Text, Absent, "add a header, \"Name: value\" (repeatable)",
        |o, v| o.headers.push(header(v)?)),
    flag!(Wrk2, "-L", "--latency", "", Switch, Absent, "print the latency distribution and percentile spectrum",
        |o, _| o.latency = true),
    flag!(Wrk2, "-U", "--u_latency", "", Switch, Absent,
        "also print uncorrected latency (from the actual send); implies -L",
        |o, _| (o.u_latency, o.latency) = (true, true)),
    flag!(Wrk2, "-B", "--batch_latency", "", Switch, Absent,
        "pipelined scripts: record only the last response of a batch",
        |o, _| o.batch_latency = true),
    flag!(Wrk2, "-T", "--timeout", "DUR", Duration, Value("2s"),
        "a response this late counts as a timeout; also how long the end of the run waits for late answers",
        |o, v| o.timeout_us = time(v)?),
    flag!(Wrk2, "-v", "--version", "", Switch, Absent, "print the version", |o, _| o.version = true),
    flag!(Wrk2, "-h", "--help", "", Switch, Absent, "print this help", |o, _| o.help = true),
    flag!(Perflab, "", "--warmup", "DUR", Duration, Value("0"),
        "send load at the first rate this long before the window, without recording it",
        |o, v| o.warmup_us = time_or_zero(v)?),
    flag!(Perflab, "", "--json", "FILE", Path, Absent,
        "write the JSON summary: counts, rates, latencies in us, schedule lag, own CPU, steps, intervals",
        |o, v| o.json = Some(PathBuf::from(v))),
    flag!(Perflab, "", "--hdr-log", "FILE", Path, Absent,
        "write interval histograms, HdrHistogram log format v1.3 (corrected; Tag=uncorrected with -U)",
        |o, v| o.hdr_log = Some(PathBuf::from(v))),
    flag!(Perflab, "", "--hdr-interval", "DUR", Duration, Value("1s"), "interval length of --hdr-log (at least 10ms)",
        |o, v| o.hdr_interval_us = hdr_interval(v)?),
    flag!(Perflab, "", "--rate-steps", "A:B:S", Rates, Absent,
        "rates A, A+S, ... B (requests/s) within one run, each step --step-duration long",
        |o, v| o.steps = Some(rates(v, "A:B:S (first rate, last rate, step)")?)),
    flag!(Perflab, "", "--step-duration", "DUR", Duration, Described("-d / steps"), "length of each rate step",
        |o, v| o.step_us = Some(time(v)?)),
    flag!(Perflab, "", "--ramp", "A:B", Rates, Absent, "rate grows from A to B over -d (see --ramp-curve)",
        |o, v| o.ramp = Some(rates(v, "A:B (start rate, end rate)")?)),
    flag!(Perflab, "", "--ramp-curve", "CURVE", Choice(&["linear", "exp"]), Value("linear"),
        "shape of --ramp: linear, or exp (the rate grows by a constant factor per second)",
        |o, v| o.ramp_curve = curve(v)?),
    flag!(Perflab, "", "--stop-on-p99", "DUR", Duration, Absent,
        "end the measured window early (then drain as usual) once --stop-intervals consecutive \
         hdr-log intervals have a corrected p99 above DUR",
        |o, v| o.stop_on_p99_us = Some(time(v)?)),
    flag!(Perflab, "", "--stop-intervals", "N", Count, Value("2"),
        "consecutive intervals above --stop-on-p99 that end the window",
        |o, v| o.stop_intervals = count(v)? as u32),
    flag!(Perflab, "", "--send-slack", "DUR/auto", Duration, Value("auto"),
        "a request may go out this late (at most 10ms) so that one wake-up sends several; \
         auto: 1/8 of a connection's interval between requests up to 100us; the lateness \
         stays in the corrected latency",
        |o, v| o.slack = Some(slack(v)?)),
    flag!(Perflab, "", "--segment", "I/N", Part, Absent,
        "run part I of N of the run that -t/-c/-R and the rate flags describe: its threads t with t mod N = I, \
         with their connections and requests (the N parts together send exactly that run's schedule)",
        |o, v| o.segment = Some(segment(v)?)),
    flag!(Perflab, "", "--start-at", "EPOCH", Epoch, Absent,
        "connect and run setup/init, print 'perflab-load: ready' on stderr, then start the schedule \
         (warm-up included) at this wall-clock time (epoch seconds, e.g. 1764000000.250)",
        |o, v| o.start_at_ns = Some(start_at::parse(v)?)),
    flag!(Perflab, "", "--options-json", "", Switch, Absent, "print this list of flags as JSON and exit",
        |o, _| o.options_json = true),
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

/// The rows of docs/contracts/generator.md §5's flag table, as the table says they must read.
#[cfg(test)]
pub fn extension_rows() -> Vec<String> {
    FLAGS.iter().filter(|s| s.group == flags::Group::Perflab).map(flags::markdown_row).collect()
}

/// The rows of loadgen/README.md's usage table: every flag.
#[cfg(test)]
pub fn usage_rows() -> Vec<String> {
    FLAGS.iter().map(flags::usage_row).collect()
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let tokens = flags::tokenize(FLAGS, args)?;
    let mut values = FlagValues::default();
    for spec in FLAGS {
        if let Value(v) = spec.default {
            spec.apply_to(&mut values, v).expect("a flag's default parses");
        }
    }
    for (spec, v) in &tokens.flags {
        spec.apply_to(&mut values, v)?;
        values.given.push(spec.long);
    }
    if values.help {
        return Ok(Command::Help);
    }
    if values.version {
        return Ok(Command::Version);
    }
    if values.options_json {
        return Ok(Command::OptionsJson);
    }
    Config::from_flags(values, tokens.positional).map(|c| Command::Run(Box::new(c)))
}

// Value parsers: an error says what is wrong with the value (the caller names the flag).

fn count(v: &str) -> Result<usize, String> {
    let n = parse_metric(v)?;
    if n < 1.0 || n.fract() != 0.0 || n > 1e6 {
        return Err(format!("must be a whole number between 1 and 1M, got '{v}'"));
    }
    Ok(n as usize)
}

fn rate(v: &str) -> Result<f64, String> {
    let r = parse_metric(v)?;
    if r <= 0.0 {
        return Err(format!("the rate must be greater than 0, got '{v}'"));
    }
    if r > 1e8 {
        return Err(format!("the rate {v} is beyond what one machine can send"));
    }
    Ok(r)
}

/// A duration longer than 0, µs.
fn time(v: &str) -> Result<u64, String> {
    let us = parse_duration_us(v)?;
    if us == 0 {
        return Err(format!("must be longer than 0, got '{v}'"));
    }
    Ok(us)
}

fn time_or_zero(v: &str) -> Result<u64, String> {
    parse_duration_us(v)
}

fn hdr_interval(v: &str) -> Result<u64, String> {
    let us = time(v)?;
    if us < MIN_HDR_INTERVAL_US {
        return Err(format!("must be at least {}ms, got '{v}'", MIN_HDR_INTERVAL_US / 1000));
    }
    Ok(us)
}

/// `N` rates separated by colons, each a valid rate; `form` describes them for errors.
fn rates<const N: usize>(v: &str, form: &str) -> Result<[f64; N], String> {
    let parts: Vec<&str> = v.split(':').collect();
    if parts.len() != N {
        return Err(format!("expected {form}, got '{v}'"));
    }
    let mut out = [0.0; N];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = rate(p)?;
    }
    Ok(out)
}

fn header(v: &str) -> Result<String, String> {
    if !v.contains(':') {
        return Err(format!("expected \"Name: value\", got '{v}'"));
    }
    Ok(v.to_string())
}

fn curve(v: &str) -> Result<Curve, String> {
    match v {
        "linear" => Ok(Curve::Linear),
        "exp" => Ok(Curve::Exp),
        _ => Err(format!("expected linear or exp, got '{v}'")),
    }
}

fn slack(v: &str) -> Result<Slack, String> {
    if v == "auto" {
        return Ok(Slack::Auto);
    }
    let us = time_or_zero(v).map_err(|e| format!("{e} (or auto)"))?;
    if us * 1000 > batching::MAX_FIXED_NS {
        let max_ms = batching::MAX_FIXED_NS / 1_000_000;
        return Err(format!("must be at most {max_ms}ms (it delays requests), got '{v}'"));
    }
    Ok(Slack::Fixed(us * 1000))
}

/// `I/N` with 0 ≤ I < N.
fn segment(v: &str) -> Result<Segment, String> {
    let malformed = || format!("expected I/N (this process's part I of N, 0 <= I < N), got '{v}'");
    let (i, n) = v.split_once('/').ok_or_else(malformed)?;
    let whole = |s: &str| s.parse::<usize>().ok().filter(|_| s.bytes().all(|b| b.is_ascii_digit()));
    let (Some(index), Some(count)) = (whole(i), whole(n)) else { return Err(malformed()) };
    if count == 0 {
        return Err(format!("the number of parts must be at least 1, got '{v}'"));
    }
    if index >= count {
        return Err(format!("the part must be below {count} (parts are numbered 0 to {}), got '{v}'", count - 1));
    }
    Ok(Segment { index, count })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::RateShape;

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

    #[test]
    fn segment_and_start_at_values() {
        let c = run(&["-R1", "-t4", "--segment", "1/3", "--start-at", "1764000000.25", "http://h/"]).unwrap();
        assert_eq!(c.segment, Some(Segment { index: 1, count: 3 }));
        assert_eq!(c.start_at_ns, Some(1_764_000_000_250_000_000));
        for (bad, needle) in [
            ("3/3", "--segment: the part must be below 3 (parts are numbered 0 to 2), got '3/3'"),
            ("0/0", "--segment: the number of parts must be at least 1, got '0/0'"),
            ("1", "--segment: expected I/N"),
            ("-1/2", "--segment: expected I/N"),
            ("1/2/3", "--segment: expected I/N"),
            ("a/b", "--segment: expected I/N"),
            ("+1/2", "--segment: expected I/N"),
        ] {
            let e = run(&["-R1", "-t4", "--segment", bad, "http://h/"]).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        let e = run(&["-R1", "-t2", "--segment", "2/3", "http://h/"]).unwrap_err();
        assert_eq!(e, "--segment 2/3: needs at least 3 threads (-t) so every segment runs one, got -t2");
        let e = run(&["-R1", "-t2", "--segment", "0/2", "--stop-on-p99", "1s", "http://h/"]).unwrap_err();
        assert!(e.starts_with("--stop-on-p99: cannot be combined with --segment"), "{e}");
        let e = run(&["-R1", "--start-at", "noon", "http://h/"]).unwrap_err();
        assert!(e.starts_with("--start-at: expected seconds since the Unix epoch"), "{e}");
    }

    /// loadgen/README.md's usage table lists every flag, as the table defines it.
    #[test]
    fn readme_lists_every_flag() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
        let readme = std::fs::read_to_string(&path).expect("loadgen/README.md");
        let usage = readme.split("\n## Usage").nth(1).expect("a Usage section").split("\n## ").next().unwrap();
        let rows: Vec<&str> = usage.lines().filter(|l| l.starts_with("| `-")).collect();
        let expected = usage_rows();
        assert_eq!(rows, expected, "loadgen/README.md's usage table should read:\n{}", expected.join("\n"));
    }

    /// docs/contracts/generator.md §5 lists exactly the extensions, as the table defines them.
    #[test]
    fn contract_doc_lists_the_extensions() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/contracts/generator.md");
        let doc = std::fs::read_to_string(&path).expect("docs/contracts/generator.md next to loadgen/");
        let section = doc.split("\n## 5.").nth(1).expect("section 5").split("\n## ").next().unwrap();
        let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `--")).collect();
        let expected = extension_rows();
        assert_eq!(rows, expected, "docs/contracts/generator.md §5 should list:\n{}", expected.join("\n"));
    }
}
