//! The request schedule: when request number n (counted over all connections) is due.
//!
//! The rate is piecewise linear in time (constant, steps, or a ramp, preceded by a
//! warm-up at the first rate). Request n is due when the integral of the rate reaches
//! n, so the schedule has no drift or rounding accumulation at any rate. Connection g
//! of C owns requests g, g+C, g+2C, …: offsets are spread evenly across connections.

use crate::cli::{Config, RateShape};

#[derive(Clone, Debug)]
struct Piece {
    /// Start and end, nanoseconds after the schedule start.
    t0: u64,
    t1: u64,
    /// Rate at the start and end (requests/s); equal for a constant piece.
    r0: f64,
    r1: f64,
    /// Requests due before this piece starts.
    n0: f64,
}

impl Piece {
    fn seconds(&self) -> f64 {
        (self.t1 - self.t0) as f64 / 1e9
    }
    fn count(&self) -> f64 {
        (self.r0 + self.r1) / 2.0 * self.seconds()
    }
    /// Seconds into the piece at which `k` requests of this piece have become due.
    fn time_of(&self, k: f64) -> f64 {
        let slope = (self.r1 - self.r0) / self.seconds();
        if slope.abs() < 1e-12 {
            return k / self.r0;
        }
        // Solve r0·τ + slope/2·τ² = k in the cancellation-free form.
        let a = slope / 2.0;
        let disc = (self.r0 * self.r0 + 4.0 * a * k).max(0.0);
        2.0 * k / (self.r0 + disc.sqrt())
    }
}

/// A rate step (or the whole window) as reported in the JSON summary and hdr log.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub index: usize,
    /// Target rate: the step's rate, or the mean rate of a ramp.
    pub target_rate: f64,
    /// Relative to the start of the measured window, nanoseconds.
    pub start_ns: u64,
    pub end_ns: u64,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pieces: Vec<Piece>,
    /// Warm-up length: the measured window starts here (ns after schedule start).
    pub window_start_ns: u64,
    pub window_end_ns: u64,
    pub steps: Vec<Step>,
    total: f64,
}

impl Plan {
    pub fn from_config(cfg: &Config) -> Plan {
        let warm = cfg.warmup_us * 1000;
        let dur = cfg.duration_us * 1000;
        let mut pieces = Vec::new();
        let mut steps = Vec::new();
        let push = |pieces: &mut Vec<Piece>, t0: u64, t1: u64, r0: f64, r1: f64| {
            let n0 = pieces.last().map_or(0.0, |p: &Piece| p.n0 + p.count());
            if t1 > t0 {
                pieces.push(Piece { t0, t1, r0, r1, n0 });
            }
        };
        if warm > 0 {
            push(&mut pieces, 0, warm, cfg.initial_rate(), cfg.initial_rate());
        }
        match &cfg.shape {
            RateShape::Constant(r) => {
                push(&mut pieces, warm, warm + dur, *r, *r);
                steps.push(Step { index: 0, target_rate: *r, start_ns: 0, end_ns: dur });
            }
            RateShape::Steps { rates, step_us } => {
                let step = step_us * 1000;
                for (i, r) in rates.iter().enumerate() {
                    let s = i as u64 * step;
                    push(&mut pieces, warm + s, warm + s + step, *r, *r);
                    steps.push(Step { index: i, target_rate: *r, start_ns: s, end_ns: s + step });
                }
            }
            RateShape::Ramp { from, to } => {
                push(&mut pieces, warm, warm + dur, *from, *to);
                steps.push(Step { index: 0, target_rate: (from + to) / 2.0, start_ns: 0, end_ns: dur });
            }
        }
        let total = pieces.last().map_or(0.0, |p| p.n0 + p.count());
        let window_end_ns = warm + steps.last().map_or(dur, |s| s.end_ns);
        Plan { pieces, window_start_ns: warm, window_end_ns, steps, total }
    }

    /// When global request `n` is due (ns after the schedule start), or None if the
    /// schedule ends before it.
    pub fn due_ns(&self, n: u64) -> Option<u64> {
        let nf = n as f64;
        if nf >= self.total - 1e-9 {
            return None;
        }
        let idx = self.pieces.partition_point(|p| p.n0 <= nf).saturating_sub(1);
        let p = &self.pieces[idx];
        let t = p.t0 as f64 + p.time_of(nf - p.n0) * 1e9;
        let t = t.round() as u64;
        (t < self.window_end_ns).then_some(t)
    }

    /// Number of requests the schedule puts in [a, b) (ns after schedule start).
    pub fn expected_between(&self, a: u64, b: u64) -> f64 {
        self.cumulative(b) - self.cumulative(a)
    }

    fn cumulative(&self, t: u64) -> f64 {
        let mut n = 0.0;
        for p in &self.pieces {
            if t <= p.t0 {
                break;
            }
            let tau = (t.min(p.t1) - p.t0) as f64 / 1e9;
            let slope = (p.r1 - p.r0) / p.seconds();
            n = p.n0 + p.r0 * tau + slope / 2.0 * tau * tau;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse};

    fn plan(args: &[&str]) -> Plan {
        let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        v.push("http://h/".into());
        match parse(&v).unwrap() {
            Command::Run(c) => Plan::from_config(&c),
            _ => panic!(),
        }
    }

    #[test]
    fn constant_rate_is_exact() {
        let p = plan(&["-R", "2000", "-d", "10s"]);
        assert_eq!(p.due_ns(0), Some(0));
        assert_eq!(p.due_ns(1), Some(500_000));
        assert_eq!(p.due_ns(19_999), Some(9_999_500_000));
        assert_eq!(p.due_ns(20_000), None);
        assert_eq!(p.expected_between(0, 10_000_000_000), 20_000.0);
    }

    #[test]
    fn warmup_shifts_the_window() {
        let p = plan(&["-R", "1000", "-d", "2s", "--warmup", "1s"]);
        assert_eq!(p.window_start_ns, 1_000_000_000);
        assert_eq!(p.window_end_ns, 3_000_000_000);
        assert_eq!(p.due_ns(1000), Some(1_000_000_000));
        assert_eq!(p.due_ns(2999), Some(2_999_000_000));
        assert_eq!(p.due_ns(3000), None);
    }

    #[test]
    fn steps_change_rate() {
        let p = plan(&["--rate-steps", "1000:2000:1000", "--step-duration", "1s"]);
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.due_ns(999), Some(999_000_000));
        assert_eq!(p.due_ns(1000), Some(1_000_000_000));
        assert_eq!(p.due_ns(1002), Some(1_001_000_000));
        assert_eq!(p.due_ns(3000), None);
        assert_eq!(p.expected_between(1_000_000_000, 2_000_000_000), 2000.0);
    }

    #[test]
    fn ramp_integrates_linearly() {
        let p = plan(&["--ramp", "100:300", "-d", "10s"]);
        // n(t) = 100 t + 10 t²: 2000 requests by t = 10 s; request 1100 solves 10t²+100t = 1100.
        let t = p.due_ns(1100).unwrap() as f64 / 1e9;
        let expect = (-100.0 + (10_000.0f64 + 44_000.0).sqrt()) / 20.0;
        assert!((t - expect).abs() < 1e-6, "{t} vs {expect}");
        assert!((p.expected_between(0, 10_000_000_000) - 2000.0).abs() < 1e-6);
        assert_eq!(p.due_ns(2000), None);
        assert_eq!(p.steps[0].target_rate, 200.0);
    }
}
