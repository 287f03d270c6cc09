//! `--stop-on-p99 DUR --stop-intervals N`: ends the measured window once N
//! consecutive intervals have a corrected p99 above DUR, to bracket a breakpoint with
//! one ramp instead of running on far past it. An interval in which nothing completed
//! counts as above when a request had already waited longer than DUR at its end (a
//! server that stalls completely answers nothing at all).
//!
//! The rule watches the run as it goes (`Watch`): the intervals of the run's clock and
//! the answers that arrived in each, whenever their requests were scheduled. The
//! counts and the hdr log go by scheduled time and settle later (over capacity, much
//! later); a stop must not wait for them.

use crate::histogram::Histogram;
use crate::recording::Report;
use std::collections::BTreeMap;

pub struct StopRule {
    threshold_us: u64,
    needed: u32,
    streak: u32,
    fired: bool,
}

impl StopRule {
    pub fn new(threshold_us: u64, needed: u32) -> StopRule {
        StopRule { threshold_us, needed: needed.max(1), streak: 0, fired: false }
    }

    /// Feeds one finished interval; returns the reason once the rule fires.
    pub fn observe(&mut self, p99_us: u64, completed: u64, oldest_pending_us: u64) -> Option<String> {
        if self.fired {
            return None;
        }
        let above = if completed > 0 { p99_us > self.threshold_us } else { oldest_pending_us > self.threshold_us };
        self.streak = if above { self.streak + 1 } else { 0 };
        if self.streak < self.needed {
            return None;
        }
        self.fired = true;
        let ms = |us: u64| us as f64 / 1000.0;
        Some(if completed > 0 {
            format!(
                "p99 above {:.3} ms in {} consecutive intervals (last {:.3} ms)",
                ms(self.threshold_us),
                self.needed,
                ms(p99_us)
            )
        } else {
            format!(
                "p99 above {:.3} ms in {} consecutive intervals (last: no answer; a request waiting {:.3} ms)",
                ms(self.threshold_us),
                self.needed,
                ms(oldest_pending_us)
            )
        })
    }
}

/// The rule on the workers' reports, merged per interval of the run's clock once every
/// worker has moved past it.
pub struct Watch {
    rule: StopRule,
    /// Per worker: the next interval it reports (`usize::MAX` once it has ended).
    next_report: Vec<usize>,
    seen: BTreeMap<usize, Seen>,
    next: usize,
}

/// What arrived in one interval of the run's clock.
#[derive(Default)]
struct Seen {
    latency: Histogram,
    answered: u64,
    oldest_pending_us: u64,
}

impl Watch {
    pub fn new(rule: StopRule, workers: usize) -> Watch {
        Watch { rule, next_report: vec![0; workers], seen: BTreeMap::new(), next: 0 }
    }

    /// Worker `w` moved past interval `index` with `report`: the rule's reason, once it fires.
    pub fn progress(&mut self, w: usize, index: usize, report: &Report) -> Option<String> {
        let seen = self.seen.entry(index).or_default();
        for (_, part) in &report.parts {
            seen.latency.add(&part.corrected);
            seen.answered += part.requests;
        }
        seen.oldest_pending_us = seen.oldest_pending_us.max(report.oldest_pending_us);
        self.next_report[w] = index + 1;
        self.observe()
    }

    /// Worker `w` ended: it holds back no interval.
    pub fn finished(&mut self, w: usize) -> Option<String> {
        self.next_report[w] = usize::MAX;
        self.observe()
    }

    /// Feeds the rule every interval that all workers have moved past, in order.
    fn observe(&mut self) -> Option<String> {
        let mut reason = None;
        while self.next_report.iter().all(|&n| n > self.next) {
            let Some(s) = self.seen.remove(&self.next) else { break };
            self.next += 1;
            let fired = self.rule.observe(s.latency.value_at_percentile(99.0), s.answered, s.oldest_pending_us);
            reason = reason.or(fired);
        }
        reason
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_once_after_n_consecutive_intervals_above() {
        let mut r = StopRule::new(50_000, 2);
        assert_eq!(r.observe(60_000, 10, 0), None);
        assert_eq!(r.observe(40_000, 10, 0), None, "the streak restarts");
        assert_eq!(r.observe(60_000, 10, 0), None);
        let why = r.observe(70_000, 10, 0).expect("two in a row");
        assert!(why.contains("above 50.000 ms in 2 consecutive intervals") && !why.contains(','), "{why}");
        assert_eq!(r.observe(90_000, 10, 0), None, "fires once");
    }

    #[test]
    fn the_watch_waits_for_every_worker_and_merges_their_answers() {
        use crate::recording::IntervalData;
        let report = |latencies: &[u64], pending_us: u64| {
            let mut part = IntervalData::new(false);
            for &l in latencies {
                part.corrected.record(l);
                part.requests += 1;
            }
            // Answers count in the interval of the run's clock they arrived in, whatever
            // interval they were scheduled in.
            Report { parts: vec![(7, part)], settled: 0, oldest_pending_us: pending_us }
        };
        let mut w = Watch::new(StopRule::new(50_000, 1), 2);
        assert_eq!(w.progress(0, 0, &report(&[60_000; 10], 0)), None, "worker 1 has not reported interval 0");
        // 10 of 20 answers above 50 ms: the merged p99 is above.
        let why = w.progress(1, 0, &report(&[1_000; 10], 0)).expect("fires on the merged interval");
        assert!(why.contains("last 60."), "{why}");
        let mut w = Watch::new(StopRule::new(50_000, 2), 2);
        assert_eq!(w.progress(0, 0, &report(&[], 80_000)), None);
        assert_eq!(w.finished(1), None, "one interval of silence");
        assert!(w.progress(0, 1, &report(&[], 90_000)).unwrap().contains("no answer"));
    }

    #[test]
    fn silence_counts_only_when_a_request_waits_too_long() {
        let mut r = StopRule::new(50_000, 1);
        assert_eq!(r.observe(0, 0, 10_000), None);
        assert!(r.observe(0, 0, 80_000).unwrap().contains("no answer"));
    }
}
