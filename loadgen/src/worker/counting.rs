//! What one worker counts: the measured window and its intervals, which requests
//! count (by scheduled time), their responses, bytes, statuses and latencies, errors,
//! schedule lag, Req/Sec samples and the thread's CPU over the window. At the end of
//! each interval of the run's clock it hands the main thread what it recorded since,
//! and how far its intervals are settled.
//!
//! A request counts when it is *due* in the window, and in the interval its due time
//! falls in, however late it is sent or answered: the same time its corrected latency
//! is measured from, and the time `offered` counts it by. So a warm-up request answered
//! in the window counts nowhere, and the window (or an interval) never counts more
//! requests than the schedule offered in it.

use crate::cpu_usage::{self, ThreadSample};
use crate::recording::{self, ErrorKind, Interval, IntervalData, Report, WorkerMsg, WorkerTotals};
use std::sync::Arc;
use std::sync::mpsc::Sender;

/// Req/Sec samples (and the timeout check) are this far apart.
pub const TICK_NS: u64 = 100_000_000;

/// A counted response, as `Tally::response` records it.
pub struct Answer {
    /// The interval its request was scheduled in.
    pub interval: usize,
    /// When its last bytes arrived (absolute monotonic ns).
    pub arrived: u64,
    pub status: u16,
    pub bytes_read: u64,
    /// The request's bytes (0 for the later responses of a pipelined batch).
    pub bytes_written: u64,
    /// When the request was meant to go out and when it did; `None` when this
    /// response's latency is not recorded (`-B`: only a batch's last one is).
    pub latency_from: Option<(u64, u64)>,
}

pub struct Tally {
    worker: usize,
    tx: Sender<WorkerMsg>,
    /// The hdr-log intervals, relative to the window's start.
    grid: Arc<Vec<Interval>>,
    u_latency: bool,
    /// The measured window (absolute monotonic ns). An early stop moves its end earlier.
    pub window_start: u64,
    pub window_end: u64,
    /// The interval of the run's clock under way: its index in `grid` and its end
    /// (absolute ns). Reports go out as it ends.
    index: usize,
    interval_end: u64,
    /// Recorded since the last report, by the interval the requests were scheduled in.
    parts: Vec<(usize, IntervalData)>,
    totals: Box<WorkerTotals>,
    /// The Req/Sec sample under way: since when, and the responses in it.
    sample_start: u64,
    sample_count: u64,
    cpu_start: Option<ThreadSample>,
}

impl Tally {
    pub fn new(worker: usize, tx: Sender<WorkerMsg>, grid: Arc<Vec<Interval>>, u_latency: bool) -> Tally {
        Tally {
            worker,
            tx,
            grid,
            u_latency,
            window_start: 0,
            window_end: 0,
            index: 0,
            interval_end: u64::MAX,
            parts: Vec::new(),
            totals: Box::default(),
            sample_start: 0,
            sample_count: 0,
            cpu_start: None,
        }
    }

    pub fn start(&mut self, window_start: u64, window_end: u64) {
        self.window_start = window_start;
        self.window_end = window_end;
        self.interval_end = window_start + self.grid.first().map_or(0, |i| i.end_ns);
        self.sample_start = window_start;
    }

    /// A request due at `due` leaves (or fails to connect): the interval it counts in,
    /// or `None` when it is not due in the window.
    #[inline]
    pub fn dispatched(&mut self, due: u64) -> Option<usize> {
        if due < self.window_start || due >= self.window_end {
            return None;
        }
        self.totals.last_counted_due = self.totals.last_counted_due.max(due);
        Some(recording::interval_at(&self.grid, due - self.window_start))
    }

    /// A counted request left at `sent`, released at `release`: its schedule lag.
    #[inline]
    pub fn lag(&mut self, sent: u64, release: u64) {
        self.totals.lag.record(sent.saturating_sub(release) / 1000);
    }

    /// A counted request scheduled in `interval` failed.
    #[inline]
    pub fn error(&mut self, kind: ErrorKind, interval: usize) {
        self.part(interval).errors.count(kind);
    }

    /// An error that loses no request (bytes nobody asked for) at time t: it counts in
    /// the interval of its time once the window has started (the last one after it).
    pub fn stray_error(&mut self, kind: ErrorKind, t: u64) {
        if t >= self.window_start {
            let at = t.min(self.window_end.saturating_sub(1)) - self.window_start;
            self.part(recording::interval_at(&self.grid, at)).errors.count(kind);
        }
    }

    /// A counted request scheduled in `interval` was still unanswered when the worker ended.
    pub fn unanswered(&mut self, interval: usize) {
        self.part(interval).unanswered += 1;
    }

