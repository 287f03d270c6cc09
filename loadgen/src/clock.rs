//! One monotonic time base for the whole process (nanoseconds since start-up) and
//! its mapping to wall-clock time for reports.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

struct Base {
    instant: Instant,
    wall_ns: u128,
}

static BASE: OnceLock<Base> = OnceLock::new();

fn base() -> &'static Base {
    BASE.get_or_init(|| Base {
        instant: Instant::now(),
        wall_ns: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
    })
}

/// Monotonic nanoseconds since the process's time base was fixed.
#[inline]
pub fn now_ns() -> u64 {
    base().instant.elapsed().as_nanos() as u64
}

/// Wall-clock nanoseconds since the Unix epoch for a monotonic instant.
pub fn wall_ns(mono_ns: u64) -> u128 {
    base().wall_ns + mono_ns as u128
}

/// Wall-clock milliseconds since the Unix epoch for a monotonic instant.
pub fn wall_ms(mono_ns: u64) -> u64 {
    (wall_ns(mono_ns) / 1_000_000) as u64
}

/// Asks the kernel to fire this thread's timers as precisely as it can (the default
/// slack of 50 µs would blur the send schedule).
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}
