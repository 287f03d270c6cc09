//! What workers record and hand to the main thread: per-segment histograms and
//! counters (a segment is one hdr-log interval inside one rate step), and per-thread
//! request-rate samples for wrk's "Req/Sec" line.

use crate::histogram::Histogram;
use crate::schedule::Plan;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Errors {
    pub connect: u64,
    pub read: u64,
    pub write: u64,
    pub timeout: u64,
    /// Responses with a status above 399 (wrk's "Non-2xx or 3xx responses").
    pub status: u64,
}

impl Errors {
    pub fn add(&mut self, o: &Errors) {
        self.connect += o.connect;
        self.read += o.read;
        self.write += o.write;
        self.timeout += o.timeout;
        self.status += o.status;
    }

    pub fn total(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout + self.status
    }

    pub fn socket_errors(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout
    }
}

/// A slice of the measured window: intervals of `--hdr-interval`, restarted at each
/// rate step so no interval mixes two rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Relative to the start of the measured window, nanoseconds.
    pub start_ns: u64,
    pub end_ns: u64,
    pub step: usize,
}

pub fn segments(plan: &Plan, interval_ns: u64) -> Vec<Segment> {
    let mut out = Vec::new();
    for step in &plan.steps {
        let mut s = step.start_ns;
        while s < step.end_ns {
            let e = (s + interval_ns).min(step.end_ns);
            out.push(Segment { start_ns: s, end_ns: e, step: step.index });
            s = e;
        }
    }
    out
}

/// Everything recorded during one segment by one worker.
#[derive(Debug, Default)]
pub struct SegmentData {
    pub corrected: Histogram,
    pub uncorrected: Option<Histogram>,
    pub requests: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub errors: Errors,
}

impl SegmentData {
    pub fn new(uncorrected: bool) -> SegmentData {
        SegmentData { uncorrected: uncorrected.then(Histogram::new), ..Default::default() }
    }

    pub fn add(&mut self, o: &SegmentData) {
        self.corrected.add(&o.corrected);
        if let (Some(a), Some(b)) = (&mut self.uncorrected, &o.uncorrected) {
            a.add(b);
        }
        self.requests += o.requests;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.errors.add(&o.errors);
    }
}

/// Per-thread requests/second samples (wrk2 records them into a histogram too).
#[derive(Debug, Default)]
pub struct RateSamples {
    pub hist: Histogram,
    pub min: u64,
    pub max: u64,
}

impl RateSamples {
    pub fn record(&mut self, rate: u64) {
        if self.hist.is_empty() || rate < self.min {
            self.min = rate;
        }
        self.max = self.max.max(rate);
        self.hist.record(rate);
    }

    pub fn add(&mut self, o: &RateSamples) {
        if o.hist.is_empty() {
            return;
        }
        if self.hist.is_empty() || o.min < self.min {
            self.min = o.min;
        }
        self.max = self.max.max(o.max);
        self.hist.add(&o.hist);
    }
}

/// Counts per HTTP status code, indexed by code (0..=999).
pub type StatusCounts = Vec<u64>;
