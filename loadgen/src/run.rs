//! The whole run: check every input, prepare the Lua states, start the workers at
//! one common time (now, or `--start-at`), collect, and print/write the results.

use crate::cli::{self, Command};
use crate::clock;
use crate::collector::Collector;
use crate::cpu_usage;
use crate::early_stop::StopRule;
use crate::hdr_log::HdrLog;
use crate::http;
use crate::json_summary::{self, RunParts, StartAtSummary, StoppedEarly, Summary};
use crate::options::Config;
use crate::partition::Share;
use crate::recording::{Interval, WorkerMsg, intervals};
use crate::schedule::Plan;
use crate::script::{DoneSummary, LuaStats, ScriptSpec, Scripts, ThreadHooks};
use crate::signals;
use crate::start_at;
use crate::url::Url;
use crate::worker::{WorkerSetup, run_worker};
use crate::wrk_format::{self, Report};
use std::fs::File;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
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

/// The worker threads, connecting, then waiting for the start time.
struct Workers {
    starts: Vec<mpsc::Sender<u64>>,
    joins: Vec<JoinHandle<()>>,
    rx: mpsc::Receiver<WorkerMsg>,
    /// Set to stop every worker (SIGINT/SIGTERM, a failed worker).
    stop: Arc<AtomicBool>,
    /// An earlier end of the window (early stop, interruption); `u64::MAX` until then.
    window_end: Arc<AtomicU64>,
}

/// What the workers share, besides their own thread's part.
struct WorkerPlan<'a> {
    cfg: &'a Config,
    plan: &'a Arc<Plan>,
    grid: &'a Arc<Vec<Interval>>,
    pipeline: usize,
}

impl Workers {
    /// One worker per thread of `share`, each with its connections of the whole run.
    fn spawn(
        w: &WorkerPlan,
        share: &Share,
        scripts: &Scripts,
        first_request: Option<Vec<u8>>,
    ) -> Result<Workers, String> {
        let (tx, rx) = mpsc::channel();
        let mut workers = Workers {
            starts: Vec::new(),
            joins: Vec::new(),
            rx,
            stop: Arc::new(AtomicBool::new(false)),
            window_end: Arc::new(AtomicU64::new(u64::MAX)),
        };
        let mut first_request = first_request;
        for (i, (thread, handle)) in share.threads.iter().zip(&scripts.threads).enumerate() {
            let (start_tx, start_rx) = mpsc::channel();
            workers.starts.push(start_tx);
            let setup = WorkerSetup {
                index: i,
                first_conn: thread.first_conn,
                conns: thread.conns,
                total_conns: share.total_conns,
                plan: w.plan.clone(),
                intervals: w.grid.clone(),
                timeout_ns: w.cfg.timeout_us * 1000,
                slack: w.cfg.slack,
                u_latency: w.cfg.u_latency,
                record_all: !w.cfg.batch_latency,
                pipeline: w.pipeline,
                first_request: first_request.take(),
                handle: handle.clone(),
                stop: workers.stop.clone(),
                window_end: workers.window_end.clone(),
                tx: tx.clone(),
                start_rx,
            };
            let spawned = std::thread::Builder::new()
                .name(format!("perflab-load-{}", thread.thread))
                .spawn(move || run_worker(setup))
                .map_err(|e| format!("cannot start thread {}: {e}", thread.thread));
            match spawned {
                Ok(j) => workers.joins.push(j),
                Err(e) => {
                    workers.abandon();
                    return Err(e);
                }
            }
        }
        Ok(workers)
    }

    /// Waits until every worker has opened its connections.
    fn wait_ready(&self) -> Result<(), String> {
        let mut ready = 0;
        while ready < self.joins.len() {
            match self.rx.recv_timeout(Duration::from_millis(50)) {
                Ok(WorkerMsg::Ready) => ready += 1,
                Ok(WorkerMsg::Failed { error, .. }) => return Err(error),
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) if signals::received() => {
                    return Err("interrupted before the run started".into());
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("a worker thread exited".into()),
            }
        }
        Ok(())
    }

    /// Ends the workers before the start: they close their connections, nothing is sent.
    fn abandon(self) {
        drop(self.starts);
        for j in self.joins {
            let _ = j.join();
        }
    }

    fn start(&self, t0: u64) {
        for s in &self.starts {
            let _ = s.send(t0);
        }
    }

    /// Waits for every worker thread to end.
    fn join(self) {
        for j in self.joins {
            let _ = j.join();
        }
    }
}

/// The workers get the start time this long before it, so each is waiting for it.
const START_LEAD_NS: u64 = 2_000_000;

