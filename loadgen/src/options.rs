//! What a run is asked to do: the flags' values as `cli` parses them (`FlagValues`),
//! and the `Config` built from them with the checks that relate flags to each other.

use crate::batching::Slack;
use crate::units::format_time_us;
use std::path::PathBuf;

/// How the request rate changes during the measured window.
#[derive(Clone, Debug, PartialEq)]
pub enum RateShape {
    /// One rate for the whole run (`-R`).
    Constant(f64),
    /// `--rate-steps A:B:S`: rates A, A+S, … up to B, each held for `step_us`.
    Steps { rates: Vec<f64>, step_us: u64 },
    /// `--ramp A:B`: growth from A to B over the duration.
    Ramp { from: f64, to: f64, curve: Curve },
}

/// `--ramp-curve`: how a ramp goes from A to B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Curve {
    /// A constant increase per second.
    #[default]
    Linear,
    /// A constant factor per second: rate(t) = A·(B/A)^(t/d).
    Exp,
}

/// `--segment I/N`: this process runs part `index` of `count` of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub index: usize,
    pub count: usize,
}

/// Everything the flags set, before the checks that relate flags to each other
/// (`cli` parses each flag's value into it). Fields with a default start from it.
#[derive(Default)]
pub struct FlagValues {
    /// Long names of the flags the user gave.
    pub given: Vec<&'static str>,
    pub threads: usize,
    pub connections: usize,
    pub duration_us: u64,
    pub rate: Option<f64>,
    pub script: Option<PathBuf>,
    pub headers: Vec<String>,
    pub latency: bool,
    pub u_latency: bool,
    pub batch_latency: bool,
    pub timeout_us: u64,
    pub help: bool,
    pub version: bool,
    pub options_json: bool,
    pub warmup_us: u64,
    pub json: Option<PathBuf>,
    pub hdr_log: Option<PathBuf>,
    pub hdr_interval_us: u64,
    pub steps: Option<[f64; 3]>,
    pub step_us: Option<u64>,
    pub ramp: Option<[f64; 2]>,
    pub ramp_curve: Curve,
    pub slack: Option<Slack>,
    pub stop_on_p99_us: Option<u64>,
    pub stop_intervals: u32,
    pub segment: Option<Segment>,
    /// `--start-at`, nanoseconds since the Unix epoch.
    pub start_at_ns: Option<u128>,
}

impl FlagValues {
    pub fn given(&self, long: &str) -> bool {
        self.given.contains(&long)
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    /// `-t`, `-c` and the rate are the whole run's, also with `--segment`.
    pub threads: usize,
    pub connections: usize,
    /// Length of the measured window (after warm-up), microseconds.
    pub duration_us: u64,
    pub shape: RateShape,
    pub script: Option<PathBuf>,
    pub headers: Vec<String>,
    pub latency: bool,
    pub u_latency: bool,
    /// wrk2's `-B`: with pipelined requests, record only the last response of a batch.
    pub batch_latency: bool,
    pub timeout_us: u64,
    pub url: String,
    /// Arguments for the script's `init(args)`: `args[0]` is the URL like in wrk.
    pub script_args: Vec<String>,
    pub warmup_us: u64,
    pub json: Option<PathBuf>,
    pub hdr_log: Option<PathBuf>,
    pub hdr_interval_us: u64,
    /// How late a request may go out so that one wake-up sends several.
    pub slack: Slack,
    /// `--stop-on-p99`: end the window once `stop_intervals` intervals in a row have a
    /// corrected p99 above this (µs).
    pub stop_on_p99_us: Option<u64>,
    pub stop_intervals: u32,
    /// `--segment`: run only this part of the run.
    pub segment: Option<Segment>,
    /// `--start-at`: when the schedule starts, nanoseconds since the Unix epoch.
    pub start_at_ns: Option<u128>,
}

impl Config {
    /// The rate at the start of the run (also used during warm-up).
    pub fn initial_rate(&self) -> f64 {
        match &self.shape {
            RateShape::Constant(r) => *r,
            RateShape::Steps { rates, .. } => rates[0],
            RateShape::Ramp { from, .. } => *from,
        }
    }

