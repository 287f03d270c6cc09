//! The generator's own CPU: per thread from `/proc/thread-self/stat` (user/system
//! split, in clock ticks) and `/proc/thread-self/schedstat` (time on a CPU and time
//! waiting on a run queue, in ns), for the whole process from getrusage, and the
//! CPUs the process may run on. A thread samples itself, so a worker's figures exist
//! even though its /proc entry vanishes when it exits.

use serde_json::{Value, json};

/// Cumulative counters of the calling thread at one instant.
#[derive(Clone, Debug, Default)]
pub struct ThreadSample {
    pub tid: i64,
    pub name: String,
    utime_ticks: u64,
    stime_ticks: u64,
    /// schedstat: time on a CPU and time runnable but waiting for one (None without schedstat).
    run_ns: Option<u64>,
    wait_ns: Option<u64>,
}

/// One thread's CPU over an interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadCpu {
    pub tid: i64,
    pub name: String,
    pub user_s: f64,
    pub sys_s: f64,
    pub runqueue_wait_s: Option<f64>,
}

fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// Fields 14 and 15 (utime, stime) of a stat line; the command name may contain
/// spaces and parentheses, so fields are counted after the last ')'.
fn parse_stat(text: &str) -> Option<(u64, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): utime is field 14, so index 11.
    Some((f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?))
}

fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace();
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// Samples the calling thread.
pub fn sample_thread() -> ThreadSample {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as i64;
    let read = |f: &str| std::fs::read_to_string(format!("/proc/thread-self/{f}")).ok();
    let (utime_ticks, stime_ticks) = read("stat").as_deref().and_then(parse_stat).unwrap_or((0, 0));
    let sched = read("schedstat").as_deref().and_then(parse_schedstat);
    ThreadSample {
        tid,
        name: read("comm").map_or_else(String::new, |s| s.trim_end().to_string()),
        utime_ticks,
        stime_ticks,
        run_ns: sched.map(|s| s.0),
        wait_ns: sched.map(|s| s.1),
    }
}

impl ThreadSample {
    /// The CPU used between `self` and the later sample `end`. The total comes from
    /// schedstat (ns) when present, split by the thread's user/system ratio so far
    /// (the kernel keeps its utime/stime monotonic by shifting time between them, so
    /// their differences over a short window can put everything on one side); without
    /// schedstat, the ticks' differences alone.
    pub fn until(&self, end: &ThreadSample) -> ThreadCpu {
        let hz = ticks_per_s();
        let (user_s, sys_s) = match (self.run_ns, end.run_ns) {
            (Some(a), Some(b)) => {
                let total = b.saturating_sub(a) as f64 / 1e9;
                let (u, s) = (end.utime_ticks as f64, end.stime_ticks as f64);
                let user_share = if u + s > 0.0 { u / (u + s) } else { 0.0 };
                (total * user_share, total * (1.0 - user_share))
            }
            _ => {
                let du = end.utime_ticks.saturating_sub(self.utime_ticks) as f64;
                let ds = end.stime_ticks.saturating_sub(self.stime_ticks) as f64;
                (du / hz, ds / hz)
            }
        };
        let wait = match (self.wait_ns, end.wait_ns) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / 1e9),
            _ => None,
        };
        ThreadCpu { tid: end.tid, name: end.name.clone(), user_s, sys_s, runqueue_wait_s: wait }
    }
}

/// User and system CPU seconds of the whole process so far (all threads, also ended ones).
pub fn process_times() -> (f64, f64) {
    // SAFETY: getrusage writes into the struct we pass.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// The CPUs this process may run on (sched_getaffinity), ascending.
pub fn cpus_allowed() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for pid 0 (us).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// The summary's `cpu` object.
pub fn to_json(process: (f64, f64), threads: &[ThreadCpu], cpus: &[usize]) -> Value {
    let r6 = |x: f64| (x * 1e6).round() / 1e6;
    let threads: Vec<Value> = threads
        .iter()
        .map(|t| {
            json!({
                "tid": t.tid,
                "name": t.name,
                "user_s": r6(t.user_s),
                "sys_s": r6(t.sys_s),
                "runqueue_wait_s": t.runqueue_wait_s.map(r6),
            })
        })
        .collect();
    json!({"user_s": r6(process.0), "sys_s": r6(process.1), "threads": threads, "cpus_allowed": cpus})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_the_command_name() {
        let line = "1234 (perflab (load) 0) S 1 2 3 4 5 6 7 8 9 10 250 40 0 0 20 0 3 0 100 0 0";
        assert_eq!(parse_stat(line), Some((250, 40)));
        assert_eq!(parse_schedstat("123456 7890 12\n"), Some((123456, 7890)));
    }

    fn thread_cpu_ns() -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: valid out-parameter.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    #[test]
    fn a_busy_thread_sees_its_own_cpu() {
        let a = sample_thread();
        let c0 = thread_cpu_ns();
        // Burn 50 ms of this thread's CPU, however long that takes on a busy machine.
        let mut x = 0u64;
        while thread_cpu_ns() - c0 < 50_000_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let burnt = (thread_cpu_ns() - c0) as f64 / 1e9;
        let cpu = a.until(&sample_thread());
        let total = cpu.user_s + cpu.sys_s;
        assert!(total >= burnt * 0.9 && total <= burnt + 0.02, "{cpu:?} vs {burnt} s burnt");
        assert!(cpu.tid > 0 && !cpu.name.is_empty());
        assert!(cpu.runqueue_wait_s.is_some_and(|w| w >= 0.0));
        assert!(!cpus_allowed().is_empty());
        let (u, s) = process_times();
        assert!(u + s >= total * 0.9);
    }
}
