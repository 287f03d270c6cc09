//! What workers record and hand to the main thread: per-interval histograms and
//! counters (an interval is one hdr-log interval inside one rate step; a request is
//! recorded in the interval it was scheduled in), how far each worker's intervals are
//! settled, and per-thread request-rate samples for wrk's "Req/Sec" line.

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

/// The interval that time `t` (ns after the window's start) falls in; the last one
/// for any time after it.
pub fn interval_at(grid: &[Interval], t: u64) -> usize {
    grid.partition_point(|iv| iv.end_ns <= t).min(grid.len().saturating_sub(1))
}

/// How many intervals have ended by time `t` (ns after the window's start).
pub fn ended_by(grid: &[Interval], t: u64) -> usize {
    grid.partition_point(|iv| iv.end_ns <= t)
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

/// What was recorded for the requests scheduled in one interval (by one worker, or merged).
#[derive(Debug, Default)]
pub struct IntervalData {
    pub corrected: Histogram,
    pub uncorrected: Option<Histogram>,
    /// Counted responses.
    pub requests: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub errors: Errors,
    /// The counted responses by status code.
    pub status: StatusTally,
    /// Requests sent that were neither answered nor lost when the run ended.
    pub unanswered: u64,
    /// Requests never sent (added by the main thread once the run's end is known).
    pub unsent: u64,
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
        self.unanswered += o.unanswered;
        self.unsent += o.unsent;
    }
}

/// What a worker hands over as it goes (at the end of each interval of the run's clock,
/// and once more when it ends).
#[derive(Debug, Default)]
pub struct Report {
    /// What it recorded since its last report, by the interval the requests were
    /// scheduled in (a few at most: answers come in about the order they were due).
    pub parts: Vec<(usize, IntervalData)>,
    /// Nothing more will come from it for the intervals before this one.
    pub settled: usize,
    /// How long the oldest counted request not yet answered had waited since it was
    /// due (µs): a latency the histograms cannot show yet (for `--stop-on-p99`).
    pub oldest_pending_us: u64,
}

/// Messages from a worker to the main thread.
pub enum WorkerMsg {
    /// Connections are open (or failed to open); waiting for the start time.
    Ready,
    /// The worker moved past interval `index` of the run's clock.
    Progress {
        worker: usize,
        index: usize,
        report: Box<Report>,
    },
    /// The worker's last report comes with its totals.
    Finished {
        worker: usize,
        report: Box<Report>,
        totals: Box<WorkerTotals>,
    },
    Failed {
        worker: usize,
        error: String,
    },
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
    /// The latest due time of a request it counted (absolute ns; 0 if none).
    pub last_counted_due: u64,
    /// For each of its connections, the schedule's number of the first request it
    /// never sent: the main thread counts what of the window was left unsent.
    pub first_unsent: Vec<u64>,
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
            last_counted_due: 0,
            first_unsent: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_falls_in_one_interval_and_intervals_end_in_order() {
        let grid: Vec<Interval> =
            [(0, 10), (10, 20), (20, 25)].map(|(s, e)| Interval { start_ns: s, end_ns: e, step: 0 }).to_vec();
        assert_eq!([0, 9, 10, 24].map(|t| interval_at(&grid, t)), [0, 0, 1, 2]);
        assert_eq!(interval_at(&grid, 99), 2, "after the window: the last");
        assert_eq!([0, 9, 10, 24, 25, u64::MAX].map(|t| ended_by(&grid, t)), [0, 0, 1, 2, 3, 3]);
    }
}