    /// Checks the flags' values against each other; `positional` is the URL and the
    /// script's arguments.
    pub fn from_flags(f: FlagValues, positional: Vec<String>) -> Result<Config, String> {
        let mut positional = positional.into_iter();
        let url = positional.next().ok_or("missing URL (e.g. http://127.0.0.1:8080/)")?;
        let mut script_args = vec![url.clone()];
        script_args.extend(positional);
        check_combinations(&f)?;
        let (shape, duration_us) = rate_shape(&f)?;
        Ok(Config {
            threads: f.threads,
            connections: f.connections,
            duration_us,
            shape,
            script: f.script,
            headers: f.headers,
            latency: f.latency,
            u_latency: f.u_latency,
            batch_latency: f.batch_latency,
            timeout_us: f.timeout_us,
            url,
            script_args,
            warmup_us: f.warmup_us,
            json: f.json,
            hdr_log: f.hdr_log,
            hdr_interval_us: f.hdr_interval_us,
            slack: f.slack.unwrap_or(Slack::Auto),
            stop_on_p99_us: f.stop_on_p99_us,
            stop_intervals: f.stop_intervals,
            segment: f.segment,
            start_at_ns: f.start_at_ns,
        })
    }
}

/// Flags that need or exclude each other.
fn check_combinations(f: &FlagValues) -> Result<(), String> {
    let (threads, connections) = (f.threads, f.connections);
    if connections < threads {
        return Err(format!(
            "-c/--connections ({connections}) must be at least -t/--threads ({threads}): each thread needs a connection"
        ));
    }
    if f.steps.is_some() && f.ramp.is_some() {
        return Err("--rate-steps and --ramp cannot be combined".into());
    }
    if f.step_us.is_some() && f.steps.is_none() {
        return Err("--step-duration: only meaningful with --rate-steps".into());
    }
    if f.given("ramp-curve") && f.ramp.is_none() {
        return Err("--ramp-curve: only meaningful with --ramp".into());
    }
    if f.given("stop-intervals") && f.stop_on_p99_us.is_none() {
        return Err("--stop-intervals: only meaningful with --stop-on-p99".into());
    }
    if let Some(Segment { index, count }) = f.segment {
        if threads < count {
            return Err(format!(
                "--segment {index}/{count}: needs at least {count} threads (-t) so every segment runs one, got -t{threads}"
            ));
        }
        if f.stop_on_p99_us.is_some() {
            // Each part would end its window on its own share: the union would no
            // longer be the run's schedule.
            return Err("--stop-on-p99: cannot be combined with --segment (each part would stop on its own)".into());
        }
    }
    Ok(())
}

/// The rate over time and the window's length (rate steps fix it to steps × step length).
fn rate_shape(f: &FlagValues) -> Result<(RateShape, u64), String> {
    if let Some([first, last, step]) = f.steps {
        let rates = rate_steps(first, last, step).map_err(|e| format!("--rate-steps: {e}"))?;
        let step_us = step_length(f, rates.len() as u64)?;
        check_first_rate(f.rate, rates[0], "the first step of --rate-steps")?;
        let duration_us = step_us * rates.len() as u64;
        return Ok((RateShape::Steps { rates, step_us }, duration_us));
    }
    if let Some([from, to]) = f.ramp {
        check_first_rate(f.rate, from, "the start of --ramp")?;
        return Ok((RateShape::Ramp { from, to, curve: f.ramp_curve }, f.duration_us));
    }
    match f.rate {
        Some(r) => Ok((RateShape::Constant(r), f.duration_us)),
        None => Err("-R/--rate is required: the number of requests per second, e.g. -R 2000".into()),
    }
}

/// `--rate-steps` gives at most this many steps.
const MAX_STEPS: usize = 100_000;

/// `--rate-steps A:B:S`: the rates A, A+S, … up to B (or down, A−S, … when B < A),
/// B included when the steps land on it (within float rounding); never a rate ≤ 0.
fn rate_steps(first: f64, last: f64, step: f64) -> Result<Vec<f64>, String> {
    let up = last >= first;
    let mut rates = Vec::new();
    for k in 0u64.. {
        let r = if up { first + step * k as f64 } else { first - step * k as f64 };
        if (up && r > last * (1.0 + 1e-12)) || (!up && r < last * (1.0 - 1e-12)) || r <= 0.0 {
            break;
        }
        if rates.len() == MAX_STEPS {
            return Err(format!("more than {MAX_STEPS} steps"));
        }
        rates.push(r);
    }
    Ok(rates)
}

/// Each step's length: `--step-duration`, or `-d` shared by the steps.
fn step_length(f: &FlagValues, steps: u64) -> Result<u64, String> {
    let step_us = match f.step_us {
        Some(s) if f.given("duration") && s * steps != f.duration_us => {
            return Err(format!(
                "-d/--duration ({}) does not match {steps} steps x --step-duration ({}); give one of them",
                format_time_us(f.duration_us as f64),
                format_time_us(s as f64)
            ));
        }
        Some(s) => s,
        None => f.duration_us / steps,
    };
    if step_us == 0 {
        return Err("--step-duration: too short for this many steps".into());
    }
    Ok(step_us)
}

/// `-R`, when given with a changing rate, must be its first rate.
fn check_first_rate(rate: Option<f64>, first: f64, what: &str) -> Result<(), String> {
    match rate {
        Some(r) if (r - first).abs() > 1e-9 * r => Err(format!("-R/--rate ({r}) differs from {what} ({first})")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_steps_expand_both_ways() {
        assert_eq!(rate_steps(1000.0, 3000.0, 1000.0).unwrap(), [1000.0, 2000.0, 3000.0]);
        assert_eq!(rate_steps(1000.0, 2200.0, 500.0).unwrap(), [1000.0, 1500.0, 2000.0]);
        assert_eq!(rate_steps(300.0, 100.0, 100.0).unwrap(), [300.0, 200.0, 100.0]);
        // 0.1 steps do not add up exactly in floating point; the last rate is still kept.
        assert_eq!(rate_steps(0.1, 0.3, 0.1).unwrap().len(), 3);
        assert_eq!(rate_steps(5.0, 5.0, 1.0).unwrap(), [5.0]);
        assert_eq!(rate_steps(1.0, 200_000.0, 1.0).unwrap_err(), "more than 100000 steps");
    }
}