/// When the schedule starts (monotonic ns): right away, or at `--start-at` once every
/// worker is ready. Then also how long before the requested start it was ready.
fn schedule_start(cfg: &Config) -> Result<(u64, Option<i128>), String> {
    let Some(start_ns) = cfg.start_at_ns else { return Ok((clock::now_ns() + START_LEAD_NS, None)) };
    start_at::check(start_ns, start_at::now_ns(), "when every connection was open")?;
    let t0 = start_at::to_mono(start_ns);
    let ahead_ns = t0 as i128 - clock::now_ns() as i128;
    // The caller's ready barrier: every process has printed this before the start.
    eprintln!(
        "perflab-load: ready; the schedule starts at {} (in {:.3} s)",
        start_at::format_epoch(start_ns),
        ahead_ns as f64 / 1e9
    );
    // Short sleeps, so SIGINT/SIGTERM before the start end the run at once.
    while clock::now_ns() + START_LEAD_NS < t0 {
        if signals::received() {
            return Err("interrupted before the run started".into());
        }
        clock::sleep_until((clock::now_ns() + 20_000_000).min(t0 - START_LEAD_NS));
    }
    Ok((t0, Some(ahead_ns)))
}

/// How the run went, as the main thread saw it.
struct Outcome {
    /// The run's end (monotonic ns): see `collect`.
    stopped_at: u64,
    interrupted: bool,
    runtime_error: Option<String>,
    stopped_early: Option<StoppedEarly>,
    /// The main thread's CPU sample and the process's times at the window's start.
    cpu_start: Option<(cpu_usage::ThreadSample, (f64, f64))>,
}

/// Receives the workers' intervals until every worker has finished, applying an
/// early stop and SIGINT/SIGTERM; `t0` is the schedule's start.
fn collect(collector: &mut Collector, workers: &Workers, plan: &Plan, t0: u64) -> Outcome {
    let (w0, w1) = (t0 + plan.window_start_ns, t0 + plan.window_end_ns);
    let mut running = workers.joins.len();
    let mut last_finish = 0u64;
    let mut interrupted_at: Option<u64> = None;
    let mut out =
        Outcome { stopped_at: 0, interrupted: false, runtime_error: None, stopped_early: None, cpu_start: None };
    while running > 0 {
        let now = clock::now_ns();
        if out.cpu_start.is_none() && now >= w0 {
            out.cpu_start = Some((cpu_usage::sample_thread(), cpu_usage::process_times()));
        }
        let wait = if out.cpu_start.is_none() { (w0 - now).min(20_000_000) } else { 20_000_000 };
        match workers.rx.recv_timeout(Duration::from_nanos(wait)) {
            Ok(WorkerMsg::Progress { worker, index, report }) => collector.progress(worker, index, *report),
            Ok(WorkerMsg::Finished { worker, report, totals }) => {
                running -= 1;
                last_finish = clock::now_ns();
                collector.finished(worker, *report, &totals);
            }
            Ok(WorkerMsg::Failed { worker, error }) => {
                running -= 1;
                collector.failed(worker);
                out.runtime_error.get_or_insert(error);
                workers.stop.store(true, Ordering::Release);
            }
            Ok(WorkerMsg::Ready) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        // (A stop after the window has ended changes nothing.)
        if let Some(reason) = collector.take_stop_request().filter(|_| clock::now_ns() < w1) {
            // Nothing is scheduled from now on; what is in flight drains as usual.
            let end = clock::now_ns().clamp(w0, w1);
            workers.window_end.store(end, Ordering::Relaxed);
            collector.window_end_rel_ns = end - w0;
            let at_s = (end - w0) as f64 / 1e9;
            let e = StoppedEarly { at_s, rate: collector.share_of(plan.rate_at(end - t0)), reason };
            collector.note_stop(e.at_s, e.rate, &e.reason);
            out.stopped_early = Some(e);
        }
        if signals::received() && interrupted_at.is_none() {
            let t = clock::now_ns();
            interrupted_at = Some(t);
            // The window ends here: what was due later was never offered.
            workers.window_end.store(t.min(workers.window_end.load(Ordering::Relaxed)), Ordering::Relaxed);
            workers.stop.store(true, Ordering::Release);
            collector.window_end_rel_ns = collector.window_end_rel_ns.min(t.saturating_sub(w0));
        }
    }
    out.interrupted = interrupted_at.is_some();
    // Every thread stopped itself (thread:stop()): the window ended with the last.
    let stopped_itself = !out.interrupted && last_finish < w0 + collector.window_end_rel_ns;
    if stopped_itself {
        collector.window_end_rel_ns = last_finish.saturating_sub(w0);
    }
    collector.close_window(w0);
    let w1 = w0 + collector.window_end_rel_ns;
    // The run's end: the window's end, or later if answers to requests scheduled in
    // the window arrived during the drain (so the achieved rate counts that time).
    out.stopped_at = if stopped_itself { last_finish } else { w1.max(collector.last_done) }.max(w0);
    collector.end_rel_ns = out.stopped_at - w0;
    out
}

/// The hdr log's comments on a split or synchronized run (none otherwise).
fn log_notes(cfg: &Config, share: &Share) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(seg) = cfg.segment {
        let ids: Vec<String> = share.threads.iter().map(|t| t.thread.to_string()).collect();
        notes.push(format!(
            "Segment {}/{}: threads {} of {}; {} of {} connections; this log's counts and step rates are its share {:.6}",
            seg.index,
            seg.count,
            ids.join(" "),
            share.total_threads,
            share.connections(),
            share.total_conns,
            share.fraction()
        ));
    }
    if let Some(start_ns) = cfg.start_at_ns {
        let warmup_s = cfg.warmup_us as f64 / 1e6;
        let start = start_at::format_epoch(start_ns);
        notes.push(format!(
            "StartAt: {start} (requested start of the schedule; the window starts {warmup_s:.3} s later)"
        ));
    }
    notes
}

