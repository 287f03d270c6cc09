//! The request schedule: when request number n (counted over all connections) is due.
//!
//! The rate is a piecewise function of time (constant, steps, or a linear or
//! exponential ramp, preceded by a warm-up at the first rate). Request n is due when
//! the integral of the rate reaches n, solved in closed form for each piece, so the
//! schedule has no drift or rounding accumulation at any rate. Connection g
//! of C owns requests g, g+C, g+2C, …: offsets are spread evenly across connections.

use crate::options::{Config, Curve, RateShape};

#[derive(Clone, Debug)]
struct Piece {
    /// How the rate goes from r0 to r1 (`Linear` with r0 == r1: constant).
    curve: Curve,
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
    /// Growth constant of an exponential piece (1/s): rate(τ) = r0·e^(gτ); None when flat.
    fn growth(&self) -> Option<f64> {
        (self.curve == Curve::Exp && (self.r1 - self.r0).abs() > 1e-12 * self.r0)
            .then(|| (self.r1 / self.r0).ln() / self.seconds())
    }
    fn count(&self) -> f64 {
        self.count_by(self.seconds())
    }
    /// Requests of this piece due in its first `tau` seconds.
    fn count_by(&self, tau: f64) -> f64 {
        if let Some(g) = self.growth() {
            return self.r0 / g * (g * tau).exp_m1();
        }
        let slope = (self.r1 - self.r0) / self.seconds();
        self.r0 * tau + slope / 2.0 * tau * tau
    }
    fn rate_at(&self, tau: f64) -> f64 {
        match self.growth() {
            Some(g) => self.r0 * (g * tau).exp(),
            None => self.r0 + (self.r1 - self.r0) * tau / self.seconds(),
        }
    }
    /// Seconds into the piece at which `k` requests of this piece have become due.
    fn time_of(&self, k: f64) -> f64 {
        if let Some(g) = self.growth() {
            // r0/g·(e^(gτ) − 1) = k
            return (k * g / self.r0).ln_1p() / g;
        }
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
        let push = |pieces: &mut Vec<Piece>, t0: u64, t1: u64, r0: f64, r1: f64, curve: Curve| {
            let n0 = pieces.last().map_or(0.0, |p: &Piece| p.n0 + p.count());
            if t1 > t0 {
                pieces.push(Piece { curve, t0, t1, r0, r1, n0 });
            }
        };
        if warm > 0 {
            push(&mut pieces, 0, warm, cfg.initial_rate(), cfg.initial_rate(), Curve::Linear);
        }
        match &cfg.shape {
            RateShape::Constant(r) => {
                push(&mut pieces, warm, warm + dur, *r, *r, Curve::Linear);
                steps.push(Step { index: 0, target_rate: *r, start_ns: 0, end_ns: dur });
            }
            RateShape::Steps { rates, step_us } => {
                let step = step_us * 1000;
                for (i, r) in rates.iter().enumerate() {
                    let s = i as u64 * step;
                    push(&mut pieces, warm + s, warm + s + step, *r, *r, Curve::Linear);
                    steps.push(Step { index: i, target_rate: *r, start_ns: s, end_ns: s + step });
                }
            }
            RateShape::Ramp { from, to, curve } => {
                push(&mut pieces, warm, warm + dur, *from, *to, *curve);
                let mean = pieces.last().map_or(*from, |p| p.count() / p.seconds());
                steps.push(Step { index: 0, target_rate: mean, start_ns: 0, end_ns: dur });
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
            n = p.n0 + p.count_by((t.min(p.t1) - p.t0) as f64 / 1e9);
        }
        n
    }

    /// The planned rate (requests/s) at time t (ns after schedule start); 0 after the end.
    pub fn rate_at(&self, t: u64) -> f64 {
        self.pieces.iter().find(|p| t >= p.t0 && t < p.t1).map_or(0.0, |p| p.rate_at((t - p.t0) as f64 / 1e9))
    }

    /// How many requests are due before time t (ns after schedule start): the index
    /// of the first request due at or after t. Exact with respect to `due_ns`.
    pub fn due_before(&self, t: u64) -> u64 {
        let mut n = (self.cumulative(t) - 1e-6).ceil().max(0.0) as u64;
        // The float estimate can be off by one at the boundary: settle it on due_ns.
        while n > 0 && self.due_ns(n - 1).is_none_or(|d| d >= t) {
            n -= 1;
        }
        while self.due_ns(n).is_some_and(|d| d < t) {
            n += 1;
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
        assert!((p.steps[0].target_rate - 200.0).abs() < 1e-9);
    }

    #[test]
    fn exponential_ramp_multiplies_the_rate_by_a_constant_factor() {
        let p = plan(&["--ramp", "100:1600", "--ramp-curve", "exp", "-d", "4s"]);
        // Rate doubles every second: 100, 200, 400, 800 → 1600.
        for (s, r) in [(0u64, 100.0), (1, 200.0), (2, 400.0), (3, 800.0)] {
            assert!((p.rate_at(s * 1_000_000_000) - r).abs() < 1e-6, "{s}: {}", p.rate_at(s * 1_000_000_000));
        }
        // ∫ = (1600 − 100) / ln 16 · 4 s
        let total = 1500.0 * 4.0 / 16f64.ln();
        assert!((p.expected_between(0, 4_000_000_000) - total).abs() < 1e-6);
        // Requests per second grow by the same factor: 100/ln2·(2^(s+1) − 2^s)·…
        let per_s: Vec<u64> =
            (0..4).map(|s| p.due_before((s + 1) * 1_000_000_000) - p.due_before(s * 1_000_000_000)).collect();
        for w in per_s.windows(2) {
            let ratio = w[1] as f64 / w[0] as f64;
            assert!((ratio - 2.0).abs() < 0.02, "{per_s:?}");
        }
        // due_ns and due_before agree exactly, and the due times increase.
        let n = p.due_before(4_000_000_000);
        assert_eq!(n as f64, total.ceil());
        let mut last = 0;
        for i in 0..n {
            let d = p.due_ns(i).unwrap();
            assert!(d > last || i == 0);
            last = d;
            assert_eq!((p.due_before(d), p.due_before(d + 1)), (i, i + 1));
        }
        assert_eq!(p.due_ns(n), None);
        assert!((p.steps[0].target_rate - total / 4.0).abs() < 1e-9);
    }

    #[test]
    fn due_before_counts_each_interval_exactly() {
        let p = plan(&["-R", "3", "-d", "1s", "--warmup", "1s"]);
        // 3/s: due at 0, 333.3, 666.7 ms, then 1000 ms (the window's first request).
        assert_eq!(p.due_before(0), 0);
        assert_eq!(p.due_before(1), 1);
        assert_eq!(p.due_before(1_000_000_000), 3);
        assert_eq!(p.due_before(1_000_000_001), 4);
        assert_eq!(p.due_before(5_000_000_000), 6);
    }
}
