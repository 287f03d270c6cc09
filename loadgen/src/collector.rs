//! The main thread's side of recording: adds up what the workers recorded for each
//! interval (by scheduled time), finalizes the intervals in order — hdr log, per-step
//! and per-interval summaries, run totals — as soon as every worker has settled them,
//! counts what of the window was never sent once its end is final, and feeds the
//! workers' reports to the early-stop rule as they come.

use crate::cpu_usage::ThreadCpu;
use crate::early_stop::{StopRule, Watch};
use crate::hdr_log::HdrLog;
use crate::histogram::Histogram;
use crate::partition::Share;
use crate::recording::{Errors, Interval, IntervalData, RateSamples, Report, StatusTally, WorkerTotals};
use crate::schedule::Plan;
use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

/// One rate step: what its requests became (`steps` in the JSON summary).
pub struct StepSummary {
    pub index: usize,
    pub target_rate: f64,
    pub start_s: f64,
    pub end_s: f64,
    pub requests: u64,
    pub errors: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// One hdr-log interval: the requests the schedule offered in it, and what became of them.
pub struct IntervalSummary {
    pub start_s: f64,
    pub end_s: f64,
    /// Requests scheduled (due) in [start, end).
    pub offered: u64,
    /// Of those, the answered ones (whenever the answer came).
    pub completed: u64,
    pub errors: Errors,
    /// Those responses by status code.
    pub status_codes: StatusTally,
    /// Sent but neither answered nor lost when the run ended; never sent.
    pub unanswered: u64,
    pub unsent: u64,
}

struct StepAcc {
    requests: u64,
    errors: u64,
    latency: Histogram,
}

pub struct Collector {
    intervals: Vec<Interval>,
    plan: Arc<Plan>,
    /// The part of the run this process runs: offered counts and target rates are its.
    share: Share,
    u_latency: bool,
    /// Per worker: nothing more will come from it for the intervals before this one.
    settled: Vec<usize>,
    /// What the workers recorded for the intervals not yet finalized.
    open: BTreeMap<usize, IntervalData>,
    /// The next interval to finalize.
    next: usize,
    /// Each ended worker's connections' first unsent requests (schedule numbers).
    first_unsent: Vec<u64>,
    pub total: IntervalData,
    pub rates: RateSamples,
    pub status: Vec<u64>,
    pub lag: Histogram,
    pub last_done: u64,
    /// The latest due time of a counted request (absolute ns; 0 if none).
    last_counted_due: u64,
    /// Each worker's CPU over the window, in worker order.
    pub worker_cpu: Vec<Option<ThreadCpu>>,
    step_acc: Option<(usize, StepAcc)>,
    pub step_summaries: Vec<StepSummary>,
    pub summaries: Vec<IntervalSummary>,
    watch: Option<Watch>,
    /// The rule fired: the reason, until the main thread acts on it.
    stop_request: Option<String>,
    log: Option<HdrLog>,
    log_error: Option<io::Error>,
    /// End of the run, ns relative to the window start (the last step extends to it:
    /// the drain).
    pub end_rel_ns: u64,
    /// End of the window, ns relative to its start: nothing is offered after it (the
    /// window's length, or less after an early stop or an interruption).
    pub window_end_rel_ns: u64,
}

impl Collector {
    pub fn new(
        workers: usize,
        intervals: Vec<Interval>,
        plan: Arc<Plan>,
        share: Share,
        u_latency: bool,
        log: Option<HdrLog>,
        stop_rule: Option<StopRule>,
    ) -> Self {
        let end_rel_ns = intervals.last().map_or(0, |s| s.end_ns);
        Collector {
            intervals,
            window_end_rel_ns: plan.window_end_ns - plan.window_start_ns,
            plan,
            share,
            u_latency,
            settled: vec![0; workers],
            open: BTreeMap::new(),
            next: 0,
            first_unsent: Vec::new(),
            total: IntervalData::new(u_latency),
            rates: RateSamples::default(),
            status: vec![0; 1000],
            lag: Histogram::new(),
            last_done: 0,
            last_counted_due: 0,
            worker_cpu: vec![None; workers],
            step_acc: None,
            step_summaries: Vec::new(),
            summaries: Vec::new(),
            watch: stop_rule.map(|rule| Watch::new(rule, workers)),
            stop_request: None,
            log,
            log_error: None,
            end_rel_ns,
        }
    }

    pub fn log_mut(&mut self) -> Option<&mut HdrLog> {
        self.log.as_mut()
    }

    /// Worker `worker` moved past interval `index` of the run's clock.
    pub fn progress(&mut self, worker: usize, index: usize, report: Report) {
        if let Some(reason) = self.watch.as_mut().and_then(|w| w.progress(worker, index, &report)) {
            self.stop_request.get_or_insert(reason);
        }
        self.add(worker, report);
        self.drain();
    }

