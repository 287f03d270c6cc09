//! How one run is split: over its threads and, with `--segment I/N`, over processes.
//!
//! Connection g of C owns requests g, g+C, g+2C, … of the schedule (`schedule`);
//! thread t of T owns a contiguous block of connections (C/T each, the first C mod T
//! one more). Part I of N runs the threads t with t mod N = I, each with exactly the
//! connections it has in the unsplit run, so the parts together send exactly the
//! unsplit run's requests at exactly its due times.

use crate::options::Segment;

/// One thread of the run and the connections it owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadShare {
    /// The thread's index in the whole run (what the script's `setup` counts).
    pub thread: usize,
    /// Its first connection's global number, and how many it has.
    pub first_conn: u64,
    pub conns: usize,
}

/// The threads one process runs, out of a run of `total_threads` threads and
/// `total_conns` connections.
#[derive(Clone, Debug)]
pub struct Share {
    pub threads: Vec<ThreadShare>,
    pub total_threads: usize,
    pub total_conns: u64,
}

/// Thread t's connections in a run of `threads` threads over `connections`.
pub fn thread_connections(threads: usize, connections: usize, t: usize) -> ThreadShare {
    let (each, extra) = (connections / threads, connections % threads);
    let first_conn = (t * each + t.min(extra)) as u64;
    ThreadShare { thread: t, first_conn, conns: each + usize::from(t < extra) }
}

impl Share {
    /// What this process runs: every thread, or those of its `--segment`.
    pub fn of(threads: usize, connections: usize, segment: Option<Segment>) -> Share {
        let runs = |t: &usize| segment.is_none_or(|s| t % s.count == s.index);
        let threads_run = (0..threads).filter(runs).map(|t| thread_connections(threads, connections, t)).collect();
        Share { threads: threads_run, total_threads: threads, total_conns: connections as u64 }
    }

    pub fn connections(&self) -> usize {
        self.threads.iter().map(|t| t.conns).sum()
    }

    /// The share of the run's requests these connections own (of any stretch of the
    /// schedule, up to one request per connection at its ends).
    pub fn fraction(&self) -> f64 {
        self.connections() as f64 / self.total_conns as f64
    }

    /// How many of the schedule's first `n` requests these connections own.
    pub fn owned_before(&self, n: u64) -> u64 {
        let c = self.total_conns;
        let (rounds, rest) = (n / c, n % c);
        let owned = |t: &ThreadShare| {
            let m = t.conns as u64;
            rounds * m + rest.saturating_sub(t.first_conn).min(m)
        };
        self.threads.iter().map(owned).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse};
    use crate::schedule::Plan;

    /// The unsplit run's schedule: (due time, connection) of every request.
    fn whole_run(plan: &Plan, connections: u64) -> Vec<(u64, u64)> {
        (0..).map_while(|n| plan.due_ns(n).map(|d| (d, n % connections))).collect()
    }

    /// What the processes of a split run send, together: each runs its threads'
    /// connections, connection g sending requests g + k·C as the worker does.
    fn parts_together(plan: &Plan, threads: usize, connections: usize, count: usize) -> Vec<(u64, u64)> {
        let mut sent = Vec::new();
        for index in 0..count {
            let share = Share::of(threads, connections, Some(Segment { index, count }));
            for g in share.threads.iter().flat_map(|t| t.first_conn..t.first_conn + t.conns as u64) {
                let requests = (0..).map_while(|k| plan.due_ns(g + k * connections as u64));
                sent.extend(requests.map(|d| (d, g)));
            }
        }
        sent.sort_unstable();
        sent
    }

    fn config(args: &str) -> crate::options::Config {
        let mut v: Vec<String> = args.split_whitespace().map(String::from).collect();
        v.push("http://h/".into());
        match parse(&v).unwrap() {
            Command::Run(c) => *c,
            _ => panic!("{args}: not a run"),
        }
    }

    #[test]
    fn the_parts_together_are_exactly_the_unsplit_schedule() {
        for args in [
            "-t2 -c4 -d1s -R1000",
            "-t3 -c7 -d1s -R999",
            "-t5 -c5 -d1s -R100 --warmup 300ms",
            "-t4 -c10 --rate-steps 100:700:300 --step-duration 500ms --warmup 200ms",
            "-t6 -c13 -d2s --ramp 50:2000",
            "-t3 -c3 -d2s --ramp 10:5000 --ramp-curve exp --warmup 1s",
            "-t7 -c64 -d1s -R3333",
        ] {
            let c = config(args);
            let plan = Plan::from_config(&c);
            let mut whole = whole_run(&plan, c.connections as u64);
            whole.sort_unstable();
            assert!(whole.len() > 100, "{args}: {} requests", whole.len());
            for count in (1..=c.threads).filter(|n| [1, 2, 3, c.threads].contains(n)) {
                let together = parts_together(&plan, c.threads, c.connections, count);
                assert_eq!(together, whole, "{args} in {count} parts");
            }
        }
    }

    #[test]
    fn every_connection_and_thread_is_in_exactly_one_part() {
        for (threads, connections) in [(3, 7), (4, 4), (5, 17), (8, 9)] {
            for count in 1..=threads {
                let mut threads_seen = Vec::new();
                let mut conns_seen = Vec::new();
                for index in 0..count {
                    let share = Share::of(threads, connections, Some(Segment { index, count }));
                    assert!(!share.threads.is_empty(), "{threads} threads in {count} parts: part {index} is empty");
                    for t in &share.threads {
                        assert_eq!(t.thread % count, index);
                        assert_eq!(*t, thread_connections(threads, connections, t.thread));
                        threads_seen.push(t.thread);
                        conns_seen.extend(t.first_conn..t.first_conn + t.conns as u64);
                    }
                }
                threads_seen.sort_unstable();
                conns_seen.sort_unstable();
                assert_eq!(threads_seen, (0..threads).collect::<Vec<_>>());
                assert_eq!(conns_seen, (0..connections as u64).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn owned_requests_add_up_to_every_stretch_of_the_schedule() {
        // -t3 -c7: threads own connections 0-2, 3-4, 5-6; part 0 of 2 runs threads 0 and 2.
        let part0 = Share::of(3, 7, Some(Segment { index: 0, count: 2 }));
        let part1 = Share::of(3, 7, Some(Segment { index: 1, count: 2 }));
        assert_eq!(part0.threads.iter().map(|t| t.thread).collect::<Vec<_>>(), [0, 2]);
        assert_eq!((part0.connections(), part1.connections()), (5, 2));
        assert!((part0.fraction() - 5.0 / 7.0).abs() < 1e-12);
        // Requests 0..10 go to connections 0..6, 0..2: part 1 (connections 3, 4) owns 3 and 4.
        assert_eq!(part1.owned_before(10), 2);
        assert_eq!(part0.owned_before(10), 8);
        let whole = Share::of(3, 7, None);
        for n in [0, 1, 6, 7, 8, 699, 700, 12_345] {
            assert_eq!(whole.owned_before(n), n);
            assert_eq!(part0.owned_before(n) + part1.owned_before(n), n);
            let direct = (0..n).filter(|r| [3, 4].contains(&(r % 7))).count() as u64;
            assert_eq!(part1.owned_before(n), direct, "{n}");
        }
    }
}
