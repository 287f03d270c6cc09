//! Golden tests: our console output has wrk2's layout and number formatting,
//! section by section, compared with real wrk2 outputs in ../shared/fixtures/wrk2/;
//! a wrk2-output parser (the rules perflab/wrk_output.py uses) reads it; the hdr log
//! has the standard layout.

mod common;
use common::*;
use regex::Regex;
use std::sync::LazyLock;

static NUM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+(\.\d+)?").unwrap());

/// A line's layout: the column where each number ends and its number of decimals,
/// plus the text around the numbers with time/metric units normalized. Two lines
/// with the same shape differ only in the values.
fn shape(line: &str) -> (Vec<(usize, usize)>, String) {
    let cols = NUM.find_iter(line).map(|m| (m.end(), m.as_str().split('.').nth(1).map_or(0, str::len))).collect();
    let skeleton = NUM.replace_all(line, "N");
    // Units vary with the values (us/ms/s, k/M or none); their place does not.
    let units = Regex::new(r"N(us|ms|s|m|h|k|M)\b").unwrap();
    let skeleton = units.replace_all(&skeleton, "N");
    // Spacing is already pinned by the number columns.
    let skeleton = Regex::new(r"\s+").unwrap().replace_all(skeleton.trim(), " ").into_owned();
    (cols, skeleton)
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).expect("fixtures at ../shared/fixtures/wrk2")
}

/// Lines of a wrk2 output without the calibration lines (we do not calibrate).
fn without_calibration(text: &str) -> Vec<String> {
    text.lines().filter(|l| !l.starts_with("  Thread calibration:")).map(str::to_string).collect()
}

fn assert_same_shape(ours: &str, theirs: &str, what: &str) {
    let (a, b) = (shape(ours), shape(theirs));
    assert_eq!(a, b, "{what}: layout differs\n ours:   {ours:?}\n wrk2:   {theirs:?}");
}

/// Splits an output into its sections: everything up to the first spectrum block
/// is compared line by line, spectrum rows by shape.
fn compare_with_fixture(ours: &str, theirs: &str) {
    let o: Vec<String> = without_calibration(ours);
    let t: Vec<String> = without_calibration(theirs);
    // Header lines.
    let running = Regex::new(r"^Running \d+[smh] test @ http://\S+$").unwrap();
    assert!(running.is_match(&o[0]) && running.is_match(&t[0]), "{} / {}", o[0], t[0]);
    let threads = Regex::new(r"^  \d+ threads and \d+ connections$").unwrap();
    assert!(threads.is_match(&o[1]) && threads.is_match(&t[1]));
    // Thread Stats header and rows.
    assert_eq!(o[2], t[2]);
    assert_same_shape(&o[3], &t[3], "Latency row");
    assert_same_shape(&o[4], &t[4], "Req/Sec row");
    // Walk both outputs block by block.
    let spectrum_start = Regex::new(r"^\s*\d+\.\d{3}\s+\d\.\d{6}\s+\d+\s+").unwrap();
    let row = Regex::new(r"^\s*\d+\.\d{3}\s+\d\.\d{6}\s+\d+\s+(\d+\.\d{2}|inf)$").unwrap();
    let dist_row = Regex::new(r"^\s*\d+\.\d{3}%").unwrap();
    let mut i = 5;
    let mut j = 5;
    loop {
        let (a, b) = (&o[i], &t[j]);
        if b.starts_with("  Latency Distribution")
            || b.starts_with("  Detailed")
            || b.contains("Value   Percentile")
            || b.starts_with("---")
            || b.is_empty()
        {
            assert_eq!(a, b, "line {i} of ours vs {j} of wrk2's");
            i += 1;
            j += 1;
        } else if spectrum_start.is_match(b) {
            // Spectrum rows: the counts differ; compare every row's shape and skip to
            // the footer in both.
            while row.is_match(&o[i]) {
                assert_eq!(o[i].len(), 51, "spectrum row width: {:?}", o[i]);
                if !o[i].ends_with("inf") {
                    assert_same_shape(&o[i], &t[j], "spectrum row");
                }
                i += 1;
            }
            while row.is_match(&t[j]) {
                j += 1;
            }
            assert!(o[i - 1].ends_with("         inf") && t[j - 1].ends_with("         inf"));
            for _ in 0..3 {
                assert_same_shape(&o[i], &t[j], "spectrum footer");
                i += 1;
                j += 1;
            }
        } else if dist_row.is_match(b) {
            assert_same_shape(a, b, "distribution row");
            i += 1;
            j += 1;
        } else {
            break;
        }
        if i >= o.len() || j >= t.len() {
            break;
        }
    }
    // Totals: "  N requests in 12.00s, 7.99MB read", then the rates.
    let totals = Regex::new(r"^  \d+ requests in \d+\.\d{2}(us|ms|s|m|h), \d+\.\d{2}[KMG]?B read$").unwrap();
    assert!(totals.is_match(&o[i]), "{:?}", o[i]);
    assert!(totals.is_match(&t[j]), "{:?}", t[j]);
    let rps = o.iter().find(|l| l.starts_with("Requests/sec:")).unwrap();
    let trps = t.iter().find(|l| l.starts_with("Requests/sec:")).unwrap();
    assert_same_shape(rps, trps, "Requests/sec");
    let tps = o.iter().find(|l| l.starts_with("Transfer/sec:")).unwrap();
    let ttps = t.iter().find(|l| l.starts_with("Transfer/sec:")).unwrap();
    assert_eq!(tps.len(), ttps.len(), "Transfer/sec width: {tps:?} vs {ttps:?}");
}

