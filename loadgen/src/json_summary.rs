//! `--json`: the machine-readable summary described in docs/contracts/generator.md §5, its
//! fields assembled from what the run collected (`Summary::of`) and rendered.
//! Latencies are microseconds, times are epoch milliseconds.

use crate::batching::Slack;
use crate::clock;
use crate::collector::{Collector, IntervalSummary, StepSummary};
use crate::histogram::Histogram;
use crate::options::{Config, RateShape};
use crate::partition::Share;
use crate::recording::Errors;
use crate::schedule::Plan;
use serde_json::{Map, Value, json};

/// `stopped_early`: when and why `--stop-on-p99` ended the window.
pub struct StoppedEarly {
    /// Seconds into the window.
    pub at_s: f64,
    /// The offered rate at that moment.
    pub rate: f64,
    pub reason: String,
}

/// `segment` (with `--segment`): the whole run, and the part of it this process ran.
pub struct SegmentSummary {
    pub index: usize,
    pub count: usize,
    /// The whole run's `-t`, `-c` and target rate.
    pub threads: usize,
    pub connections: usize,
    pub target_rate: f64,
    /// The run's threads this process ran, and their connections.
    pub thread_ids: Vec<usize>,
    pub segment_connections: usize,
    /// `segment_connections / connections`: this part's share of every interval's
    /// requests, and so of the rate.
    pub share: f64,
}

/// `start_at` (with `--start-at`).
pub struct StartAtSummary {
    /// The requested start, ns since the Unix epoch.
    pub requested_ns: u128,
    /// This host's realtime clock at the schedule's start minus the requested start.
    pub skew_ns: i128,
    /// How long before the requested start this process was ready (negative: late).
    pub ready_ahead_ns: i128,
}

pub struct Summary<'a> {
    pub url: &'a str,
    pub script: Option<String>,
    pub script_args: &'a [String],
    pub threads: usize,
    pub connections: usize,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub send_slack_us: u64,
    pub target_rate: f64,
    pub start_ms: u64,
    pub end_ms: u64,
    pub warmup_start_ms: u64,
    pub requests: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub errors: Errors,
    pub status_codes: &'a [u64],
    pub latency: &'a Histogram,
    pub uncorrected: Option<&'a Histogram>,
    pub steps: &'a [StepSummary],
    pub interrupted: bool,
    pub send_slack_auto: bool,
    pub offered: u64,
    pub unsent: u64,
    pub unanswered: u64,
    pub lag: &'a Histogram,
    /// The generator's CPU (`cpu_usage::to_json`).
    pub cpu: Value,
    pub intervals: &'a [IntervalSummary],
    pub stopped_early: Option<&'a StoppedEarly>,
    pub segment: Option<SegmentSummary>,
    pub start_at: Option<StartAtSummary>,
}

/// What the run hands over for its summary: what it collected and how it went.
pub struct RunParts<'a> {
    pub cfg: &'a Config,
    pub plan: &'a Plan,
    pub share: &'a Share,
    pub collector: &'a Collector,
    /// The schedule's start (the warm-up's) and the run's end, monotonic ns.
    pub schedule_start: u64,
    pub stopped_at: u64,
    pub interrupted: bool,
    pub stopped_early: Option<&'a StoppedEarly>,
    /// The generator's CPU (`cpu_usage::to_json`).
    pub cpu: Value,
    pub start_at: Option<StartAtSummary>,
}

