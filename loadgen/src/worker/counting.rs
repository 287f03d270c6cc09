//! What one worker counts: the measured window and its intervals, which requests
//! count (by release time), their responses, bytes, statuses and latencies, errors,
//! schedule lag, Req/Sec samples and the thread's CPU over the window. Each interval
//! goes to the main thread as soon as the worker has moved past it.
//!
//! A request's *release* is the later of its due time and the moment its connection
//! became free to take it (connected, or the previous response arrived). It counts
//! when that is in the window: over capacity that includes a warm-up backlog released
//! in the window, and the generator's own lateness never moves a request across the
//! window's start (nothing due after the window is ever sent).

use super::WorkerMsg;
use crate::cpu_usage::{self, ThreadSample};
use crate::recording::{ErrorKind, Interval, IntervalData, WorkerTotals};
use std::sync::Arc;
use std::sync::mpsc::Sender;

/// Req/Sec samples (and the timeout check) are this far apart.
pub const TICK_NS: u64 = 100_000_000;

/// A counted response, as `Tally::response` records it.
pub struct Answer {
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
    /// The interval being recorded: its index in `grid`, its end (absolute ns), its data.
    index: usize,
    interval_end: u64,
    current: Box<IntervalData>,
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
            current: Box::new(IntervalData::new(u_latency)),
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

    /// Whether an event at time t (a connect attempt, stray bytes) is counted: after
    /// the window starts, through the drain (the worker stops at the drain's end).
    #[inline]
    pub fn in_window(&self, t: u64) -> bool {
        t >= self.window_start
    }

    /// Whether a request released at `release` is counted (see the module's doc).
    #[inline]
    pub fn counts(&self, release: u64) -> bool {
        release >= self.window_start
    }

    /// A counted request left at `sent`, released at `release`: its schedule lag.
    #[inline]
    pub fn lag(&mut self, sent: u64, release: u64) {
        self.totals.lag.record(sent.saturating_sub(release) / 1000);
    }

    #[inline]
    pub fn error(&mut self, kind: ErrorKind) {
        self.current.errors.count(kind);
    }

    /// One consistent set: a counted response's count, bytes, status and latencies.
    pub fn response(&mut self, a: &Answer) {
        self.totals.status[(a.status as usize).min(999)] += 1;
        self.current.status.count(a.status);
        self.current.requests += 1;
        self.current.bytes_read += a.bytes_read;
        self.current.bytes_written += a.bytes_written;
        self.totals.last_done = self.totals.last_done.max(a.arrived);
        if a.arrived < self.window_end {
            self.sample_count += 1;
        }
        if a.status > 399 {
            self.current.errors.count(ErrorKind::Status);
        }
        if let Some((intended, sent)) = a.latency_from {
            self.current.corrected.record(a.arrived.saturating_sub(intended) / 1000);
            if let Some(u) = &mut self.current.uncorrected {
                u.record(a.arrived.saturating_sub(sent) / 1000);
            }
        }
    }

    /// When the current interval ends, if another follows it in the window (after the
    /// window's end, the last one takes the drain's answers).
    pub fn next_roll(&self) -> Option<u64> {
        (self.index + 1 < self.grid.len() && self.interval_end < self.window_end).then_some(self.interval_end)
    }

    /// Time t is past the current interval's end.
    #[inline]
    pub fn past_interval(&self, t: u64) -> bool {
        t >= self.interval_end
    }

    /// Hands every interval that ended by time t to the main thread. `oldest_wait(at)`
    /// is how long the oldest counted request still unanswered at `at` has waited.
    pub fn roll(&mut self, t: u64, oldest_wait: impl Fn(u64) -> u64) {
        while let Some(end) = self.next_roll().filter(|&end| t >= end) {
            self.current.oldest_pending_us = oldest_wait(end) / 1000;
            let data = std::mem::replace(&mut self.current, Box::new(IntervalData::new(self.u_latency)));
            let _ = self.tx.send(WorkerMsg::Interval { worker: self.worker, index: self.index, data });
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

    /// The worker's end at `now`: the last (possibly partial) interval and the totals
    /// go to the main thread. `unsent`: requests of the window it never sent.
    pub fn finish(&mut self, now: u64, unsent: u64) {
        if now >= self.window_start && self.sample_count > 0 && self.totals.rates.hist.is_empty() {
            // A run shorter than one sampling period still gets a rate (never "nan").
            let elapsed = now.min(self.window_end).saturating_sub(self.sample_start).max(1);
            self.totals.rates.record(self.sample_count * 1_000_000_000 / elapsed);
        }
        self.totals.unsent = unsent;
        let end = cpu_usage::sample_thread();
        self.totals.cpu = Some(self.cpu_start.as_ref().unwrap_or(&end).until(&end));
        let data = std::mem::replace(&mut self.current, Box::new(IntervalData::new(self.u_latency)));
        let totals = std::mem::take(&mut self.totals);
        let _ = self.tx.send(WorkerMsg::Finished { worker: self.worker, index: self.index, data, totals });
    }
}
