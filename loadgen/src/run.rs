//! The whole run: check every input, prepare the Lua states, start the workers at
//! one common time, collect, and print/write the results.

use crate::cli::{self, Command};
use crate::clock;
use crate::collector::Collector;
use crate::cpu_usage;
use crate::early_stop::StopRule;
use crate::hdr_log::HdrLog;
use crate::http;
use crate::json_summary::{self, StoppedEarly, Summary};
use crate::options::{Config, RateShape};
use crate::recording::intervals;
use crate::schedule::Plan;
use crate::script::{DoneSummary, LuaStats, ScriptSpec, Scripts, ThreadHooks};
use crate::signals;
use crate::url::Url;
use crate::worker::{WorkerMsg, WorkerSetup, run_worker};
use crate::wrk_format::{self, Report};
use std::fs::File;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Entry point: returns the process exit status.
pub fn main_with_args(args: &[String]) -> i32 {
    match cli::parse(args) {
        Err(e) => {
            eprintln!("perflab-load: error: {e}\nRun 'perflab-load --help' for usage.");
            1
        }
        Ok(Command::Help) => {
            print!("{}", cli::usage());
            0
        }
        Ok(Command::OptionsJson) => {
            print!("{}", cli::options_json());
            0
        }
        Ok(Command::Version) => {
            println!("perflab-load {} (wrk2-compatible open-loop load generator, LuaJIT)", cli::VERSION);
            0
        }
        Ok(Command::Run(cfg)) => match run(&cfg) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("perflab-load: error: {e}");
                1
            }
        },
    }
}

/// Checks the script's first request (and counts pipelined requests in it), like
/// wrk. For a dynamic script that request is kept and sent first.
fn check_first_request(scripts: &Scripts) -> Result<(Option<Vec<u8>>, usize), String> {
    let lua = scripts.threads[0].lua.lock().unwrap();
    let hooks = ThreadHooks::from_state(&lua)?;
    let mut buf = Vec::new();
    hooks.make_request(&mut buf)?;
    let n = http::count_requests(&buf).map_err(|e| format!("the script's request is not a valid HTTP request: {e}"))?;
    Ok((hooks.request.is_some().then_some(buf), n))
}

/// Each connection is a file descriptor: lift the soft limit to the hard one and
/// refuse a run that cannot open its connections.
fn raise_open_file_limit(connections: usize) -> Result<(), String> {
    // SAFETY: getrlimit/setrlimit with a valid struct.
    unsafe {
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return Ok(());
        }
        if lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        }
        let needed = connections as u64 + 64;
        if lim.rlim_cur < needed {
            return Err(format!(
                "-c/--connections ({connections}) needs about {needed} open files, but the limit is {} (raise it with ulimit -n)",
                lim.rlim_cur
            ));
        }
    }
    Ok(())
}

fn create_file(flag: &str, path: &std::path::Path) -> Result<File, String> {
    File::create(path).map_err(|e| format!("{flag}: cannot create '{}': {e}", path.display()))
}

