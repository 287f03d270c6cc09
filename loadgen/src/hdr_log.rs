//! `--hdr-log`: the standard HdrHistogram interval log (format v1.3, as written by
//! Java's `HistogramLogWriter`), one line per interval with a V2-compressed,
//! base64-encoded histogram of microsecond latencies.
//!
//! Layout: version comment, `#[StartTime: …]`, `#[BaseTime: …]` (both the start of
//! the measured window, so interval timestamps are relative to it), the legend, then
//! intervals. Corrected latency is untagged; `-U` adds `Tag=uncorrected` lines.
//! Each rate step is introduced by `#[Step n: rate=r start=s end=s]`; an early stop
//! is noted as `#[Stopped early at s s: rate=r reason=...]`. With `--segment` or
//! `--start-at`, `#[Segment ...]` / `#[StartAt ...]` comments follow the BaseTime.

use crate::histogram::{HIGHEST_TRACKABLE, Histogram, SIGNIFICANT_FIGURES};
use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub struct HdrLog {
    out: BufWriter<File>,
    serializer: V2DeflateSerializer,
    buf: Vec<u8>,
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// A date the way Java's `Date.toString()` prints it, in UTC.
fn java_date(epoch_s: i64) -> String {
    // SAFETY: gmtime_r writes into the tm we pass; time_t is i64 on Linux.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        let t: libc::time_t = epoch_s;
        libc::gmtime_r(&t, &mut tm);
        tm
    };
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[tm.tm_wday as usize % 7],
        MONTHS[tm.tm_mon as usize % 12],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

impl HdrLog {
    pub fn create(path: &Path) -> io::Result<HdrLog> {
        Ok(HdrLog { out: BufWriter::new(File::create(path)?), serializer: V2DeflateSerializer::new(), buf: Vec::new() })
    }

    /// Writes the header; `start_wall_ns` is the start of the measured window;
    /// `notes` become comment lines before the legend (commas become semicolons).
    pub fn header(&mut self, start_wall_ns: u128, notes: &[String]) -> io::Result<()> {
        let secs = start_wall_ns as f64 / 1e9;
        writeln!(self.out, "#[Histogram log format version 1.3]")?;
        writeln!(self.out, "#[Written by perflab-load {}; values in microseconds]", crate::cli::VERSION)?;
        writeln!(
            self.out,
            "#[StartTime: {secs:.3} (seconds since epoch), {}]",
            java_date((start_wall_ns / 1_000_000_000) as i64)
        )?;
        writeln!(self.out, "#[BaseTime: {secs:.3} (seconds since epoch)]")?;
        for note in notes {
            // Comment lines must not contain commas (readers would parse them as intervals).
            writeln!(self.out, "#[{}]", note.replace(',', ";"))?;
        }
        writeln!(
            self.out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        self.out.flush()
    }

    pub fn step(&mut self, index: usize, rate: f64, start_s: f64, end_s: f64) -> io::Result<()> {
        writeln!(self.out, "#[Step {index}: rate={} start={start_s:.3} end={end_s:.3}]", fmt_rate(rate))
    }

    /// `--stop-on-p99` ended the window `at_s` seconds in, at the offered `rate`.
    pub fn stopped(&mut self, at_s: f64, rate: f64, reason: &str) -> io::Result<()> {
        // Comment lines must not contain commas (readers would parse them as intervals).
        let reason = reason.replace(',', ";");
        writeln!(self.out, "#[Stopped early at {at_s:.3} s: rate={} reason={reason}]", fmt_rate(rate))
    }

    /// One interval line; times in seconds relative to the StartTime. The max column
    /// is in milliseconds (microsecond values divided by 1000).
    pub fn interval(&mut self, start_s: f64, length_s: f64, h: &Histogram, tag: Option<&str>) -> io::Result<()> {
        let encoded = encode(h, &mut self.serializer, &mut self.buf)?;
        if let Some(t) = tag {
            write!(self.out, "Tag={t},")?;
        }
        let max_ms = if h.is_empty() { 0.0 } else { h.value_at_percentile(100.0) as f64 / 1000.0 };
        writeln!(self.out, "{start_s:.3},{length_s:.3},{max_ms:.3},{encoded}")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn fmt_rate(r: f64) -> String {
    if r.fract() == 0.0 { format!("{}", r as u64) } else { format!("{r:.3}") }
}

/// Base64 of the V2 compressed encoding of `h` (same bucket layout as ours).
pub fn encode(h: &Histogram, serializer: &mut V2DeflateSerializer, buf: &mut Vec<u8>) -> io::Result<String> {
    let mut std_h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, HIGHEST_TRACKABLE, SIGNIFICANT_FIGURES as u8)
        .map_err(|e| io::Error::other(format!("{e:?}")))?;
    for b in h.recorded() {
        std_h.record_n(b.lowest, b.count).map_err(|e| io::Error::other(format!("{e:?}")))?;
    }
    buf.clear();
    serializer.serialize(&std_h, buf).map_err(|e| io::Error::other(format!("{e:?}")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn payload_round_trips_through_the_reference_decoder() {
        let mut h = Histogram::new();
        for v in [1u64, 25, 25, 1000, 8275, 1_000_000] {
            h.record(v);
        }
        let text = encode(&h, &mut V2DeflateSerializer::new(), &mut Vec::new()).unwrap();
        assert!(text.starts_with("HISTF"), "V2 compressed payloads start with HISTF: {text}");
        let bytes = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
        let back: hdrhistogram::Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
        assert_eq!(back.len(), 6);
        assert_eq!(back.count_at(25), 2);
        assert_eq!(back.max(), crate::histogram::highest_equivalent(1_000_000));
    }

    #[test]
    fn java_style_date() {
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date(1_441_812_279), "Wed Sep 09 15:24:39 UTC 2015");
    }
}