/// Everything checked and built before a worker starts.
struct Prepared {
    share: Share,
    scripts: Scripts,
    /// Thread 0's first request (a dynamic script's, already made), and requests per send.
    first_request: Option<Vec<u8>>,
    pipeline: usize,
    plan: Arc<Plan>,
    grid: Arc<Vec<Interval>>,
    json_file: Option<File>,
}

fn run(cfg: &Config) -> Result<i32, String> {
    let url = check_inputs(cfg)?;
    let mut p = prepare(cfg, &url)?;
    let mut collector = new_collector(cfg, &p)?;
    print_header(cfg, &p.share);
    signals::install();
    let (workers, t0, start_at) = start_workers(cfg, &mut p, &mut collector)?;
    let mut outcome = collect(&mut collector, &workers, &p.plan, t0);
    workers.join();
    if let Some(e) = outcome.runtime_error.take() {
        return Err(e);
    }
    collector.finish();
    if let Some(e) = collector.take_log_error() {
        eprintln!("perflab-load: warning: --hdr-log: {e}");
    }
    report(cfg, p, &collector, &outcome, t0, start_at)?;
    Ok(0)
}

/// The checks that need no preparation: `--start-at` not long past, the URL, the script's file.
fn check_inputs(cfg: &Config) -> Result<Url, String> {
    if let Some(start_ns) = cfg.start_at_ns {
        start_at::check(start_ns, start_at::now_ns(), "when the command started")?;
    }
    let url = Url::parse(&cfg.url)?;
    if let Some(p) = &cfg.script
        && !p.is_file()
    {
        return Err(format!("-s/--script: cannot read '{}': no such file", p.display()));
    }
    Ok(url)
}

/// This process's part of the run, the Lua states with the first request checked,
/// the file limit, the JSON file and the schedule.
fn prepare(cfg: &Config, url: &Url) -> Result<Prepared, String> {
    let share = Share::of(cfg.threads, cfg.connections, cfg.segment);
    let thread_ids: Vec<usize> = share.threads.iter().map(|t| t.thread).collect();
    let spec = ScriptSpec { path: cfg.script.clone(), url: url.clone(), headers: cfg.headers.clone() };
    let scripts = Scripts::prepare(spec, cfg.threads, &thread_ids, &cfg.script_args)?;
    if scripts.unreachable {
        eprintln!(
            "perflab-load: warning: nothing accepts connections at {}:{}; refused attempts count as connect errors",
            url.host,
            url.service()
        );
    }
    let (first_request, pipeline) = check_first_request(&scripts)?;
    raise_open_file_limit(share.connections())?;
    let json_file = cfg.json.as_ref().map(|p| create_file("--json", p)).transpose()?;
    let plan = Arc::new(Plan::from_config(cfg));
    let grid = Arc::new(intervals(&plan, cfg.hdr_interval_us * 1000));
    Ok(Prepared { share, scripts, first_request, pipeline, plan, grid, json_file })
}