    /// A worker's last report and its totals.
    pub fn finished(&mut self, worker: usize, report: Report, totals: &WorkerTotals) {
        if let Some(reason) = self.watch.as_mut().and_then(|w| w.finished(worker)) {
            self.stop_request.get_or_insert(reason);
        }
        self.add(worker, report);
        for (a, b) in self.status.iter_mut().zip(&totals.status) {
            *a += b;
        }
        self.rates.add(&totals.rates);
        self.lag.add(&totals.lag);
        self.last_done = self.last_done.max(totals.last_done);
        self.last_counted_due = self.last_counted_due.max(totals.last_counted_due);
        self.first_unsent.extend(&totals.first_unsent);
        self.worker_cpu[worker] = totals.cpu.clone();
        self.drain();
    }

    fn add(&mut self, worker: usize, report: Report) {
        for (index, part) in report.parts {
            debug_assert!(index >= self.next, "interval {index} was finalized before worker {worker} settled it");
            self.open.entry(index).or_insert_with(|| IntervalData::new(self.u_latency)).add(&part);
        }
        self.settled[worker] = self.settled[worker].max(report.settled);
    }

    /// The early-stop rule fired: its reason, once.
    pub fn take_stop_request(&mut self) -> Option<String> {
        self.stop_request.take()
    }

    /// A worker that failed sends nothing more.
    pub fn failed(&mut self, _worker: usize) {}

    /// The intervals written: those the window reaches into (at least one).
    fn written(&self) -> usize {
        self.intervals.partition_point(|iv| iv.start_ns < self.window_end_rel_ns).max(1)
    }

    /// Finalizes intervals in order while every worker has settled them.
    fn drain(&mut self) {
        let written = self.written();
        while self.next < written && self.settled.iter().all(|&s| s > self.next) {
            self.finalize_next();
        }
    }

    /// The window's end is final (`close_window`): counts what of it was never sent and
    /// finalizes every interval left.
    pub fn finish(&mut self) {
        self.count_unsent();
        while self.next < self.written() {
            self.finalize_next();
        }
        self.close_step();
        if let Some(log) = &mut self.log
            && let Err(e) = log.flush()
        {
            self.log_error.get_or_insert(e);
        }
    }

    /// Makes the window reach every request counted and every interval already
    /// finalized: a worker may have sent requests due after an early end before it saw
    /// it, and those count (they are offered too). `w0`: the window's start (absolute ns).
    pub fn close_window(&mut self, w0: u64) {
        let counted = if self.last_counted_due >= w0 { self.last_counted_due - w0 + 1 } else { 0 };
        let finalized = self.next.checked_sub(1).map_or(0, |i| self.intervals[i].end_ns);
        self.window_end_rel_ns = self.window_end_rel_ns.max(counted).max(finalized);
    }

    /// Adds to each interval the requests scheduled in it that never left: for each
    /// connection, its requests from its first unsent one up to the window's end.
    fn count_unsent(&mut self) {
        let c = self.share.total_conns;
        let ws = self.plan.window_start_ns;
        let end = self.plan.due_before(ws + self.window_end_rel_ns);
        // Schedule numbers at the intervals' starts, then the end.
        let starts = self.intervals.iter().map(|iv| self.plan.due_before(ws + iv.start_ns).min(end));
        let bounds: Vec<u64> = starts.chain([end]).collect();
        for &first in &self.first_unsent {
            // This connection's requests first, first + C, …: how many come before n.
            let before = |n: u64| n.saturating_sub(first).div_ceil(c);
            let from = bounds.partition_point(|&b| b <= first).saturating_sub(1);
            for j in from..self.intervals.len() {
                if bounds[j] >= end {
                    break;
                }
                let n = before(bounds[j + 1]) - before(bounds[j]);
                if n > 0 {
                    self.open.entry(j).or_insert_with(|| IntervalData::new(self.u_latency)).unsent += n;
                }
            }
        }
    }

    /// Requests the schedule offers this process in [a, b) (ns relative to the window start).
    fn offered_between(&self, a: u64, b: u64) -> u64 {
        let ws = self.plan.window_start_ns;
        let (a, b) = (a.min(self.window_end_rel_ns), b.min(self.window_end_rel_ns));
        let owned_before = |t: u64| self.share.owned_before(self.plan.due_before(ws + t));
        owned_before(b) - owned_before(a)
    }

    /// This process's share of a rate of the whole run.
    pub fn share_of(&self, rate: f64) -> f64 {
        rate * self.share.fraction()
    }

    /// All requests the schedule offered in the measured window.
    pub fn offered(&self) -> u64 {
        self.offered_between(0, self.window_end_rel_ns)
    }

