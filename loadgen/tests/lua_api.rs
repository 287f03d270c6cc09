//! wrk's Lua API: every hook and `wrk.*` function, the fixture scripts unchanged,
//! and runtime errors.

mod common;
use common::*;
use std::time::Duration;

#[test]
fn fixture_get_and_put_scripts_run_unchanged() {
    let server = TestServer::start(Knobs { log: true, ..Default::default() });
    let put = fixtures().join("put.lua");
    let r = run(&["-t1", "-c1", "-d1s", "-R200", "-s", put.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let log = server.log();
    assert!(log.len() >= 195, "{}", log.len());
    // put.lua: PUT /v0/entity?id=key<i> with body value<i>, i = 0, 1, 2, ... in order.
    for (i, req) in log.iter().enumerate() {
        assert_eq!(req.method, "PUT");
        assert_eq!(req.path, format!("/v0/entity?id=key{i}"));
        assert_eq!(req.body, format!("value{i}").into_bytes());
        let host = req.headers.iter().find(|(n, _)| n == "Host").map(|(_, v)| v.clone());
        assert_eq!(host, Some(format!("127.0.0.1:{}", server.port)));
    }

    let server = TestServer::start(Knobs { log: true, ..Default::default() });
    let get = fixtures().join("get.lua");
    let r = run(&["-t2", "-c2", "-d1s", "-R200", "-s", get.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let log = server.log();
    // Each thread has its own Lua state and counter: both send key0, key1, ...
    let mut keys: Vec<String> = log.iter().map(|l| l.path.clone()).collect();
    keys.sort();
    for i in 0..50 {
        let k = format!("/v0/entity?id=key{i}");
        assert_eq!(keys.iter().filter(|p| **p == k).count(), 2, "{k} once per thread");
    }
    assert!(log.iter().all(|l| l.method == "GET" && l.body.is_empty()));
}

#[test]
fn fixture_done_hook_prints_like_wrk2() {
    let server = TestServer::start(Knobs::default());
    let done = fixtures().join("done.lua");
    let r = run(&["-t1", "-c4", "-d2s", "-R1000", "-s", done.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let last = r.stdout.lines().last().unwrap();
    let re =
        regex::Regex::new(r"^requests=(\d+) duration_us=(\d+) p50=(\d+) p99=(\d+) max=(\d+) errors_status=0$").unwrap();
    let c = re.captures(last).unwrap_or_else(|| panic!("done() line: {last:?}"));
    let requests: u64 = c[1].parse().unwrap();
    assert_eq!(requests, 2000, "{last}");
    let duration_us: u64 = c[2].parse().unwrap();
    // the window and its drain (milliseconds; a drain that waited out the 2 s --timeout would pass 3.5 s)
    assert!((2_000_000..3_500_000).contains(&duration_us), "{last}");
    // The same fields as the console: the totals line counts the same requests.
    assert_totals(&r.stdout, requests, 2.0);
    // As in the fixture, done()'s line comes after Transfer/sec.
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[lines.len() - 2].starts_with("Transfer/sec:"), "{}", r.stdout);
}

const ALL_HOOKS: &str = r#"
local threads = {}
local resolved = wrk.lookup(wrk.host, wrk.port)
assert(#resolved >= 1, "lookup found nothing")
assert(wrk.connect(resolved[1]) == true, "connect failed")
assert(type(wrk.time_us()) == "number")

function setup(thread)
   thread:set("id", #threads + 1)
   thread:set("tbl", { a = 1, b = { "x", "y" } })
   thread.addr = resolved[1]
   table.insert(threads, thread)
   io.write(string.format("setup addr=%s\n", tostring(thread.addr)))
end

function init(args)
   seen_args = args
   responses, statuses, bodies, delays = 0, {}, 0, 0
   assert(tbl.b[2] == "y", "table did not cross states")
end

function delay()
   delays = delays + 1
   return 0
end

function request()
   return wrk.format("POST", "/echo/" .. id, { ["X-Custom"] = "1" }, "payload")
end

function response(status, headers, body)
   responses = responses + 1
   statuses[status] = (statuses[status] or 0) + 1
   if headers["X-Test"] == "yes" and body == "POST /echo/" .. id .. "\n" then
      bodies = bodies + 1
   end
end

function done(summary, latency, requests)
   for _, t in ipairs(threads) do
      local args = t:get("seen_args")
      io.write(string.format("thread %d: responses=%d ok_bodies=%d delays=%d status200=%d args=%s,%s,%s\n",
         t:get("id"), t:get("responses"), t:get("bodies"), t:get("delays"), t:get("statuses")[200] or 0,
         args[0], args[1], args[2]))
   end
   io.write(string.format("summary requests=%d bytes=%d duration=%d errors=%d/%d/%d/%d/%d\n",
      summary.requests, summary.bytes, summary.duration, summary.errors.connect, summary.errors.read,
      summary.errors.write, summary.errors.status, summary.errors.timeout))
   io.write(string.format("latency min=%d max=%d mean=%.1f stdev=%.1f p50=%d idx=%d len=%d\n",
      latency.min, latency.max, latency.mean, latency.stdev, latency:percentile(50), latency(#latency), #latency))
   io.write(string.format("rates n=%d min=%d max=%d\n", #requests, requests.min, requests.max))
end
"#;

#[test]
fn every_hook_and_wrk_function() {
    let server = TestServer::start(Knobs { log: true, ..Default::default() });
    let p = write_script("all_hooks.lua", ALL_HOOKS);
    let url = server.url();
    let r = run(&["-t2", "-c2", "-d1s", "-R100", "-s", p.to_str().unwrap(), &url, "first", "second"]);
    assert_eq!(r.status, 0, "{}\n{}", r.stdout, r.stderr);
    let out = &r.stdout;
    assert_eq!(out.matches(&format!("setup addr=127.0.0.1:{}\n", server.port)).count(), 2, "{out}");
    let summary_re = regex::Regex::new(r"summary requests=(\d+) bytes=(\d+) duration=(\d+) errors=0/0/0/0/0").unwrap();
    let sc = summary_re.captures(out).unwrap_or_else(|| panic!("{out}"));
    let total: u64 = sc[1].parse().unwrap();
    let duration_us: u64 = sc[3].parse().unwrap();
    assert!((1_000_000..2_500_000).contains(&duration_us), "{out}");
    let thread_re = regex::Regex::new(
        r"thread (\d): responses=(\d+) ok_bodies=(\d+) delays=(\d+) status200=(\d+) args=([^,]+),(\w+),(\w+)",
    )
    .unwrap();
    let mut sum = 0;
    for c in thread_re.captures_iter(out) {
        let responses: u64 = c[2].parse().unwrap();
        // Every response reached response() with its headers and body; delay() ran
        // once per request; args[0] is the URL, then the extra arguments.
        assert_eq!(&c[3], &c[2], "bodies/headers seen by response(): {out}");
        assert!(c[4].parse::<u64>().unwrap() >= responses, "{out}");
        assert_eq!(&c[5], &c[2]);
        assert_eq!(&c[6], url.as_str());
        assert_eq!((&c[7], &c[8]), ("first", "second"));
        sum += responses;
    }
    assert_eq!(thread_re.captures_iter(out).count(), 2, "{out}");
    // 100 requests scheduled in 1 s, all answered; response() saw each of them.
    assert_eq!(total, 100, "{out}");
    assert_eq!(sum, total, "{out}");
    assert!(out.contains(&format!("len={total}")), "{out}");
    let rates = regex::Regex::new(r"rates n=(\d+) min=(\d+) max=(\d+)").unwrap();
    let c = rates.captures(out).unwrap();
    assert!(c[1].parse::<u64>().unwrap() >= 10, "10 samples per thread-second: {out}");
    // The server got what wrk.format built: method, body, the headers table passed
    // to it, and the Host header wrk.init() put in wrk.headers.
    let log = server.log();
    let host = format!("127.0.0.1:{}", server.port);
    assert!(log.iter().all(|l| l.method == "POST" && l.body == b"payload"));
    assert!(log.iter().all(|l| l.headers.contains(&("X-Custom".to_string(), "1".to_string()))));
    assert!(log.iter().all(|l| l.headers.contains(&("Host".to_string(), host.clone()))));
    assert!(log.iter().all(|l| l.headers.contains(&("Content-Length".to_string(), "7".to_string()))));
    let paths: std::collections::HashSet<&str> = log.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["/echo/1", "/echo/2"].into_iter().collect());
}

#[test]
fn headers_from_the_command_line_and_static_requests() {
    let server = TestServer::start(Knobs { log: true, ..Default::default() });
    let url = format!("{}/static/path?x=1", server.url());
    let r = run(&["-t1", "-c1", "-d1s", "-R50", "-H", "X-Flag: on", "-H", "Host: example.test", &url]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let log = server.log();
    assert!(log.len() >= 45);
    for l in &log {
        assert_eq!((l.method.as_str(), l.path.as_str()), ("GET", "/static/path?x=1"));
        assert!(l.headers.contains(&("X-Flag".to_string(), "on".to_string())));
        assert!(l.headers.contains(&("Host".to_string(), "example.test".to_string())));
    }
}

#[test]
fn head_requests_complete_without_a_body() {
    let server = TestServer::start(Knobs { log: true, ..Default::default() });
    let p = write_script("head.lua", "wrk.method = \"HEAD\"\n");
    let r = run(&["-t1", "-c1", "-d1s", "-R50", "-s", p.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_totals(&r.stdout, 50, 1.0);
    assert!(!r.stdout.contains("Socket errors"), "{}", r.stdout);
    assert!(server.log().iter().all(|l| l.method == "HEAD"));
}

#[test]
fn delay_shifts_the_send_time() {
    let server = TestServer::start(Knobs::default());
    // 20 req/s on one connection with delay() = 30 ms: every request still goes out
    // (one per 50 ms slot), 30 ms after its slot; latency is measured from the
    // delayed time, so it stays small.
    let p = write_script("delay.lua", "function delay() return 30 end\n");
    let r = run(&["-t1", "-c1", "-d1s", "-R20", "-L", "-s", p.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_totals(&r.stdout, 20, 1.0);
    // Under half the delay: a latency measured from the slot would hold all 30 ms of it (a busy machine's
    // own lateness is a millisecond or two).
    let p50 = r.stdout.lines().find(|l| l.starts_with(" 50.000%")).unwrap();
    let value = p50.split_whitespace().nth(1).unwrap();
    let ms = if let Some(us) = value.strip_suffix("us") {
        us.parse::<f64>().unwrap() / 1000.0
    } else if let Some(ms) = value.strip_suffix("ms") {
        ms.parse::<f64>().unwrap()
    } else {
        value.strip_suffix('s').unwrap().parse::<f64>().unwrap() * 1000.0
    };
    assert!(ms < 15.0, "p50 should be well under the 30 ms delay: {p50}");
}

#[test]
fn thread_stop_stops_that_thread() {
    let server = TestServer::start(Knobs::default());
    let p = write_script(
        "stop.lua",
        "n = 0\nfunction response(status, headers, body)\n  n = n + 1\n  if n == 10 then wrk.thread:stop() end\nend\n",
    );
    let r = run(&["-t1", "-c1", "-d2s", "-R100", "-s", p.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    // The only thread stopped after 10 responses: the run ended there.
    let (n, secs) = totals(&r.stdout);
    assert_eq!(n, 10, "{}", r.stdout);
    assert!(secs < 1.5, "{}", r.stdout); // 0.1 s of requests; the run would have gone on for 2 s
    assert!(server.requests() <= 11);
}

#[test]
fn runtime_error_stops_the_run_with_file_and_line() {
    let server = TestServer::start(Knobs::default());
    let p = write_script(
        "runtime.lua",
        "n = 0\nfunction request()\n  n = n + 1\n  if n > 50 then error(\"too many\") end\n  return wrk.format()\nend\n",
    );
    let start = std::time::Instant::now();
    let r = run(&["-t1", "-c1", "-d20s", "-R100", "-s", p.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 1, "{}", r.stdout);
    // the file's name and line (Lua shortens a long path from the left)
    assert!(r.stderr.contains("runtime.lua:4: too many"), "{}", r.stderr);
    assert!(start.elapsed() < Duration::from_secs(10), "the run must stop at the error");
    let p = write_script("resp_err.lua", "function response(s, h, b)\n  local x = nil\n  return x.field\nend\n");
    let r = run(&["-t1", "-c1", "-d20s", "-R100", "-s", p.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("resp_err.lua:3:"), "{}", r.stderr);
}

#[test]
fn pipelined_requests_from_init() {
    let server = TestServer::start(Knobs { log: true, ..Default::default() });
    // wrk's pipeline.lua pattern: several requests concatenated in init().
    let p = write_script(
        "pipeline.lua",
        "init = function(args)\n  local r = {}\n  r[1] = wrk.format(nil, \"/a\")\n  r[2] = wrk.format(nil, \"/b\")\n  r[3] = wrk.format(nil, \"/c\")\n  req = table.concat(r)\nend\nrequest = function() return req end\n",
    );
    let r = run(&["-t1", "-c1", "-d1s", "-R50", "-s", p.to_str().unwrap(), &server.url()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    // 50 batches of 3 responses each.
    assert_totals(&r.stdout, 150, 1.0);
    let log = server.log();
    assert_eq!(&log[0].path, "/a");
    assert_eq!(&log[1].path, "/b");
    assert_eq!(&log[2].path, "/c");
    assert!(!r.stdout.contains("Socket errors"), "{}", r.stdout);
}
