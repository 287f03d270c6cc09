//! What workers record and hand to the main thread: per-interval histograms and
//! counters (an interval is one hdr-log interval inside one rate step), and per-thread
//! request-rate samples for wrk's "Req/Sec" line.

use crate::cpu_usage::ThreadCpu;
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

/// One kind of error, as counted in `Errors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Connect,
    Read,
    Write,
    Timeout,
    Status,
}

impl Errors {
    pub fn count(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::Connect => self.connect += 1,
            ErrorKind::Read => self.read += 1,
            ErrorKind::Write => self.write += 1,
            ErrorKind::Timeout => self.timeout += 1,
            ErrorKind::Status => self.status += 1,
        }
    }

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

/// Counted responses by status code, for one interval: the few codes a run answers with, in
/// a short list (a counted response costs one step through it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusTally(pub Vec<(u16, u64)>);

impl StatusTally {
    #[inline]
    pub fn count(&mut self, code: u16) {
        match self.0.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => self.0.push((code, 1)),
        }
    }

    pub fn add(&mut self, o: &StatusTally) {
        for &(code, n) in &o.0 {
            match self.0.iter_mut().find(|(c, _)| *c == code) {
                Some((_, m)) => *m += n,
                None => self.0.push((code, n)),
            }
        }
    }

    /// The codes in ascending order.
    pub fn sorted(&self) -> Vec<(u16, u64)> {
        let mut v = self.0.clone();
        v.sort_unstable();
        v
    }
}

/// A slice of the measured window: intervals of `--hdr-interval`, restarted at each
/// rate step so no interval mixes two rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Relative to the start of the measured window, nanoseconds.
    pub start_ns: u64,
    pub end_ns: u64,
    pub step: usize,
}

pub fn intervals(plan: &Plan, interval_ns: u64) -> Vec<Interval> {
    let mut out = Vec::new();
    for step in &plan.steps {
        let mut s = step.start_ns;
        while s < step.end_ns {
            let e = (s + interval_ns).min(step.end_ns);
            out.push(Interval { start_ns: s, end_ns: e, step: step.index });
            s = e;
        }
    }
    out
}

/// Everything recorded during one interval by one worker.
#[derive(Debug, Default)]
pub struct IntervalData {
    pub corrected: Histogram,
    pub uncorrected: Option<Histogram>,
    pub requests: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub errors: Errors,
    /// The counted responses by status code.
    pub status: StatusTally,
    /// At the interval's end: how long the oldest counted request not yet answered had
    /// been waiting since it was due (µs); a latency the histogram cannot show yet.
    pub oldest_pending_us: u64,
}

impl IntervalData {
    pub fn new(uncorrected: bool) -> IntervalData {
        IntervalData { uncorrected: uncorrected.then(Histogram::new), ..Default::default() }
    }

    pub fn add(&mut self, o: &IntervalData) {
        self.corrected.add(&o.corrected);
        if let (Some(a), Some(b)) = (&mut self.uncorrected, &o.uncorrected) {
            a.add(b);
        }
        self.requests += o.requests;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.errors.add(&o.errors);
        self.status.add(&o.status);
        self.oldest_pending_us = self.oldest_pending_us.max(o.oldest_pending_us);
    }
}

/// What a worker reports once, at its end.
#[derive(Debug)]
pub struct WorkerTotals {
    pub status: StatusCounts,
    pub rates: RateSamples,
    /// When its last counted response arrived (0 if none).
    pub last_done: u64,
    /// Schedule lag of its counted requests, µs.
    pub lag: Histogram,
    /// Requests scheduled in the window that it never sent.
    pub unsent: u64,
    /// Its CPU over the measured window.
    pub cpu: Option<ThreadCpu>,
}

impl Default for WorkerTotals {
    fn default() -> Self {
        WorkerTotals {
            status: vec![0; 1000],
            rates: RateSamples::default(),
            last_done: 0,
            lag: Histogram::new(),
            unsent: 0,
            cpu: None,
        }
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