fn run(cfg: &Config) -> Result<i32, String> {
    let url = Url::parse(&cfg.url)?;
    if let Some(p) = &cfg.script
        && !p.is_file()
    {
        return Err(format!("-s/--script: cannot read '{}': no such file", p.display()));
    }
    let spec = ScriptSpec { path: cfg.script.clone(), url: url.clone(), headers: cfg.headers.clone() };
    let scripts = Scripts::prepare(spec, cfg.threads, &cfg.script_args)?;
    if scripts.unreachable {
        eprintln!(
            "perflab-load: warning: nothing accepts connections at {}:{}; refused attempts count as connect errors",
            url.host,
            url.service()
        );
    }
    let (first_request, pipeline) = check_first_request(&scripts)?;
    raise_open_file_limit(cfg.connections)?;

    let mut json_file = cfg.json.as_ref().map(|p| create_file("--json", p)).transpose()?;
    let hdr_log = match &cfg.hdr_log {
        Some(p) => Some(HdrLog::create(p).map_err(|e| format!("--hdr-log: cannot create '{}': {e}", p.display()))?),
        None => None,
    };

    let plan = Arc::new(Plan::from_config(cfg));
    let grid = intervals(&plan, cfg.hdr_interval_us * 1000);
    let stop_rule = cfg.stop_on_p99_us.map(|us| StopRule::new(us, cfg.stop_intervals));
    let mut collector = Collector::new(cfg.threads, grid.clone(), plan.clone(), cfg.u_latency, hdr_log, stop_rule);

    print!("{}", wrk_format::header(cfg.duration_us as f64 / 1e6, &cfg.url, cfg.threads, cfg.connections));
    let _ = std::io::stdout().flush();

    signals::install();
    let stop = Arc::new(AtomicBool::new(false));
    let window_end = Arc::new(AtomicU64::new(u64::MAX));
    let (tx, rx) = mpsc::channel();
    let grid = Arc::new(grid);
    let mut starts = Vec::new();
    let mut joins = Vec::new();
    let mut first_conn = 0u64;
    let mut first_request = first_request;
    for (i, handle) in scripts.threads.iter().enumerate() {
        let conns = cfg.connections / cfg.threads + usize::from(i < cfg.connections % cfg.threads);
        let (start_tx, start_rx) = mpsc::channel();
        starts.push(start_tx);
        let setup = WorkerSetup {
            index: i,
            first_conn,
            conns,
            total_conns: cfg.connections as u64,
            plan: plan.clone(),
            intervals: grid.clone(),
            timeout_ns: cfg.timeout_us * 1000,
            slack: cfg.slack,
            u_latency: cfg.u_latency,
            record_all: !cfg.batch_latency,
            pipeline,
            first_request: if i == 0 { first_request.take() } else { None },
            handle: handle.clone(),
            stop: stop.clone(),
            window_end: window_end.clone(),
            tx: tx.clone(),
            start_rx,
        };
        first_conn += conns as u64;
        let j = std::thread::Builder::new()
            .name(format!("perflab-load-{i}"))
            .spawn(move || run_worker(setup))
            .map_err(|e| format!("cannot start thread {i}: {e}"))?;
        joins.push(j);
    }
    drop(tx);

    // Wait until every worker has opened its connections.
    let mut ready = 0;
    let mut failure: Option<String> = None;
    while ready < cfg.threads && failure.is_none() {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(WorkerMsg::Ready) => ready += 1,
            Ok(WorkerMsg::Failed { error, .. }) => failure = Some(error),
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if signals::received() {
                    failure = Some("interrupted before the run started".into());
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => failure = Some("a worker thread exited".into()),
        }
    }
    if let Some(e) = failure {
        drop(starts);
        for j in joins {
            let _ = j.join();
        }
        return Err(e);
    }

    // One common start, slightly ahead so every worker is waiting for it.
    let t0 = clock::now_ns() + 2_000_000;
    let w0 = t0 + plan.window_start_ns;
    let w1 = t0 + plan.window_end_ns;
    if let Some(log) = collector.log_mut() {
        log.header(clock::wall_ns(w0)).map_err(|e| format!("--hdr-log: {e}"))?;
    }
    for s in &starts {
        let _ = s.send(t0);
    }

    let mut running = cfg.threads;
    let mut last_finish = 0u64;
    let mut interrupted_at: Option<u64> = None;
    let mut runtime_error: Option<String> = None;
    let mut stopped_early: Option<StoppedEarly> = None;
    // The main thread's own CPU and the process's, sampled at the window's start.
    let mut cpu_start: Option<(cpu_usage::ThreadSample, (f64, f64))> = None;
    while running > 0 {
        let now = clock::now_ns();
        if cpu_start.is_none() && now >= w0 {
            cpu_start = Some((cpu_usage::sample_thread(), cpu_usage::process_times()));
        }
        let wait = if cpu_start.is_none() { (w0 - now).min(20_000_000) } else { 20_000_000 };
        match rx.recv_timeout(Duration::from_nanos(wait)) {
            Ok(WorkerMsg::Interval { worker, index, data }) => collector.interval(worker, index, &data),
            Ok(WorkerMsg::Finished { worker, index, data, totals }) => {
                running -= 1;
                last_finish = clock::now_ns();
                collector.finished(worker, index, &data, &totals);
            }
            Ok(WorkerMsg::Failed { worker, error }) => {
                running -= 1;
                collector.failed(worker);
                runtime_error.get_or_insert(error);
                stop.store(true, Ordering::Release);
            }
            Ok(WorkerMsg::Ready) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if let Some(reason) = collector.take_stop_request() {
            // Nothing is scheduled from now on; what is in flight drains as usual.
            let end = clock::now_ns().clamp(w0, w1);
            window_end.store(end, Ordering::Relaxed);
            collector.window_end_rel_ns = end - w0;
            let e = StoppedEarly { at_s: (end - w0) as f64 / 1e9, rate: plan.rate_at(end - t0), reason };
            collector.note_stop(e.at_s, e.rate, &e.reason);
            stopped_early = Some(e);
        }
        if signals::received() && interrupted_at.is_none() {
            let t = clock::now_ns();
            interrupted_at = Some(t);
            // The window ends here: what was due later was never offered.
            window_end.store(t.min(window_end.load(Ordering::Relaxed)), Ordering::Relaxed);
            stop.store(true, Ordering::Release);
            collector.window_end_rel_ns = collector.window_end_rel_ns.min(t.saturating_sub(w0));
        }
    }
    let interrupted = interrupted_at.is_some();
    let w1 = w0 + collector.window_end_rel_ns;
    let last_done = collector.last_done;
    // The run's end: the window's end, or later if answers to requests scheduled in
    // the window arrived during the drain (so the achieved rate counts that time);
    // earlier if interrupted or if every thread stopped itself (thread:stop()).
    let stopped_at = match interrupted_at {
        Some(t) if t < w1 => t,
        _ if !interrupted && last_finish < w1 => last_finish,
        _ => w1.max(last_done),
    }
    .max(w0);
    collector.end_rel_ns = stopped_at - w0;
    collector.window_end_rel_ns = collector.window_end_rel_ns.min(collector.end_rel_ns);
    for j in joins {
        let _ = j.join();
    }
    if let Some(e) = runtime_error {
        return Err(e);
    }
    collector.drain(true);
    if let Some(e) = collector.take_log_error() {
        eprintln!("perflab-load: warning: --hdr-log: {e}");
    }
    let cpu = {
        let main_end = cpu_usage::sample_thread();
        let (p_end, (t_start, p_start)) =
            (cpu_usage::process_times(), cpu_start.unwrap_or((main_end.clone(), (0.0, 0.0))));
        let mut threads = vec![t_start.until(&main_end)];
        threads.extend(collector.worker_cpu.iter().flatten().cloned());
        let process = if p_start == (0.0, 0.0) { (0.0, 0.0) } else { (p_end.0 - p_start.0, p_end.1 - p_start.1) };
        cpu_usage::to_json(process, &threads, &cpu_usage::cpus_allowed())
    };

    let runtime_ns = stopped_at.saturating_sub(w0);
    let runtime_us = runtime_ns / 1000;
    let total = &collector.total;
    let report = Report {
        latency: &total.corrected,
        uncorrected: total.uncorrected.as_ref(),
        rates: &collector.rates,
        requests: total.requests,
        bytes_read: total.bytes_read,
        errors: total.errors,
        runtime_us,
        print_latency: cfg.latency,
    };
    print!("{}", wrk_format::results(&report));
    let _ = std::io::stdout().flush();

    if let Some(f) = json_file.as_mut() {
        let window_s = (plan.window_end_ns - plan.window_start_ns) as f64 / 1e9;
        let target_rate = match cfg.shape {
            RateShape::Constant(r) => r,
            _ => plan.expected_between(plan.window_start_ns, plan.window_end_ns) / window_s,
        };
        let summary = Summary {
            url: &cfg.url,
            script: cfg.script.as_ref().map(|p| p.display().to_string()),
            script_args: &cfg.script_args[1..],
            threads: cfg.threads,
            connections: cfg.connections,
            duration_s: runtime_ns as f64 / 1e9,
            warmup_s: cfg.warmup_us as f64 / 1e6,
            send_slack_us: cfg.slack.max_ns() / 1000,
            target_rate,
            start_ms: clock::wall_ms(w0),
            end_ms: clock::wall_ms(stopped_at.max(w0)),
            warmup_start_ms: clock::wall_ms(t0),
            requests: total.requests,
            bytes_read: total.bytes_read,
            bytes_written: total.bytes_written,
            errors: total.errors,
            status_codes: &collector.status,
            latency: &total.corrected,
            uncorrected: total.uncorrected.as_ref(),
            steps: std::mem::take(&mut collector.step_summaries),
            interrupted,
            send_slack_auto: cfg.slack == crate::batching::Slack::Auto,
            offered: collector.offered(),
            unsent: collector.unsent,
            lag: &collector.lag,
            cpu,
            intervals: &collector.summaries,
            stopped_early: stopped_early.as_ref(),
        };
        f.write_all(json_summary::render(&summary).as_bytes()).map_err(|e| format!("--json: {e}"))?;
    }

    if scripts.has_done() {
        let e = &total.errors;
        let summary = DoneSummary {
            duration_us: runtime_us,
            requests: total.requests,
            bytes: total.bytes_read,
            errors: [e.connect, e.read, e.write, e.status, e.timeout],
        };
        let latency = LuaStats {
            hist: Arc::new(total.corrected.clone()),
            min: total.corrected.min() as f64,
            max: total.corrected.max() as f64,
        };
        let rates = &collector.rates;
        let requests = LuaStats { hist: Arc::new(rates.hist.clone()), min: rates.min as f64, max: rates.max as f64 };
        scripts.call_done(&summary, latency, requests)?;
        let _ = std::io::stdout().flush();
    }
    Ok(0)
}