/// The main thread's side of recording, with the hdr log (created here) and the stop rule.
fn new_collector(cfg: &Config, p: &Prepared) -> Result<Collector, String> {
    let hdr_log = match &cfg.hdr_log {
        Some(path) => {
            Some(HdrLog::create(path).map_err(|e| format!("--hdr-log: cannot create '{}': {e}", path.display()))?)
        }
        None => None,
    };
    let stop_rule = cfg.stop_on_p99_us.map(|us| StopRule::new(us, cfg.stop_intervals));
    let (plan, share) = (p.plan.clone(), p.share.clone());
    Ok(Collector::new(p.share.threads.len(), p.grid.to_vec(), plan, share, cfg.u_latency, hdr_log, stop_rule))
}

/// Starts the workers, and the schedule once every one has connected (now, or at
/// `--start-at`): the workers, the schedule's start (monotonic ns) and `--start-at`'s summary.
fn start_workers(
    cfg: &Config,
    p: &mut Prepared,
    collector: &mut Collector,
) -> Result<(Workers, u64, Option<StartAtSummary>), String> {
    let worker_plan = WorkerPlan { cfg, plan: &p.plan, grid: &p.grid, pipeline: p.pipeline };
    let workers = Workers::spawn(&worker_plan, &p.share, &p.scripts, p.first_request.take())?;
    let (t0, ready_ahead_ns) = match workers.wait_ready().and_then(|()| schedule_start(cfg)) {
        Ok(s) => s,
        Err(e) => {
            workers.abandon();
            return Err(e);
        }
    };
    if let Some(log) = collector.log_mut() {
        let w0 = t0 + p.plan.window_start_ns;
        log.header(clock::wall_ns(w0), &log_notes(cfg, &p.share)).map_err(|e| format!("--hdr-log: {e}"))?;
    }
    workers.start(t0);
    let start_at = cfg.start_at_ns.map(|requested_ns| {
        clock::sleep_until(t0);
        let skew_ns = start_at::skew_ns(requested_ns, t0);
        StartAtSummary { requested_ns, skew_ns, ready_ahead_ns: ready_ahead_ns.unwrap_or(0) }
    });
    Ok((workers, t0, start_at))
}

/// The results: wrk2's report on stdout, the JSON summary, the script's `done()`.
fn report(
    cfg: &Config,
    p: Prepared,
    collector: &Collector,
    outcome: &Outcome,
    t0: u64,
    start_at: Option<StartAtSummary>,
) -> Result<(), String> {
    // The CPU sampled now, before printing: the window's, not the report's.
    let cpu = cpu_json(outcome, collector);
    let runtime_us = outcome.stopped_at.saturating_sub(t0 + p.plan.window_start_ns) / 1000;
    print_results(cfg, collector, runtime_us);
    if let Some(mut f) = p.json_file {
        let summary = Summary::of(RunParts {
            cfg,
            plan: &p.plan,
            share: &p.share,
            collector,
            schedule_start: t0,
            stopped_at: outcome.stopped_at,
            interrupted: outcome.interrupted,
            stopped_early: outcome.stopped_early.as_ref(),
            cpu,
            start_at,
        });
        f.write_all(json_summary::render(&summary).as_bytes()).map_err(|e| format!("--json: {e}"))?;
    }
    if p.scripts.has_done() {
        call_done(&p.scripts, collector, runtime_us)?;
    }
    Ok(())
}

/// wrk2's lines before the run.
fn print_header(cfg: &Config, share: &Share) {
    let threads = share.threads.len();
    print!("{}", wrk_format::header(cfg.duration_us as f64 / 1e6, &cfg.url, threads, share.connections()));
    let _ = std::io::stdout().flush();
}

/// wrk2's report of the run.
fn print_results(cfg: &Config, collector: &Collector, runtime_us: u64) {
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
}

/// The JSON's `cpu`: the main thread's and the workers' CPU over the window, and the process's.
fn cpu_json(outcome: &Outcome, collector: &Collector) -> serde_json::Value {
    let main_end = cpu_usage::sample_thread();
    let (p_end, (t_start, p_start)) =
        (cpu_usage::process_times(), outcome.cpu_start.clone().unwrap_or((main_end.clone(), (0.0, 0.0))));
    let mut threads = vec![t_start.until(&main_end)];
    threads.extend(collector.worker_cpu.iter().flatten().cloned());
    let process = if p_start == (0.0, 0.0) { (0.0, 0.0) } else { (p_end.0 - p_start.0, p_end.1 - p_start.1) };
    cpu_usage::to_json(process, &threads, &cpu_usage::cpus_allowed())
}

/// The script's `done(summary, latency, requests)`.
fn call_done(scripts: &Scripts, collector: &Collector, runtime_us: u64) -> Result<(), String> {
    let total = &collector.total;
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
    Ok(())
}
