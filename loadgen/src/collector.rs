//! The main thread's side of recording: merges the workers' segments in order,
//! writes each finished interval to the hdr log as soon as every worker has moved
//! past it, and keeps the run totals and per-step summaries.

use crate::hdr_log::HdrLog;
use crate::histogram::Histogram;
use crate::json_summary::StepSummary;
use crate::recording::{RateSamples, Segment, SegmentData};
use crate::schedule::Step;
use std::collections::BTreeMap;
use std::io;

struct StepAcc {
    requests: u64,
    errors: u64,
    latency: Histogram,
}

pub struct Collector {
    segments: Vec<Segment>,
    steps: Vec<Step>,
    u_latency: bool,
    /// Highest segment each worker has completed and moved past (sent while
    /// running), and the index of its final, possibly partial, segment.
    rolled: Vec<Option<usize>>,
    last: Vec<Option<usize>>,
    finished: Vec<bool>,
    pending: BTreeMap<usize, SegmentData>,
    next: usize,
    pub total: SegmentData,
    pub rates: RateSamples,
    pub status: Vec<u64>,
    step_acc: Option<(usize, StepAcc)>,
    pub step_summaries: Vec<StepSummary>,
    log: Option<HdrLog>,
    log_error: Option<io::Error>,
    /// End of the measured data, ns relative to the window start (for the last
    /// interval's length when a run is cut short).
    pub end_rel_ns: u64,
}

impl Collector {
    pub fn new(workers: usize, segments: Vec<Segment>, steps: Vec<Step>, u_latency: bool, log: Option<HdrLog>) -> Self {
        let end_rel_ns = segments.last().map_or(0, |s| s.end_ns);
        Collector {
            segments,
            steps,
            u_latency,
            rolled: vec![None; workers],
            last: vec![None; workers],
            finished: vec![false; workers],
            pending: BTreeMap::new(),
            next: 0,
            total: SegmentData::new(u_latency),
            rates: RateSamples::default(),
            status: vec![0; 1000],
            step_acc: None,
            step_summaries: Vec::new(),
            log,
            log_error: None,
            end_rel_ns,
        }
    }

    pub fn log_mut(&mut self) -> Option<&mut HdrLog> {
        self.log.as_mut()
    }

    pub fn segment(&mut self, worker: usize, index: usize, data: &SegmentData) {
        self.rolled[worker] = Some(self.rolled[worker].map_or(index, |s| s.max(index)));
        self.pending.entry(index).or_insert_with(|| SegmentData::new(self.u_latency)).add(data);
        self.drain(false);
    }

    /// A worker's last segment and totals. Its last segment is finalized by
    /// `drain(true)`, once the run's end (and so that interval's length) is known.
    pub fn finished(&mut self, worker: usize, index: usize, data: &SegmentData, status: &[u64], rates: &RateSamples) {
        self.last[worker] = Some(index);
        self.pending.entry(index).or_insert_with(|| SegmentData::new(self.u_latency)).add(data);
        self.finished[worker] = true;
        for (a, b) in self.status.iter_mut().zip(status) {
            *a += b;
        }
        self.rates.add(rates);
    }

    /// A worker that failed sends nothing more.
    pub fn failed(&mut self, worker: usize) {
        self.finished[worker] = true;
    }

    /// Every worker has moved past segment `index`, or finished after it.
    fn complete(&self, index: usize) -> bool {
        (0..self.rolled.len())
            .all(|w| self.rolled[w].is_some_and(|s| s >= index) || self.last[w].is_some_and(|l| l > index))
    }

    /// Finalizes segments in order while they are complete (or all, at the end).
    pub fn drain(&mut self, everything: bool) {
        // Segments after an interruption were never sent and are not written.
        let last_sent = self.rolled.iter().chain(&self.last).flatten().max().copied();
        while self.next < self.segments.len() {
            let ready = if everything { last_sent.is_some_and(|l| self.next <= l) } else { self.complete(self.next) };
            if !ready {
                break;
            }
            let data = self.pending.remove(&self.next).unwrap_or_else(|| SegmentData::new(self.u_latency));
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

    fn finalize(&mut self, index: usize, data: SegmentData) {
        let seg = self.segments[index];
        if self.step_acc.as_ref().is_none_or(|(s, _)| *s != seg.step) {
            self.close_step();
            self.step_acc = Some((seg.step, StepAcc { requests: 0, errors: 0, latency: Histogram::new() }));
            if let Some(log) = &mut self.log {
                let st = &self.steps[seg.step];
                if self.steps.len() > 1 {
                    let r = log.step(st.index, st.target_rate, st.start_ns as f64 / 1e9, st.end_ns as f64 / 1e9);
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
        let end = self.end_of(seg.start_ns, seg.end_ns, index + 1 == self.segments.len()) as f64 / 1e9;
        if let Some(log) = &mut self.log {
            let start = seg.start_ns as f64 / 1e9;
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
        self.total.add(&data);
    }

    fn close_step(&mut self) {
        if let Some((idx, acc)) = self.step_acc.take() {
            let st = &self.steps[idx];
            let end = self.end_of(st.start_ns, st.end_ns, idx + 1 == self.steps.len());
            self.step_summaries.push(StepSummary {
                index: st.index,
                target_rate: st.target_rate,
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
        if last { cut } else { end.min(cut) }
    }

    pub fn take_log_error(&mut self) -> Option<io::Error> {
        self.log_error.take()
    }
}
