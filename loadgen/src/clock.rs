//! One monotonic time base for the whole process (nanoseconds since start-up), its
//! mapping to wall-clock time for reports and kernel timestamps, and sleeping until
//! an instant of it.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

struct Base {
    /// CLOCK_MONOTONIC at start-up, ns.
    mono_ns: u64,
    wall_ns: u128,
}

static BASE: OnceLock<Base> = OnceLock::new();

fn raw_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-parameter; both clocks always exist on Linux (vDSO, no syscall).
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn base() -> &'static Base {
    BASE.get_or_init(|| Base {
        mono_ns: raw_ns(libc::CLOCK_MONOTONIC),
        wall_ns: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
    })
}

/// Monotonic nanoseconds since the process's time base was fixed.
#[inline]
pub fn now_ns() -> u64 {
    raw_ns(libc::CLOCK_MONOTONIC).saturating_sub(base().mono_ns)
}

/// Wall-clock nanoseconds since the Unix epoch for a monotonic instant.
pub fn wall_ns(mono_ns: u64) -> u128 {
    base().wall_ns + mono_ns as u128
}

/// Wall-clock milliseconds since the Unix epoch for a monotonic instant.
pub fn wall_ms(mono_ns: u64) -> u64 {
    (wall_ns(mono_ns) / 1_000_000) as u64
}

/// Converts kernel timestamps (CLOCK_REALTIME ns, as socket receive timestamps are)
/// to our monotonic time. Taken fresh for each batch of reads, so a clock step or
/// NTP slewing cannot accumulate.
#[derive(Clone, Copy, Debug)]
pub struct RealtimeOffset(i128);

impl RealtimeOffset {
    pub fn now() -> RealtimeOffset {
        let real = raw_ns(libc::CLOCK_REALTIME) as i128;
        RealtimeOffset(real - now_ns() as i128)
    }

    pub fn to_mono(self, real_ns: u64) -> u64 {
        (real_ns as i128 - self.0).max(0) as u64
    }

    /// Like `now`, but the realtime reading is bracketed by two monotonic ones and the
    /// tightest of a few tries is kept, so a preemption between the reads does not
    /// end up in the offset. For one-off conversions (a start time), not per read.
    pub fn precise() -> RealtimeOffset {
        let mut best = (u64::MAX, 0i128);
        for _ in 0..5 {
            let before = now_ns();
            let real = raw_ns(libc::CLOCK_REALTIME) as i128;
            let after = now_ns();
            if after - before < best.0 {
                best = (after - before, real - (before + (after - before) / 2) as i128);
            }
        }
        RealtimeOffset(best.1)
    }

    /// The CLOCK_REALTIME reading (ns) at the monotonic instant `mono_ns`.
    pub fn to_real(self, mono_ns: u64) -> i128 {
        mono_ns as i128 + self.0
    }
}

/// CLOCK_REALTIME now, nanoseconds since the Unix epoch.
pub fn realtime_ns() -> u64 {
    raw_ns(libc::CLOCK_REALTIME)
}

/// Sleeps until the monotonic instant `t` (ns since the time base).
pub fn sleep_until(t: u64) {
    let abs = base().mono_ns + t;
    let ts = libc::timespec { tv_sec: (abs / 1_000_000_000) as libc::time_t, tv_nsec: (abs % 1_000_000_000) as _ };
    // SAFETY: ts lives across the call; a null remainder is allowed with TIMER_ABSTIME.
    // EINTR only ends the sleep early, which the caller's loop tolerates.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
}

/// Asks the kernel to fire this thread's timers as precisely as it can (the default
/// slack of 50 µs would blur the send schedule).
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realtime_maps_onto_the_monotonic_base() {
        let off = RealtimeOffset::now();
        let mono = now_ns();
        let back = off.to_mono(raw_ns(libc::CLOCK_REALTIME));
        assert!(back >= mono && back - mono < 50_000_000, "{back} vs {mono}");
        let t = now_ns() + 2_000_000;
        sleep_until(t);
        assert!(now_ns() >= t);
    }
}
