//! `--start-at`: a wall-clock start shared by several generator processes. The
//! epoch time is checked before anything is sent, converted to the monotonic clock
//! once (so a clock step during the run cannot move the schedule), and after the
//! start the skew between the host's realtime clock at that instant and the
//! requested time is measured for the JSON summary.

use crate::clock::{self, RealtimeOffset};

/// A start this much in the past still runs (the requests due meanwhile go out at
/// once and their lateness shows as schedule lag); more is an error.
pub const MAX_LATE_NS: u64 = 100_000_000;
/// A start further ahead than this is taken for a mistake.
pub const MAX_AHEAD_NS: u64 = 3600 * 1_000_000_000;

/// `1764000000.250` → nanoseconds since the epoch, exactly (no float rounding).
pub fn parse(v: &str) -> Result<u128, String> {
    let malformed = || format!("expected seconds since the Unix epoch, e.g. 1764000000.250, got '{v}'");
    let (secs, frac) = v.split_once('.').unwrap_or((v, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if secs.is_empty() || !digits(secs) || !digits(frac) || frac.len() > 9 || secs.len() > 12 {
        return Err(malformed());
    }
    let whole: u128 = secs.parse().map_err(|_| malformed())?;
    let frac_ns: u128 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().map_err(|_| malformed())? };
    Ok(whole * 1_000_000_000 + frac_ns)
}

/// The start is neither too late nor too far ahead of `now_ns` (both epoch ns).
/// `when` says at which point of the preparation the check is made.
pub fn check(start_ns: u128, now_ns: u128, when: &str) -> Result<(), String> {
    let start = format_epoch(start_ns);
    if now_ns > start_ns + MAX_LATE_NS as u128 {
        let late = (now_ns - start_ns) as f64 / 1e9;
        return Err(format!(
            "--start-at: {start} was {late:.3} s ago {when} (a start may be at most {} s late)",
            MAX_LATE_NS as f64 / 1e9
        ));
    }
    if start_ns > now_ns + MAX_AHEAD_NS as u128 {
        let ahead = (start_ns - now_ns) as f64 / 1e9;
        return Err(format!("--start-at: {start} is {ahead:.3} s ahead (at most {} s)", MAX_AHEAD_NS / 1_000_000_000));
    }
    Ok(())
}

/// `--start-at` as the JSON summary and messages show it: seconds with 3 decimals
/// (with more when the value has them).
pub fn format_epoch(ns: u128) -> String {
    let (secs, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    if frac % 1_000_000 == 0 { format!("{secs}.{:03}", frac / 1_000_000) } else { format!("{secs}.{frac:09}") }
}

/// The start as a monotonic instant (`clock::now_ns` time base), converted once.
pub fn to_mono(start_ns: u128) -> u64 {
    RealtimeOffset::precise().to_mono(start_ns.min(u64::MAX as u128) as u64)
}

/// After the monotonic instant `t0` has passed: the host's realtime clock at `t0`
/// minus the requested start, ns. Non-zero when the clock was stepped or slewed
/// between the conversion and the start.
pub fn skew_ns(start_ns: u128, t0: u64) -> i128 {
    RealtimeOffset::precise().to_real(t0) - start_ns as i128
}

/// CLOCK_REALTIME now, ns since the epoch.
pub fn now_ns() -> u128 {
    clock::realtime_ns() as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exact_epoch_seconds() {
        assert_eq!(parse("1764000000.250"), Ok(1_764_000_000_250_000_000));
        assert_eq!(parse("1764000000"), Ok(1_764_000_000_000_000_000));
        assert_eq!(parse("1764000000.000000001"), Ok(1_764_000_000_000_000_001));
        for bad in ["", ".5", "-1", "1e9", "12:00", "1.2.3", "1.0000000001", "now", "1764000000.25s"] {
            assert!(parse(bad).unwrap_err().starts_with("expected seconds since the Unix epoch"), "{bad}");
        }
        assert_eq!(format_epoch(1_764_000_000_250_000_000), "1764000000.250");
        assert_eq!(format_epoch(1_764_000_000_000_000_001), "1764000000.000000001");
    }

    #[test]
    fn start_may_be_slightly_late_but_not_far_off() {
        let now = 1_764_000_000_000_000_000u128;
        assert!(check(now, now, "").is_ok());
        assert!(check(now - MAX_LATE_NS as u128, now, "").is_ok());
        assert!(check(now + MAX_AHEAD_NS as u128, now, "").is_ok());
        let e = check(now - 2_000_000_000, now, "when the command started").unwrap_err();
        assert_eq!(
            e,
            "--start-at: 1763999998.000 was 2.000 s ago when the command started (a start may be at most 0.1 s late)"
        );
        let e = check(now + 2 * MAX_AHEAD_NS as u128, now, "").unwrap_err();
        assert_eq!(e, "--start-at: 1764007200.000 is 7200.000 s ahead (at most 3600 s)");
    }

    #[test]
    fn conversion_round_trips_through_the_realtime_clock() {
        let start = now_ns() + 5_000_000;
        let t0 = to_mono(start);
        clock::sleep_until(t0);
        // Microseconds in fact; only a clock step in these few ms could make it 50 ms.
        assert!(skew_ns(start, t0).abs() < 50_000_000, "{}", skew_ns(start, t0));
    }
}
