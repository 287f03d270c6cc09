//! Every bad input gives a clear message naming the problem and exit status 1,
//! before any request reaches the server.

mod common;
use common::*;

/// Runs with `args` (the server URL appended where `{url}` appears) and checks:
/// exit status 1, stderr mentions `needle`, and the server saw no request.
fn rejects(args: &[&str], needle: &str) {
    let server = TestServer::start(Knobs::default());
    let url = server.url();
    let args: Vec<String> = args.iter().map(|a| a.replace("{url}", &url)).collect();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&argv);
    assert_eq!(
        r.status, 1,
        "args {args:?}: expected exit 1, got {}\nstdout: {}\nstderr: {}",
        r.status, r.stdout, r.stderr
    );
    assert!(r.stderr.contains(needle), "args {args:?}: stderr should mention {needle:?}, got: {}", r.stderr);
    assert!(!r.stdout.contains("requests in"), "no results expected: {}", r.stdout);
    assert_eq!(server.requests(), 0, "args {args:?}: load was sent before the error");
}

#[test]
fn unknown_flags() {
    rejects(&["-R", "100", "--frobnicate", "{url}"], "unknown flag '--frobnicate'");
    rejects(&["-R", "100", "-x", "{url}"], "unknown flag '-x'");
}

#[test]
fn missing_or_bad_url() {
    rejects(&["-R", "100"], "missing URL");
    rejects(&["-R", "100", "127.0.0.1:8080"], "invalid URL");
    rejects(&["-R", "100", "https://127.0.0.1:1/"], "https is not supported");
    rejects(&["-R", "100", "http://127.0.0.1:99999/"], "port '99999'");
}

#[test]
fn rate_must_be_positive_and_present() {
    rejects(&["{url}"], "-R/--rate is required");
    rejects(&["-R", "0", "{url}"], "-R/--rate");
    rejects(&["-R", "-10", "{url}"], "-R/--rate");
    rejects(&["-R", "lots", "{url}"], "-R/--rate");
    rejects(&["--rate-steps", "100:0:10", "{url}"], "--rate-steps");
    rejects(&["--ramp", "100", "{url}"], "--ramp");
}

#[test]
fn durations_and_counts() {
    rejects(&["-R", "100", "-d", "soon", "{url}"], "-d/--duration");
    rejects(&["-R", "100", "-d", "0", "{url}"], "-d/--duration");
    rejects(&["-R", "100", "-d", "10x", "{url}"], "unknown time unit");
    rejects(&["-R", "100", "--timeout", "-1s", "{url}"], "--timeout");
    rejects(&["-R", "100", "-t", "4", "-c", "2", "{url}"], "-c/--connections (2) must be at least -t/--threads (4)");
    rejects(&["-R", "100", "-c", "0", "{url}"], "-c/--connections");
    rejects(&["-R", "100", "-t", "{url}"], "-t/--threads");
    rejects(&["-R", "100", "--send-slack", "20ms", "{url}"], "--send-slack: must be at most 10ms");
    rejects(&["-R", "100", "--send-slack", "fast", "{url}"], "--send-slack");
}

#[test]
fn missing_script() {
    rejects(&["-R", "100", "-s", "/nonexistent/x.lua", "{url}"], "-s/--script: cannot read '/nonexistent/x.lua'");
}

#[test]
fn lua_syntax_error_names_file_and_line() {
    let p = write_script("syntax.lua", "counter = 0\nrequest = function()\n  return wrk.format(\"GET\" \"/\")\nend\n");
    // Lua shortens a long path from the left ("...t/tmp/.../syntax.lua:3:"): the file's name and line stay
    rejects(&["-R", "100", "-s", p.to_str().unwrap(), "{url}"], "syntax.lua:3: ')' expected");
}

#[test]
fn non_function_hooks() {
    for hook in ["setup", "init", "delay", "request", "response", "done"] {
        let p = write_script(&format!("hook_{hook}.lua"), &format!("{hook} = \"not a function\"\n"));
        rejects(&["-R", "100", "-s", p.to_str().unwrap(), "{url}"], &format!("'{hook}' must be a function"));
    }
}

#[test]
fn errors_in_setup_init_and_bad_requests_stop_before_load() {
    let p = write_script("init_err.lua", "function init(args)\n  error(\"boom in init\")\nend\n");
    rejects(&["-R", "100", "-s", p.to_str().unwrap(), "{url}"], "init_err.lua:2: boom in init");
    let p = write_script("bad_req.lua", "function request() return \"garbage\" end\n");
    rejects(&["-R", "100", "-s", p.to_str().unwrap(), "{url}"], "not a valid HTTP request");
    let p = write_script("nil_req.lua", "function request() return nil end\n");
    rejects(&["-R", "100", "-s", p.to_str().unwrap(), "{url}"], "request() must return a string");
}

#[test]
fn unwritable_outputs() {
    rejects(&["-R", "100", "--json", "/nonexistent-dir/x.json", "{url}"], "--json: cannot create");
    rejects(&["-R", "100", "--hdr-log", "/nonexistent-dir/x.hlog", "{url}"], "--hdr-log: cannot create");
}

#[test]
fn help_and_version_succeed() {
    let r = run(&["--help"]);
    assert_eq!(r.status, 0);
    for flag in [
        "--connections",
        "--rate",
        "--warmup",
        "--json",
        "--hdr-log",
        "--hdr-interval",
        "--rate-steps",
        "--step-duration",
        "--ramp",
        "--u_latency",
    ] {
        assert!(r.stdout.contains(flag), "--help does not explain {flag}");
    }
    let r = run(&["--options-json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("--options-json prints JSON");
    let longs: Vec<&str> = v["options"].as_array().unwrap().iter().map(|o| o["long"].as_str().unwrap()).collect();
    for flag in ["connections", "rate", "u_latency", "warmup", "send-slack", "options-json"] {
        assert!(longs.contains(&flag), "--options-json lacks {flag}: {longs:?}");
    }
    let r = run(&["-v"]);
    assert_eq!(r.status, 0);
    assert!(r.stdout.starts_with("perflab-load 0.1.0"), "{}", r.stdout);
}

#[test]
fn bad_segments() {
    rejects(&["-R", "100", "-t3", "--segment", "3/3", "{url}"], "--segment: the part must be below 3");
    rejects(&["-R", "100", "--segment", "0/0", "{url}"], "--segment: the number of parts must be at least 1");
    rejects(
        &["-R", "100", "-t1", "-c1", "--segment", "0/2", "{url}"],
        "--segment 0/2: needs at least 2 threads (-t) so every segment runs one, got -t1",
    );
    for bad in ["1", "1/", "/2", "a/2", "1/2/3", "-1/2", "1.0/2"] {
        rejects(&["-R", "100", "--segment", bad, "{url}"], "--segment: expected I/N");
    }
    rejects(&["-R", "100", "--segment", "0/2", "--stop-on-p99", "1s", "{url}"], "--stop-on-p99: cannot be combined");
}

#[test]
fn bad_start_times() {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    rejects(&["-R", "100", "--start-at", "1000000000.5", "{url}"], "--start-at: 1000000000.500 was");
    let ahead = format!("{}", now + 7200);
    rejects(&["-R", "100", "--start-at", &ahead, "{url}"], "s ahead (at most 3600 s)");
    for bad in ["noon", "1764000000.5s", "-5", "1.7e9", "", "12:00:00"] {
        rejects(&["-R", "100", "--start-at", bad, "{url}"], "--start-at: expected seconds since the Unix epoch");
    }
}
