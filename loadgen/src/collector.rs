//! The main thread's side of recording: merges the workers' intervals in order,
//! writes each finished interval to the hdr log as soon as every worker has moved
//! past it, keeps the run totals, per-step and per-interval summaries, and checks
//! the early-stop rule on each finished interval.

use crate::cpu_usage::ThreadCpu;
use crate::early_stop::StopRule;
use crate::hdr_log::HdrLog;
use crate::histogram::Histogram;
use crate::json_summary::{IntervalSummary, StepSummary};
use crate::partition::Share;
use crate::recording::{Interval, IntervalData, RateSamples, WorkerTotals};
use crate::schedule::Plan;
use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

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
    /// Highest interval each worker has completed and moved past (sent while
    /// running), and the index of its final, possibly partial, interval.
    rolled: Vec<Option<usize>>,
    last: Vec<Option<usize>>,
    pending: BTreeMap<usize, IntervalData>,
    next: usize,
    pub total: IntervalData,
    pub rates: RateSamples,
    pub status: Vec<u64>,
    pub lag: Histogram,
    pub unsent: u64,
    pub last_done: u64,
    /// Each worker's CPU over the window, in worker order.
    pub worker_cpu: Vec<Option<ThreadCpu>>,
    step_acc: Option<(usize, StepAcc)>,
    pub step_summaries: Vec<StepSummary>,
    pub summaries: Vec<IntervalSummary>,
    stop_rule: Option<StopRule>,
    /// The rule fired: the reason, until the main thread acts on it.
    stop_request: Option<String>,
    log: Option<HdrLog>,
    log_error: Option<io::Error>,
    /// End of the measured data, ns relative to the window start (for the last
    /// interval's length when a run is cut short or drains).
    pub end_rel_ns: u64,
    /// End of the schedule, ns relative to the window start: nothing is offered after
    /// it (the window's length, or less after an early stop or an interruption).
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
            rolled: vec![None; workers],
            last: vec![None; workers],
            pending: BTreeMap::new(),
            next: 0,
            total: IntervalData::new(u_latency),
            rates: RateSamples::default(),
            status: vec![0; 1000],
            lag: Histogram::new(),
            unsent: 0,
            last_done: 0,
            worker_cpu: vec![None; workers],
            step_acc: None,
            step_summaries: Vec::new(),
            summaries: Vec::new(),
            stop_rule,
            stop_request: None,
            log,
            log_error: None,
            end_rel_ns,
        }
    }

    pub fn log_mut(&mut self) -> Option<&mut HdrLog> {
        self.log.as_mut()
    }

    pub fn interval(&mut self, worker: usize, index: usize, data: &IntervalData) {
        self.rolled[worker] = Some(self.rolled[worker].map_or(index, |s| s.max(index)));
        self.pending.entry(index).or_insert_with(|| IntervalData::new(self.u_latency)).add(data);
        self.drain(false);
    }

    /// A worker's last interval and totals. Its last interval is finalized by
    /// `drain(true)`, once the run's end (and so that interval's length) is known.
    pub fn finished(&mut self, worker: usize, index: usize, data: &IntervalData, totals: &WorkerTotals) {
        self.last[worker] = Some(index);
        self.pending.entry(index).or_insert_with(|| IntervalData::new(self.u_latency)).add(data);
        for (a, b) in self.status.iter_mut().zip(&totals.status) {
            *a += b;
        }
        self.rates.add(&totals.rates);
        self.lag.add(&totals.lag);
        self.unsent += totals.unsent;
        self.last_done = self.last_done.max(totals.last_done);
        self.worker_cpu[worker] = totals.cpu.clone();
    }

    /// The early-stop rule fired on the last interval: its reason, once.
    pub fn take_stop_request(&mut self) -> Option<String> {
        self.stop_request.take()
    }

    /// A worker that failed sends nothing more.
    pub fn failed(&mut self, _worker: usize) {}

    /// Every worker has moved past interval `index`, or finished after it.
    fn complete(&self, index: usize) -> bool {
        (0..self.rolled.len())
            .all(|w| self.rolled[w].is_some_and(|s| s >= index) || self.last[w].is_some_and(|l| l > index))
    }

    /// Finalizes intervals in order while they are complete (or all, at the end).
    pub fn drain(&mut self, everything: bool) {
        // Intervals after an interruption were never sent and are not written.
        let last_sent = self.rolled.iter().chain(&self.last).flatten().max().copied();
        while self.next < self.intervals.len() {
            let ready = if everything { last_sent.is_some_and(|l| self.next <= l) } else { self.complete(self.next) };
            if !ready {
                break;
            }
            let data = self.pending.remove(&self.next).unwrap_or_else(|| IntervalData::new(self.u_latency));
            self.finalize(self.next, data);
            self.next += 1;
        }
        if everything {
            self.close_step();
            if let Some(log) = &mut self.log
                && let Err(e) = log.flush()
            {
                self.log_error.get_or_insert(e);
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

    fn finalize(&mut self, index: usize, data: IntervalData) {
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
        let end_ns = self.end_of(interval.start_ns, interval.end_ns, index + 1 == self.intervals.len());
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
        });
        if let Some(rule) = &mut self.stop_rule
            && let Some(reason) =
                rule.observe(data.corrected.value_at_percentile(99.0), data.requests, data.oldest_pending_us)
        {
            self.stop_request = Some(reason);
        }
        self.total.add(&data);
    }

    /// Writes the early stop's comment into the hdr log (after the interval that fired).
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

    /// End of an interval or step: cut short by an early end; the last one also
    /// extends over the drain after the window.
    fn end_of(&self, start: u64, end: u64, last: bool) -> u64 {
        let cut = self.end_rel_ns.max(start);
        if last || end >= self.window_end_rel_ns { cut } else { end.min(cut) }
    }

    pub fn take_log_error(&mut self) -> Option<io::Error> {
        self.log_error.take()
    }
}
