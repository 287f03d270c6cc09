//! wrk2's console output, section by section and digit by digit: the header, the
//! "Thread Stats" table, the HdrHistogram latency distribution and percentile
//! spectrum (corrected, and uncorrected with `-U`), and the totals.

use crate::histogram::{BUCKET_COUNT, Histogram, SUB_BUCKET_COUNT};
use crate::recording::{Errors, RateSamples};
use crate::units::{format_binary, format_metric, format_time_s, format_time_us, pad_units};
use std::fmt::Write;

/// Everything the report shows.
pub struct Report<'a> {
    pub latency: &'a Histogram,
    pub uncorrected: Option<&'a Histogram>,
    pub rates: &'a RateSamples,
    pub requests: u64,
    pub bytes_read: u64,
    pub errors: Errors,
    /// Length of the measured window, microseconds.
    pub runtime_us: u64,
    pub print_latency: bool,
}

/// "Running 12s test @ url" and the threads/connections line.
pub fn header(duration_s: f64, url: &str, threads: usize, connections: usize) -> String {
    format!("Running {} test @ {url}\n  {threads} threads and {connections} connections\n", format_time_s(duration_s))
}

fn stats_line(out: &mut String, name: &str, mean: f64, stdev: f64, max: f64, within: f64, fmt: fn(f64) -> String) {
    let _ = writeln!(
        out,
        "    {name:<10}{}{}{}{within:8.2}%",
        pad_units(&fmt(mean), 8),
        pad_units(&fmt(stdev), 10),
        pad_units(&fmt(max), 9)
    );
}

/// The "Thread Stats" table.
pub fn thread_stats(out: &mut String, latency: &Histogram, rates: &RateSamples) {
    let _ = writeln!(out, "  Thread Stats{:>6}{:>11}{:>8}{:>12}", "Avg", "Stdev", "Max", "+/- Stdev");
    let (m, s) = (latency.mean(), latency.stdev());
    stats_line(out, "Latency", m, s, latency.max() as f64, latency.within_stdev(m, s, 1.0), format_time_us);
    let (m, s) = (rates.hist.mean(), rates.hist.stdev());
    stats_line(out, "Req/Sec", m, s, rates.max as f64, rates.hist.within_stdev(m, s, 1.0), format_metric);
}

/// One "Latency Distribution (HdrHistogram - ...)" block with its spectrum.
pub fn latency_block(out: &mut String, h: &Histogram, description: &str) {
    let _ = writeln!(out, "  Latency Distribution (HdrHistogram - {description})");
    for p in [50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0] {
        let v = h.value_at_percentile(p);
        let _ = writeln!(out, "{p:7.3}%{}", pad_units(&format_time_us(v as f64), 10));
    }
    let _ = writeln!(out, "\n  Detailed Percentile spectrum:");
    let _ = writeln!(out, "{:>12} {:>12} {:>12} {:>12}\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    for row in h.percentile_spectrum(5) {
        let p = row.percentile / 100.0;
        let _ = writeln!(
            out,
            "{:12.3} {:12.6} {:12} {:12.2}",
            row.value as f64 / 1000.0,
            p,
            row.total_count,
            1.0 / (1.0 - p)
        );
    }
    let _ = writeln!(out, "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]", h.mean() / 1000.0, h.stdev() / 1000.0);
    let _ = writeln!(out, "#[Max     = {:12.3}, Total count    = {:12}]", h.max() as f64 / 1000.0, h.total());
    let _ = writeln!(out, "#[Buckets = {BUCKET_COUNT:12}, SubBuckets     = {SUB_BUCKET_COUNT:12}]");
    let _ = writeln!(out, "----------------------------------------------------------");
}

/// Everything after the header lines.
pub fn results(r: &Report) -> String {
    let mut out = String::new();
    thread_stats(&mut out, r.latency, r.rates);
    if r.print_latency {
        latency_block(&mut out, r.latency, "Recorded Latency");
    }
    if let Some(u) = r.uncorrected {
        out.push('\n');
        latency_block(&mut out, u, "Uncorrected Latency (measured without taking delayed starts into account)");
    }
    let _ = writeln!(
        out,
        "  {} requests in {}, {}B read",
        r.requests,
        format_time_us(r.runtime_us as f64),
        format_binary(r.bytes_read as f64)
    );
    let e = &r.errors;
    if e.socket_errors() > 0 {
        let _ = writeln!(
            out,
            "  Socket errors: connect {}, read {}, write {}, timeout {}",
            e.connect, e.read, e.write, e.timeout
        );
    }
    if e.status > 0 {
        let _ = writeln!(out, "  Non-2xx or 3xx responses: {}", e.status);
    }
    let secs = r.runtime_us as f64 / 1e6;
    let (rps, bps) = if secs > 0.0 { (r.requests as f64 / secs, r.bytes_read as f64 / secs) } else { (0.0, 0.0) };
    let _ = writeln!(out, "Requests/sec: {rps:9.2}");
    let _ = writeln!(out, "Transfer/sec: {:>10}B", format_binary(bps));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_matches_fixture() {
        assert_eq!(
            header(12.0, "http://127.0.0.1:8081", 2, 64),
            "Running 12s test @ http://127.0.0.1:8081\n  2 threads and 64 connections\n"
        );
    }

    #[test]
    fn thread_stats_layout() {
        let mut h = Histogram::new();
        for v in [700u64, 800, 900, 2176] {
            h.record(v);
        }
        let mut rates = RateSamples::default();
        for r in [1000u64, 1040, 1080] {
            rates.record(r);
        }
        let mut out = String::new();
        thread_stats(&mut out, &h, &rates);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "  Thread Stats   Avg      Stdev     Max   +/- Stdev");
        assert!(lines[1].starts_with("    Latency   ") && lines[1].ends_with('%'), "{}", lines[1]);
        assert!(lines[1].contains("  2.18ms"), "{}", lines[1]);
        assert!(lines[2].starts_with("    Req/Sec     1.04k"), "{}", lines[2]);
    }

    #[test]
    fn totals_and_errors() {
        let h = Histogram::new();
        let rates = RateSamples::default();
        let r = Report {
            latency: &h,
            uncorrected: None,
            rates: &rates,
            requests: 23997,
            bytes_read: 1_604_321,
            errors: Errors { timeout: 5, status: 7, ..Default::default() },
            runtime_us: 12_000_000,
            print_latency: false,
        };
        let out = results(&r);
        assert!(out.contains("\n  23997 requests in 12.00s, 1.53MB read\n"), "{out}");
        assert!(out.contains("\n  Socket errors: connect 0, read 0, write 0, timeout 5\n"), "{out}");
        assert!(out.contains("\n  Non-2xx or 3xx responses: 7\n"), "{out}");
        assert!(out.contains("\nRequests/sec:   1999.75\n"), "{out}");
        assert!(!out.contains("nan"), "{out}");
    }
}
