//! `--stop-on-p99 DUR --stop-intervals N`: ends the measured window once N
//! consecutive hdr-log intervals have a corrected p99 above DUR, to bracket a
//! breakpoint with one ramp instead of running on far past it. An interval in which
//! nothing completed counts as above when a request had already waited longer than
//! DUR at its end (a server that stalls completely answers nothing at all).

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
    fn silence_counts_only_when_a_request_waits_too_long() {
        let mut r = StopRule::new(50_000, 1);
        assert_eq!(r.observe(0, 0, 10_000), None);
        assert!(r.observe(0, 0, 80_000).unwrap().contains("no answer"));
    }
}
