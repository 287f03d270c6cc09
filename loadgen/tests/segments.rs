//! One run split over processes (`--segment I/N`) that start together
//! (`--start-at`): the parts' counts add up to the unsplit run's, their windows and
//! hdr-log intervals line up, and each part's script sees the run's global thread
//! numbers. Assertions are on counts the schedule determines; the only timing bound
//! (windows within 5 ms) is far from what the shared start gives (well under 1 ms).

mod common;
use common::*;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn epoch_s() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Numbers each thread in `setup`, as the lab's scripts do, and says which it is in `init`.
const THREAD_IDS: &str = r#"
local next_id = 0
function setup(thread)
   thread:set("id", next_id)
   next_id = next_id + 1
end
function init(args)
   io.write(string.format("init thread=%d\n", id))
end
"#;

/// The `init thread=N` lines of a run's output.
fn thread_ids(stdout: &str) -> Vec<u64> {
    let mut ids: Vec<u64> = stdout.lines().filter_map(|l| l.strip_prefix("init thread=")?.parse().ok()).collect();
    ids.sort_unstable();
    ids
}

/// The untagged intervals' start timestamps and the StartTime of an hdr log.
fn log_grid(text: &str) -> (Vec<String>, f64) {
    let start = text
        .lines()
        .find_map(|l| l.strip_prefix("#[StartTime: ")?.split(' ').next()?.parse().ok())
        .expect("a StartTime line");
    let starts = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('"') && !l.starts_with("Tag="))
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    (starts, start)
}

#[test]
fn two_segments_with_one_start_time_add_up_to_the_unsplit_run() {
    let server = TestServer::start(Knobs::default());
    let script = write_script("thread_ids.lua", THREAD_IDS);
    let dir = temp_dir("segments");
    // Far enough ahead for both processes to start and connect on a loaded machine.
    let start_at = format!("{:.3}", epoch_s() + 2.5);
    // -t3 -c7: threads own connections 0-2, 3-4 and 5-6; part 0 runs threads 0 and 2
    // (5 connections: 250 of the 350 requests), part 1 thread 1 (100).
    let spawn = |part: usize| -> Child {
        let json = dir.join(format!("part{part}.json"));
        let log = dir.join(format!("part{part}.hlog"));
        Command::new(bin())
            .args(["-t3", "-c7", "-d500ms", "-R700", "--hdr-interval", "100ms", "-s", script.to_str().unwrap()])
            .args(["--segment", &format!("{part}/2"), "--start-at", &start_at])
            .args(["--json", json.to_str().unwrap(), "--hdr-log", log.to_str().unwrap(), &server.url()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start perflab-load")
    };
    let children = [spawn(0), spawn(1)];
    let mut parts = Vec::new();
    for (part, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "part {part}:\n{stdout}\n{stderr}");
        assert!(stderr.contains("perflab-load: ready; the schedule starts at "), "part {part}: {stderr}");
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("part{part}.json"))).unwrap()).unwrap();
        let log = std::fs::read_to_string(dir.join(format!("part{part}.hlog"))).unwrap();
        parts.push((v, log, thread_ids(&stdout)));
    }
    let (v0, v1) = (&parts[0].0, &parts[1].0);

    // The script saw the run's thread numbers: each part its own.
    assert_eq!(parts[0].2, [0, 2]);
    assert_eq!(parts[1].2, [1]);

    // Each part did exactly its share, and together exactly the unsplit plan.
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap();
    assert_eq!((n(v0, "offered"), n(v1, "offered")), (250, 100));
    assert_eq!((n(v0, "requests"), n(v1, "requests")), (250, 100));
    assert_eq!(server.requests(), 350);
    let intervals = |v: &Value| v["intervals"].as_array().unwrap().clone();
    let (i0, i1) = (intervals(v0), intervals(v1));
    assert_eq!((i0.len(), i1.len()), (5, 5));
    for (a, b) in i0.iter().zip(&i1) {
        assert_eq!(a["start_s"], b["start_s"]);
        assert_eq!(a["offered"].as_u64().unwrap() + b["offered"].as_u64().unwrap(), 70, "700/s over 100 ms");
    }

    // What this process did, and what part of which run.
    assert_eq!((n(v0, "threads"), n(v0, "connections"), n(v1, "threads"), n(v1, "connections")), (2, 5, 1, 2));
    assert_eq!((v0["target_rate"].as_f64(), v1["target_rate"].as_f64()), (Some(500.0), Some(200.0)));
    let seg = &v0["segment"];
    assert_eq!((n(seg, "index"), n(seg, "count"), n(seg, "threads"), n(seg, "connections")), (0, 2, 3, 7));
    assert_eq!(seg["thread_ids"], serde_json::json!([0, 2]));
    assert_eq!(
        (n(seg, "segment_connections"), seg["target_rate"].as_f64(), seg["rate_share"].as_f64()),
        (5, Some(700.0), Some(500.0))
    );
    assert_eq!(v1["segment"]["thread_ids"], serde_json::json!([1]));

    // One start: the same requested time, windows starting together.
    assert_eq!(v0["start_at"]["requested_s"], v1["start_at"]["requested_s"]);
    assert_eq!(format!("{:.3}", v0["start_at"]["requested_s"].as_f64().unwrap()), start_at);
    let gap_ms = n(v0, "start_ms").abs_diff(n(v1, "start_ms"));
    assert!(gap_ms <= 5, "windows start {gap_ms} ms apart");
    for v in [v0, v1] {
        assert!(v["start_at"]["skew_us"].as_f64().unwrap().abs() < 50_000.0, "{}", v["start_at"]);
        assert!(v["start_at"]["ready_ahead_s"].as_f64().unwrap() > 0.0, "{}", v["start_at"]);
    }

    // The hdr logs' intervals lie on one grid, their StartTimes within the same bound.
    let ((grid0, start0), (grid1, start1)) = (log_grid(&parts[0].1), log_grid(&parts[1].1));
    assert_eq!(grid0, ["0.000", "0.100", "0.200", "0.300", "0.400"]);
    assert_eq!(grid0, grid1);
    assert!((start0 - start1).abs() <= 0.005, "StartTime {start0} vs {start1}");
    assert!(parts[0].1.contains("#[Segment 0/2: threads 0 2 of 3; 5 of 7 connections;"), "{}", parts[0].1);
    // A standard reader takes the new comments in its stride.
    for (_, log, _) in &parts {
        let entries: Vec<LogEntry> = IntervalLogIterator::new(log.as_bytes()).map(|e| e.expect("a log line")).collect();
        assert!(matches!(entries[0], LogEntry::StartTime(_)), "{log}");
        assert_eq!(entries.iter().filter(|e| matches!(e, LogEntry::Interval(_))).count(), 5, "{log}");
    }
    assert!(parts[1].1.contains(&format!("#[StartAt: {start_at} (requested start")), "{}", parts[1].1);
}

#[test]
fn a_signal_while_waiting_for_the_start_ends_the_run_before_any_load() {
    let server = TestServer::start(Knobs::default());
    let start_at = format!("{:.3}", epoch_s() + 60.0);
    let mut child = Command::new(bin())
        .args(["-t1", "-c1", "-d1s", "-R100", "--start-at", &start_at, &server.url()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.starts_with("perflab-load: ready; the schedule starts at"), "{line}");
    let asked = Instant::now();
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(asked.elapsed() < Duration::from_secs(10), "kept waiting for the start after SIGTERM");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(rest.contains("interrupted before the run started"), "{rest}");
    assert_eq!(server.requests(), 0);
}