#[test]
fn latency_output_matches_wrk2_layout() {
    let server = TestServer::start(Knobs::default());
    let get = fixtures().join("get.lua");
    let r = run(&["-t2", "-c8", "-d2s", "-R2000", "-s", get.to_str().unwrap(), "-L", &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    compare_with_fixture(&r.stdout, &fixture("get-t2-c64-R10000-L.txt"));
    compare_with_fixture(&r.stdout, &fixture("put-t1-c1-R2000-L.txt"));
}

#[test]
fn uncorrected_output_matches_wrk2_layout() {
    let server = TestServer::start(Knobs::default());
    let r = run(&["-t1", "-c1", "-d2s", "-R1000", "-U", &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let theirs = fixture("stall-t1-c1-R2000-L-U.txt");
    compare_with_fixture(&r.stdout, &theirs);
    // The uncorrected block follows the first one after a blank line, like wrk2.
    let marker = "----------------------------------------------------------\n\n  Latency Distribution (HdrHistogram - Uncorrected Latency (measured without taking delayed starts into account))\n";
    assert!(r.stdout.contains(marker) && theirs.contains(marker));
    assert_eq!(r.stdout.matches("#[Buckets =           27, SubBuckets     =         2048]").count(), 2);
}

#[test]
fn short_output_without_latency_matches_wrk2_layout() {
    let server = TestServer::start(Knobs::default());
    let r = run(&["-t1", "-c4", "-d1s", "-R1000", &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let ours: Vec<String> = without_calibration(&r.stdout);
    let theirs: Vec<String> = without_calibration(&fixture("status-done-hook.txt"));
    assert_eq!(ours.len(), theirs.len() - 1, "same lines (the fixture adds done()'s line)\n{}", r.stdout);
    assert_eq!(ours[2], theirs[2]);
    for k in [3, 4, 6] {
        assert_same_shape(&ours[k], &theirs[k], "line");
    }
    // Req/Sec is never "nan", even for a one-second run.
    assert!(!r.stdout.contains("nan"), "{}", r.stdout);
}

#[test]
fn spectrum_follows_hdr_iteration_and_max_is_lowest_equivalent() {
    let server = TestServer::start(Knobs::default());
    let r = run(&["-t1", "-c2", "-d3s", "-R3000", "-L", &server.url()]);
    assert_eq!(r.status, 0);
    let row = Regex::new(r"^\s*(\d+\.\d{3})\s+(\d\.\d{6})\s+(\d+)\s+(\d+\.\d{2}|inf)$").unwrap();
    let rows: Vec<(f64, String, u64)> = r
        .stdout
        .lines()
        .filter_map(|l| row.captures(l))
        .map(|c| (c[1].parse().unwrap(), c[2].to_string(), c[3].parse().unwrap()))
        .collect();
    // The percentile column steps 5 ticks per halving of the distance to 100%, as
    // in every wrk2 output (compare with the fixture's first rows).
    let theirs: Vec<String> =
        fixture("get-t2-c64-R10000-L.txt").lines().filter_map(|l| row.captures(l)).map(|c| c[2].to_string()).collect();
    let ours_p: Vec<&String> = rows.iter().map(|r| &r.1).collect();
    assert_eq!(
        ours_p[..40].iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        theirs[..40].iter().map(|s| s.as_str()).collect::<Vec<_>>()
    );
    // Counts never decrease and end at the total; the last two rows repeat the value.
    assert!(rows.windows(2).all(|w| w[0].2 <= w[1].2 && w[0].0 <= w[1].0));
    let (last, before) = (&rows[rows.len() - 1], &rows[rows.len() - 2]);
    assert_eq!(last.1, "1.000000");
    assert_eq!((last.0, last.2), (before.0, before.2));
    let max_re = Regex::new(r"#\[Max     =\s+(\d+\.\d{3}), Total count    =\s+(\d+)\]").unwrap();
    let c = max_re.captures(&r.stdout).unwrap();
    let max_us = (c[1].parse::<f64>().unwrap() * 1000.0).round() as u64;
    let last_us = (last.0 * 1000.0).round() as u64;
    // #[Max shows the lowest value of the top bucket, the spectrum its highest.
    let bucket = 1u64 << (64 - (max_us | 2047).leading_zeros() - 11);
    assert_eq!(last_us, max_us + bucket - 1, "max {max_us} µs, last spectrum value {last_us} µs");
    assert_eq!(c[2].parse::<u64>().unwrap(), last.2);
}

/// The rules of perflab/wrk_output.py (lines stripped; each known by its start).
struct Parsed {
    known: usize,
    unknown: Vec<String>,
    requests: Option<u64>,
    seconds: Option<f64>,
    rps: Option<f64>,
    dist: Vec<(f64, f64)>,
    spectrum_rows: usize,
    socket: Option<[u64; 4]>,
    non2xx: Option<u64>,
}

fn parse_wrk(text: &str) -> Parsed {
    let num = r"(?:nan|inf|-?\d+(?:\.\d+)?)";
    let rules: Vec<Regex> = [
        r"^Running\s+(\S+)\s+test\s+@\s+(\S+)".to_string(),
        r"^(\d+)\s+threads\s+and\s+(\d+)\s+connections".to_string(),
        format!(r"^Thread calibration: mean lat\.:\s*({num})(us|ms|s|m|h)?,\s*rate sampling interval:\s*(\d+)ms"),
        r"^Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev".to_string(),
        r"^(Latency|Req/Sec)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)%\s*$".to_string(),
        r"^Latency Distribution \(HdrHistogram - (Recorded|Uncorrected) Latency".to_string(),
        r"^Detailed Percentile spectrum:".to_string(),
        r"^Value\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)".to_string(),
        format!(r"^#\[Mean\s*=\s*({num}),\s*StdDeviation\s*=\s*({num})\]"),
        format!(r"^#\[Max\s*=\s*({num}),\s*Total count\s*=\s*(\d+)\]"),
        r"^#\[Buckets\s*=\s*(\d+),\s*SubBuckets\s*=\s*(\d+)\]".to_string(),
        r"^-{10,}$".to_string(),
        format!(r"^Transfer/sec:\s*({num})\s*([KMGT]?B)"),
    ]
    .iter()
    .map(|r| Regex::new(r).unwrap())
    .collect();
    let dist = Regex::new(&format!(r"^(\d+(?:\.\d+)?)%\s+({num})(us|ms|s|m|h)\s*$")).unwrap();
    let spectrum = Regex::new(&format!(r"^({num})\s+({num})\s+(\d+)\s+({num})\s*$")).unwrap();
    let requests =
        Regex::new(&format!(r"^(\d+)\s+requests in\s+({num})(us|ms|s|m|h),\s*({num})([KMGT]?B)\s+read")).unwrap();
    let socket =
        Regex::new(r"^Socket errors:\s*connect\s+(\d+),\s*read\s+(\d+),\s*write\s+(\d+),\s*timeout\s+(\d+)").unwrap();
    let non2xx = Regex::new(r"^Non-2xx or 3xx responses:\s*(\d+)").unwrap();
    let rps = Regex::new(&format!(r"^Requests/sec:\s*({num})")).unwrap();
    let unit_ms = |u: &str| match u {
        "us" => 1e-3,
        "ms" => 1.0,
        "s" => 1e3,
        "m" => 60e3,
        _ => 3600e3,
    };
    let mut p = Parsed {
        known: 0,
        unknown: vec![],
        requests: None,
        seconds: None,
        rps: None,
        dist: vec![],
        spectrum_rows: 0,
        socket: None,
        non2xx: None,
    };
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(c) = dist.captures(line) {
            p.dist.push((c[1].parse().unwrap(), c[2].parse::<f64>().unwrap() * unit_ms(&c[3])));
        } else if spectrum.is_match(line) {
            p.spectrum_rows += 1;
        } else if let Some(c) = requests.captures(line) {
            p.requests = Some(c[1].parse().unwrap());
            p.seconds = Some(c[2].parse::<f64>().unwrap() * unit_ms(&c[3]) / 1000.0);
        } else if let Some(c) = socket.captures(line) {
            p.socket = Some([1, 2, 3, 4].map(|k| c[k].parse().unwrap()));
        } else if let Some(c) = non2xx.captures(line) {
            p.non2xx = Some(c[1].parse().unwrap());
        } else if let Some(c) = rps.captures(line) {
            p.rps = Some(c[1].parse().unwrap());
        } else if rules.iter().any(|r| r.is_match(line)) {
        } else {
            p.unknown.push(line.to_string());
            continue;
        }
        p.known += 1;
    }
    p
}

#[test]
fn a_wrk2_output_parser_reads_ours() {
    // The parser reads the real wrk2 outputs...
    for f in ["get-t2-c64-R10000-L.txt", "put-t1-c1-R2000-L.txt", "stall-t1-c1-R2000-L-U.txt"] {
        let p = parse_wrk(&fixture(f));
        assert!(p.unknown.is_empty(), "{f}: {:?}", p.unknown);
        assert_eq!(p.dist.len() % 8, 0);
    }
    // ...and ours, with errors and non-2xx lines, and finds consistent numbers.
    let server = TestServer::start(Knobs::default());
    let url = format!("{}/status/503", server.url());
    let r = run(&["-t2", "-c4", "-d2s", "-R1000", "-U", "--timeout", "2s", &url]);
    assert_eq!(r.status, 0);
    let p = parse_wrk(&r.stdout);
    assert!(p.unknown.is_empty(), "unparsed lines: {:?}", p.unknown);
    let n = p.requests.unwrap();
    assert_eq!(n, 2000);
    let secs = p.seconds.unwrap();
    assert!((2.0..3.5).contains(&secs), "{secs}"); // the window and its drain (waiting out --timeout: 4 s)
    assert_eq!(p.non2xx, Some(n));
    assert!(p.socket.is_none());
    // Requests/sec is printed from the unrounded duration: within rounding.
    assert!((p.rps.unwrap() - n as f64 / secs).abs() <= n as f64 / secs * 0.003, "{:?} {secs}", p.rps);
    assert_eq!(p.dist.len(), 16, "corrected and uncorrected distributions");
    assert!(p.dist.windows(2).take(7).all(|w| w[0].1 <= w[1].1), "percentiles increase: {:?}", p.dist);
    assert!(p.spectrum_rows > 20);
    assert!(p.known > 50);

    let port = closed_port();
    let r = run(&["-t1", "-c1", "-d1s", "-R50", &format!("http://127.0.0.1:{port}/")]);
    let p = parse_wrk(&r.stdout);
    assert!(p.unknown.is_empty(), "{:?}", p.unknown);
    assert_eq!(p.requests, Some(0));
    let s = p.socket.expect("socket errors line");
    assert!(s[0] >= 45, "{s:?}");
}

#[test]
fn hdr_log_has_the_standard_layout() {
    let server = TestServer::start(Knobs::default());
    let log = temp_dir("hdrlog").join("layout.hlog");
    let json = temp_dir("hdrlog").join("layout.json");
    let r = run(&[
        "-t2",
        "-c4",
        "-d2s",
        "-R1000",
        "-U",
        "--hdr-interval",
        "500ms",
        "--hdr-log",
        log.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        &server.url(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "#[Histogram log format version 1.3]");
    let start = Regex::new(
        r"^#\[StartTime: (\d+\.\d{3}) \(seconds since epoch\), \w{3} \w{3} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}\]$",
    )
    .unwrap();
    let st = lines.iter().find_map(|l| start.captures(l)).expect("StartTime line");
    let base = format!("#[BaseTime: {} (seconds since epoch)]", &st[1]);
    assert!(lines.contains(&base.as_str()), "BaseTime equals StartTime: {text}");
    assert!(
        lines.contains(&"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"")
    );
    let interval =
        Regex::new(r"^(Tag=uncorrected,)?(\d+\.\d{3}),(\d+\.\d{3}),(\d+\.\d{3}),HISTF[A-Za-z0-9+/=]+$").unwrap();
    let rows: Vec<_> = lines.iter().filter_map(|l| interval.captures(l)).collect();
    assert_eq!(rows.len(), 8, "4 intervals of 500 ms, corrected and uncorrected:\n{text}");
    let starts: Vec<&str> = rows.iter().filter(|c| c.get(1).is_none()).map(|c| c.get(2).unwrap().as_str()).collect();
    assert_eq!(starts, ["0.000", "0.500", "1.000", "1.500"]);
    // Every interval is 500 ms of the schedule, the last too (the answers to its requests that
    // came in the drain are in it).
    let lengths: Vec<f64> = rows.iter().filter(|c| c.get(1).is_none()).map(|c| c[3].parse().unwrap()).collect();
    assert!(lengths.iter().all(|&l| l == 0.5), "{lengths:?}");
    // Comment lines carry no comma (readers try to parse comma lines as intervals).
    assert!(lines.iter().filter(|l| l.starts_with("#[") && !l.starts_with("#[StartTime")).all(|l| !l.contains(',')));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let start_ms = v["start_ms"].as_u64().unwrap() as f64;
    let log_start: f64 = st[1].parse().unwrap();
    assert!((log_start * 1000.0 - start_ms).abs() <= 1.0, "StartTime is the measured window's start");
}

#[test]
fn json_summary_has_the_documented_schema() {
    let server = TestServer::start(Knobs::default());
    let json = temp_dir("json").join("schema.json");
    let get = fixtures().join("get.lua");
    let r = run(&[
        "-t2",
        "-c4",
        "-d1s",
        "-R400",
        "-L",
        "-s",
        get.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        &server.url(),
        "--",
        "x",
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "tool",
            "version",
            "url",
            "script",
            "script_args",
            "threads",
            "connections",
            "duration_s",
            "warmup_s",
            "send_slack_us",
            "target_rate",
            "achieved_rate",
            "start_ms",
            "end_ms",
            "warmup_start_ms",
            "requests",
            "bytes_read",
            "bytes_written",
            "errors",
            "status_codes",
            "latency_us",
            "latency_uncorrected_us",
            "steps",
            "interrupted",
            "send_slack_auto",
            "offered",
            "unsent",
            "schedule_lag_us",
            "cpu",
            "spectrum",
            "spectrum_uncorrected",
            "intervals",
            "stopped_early",
            "unanswered"
        ]
    );
    assert_eq!(v["tool"], "perflab-load");
    assert_eq!(v["script_args"], serde_json::json!(["x"]));
    assert_eq!(v["script"], get.to_str().unwrap());
    let lat: Vec<&str> = v["latency_us"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(lat, ["min", "max", "mean", "stdev", "p50", "p75", "p90", "p99", "p99.9", "p99.99", "p99.999", "p100"]);
    assert!(v["latency_uncorrected_us"].is_null());
    let errs: Vec<&str> = v["errors"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(errs, ["connect", "read", "write", "timeout", "status"]);
    let step = &v["steps"][0];
    let sk: Vec<&str> = step.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(sk, ["index", "target_rate", "start_s", "end_s", "requests", "achieved_rate", "errors", "latency_us"]);
    assert_eq!(v["steps"].as_array().unwrap().len(), 1);
    let keys_of = |x: &serde_json::Value| x.as_object().unwrap().keys().cloned().collect::<Vec<String>>();
    assert_eq!(keys_of(&v["schedule_lag_us"]), ["mean", "p50", "p99", "p999", "max", "late_1ms"]);
    assert_eq!(keys_of(&v["cpu"]), ["user_s", "sys_s", "threads", "cpus_allowed"]);
    assert_eq!(keys_of(&v["cpu"]["threads"][0]), ["tid", "name", "user_s", "sys_s", "runqueue_wait_s"]);
    let interval = &v["intervals"][0];
    assert_eq!(
        keys_of(interval),
        ["start_s", "end_s", "offered", "completed", "errors", "error_kinds", "status_codes", "unanswered", "unsent"]
    );
    assert_eq!(keys_of(&interval["error_kinds"]), errs);
    // Per interval (the one each request was scheduled in, as for `completed`): the run's codes and errors, split.
    let intervals = v["intervals"].as_array().unwrap();
    let mut codes = std::collections::BTreeMap::<String, u64>::new();
    for i in intervals {
        let by_code: u64 = i["status_codes"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(by_code, i["completed"].as_u64().unwrap(), "{i}");
        let kinds: u64 = i["error_kinds"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(kinds, i["errors"].as_u64().unwrap(), "{i}");
        for (c, n) in i["status_codes"].as_object().unwrap() {
            *codes.entry(c.clone()).or_default() += n.as_u64().unwrap();
        }
    }
    let run: std::collections::BTreeMap<String, u64> =
        v["status_codes"].as_object().unwrap().iter().map(|(c, n)| (c.clone(), n.as_u64().unwrap())).collect();
    assert_eq!(codes, run);
    assert!(v["stopped_early"].is_null() && v["spectrum_uncorrected"].is_null());
    assert_eq!(v["offered"].as_u64().unwrap(), 400);
    assert_eq!((v["unsent"].as_u64().unwrap(), v["unanswered"].as_u64().unwrap()), (0, 0));
    // The spectrum is the console's, as [value_us, percentile 0..1, total_count] rows.
    let rows = v["spectrum"].as_array().unwrap();
    let row_re = Regex::new(r"^\s*(\d+\.\d{3})\s+(\d\.\d{6})\s+(\d+)\s+(\d+\.\d{2}|inf)$").unwrap();
    let console: Vec<(f64, f64, u64)> = r
        .stdout
        .lines()
        .filter_map(|l| row_re.captures(l))
        .map(|c| (c[1].parse().unwrap(), c[2].parse().unwrap(), c[3].parse().unwrap()))
        .collect();
    assert_eq!(rows.len(), console.len(), "JSON spectrum rows vs the console's");
    for (row, (ms, p, n)) in rows.iter().zip(&console) {
        assert_eq!(row[0].as_u64().unwrap() as f64 / 1000.0, *ms);
        assert!((row[1].as_f64().unwrap() - p).abs() < 5e-7, "{row} vs {p}");
        assert_eq!(row[2].as_u64().unwrap(), *n);
    }
    // The window plus the wait for its last answers.
    let span = v["end_ms"].as_u64().unwrap() - v["start_ms"].as_u64().unwrap();
    assert!((1000..1500).contains(&span), "{span}");
    // Console and JSON agree.
    let n = v["requests"].as_u64().unwrap();
    assert_totals(&r.stdout, n, 1.0);
    assert_eq!(v["status_codes"]["200"].as_u64().unwrap(), n);
}