impl<'a> Summary<'a> {
    /// The summary's fields, from the run's parts.
    pub fn of(p: RunParts<'a>) -> Summary<'a> {
        let (cfg, c, total) = (p.cfg, p.collector, &p.collector.total);
        let w0 = p.schedule_start + p.plan.window_start_ns;
        let run_target_rate = target_rate(cfg, p.plan);
        let segment = cfg.segment.map(|seg| SegmentSummary {
            index: seg.index,
            count: seg.count,
            threads: cfg.threads,
            connections: cfg.connections,
            target_rate: run_target_rate,
            thread_ids: p.share.threads.iter().map(|t| t.thread).collect(),
            segment_connections: p.share.connections(),
            share: p.share.fraction(),
        });
        Summary {
            url: &cfg.url,
            script: cfg.script.as_ref().map(|p| p.display().to_string()),
            script_args: &cfg.script_args[1..],
            threads: p.share.threads.len(),
            connections: p.share.connections(),
            duration_s: p.stopped_at.saturating_sub(w0) as f64 / 1e9,
            warmup_s: cfg.warmup_us as f64 / 1e6,
            send_slack_us: cfg.slack.max_ns() / 1000,
            target_rate: c.share_of(run_target_rate),
            start_ms: clock::wall_ms(w0),
            end_ms: clock::wall_ms(p.stopped_at.max(w0)),
            warmup_start_ms: clock::wall_ms(p.schedule_start),
            requests: total.requests,
            bytes_read: total.bytes_read,
            bytes_written: total.bytes_written,
            errors: total.errors,
            status_codes: &c.status,
            latency: &total.corrected,
            uncorrected: total.uncorrected.as_ref(),
            steps: &c.step_summaries,
            interrupted: p.interrupted,
            send_slack_auto: cfg.slack == Slack::Auto,
            offered: c.offered(),
            unsent: total.unsent,
            unanswered: total.unanswered,
            lag: &c.lag,
            cpu: p.cpu,
            intervals: &c.summaries,
            stopped_early: p.stopped_early,
            segment,
            start_at: p.start_at,
        }
    }
}

/// The whole run's target rate: `-R`, or the mean planned rate over the window.
fn target_rate(cfg: &Config, plan: &Plan) -> f64 {
    let window_s = (plan.window_end_ns - plan.window_start_ns) as f64 / 1e9;
    match cfg.shape {
        RateShape::Constant(r) => r,
        _ => plan.expected_between(plan.window_start_ns, plan.window_end_ns) / window_s,
    }
}

/// Errors by kind, as the summary's `errors` and each interval's `error_kinds` write them.
fn errors_object(e: &Errors) -> Value {
    json!({"connect": e.connect, "read": e.read, "write": e.write, "timeout": e.timeout, "status": e.status})
}

/// min/max follow wrk2 (`Max` is the lowest value of the highest bucket, like the
/// console's Max column and `latency.max` in `done()`); percentiles are the highest
/// value of their bucket, like the console's distribution lines.
pub fn latency_object(h: &Histogram) -> Value {
    let mut m = Map::new();
    m.insert("min".into(), json!(h.min()));
    m.insert("max".into(), json!(h.max()));
    m.insert("mean".into(), json!(round3(h.mean())));
    m.insert("stdev".into(), json!(round3(h.stdev())));
    for (k, p) in [
        ("p50", 50.0),
        ("p75", 75.0),
        ("p90", 90.0),
        ("p99", 99.0),
        ("p99.9", 99.9),
        ("p99.99", 99.99),
        ("p99.999", 99.999),
        ("p100", 100.0),
    ] {
        m.insert(k.into(), json!(h.value_at_percentile(p)));
    }
    Value::Object(m)
}

/// `schedule_lag_us`: how late requests left for the generator's own reasons.
fn lag_object(h: &Histogram) -> Value {
    json!({
        "mean": round3(h.mean()),
        "p50": h.value_at_percentile(50.0),
        "p99": h.value_at_percentile(99.0),
        "p999": h.value_at_percentile(99.9),
        "max": h.max(),
        "late_1ms": h.count_above(1000),
    })
}

/// wrk2's "Detailed Percentile spectrum": `[value_us, percentile (0..1), total_count]` rows.
pub fn spectrum(h: &Histogram) -> Value {
    let rows: Vec<Value> = h
        .percentile_spectrum(5)
        .iter()
        .map(|r| json!([r.value, (r.percentile / 100.0 * 1e12).round() / 1e12, r.total_count]))
        .collect();
    Value::Array(rows)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn rate(requests: u64, secs: f64) -> f64 {
    if secs > 0.0 { round3(requests as f64 / secs) } else { 0.0 }
}

pub fn render(s: &Summary) -> String {
    let status: Map<String, Value> = s
        .status_codes
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(code, n)| (code.to_string(), json!(n)))
        .collect();
    let steps: Vec<Value> = s
        .steps
        .iter()
        .map(|st| {
            json!({
                "index": st.index,
                "target_rate": st.target_rate,
                "start_s": round3(st.start_s),
                "end_s": round3(st.end_s),
                "requests": st.requests,
                "achieved_rate": rate(st.requests, st.end_s - st.start_s),
                "errors": st.errors,
                "latency_us": {"p50": st.p50, "p99": st.p99, "max": st.max},
            })
        })
        .collect();
    let intervals: Vec<Value> = s
        .intervals
        .iter()
        .map(|i| {
            json!({
                "start_s": round3(i.start_s),
                "end_s": round3(i.end_s),
                "offered": i.offered,
                "completed": i.completed,
                "errors": i.errors.total(),
                "error_kinds": errors_object(&i.errors),
                "status_codes": Map::from_iter(i.status_codes.sorted().into_iter().map(|(c, n)| (c.to_string(), json!(n)))),
                "unanswered": i.unanswered,
                "unsent": i.unsent,
            })
        })
        .collect();
    let mut v = json!({
        "tool": "perflab-load",
        "version": crate::cli::VERSION,
        "url": s.url,
        "script": s.script,
        "script_args": s.script_args,
        "threads": s.threads,
        "connections": s.connections,
        "duration_s": round3(s.duration_s),
        "warmup_s": round3(s.warmup_s),
        "send_slack_us": s.send_slack_us,
        "target_rate": round3(s.target_rate),
        "achieved_rate": rate(s.requests, s.duration_s),
        "start_ms": s.start_ms,
        "end_ms": s.end_ms,
        "warmup_start_ms": s.warmup_start_ms,
        "requests": s.requests,
        "bytes_read": s.bytes_read,
        "bytes_written": s.bytes_written,
        "errors": errors_object(&s.errors),
        "status_codes": status,
        "latency_us": latency_object(s.latency),
        "latency_uncorrected_us": s.uncorrected.map(latency_object),
        "steps": steps,
        "interrupted": s.interrupted,
        "send_slack_auto": s.send_slack_auto,
        "offered": s.offered,
        "unsent": s.unsent,
        "schedule_lag_us": lag_object(s.lag),
        "cpu": s.cpu,
        "spectrum": spectrum(s.latency),
        "spectrum_uncorrected": s.uncorrected.map(spectrum),
        "intervals": intervals,
        "stopped_early": s.stopped_early.map(|e| json!({
            "at_s": round3(e.at_s),
            "rate": round3(e.rate),
            "reason": e.reason,
        })),
        "unanswered": s.unanswered,
    });
    // Present only with their flags: without them the summary is what it always was.
    if let Some(seg) = &s.segment {
        v["segment"] = json!({
            "index": seg.index,
            "count": seg.count,
            "threads": seg.threads,
            "connections": seg.connections,
            "target_rate": round3(seg.target_rate),
            "thread_ids": seg.thread_ids,
            "segment_connections": seg.segment_connections,
            "share": (seg.share * 1e6).round() / 1e6,
            "rate_share": round3(seg.target_rate * seg.share),
        });
    }
    if let Some(st) = &s.start_at {
        v["start_at"] = json!({
            // Whole seconds and the fraction apart: one f64 division would lose the fraction.
            "requested_s": (st.requested_ns / 1_000_000_000) as f64 + (st.requested_ns % 1_000_000_000) as f64 / 1e9,
            "skew_us": round3(st.skew_ns as f64 / 1e3),
            "ready_ahead_s": round3(st.ready_ahead_ns as f64 / 1e9),
        });
    }
    let mut text = serde_json::to_string_pretty(&v).expect("JSON values always serialize");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A summary of 10 requests at 100 µs; `lag`: 9 at 3 µs and one at 1.5 ms.
    fn summary<'a>(h: &'a Histogram, codes: &'a [u64], lag: &'a Histogram) -> Summary<'a> {
        Summary {
            url: "http://h/",
            script: None,
            script_args: &[],
            threads: 1,
            connections: 1,
            duration_s: 1.0,
            warmup_s: 0.0,
            send_slack_us: 0,
            target_rate: 10.0,
            start_ms: 1,
            end_ms: 1001,
            warmup_start_ms: 1,
            requests: 10,
            bytes_read: 5,
            bytes_written: 6,
            errors: Errors::default(),
            status_codes: codes,
            latency: h,
            uncorrected: None,
            steps: &[],
            interrupted: false,
            send_slack_auto: true,
            offered: 10,
            unsent: 0,
            unanswered: 0,
            lag,
            cpu: Value::Null,
            intervals: &[],
            stopped_early: None,
            segment: None,
            start_at: None,
        }
    }

    fn inputs() -> (Histogram, Vec<u64>, Histogram) {
        let mut h = Histogram::new();
        h.record_n(100, 10);
        let mut codes = vec![0u64; 1000];
        codes[200] = 10;
        let mut lag = Histogram::new();
        lag.record_n(3, 9);
        lag.record(1500);
        (h, codes, lag)
    }

    #[test]
    fn schema_keys_in_order() {
        let (h, codes, lag) = inputs();
        let s = summary(&h, &codes, &lag);
        let text = render(&s);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["achieved_rate"], json!(10.0));
        assert_eq!(v["status_codes"]["200"], json!(10));
        assert_eq!(v["latency_us"]["p50"], json!(100));
        assert!(v["latency_uncorrected_us"].is_null());
        assert_eq!(v["schedule_lag_us"]["late_1ms"], json!(1));
        assert_eq!(v["schedule_lag_us"]["p50"], json!(3));
        assert_eq!(v["spectrum"], json!([[100, 0.0, 10], [100, 1.0, 10]]));
        assert!(v["spectrum_uncorrected"].is_null() && v["stopped_early"].is_null());
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys[0], "tool");
        assert_eq!(keys[1], "version");
        assert!(v.get("segment").is_none() && v.get("start_at").is_none());
    }

    #[test]
    fn segment_and_start_at_are_appended_when_given() {
        let (h, codes, lag) = inputs();
        let mut s = summary(&h, &codes, &lag);
        s.segment = Some(SegmentSummary {
            index: 0,
            count: 2,
            threads: 3,
            connections: 7,
            target_rate: 700.0,
            thread_ids: vec![0, 2],
            segment_connections: 5,
            share: 5.0 / 7.0,
        });
        s.start_at = Some(StartAtSummary {
            requested_ns: 1_764_000_000_250_000_000,
            skew_ns: -1_500,
            ready_ahead_ns: 2_500_000_000,
        });
        let v: Value = serde_json::from_str(&render(&s)).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys[keys.len() - 3..], ["unanswered", "segment", "start_at"]);
        assert_eq!(
            v["segment"],
            json!({"index": 0, "count": 2, "threads": 3, "connections": 7, "target_rate": 700.0,
                   "thread_ids": [0, 2], "segment_connections": 5, "share": 0.714286, "rate_share": 500.0})
        );
        assert_eq!(v["start_at"], json!({"requested_s": 1764000000.25, "skew_us": -1.5, "ready_ahead_s": 2.5}));
    }
}
