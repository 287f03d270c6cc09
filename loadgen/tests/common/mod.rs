//! Test support: a small HTTP/1.1 server on an ephemeral loopback port with knobs
//! (per-response delay, a one-time stall, chunked bodies, closing after each
//! response, status by path), and helpers to run the real `perflab-load` binary.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

#[derive(Clone, Default)]
pub struct Knobs {
    /// Sleep before every response.
    pub delay: Duration,
    /// Hold the response to request number N (1-based, counted over all
    /// connections) for this long, once.
    pub stall: Option<(u64, Duration)>,
    /// Send bodies with Transfer-Encoding: chunked.
    pub chunked: bool,
    /// Answer with "Connection: close" and close after each response.
    pub close_each: bool,
    /// Send only the first half of the response to request number N (1-based, over all
    /// connections), then close the connection: a response lost half-way, once.
    pub cut: Option<u64>,
    /// Keep the request log (method, path, headers, body).
    pub log: bool,
}

#[derive(Clone, Debug)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Default)]
pub struct Stats {
    pub connections: AtomicU64,
    pub requests: AtomicU64,
    pub log: Mutex<Vec<Logged>>,
}

pub struct TestServer {
    pub port: u16,
    pub stats: Arc<Stats>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    pub fn start(knobs: Knobs) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let stats = Arc::new(Stats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (stats.clone(), stop.clone());
        thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                s.connections.fetch_add(1, Ordering::Relaxed);
                let (s, k, st) = (s.clone(), knobs.clone(), st.clone());
                thread::spawn(move || serve(conn, &s, &k, &st));
            }
        });
        TestServer { port, stats, stop }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> u64 {
        self.stats.requests.load(Ordering::Relaxed)
    }

    pub fn log(&self) -> Vec<Logged> {
        self.stats.log.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(conn: TcpStream, stats: &Stats, k: &Knobs, stop: &AtomicBool) {
    conn.set_nodelay(true).ok();
    let mut writer = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut headers = Vec::new();
        let mut length = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((n, v)) = h.split_once(':') {
                if n.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
                headers.push((n.trim().to_string(), v.trim().to_string()));
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let n = stats.requests.fetch_add(1, Ordering::Relaxed) + 1;
        if k.log {
            stats.log.lock().unwrap().push(Logged { method: method.clone(), path: path.clone(), headers, body });
        }
        if !k.delay.is_zero() {
            thread::sleep(k.delay);
        }
        if let Some((at, d)) = k.stall
            && n == at
        {
            thread::sleep(d);
        }
        let status: u16 =
            path.strip_prefix("/status/").and_then(|s| s.get(..3)).and_then(|s| s.parse().ok()).unwrap_or(200);
        let reason = if status == 200 { "OK" } else { "Other" };
        let conn_hdr = if k.close_each { "Connection: close\r\n" } else { "" };
        let payload = format!("{method} {path}\n");
        let resp = if k.chunked {
            let (a, b) = payload.split_at(payload.len() / 2);
            format!(
                "HTTP/1.1 {status} {reason}\r\n{conn_hdr}Transfer-Encoding: chunked\r\nX-Test: yes\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
                a.len(),
                b.len()
            )
        } else {
            // HEAD: the same headers, no body.
            let body = if method == "HEAD" { "" } else { payload.as_str() };
            format!(
                "HTTP/1.1 {status} {reason}\r\n{conn_hdr}Content-Length: {}\r\nX-Test: yes\r\n\r\n{body}",
                payload.len()
            )
        };
        if k.cut == Some(n) {
            let _ = writer.write_all(&resp.as_bytes()[..resp.len() / 2]);
            return;
        }
        if writer.write_all(resp.as_bytes()).is_err() {
            return;
        }
        if k.close_each {
            return;
        }
    }
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_perflab-load")
}

pub fn fixtures() -> PathBuf {
    // CI clones next to shared/; a checkout elsewhere (e.g. /tmp/x) falls back to the machine's copy,
    // as tests/conftest.py does.
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/wrk2");
    let machine = PathBuf::from("/work/shared/fixtures/wrk2");
    if !beside.is_dir() && machine.is_dir() { machine } else { beside }
}

pub fn temp_dir(name: &str) -> PathBuf {
    // under target/ (Cargo's directory for integration tests' files), not $TMPDIR: nothing left behind there
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn write_script(name: &str, body: &str) -> PathBuf {
    let p = temp_dir("scripts").join(name);
    std::fs::write(&p, body).unwrap();
    p
}

pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str]) -> Run {
    let out: Output = Command::new(bin()).args(args).stdin(Stdio::null()).output().expect("run perflab-load");
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Waits (bounded) until `f` holds.
pub fn wait_for(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if f() {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    f()
}

/// The "N requests in T" line: (N, T in seconds). T is the window plus the wait for
/// the answers to its last requests, so it may exceed -d by that latency.
pub fn totals(stdout: &str) -> (u64, f64) {
    let re = regex::Regex::new(r"(?m)^  (\d+) requests in (\d+\.\d{2})(us|ms|s|m), ").unwrap();
    let c = re.captures(stdout).unwrap_or_else(|| panic!("no totals line in:\n{stdout}"));
    let scale = match &c[3] {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => 60.0,
    };
    (c[1].parse().unwrap(), c[2].parse::<f64>().unwrap() * scale)
}

/// Asserts the totals line reports `n` requests over about `secs` (+ at most 0.5 s
/// of waiting for the last answers on a loaded machine).
pub fn assert_totals(stdout: &str, n: u64, secs: f64) {
    let (got_n, got_s) = totals(stdout);
    assert_eq!(got_n, n, "{stdout}");
    assert!(got_s >= secs && got_s < secs + 0.5, "duration {got_s} s, expected about {secs} s:\n{stdout}");
}

/// A port nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