    fn finalize_next(&mut self) {
        let index = self.next;
        self.next += 1;
        let data = self.open.remove(&index).unwrap_or_else(|| IntervalData::new(self.u_latency));
        let interval = self.intervals[index];
        if self.step_acc.as_ref().is_none_or(|(s, _)| *s != interval.step) {
            self.close_step();
            self.step_acc = Some((interval.step, StepAcc { requests: 0, errors: 0, latency: Histogram::new() }));
            if let Some(log) = &mut self.log {
                let st = &self.plan.steps[interval.step];
                if self.plan.steps.len() > 1 {
                    let rate = st.target_rate * self.share.fraction();
                    let r = log.step(st.index, rate, st.start_ns as f64 / 1e9, st.end_ns as f64 / 1e9);
                    if let Err(e) = r {
                        self.log_error.get_or_insert(e);
                    }
                }
            }
        }
        if let Some((_, acc)) = &mut self.step_acc {
            acc.requests += data.requests;
            acc.errors += data.errors.total();
            acc.latency.add(&data.corrected);
        }
        // An interval is what was scheduled in it: the window's end cuts the last one.
        let end_ns = interval.end_ns.min(self.window_end_rel_ns).max(interval.start_ns);
        let (start, end) = (interval.start_ns as f64 / 1e9, end_ns as f64 / 1e9);
        if let Some(log) = &mut self.log {
            let mut r = log.interval(start, end - start, &data.corrected, None);
            if let (Ok(()), Some(u)) = (&r, &data.uncorrected) {
                r = log.interval(start, end - start, u, Some("uncorrected"));
            }
            // Flushed per interval so the log can be followed during the run.
            if r.is_ok() {
                r = log.flush();
            }
            if let Err(e) = r {
                self.log_error.get_or_insert(e);
            }
        }
        self.summaries.push(IntervalSummary {
            start_s: start,
            end_s: end,
            offered: self.offered_between(interval.start_ns, interval.end_ns),
            completed: data.requests,
            errors: data.errors,
            status_codes: data.status.clone(),
            unanswered: data.unanswered,
            unsent: data.unsent,
        });
        self.total.add(&data);
    }

    /// Writes the early stop's comment into the hdr log (after the intervals written by then).
    pub fn note_stop(&mut self, at_s: f64, rate: f64, reason: &str) {
        if let Some(log) = &mut self.log
            && let Err(e) = log.stopped(at_s, rate, reason).and_then(|()| log.flush())
        {
            self.log_error.get_or_insert(e);
        }
    }

    fn close_step(&mut self) {
        if let Some((idx, acc)) = self.step_acc.take() {
            let st = &self.plan.steps[idx];
            let end = self.end_of(st.start_ns, st.end_ns, idx + 1 == self.plan.steps.len());
            self.step_summaries.push(StepSummary {
                index: st.index,
                target_rate: self.share_of(st.target_rate),
                start_s: st.start_ns as f64 / 1e9,
                end_s: end as f64 / 1e9,
                requests: acc.requests,
                errors: acc.errors,
                p50: acc.latency.value_at_percentile(50.0),
                p99: acc.latency.value_at_percentile(99.0),
                max: acc.latency.max(),
            });
        }
    }

    /// End of a step: cut short by an early end; the last one also extends over the
    /// drain after the window, so its achieved rate is that of the run.
    fn end_of(&self, start: u64, end: u64, last: bool) -> u64 {
        let cut = self.end_rel_ns.max(start);
        if last || end >= self.window_end_rel_ns { cut } else { end.min(cut) }
    }

    pub fn take_log_error(&mut self) -> Option<io::Error> {
        self.log_error.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse};
    use crate::recording::intervals;

    #[test]
    fn unsent_requests_count_in_the_intervals_they_were_due_in() {
        let args: Vec<String> =
            ["-t1", "-c4", "-R1000", "-d1s", "--warmup", "500ms", "http://h/"].map(String::from).to_vec();
        let Ok(Command::Run(cfg)) = parse(&args) else { panic!() };
        let plan = Arc::new(Plan::from_config(&cfg));
        // Requests 500..1500 are due in the window, 250 in each interval; connection g owns g, g+4, …
        let grid = intervals(&plan, 250_000_000);
        let mut c = Collector::new(1, grid, plan, Share::of(1, 4, None), false, None, None);
        // Connection 0 sent nothing since the warm-up's request 100; 1 all but its last (1497);
        // 2 everything; 3 nothing from request 1003 on (in the third interval).
        let totals = WorkerTotals { first_unsent: vec![100, 1497, 1502, 1003], ..Default::default() };
        c.finished(0, Report::default(), &totals);
        c.close_window(0);
        c.finish();
        let unsent: Vec<u64> = c.summaries.iter().map(|s| s.unsent).collect();
        assert_eq!(unsent, [63, 62, 63 + 62, 62 + 1 + 63]);
        assert!(c.summaries.iter().all(|s| s.offered == 250));
        assert_eq!(c.total.unsent, 376);
    }
}