    /// One consistent set: a counted response's count, bytes, status and latencies.
    pub fn response(&mut self, a: &Answer) {
        self.totals.status[(a.status as usize).min(999)] += 1;
        self.totals.last_done = self.totals.last_done.max(a.arrived);
        if a.arrived < self.window_end {
            self.sample_count += 1;
        }
        let part = self.part(a.interval);
        part.status.count(a.status);
        part.requests += 1;
        part.bytes_read += a.bytes_read;
        part.bytes_written += a.bytes_written;
        if a.status > 399 {
            part.errors.count(ErrorKind::Status);
        }
        if let Some((intended, sent)) = a.latency_from {
            part.corrected.record(a.arrived.saturating_sub(intended) / 1000);
            if let Some(u) = &mut part.uncorrected {
                u.record(a.arrived.saturating_sub(sent) / 1000);
            }
        }
    }

    /// What has been recorded for `interval` since the last report.
    #[inline]
    fn part(&mut self, interval: usize) -> &mut IntervalData {
        let i = match self.parts.iter().rposition(|(j, _)| *j == interval) {
            Some(i) => i,
            None => {
                self.parts.push((interval, IntervalData::new(self.u_latency)));
                self.parts.len() - 1
            }
        };
        &mut self.parts[i].1
    }

    /// How many intervals are settled when every request still open (unanswered, or not
    /// yet sent) was due at or after `open_since` (absolute ns) and the clock reads t:
    /// those that ended before both. The window's last interval stays open until the
    /// worker ends (answers to it come in the drain).
    pub fn settled(&self, t: u64, open_since: u64) -> usize {
        let by = t.min(open_since).min(self.window_end.saturating_sub(1));
        recording::ended_by(&self.grid, by.saturating_sub(self.window_start))
    }

    /// When the current interval of the run's clock ends, if another follows it in the
    /// window (what comes after the window's end goes with the worker's end).
    pub fn next_roll(&self) -> Option<u64> {
        (self.index + 1 < self.grid.len() && self.interval_end < self.window_end).then_some(self.interval_end)
    }

    /// Time t is past the current interval's end.
    #[inline]
    pub fn past_interval(&self, t: u64) -> bool {
        t >= self.interval_end
    }

    /// Reports every interval of the run's clock that ended by time t to the main
    /// thread. `open_since()`: the due time of the oldest request still unanswered or
    /// unsent; `oldest_wait(at)`: how long the oldest counted request still unanswered at
    /// `at` has waited.
    pub fn roll(&mut self, t: u64, open_since: impl Fn() -> u64, oldest_wait: impl Fn(u64) -> u64) {
        while let Some(end) = self.next_roll().filter(|&end| t >= end) {
            let report = Box::new(Report {
                parts: std::mem::take(&mut self.parts),
                settled: self.settled(t, open_since()),
                oldest_pending_us: oldest_wait(end) / 1000,
            });
            let _ = self.tx.send(WorkerMsg::Progress { worker: self.worker, index: self.index, report });
            self.index += 1;
            self.interval_end = self.window_start + self.grid[self.index].end_ns;
        }
    }

    /// Every `TICK_NS`: a Req/Sec sample, and the CPU sample at the window's start.
    /// Returns when the next tick is due.
    pub fn tick(&mut self, t: u64) -> u64 {
        let (start, end) = (self.window_start, self.window_end);
        if t >= start && self.cpu_start.is_none() {
            self.cpu_start = Some(cpu_usage::sample_thread());
        }
        // Samples cover whole periods inside the window (none during the drain).
        if t >= self.sample_start + TICK_NS && self.sample_start + TICK_NS <= end {
            let elapsed = t.min(end) - self.sample_start;
            self.totals.rates.record(self.sample_count * 1_000_000_000 / elapsed);
            self.sample_count = 0;
            self.sample_start = t;
        }
        // Ticks are aligned to the window start so samples cover equal periods.
        if t < start { start.min(t + TICK_NS) } else { start + ((t - start) / TICK_NS + 1) * TICK_NS }
    }

    /// The worker's end at `now`: what it recorded since its last report and its totals
    /// go to the main thread. `open_since`: the due time of the first request it never
    /// sent (its intervals from there on wait for the run's end); `first_unsent`: that
    /// request's number in the schedule, for each of its connections.
    pub fn finish(&mut self, now: u64, open_since: u64, first_unsent: Vec<u64>) {
        if now >= self.window_start && self.sample_count > 0 && self.totals.rates.hist.is_empty() {
            // A run shorter than one sampling period still gets a rate (never "nan").
            let elapsed = now.min(self.window_end).saturating_sub(self.sample_start).max(1);
            self.totals.rates.record(self.sample_count * 1_000_000_000 / elapsed);
        }
        self.totals.first_unsent = first_unsent;
        let end = cpu_usage::sample_thread();
        self.totals.cpu = Some(self.cpu_start.as_ref().unwrap_or(&end).until(&end));
        let settled = recording::ended_by(&self.grid, open_since.saturating_sub(self.window_start));
        let report = Box::new(Report { parts: std::mem::take(&mut self.parts), settled, oldest_pending_us: 0 });
        let totals = std::mem::take(&mut self.totals);
        let _ = self.tx.send(WorkerMsg::Finished { worker: self.worker, report, totals });
    }
}
