//! One worker thread: an epoll loop over its share of the connections, sending each
//! request when the schedule says it is due and timing its response.
//!
//! Measurement model (per connection, one request in flight, like wrk2):
//! * request k of connection g is due at `plan.due_ns(g + k·C)`;
//! * corrected latency = response time − due time, so a request that goes out late
//!   because the connection was still busy is still measured from its schedule;
//! * uncorrected latency (`-U`) = response time − actual send time;
//! * the response time is the kernel's receive timestamp of the response's last
//!   bytes (`SO_TIMESTAMPNS`), so it does not depend on when this thread reads it;
//! * schedule lag = actual send time − max(due time, when the connection became
//!   free: connected, or the previous response arrived): lateness of our own making.
//!
//! Because responses carry their arrival time, the loop need not wake up for them:
//! it sleeps until the next request is due (`--send-slack` lets it wait until a few
//! are), then reads whatever arrived and sends what is due. It waits on socket
//! readiness only when that matters: a due request waits for its connection, a
//! connect or a partial write or response is under way, the run is draining, or the
//! kernel gives no timestamps.
//!
//! No allocation per request on the fast path: buffers are reused, the static request
//! is built once, and responses reach Lua only when a `response` hook exists.

use crate::batching::{self, Slack};
use crate::clock::{self, RealtimeOffset};
use crate::cpu_usage::{self, ThreadSample};
use crate::http::{Feed, ResponseParser};
use crate::net;
use crate::poller::{Poller, READABLE, WRITABLE};
use crate::recording::{Segment, SegmentData, WorkerTotals};
use crate::schedule::Plan;
use crate::script::{ThreadHandle, ThreadHooks};
use mlua::Lua;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};

/// Messages from a worker to the main thread.
pub enum WorkerMsg {
    /// Connections are open (or failed to open); waiting for the start time.
    Ready,
    Segment {
        worker: usize,
        index: usize,
        data: Box<SegmentData>,
    },
    /// The worker's last (possibly partial) segment comes with its totals.
    Finished {
        worker: usize,
        index: usize,
        data: Box<SegmentData>,
        totals: Box<WorkerTotals>,
    },
    Failed {
        worker: usize,
        error: String,
    },
}

pub struct WorkerSetup {
    pub index: usize,
    /// Global index of this worker's first connection, and how many it has.
    pub first_conn: u64,
    pub conns: usize,
    pub total_conns: u64,
    pub plan: Arc<Plan>,
    pub segments: Arc<Vec<Segment>>,
    pub timeout_ns: u64,
    pub slack: Slack,
    pub u_latency: bool,
    /// Record every response of a pipelined batch (wrk2's default; `-B` turns it off).
    pub record_all: bool,
    /// Requests per `request()` result (more than one when a script pipelines).
    pub pipeline: usize,
    /// Thread 0's first request, already produced while checking the script.
    pub first_request: Option<Vec<u8>>,
    pub handle: Arc<ThreadHandle>,
    pub stop: Arc<AtomicBool>,
    /// An earlier end of the measured window (absolute ns), set by the main thread
    /// for an early stop; `u64::MAX` until then.
    pub window_end: Arc<AtomicU64>,
    pub tx: Sender<WorkerMsg>,
    /// The schedule start (monotonic ns); `None` (sender dropped) aborts.
    pub start_rx: Receiver<u64>,
}

const RATE_SAMPLE_NS: u64 = 100_000_000;
const READ_BUF: usize = 64 * 1024;
const NONE: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed,
    Connecting,
    /// Connected, no request in flight.
    Idle,
    /// A request is partly written.
    Writing,
    /// Waiting for the response(s).
    Awaiting,
}

struct Conn {
    fd: RawFd,
    state: State,
    /// Global connection index g.
    g: u64,
    /// Index k of the next request to send, its due time (absolute ns, NONE when the
    /// schedule has no more) and its intended send time (due plus the script's delay()).
    next: u64,
    next_due: u64,
    next_at: u64,
    /// delay() was already asked for `next`.
    delayed: bool,
    /// `next` has fallen due and goes out as soon as the connection can take it.
    ready: bool,
    /// The request in flight: intended and actual send time, responses still expected.
    sched: u64,
    sent: u64,
    pending: usize,
    timed_out: bool,
    /// Released inside the measured window: its response is counted.
    counted: bool,
    /// Bytes of the request in flight (added when its first response is counted) and
    /// of the response being read.
    req_bytes: u64,
    resp_bytes: u64,
    /// When the connection could last take a new request (connected, or the previous
    /// response arrived): the schedule lag's reference when it is after the due time.
    free_at: u64,
    /// Part of a response has arrived: read the rest promptly.
    partial: bool,
    wbuf: Vec<u8>,
    woff: usize,
    use_static: bool,
    out_registered: bool,
    /// Bumped on every close, to notice a connection replaced under our feet.
    generation: u32,
    parser: ResponseParser,
}

struct Worker<'a> {
    id: usize,
    poller: Poller,
    events: Vec<libc::epoll_event>,
    conns: Vec<Conn>,
    /// (intended send time, connection) of each connection's next request. Entries
    /// that no longer match their connection are skipped when popped.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    /// Connections whose due request can go out now (a response freed them).
    sendq: Vec<u32>,
    rbuf: Vec<u8>,
    static_req: Vec<u8>,
    first_request: Option<Vec<u8>>,
    hooks: ThreadHooks,
    lua: &'a Lua,
    addr: SocketAddr,
    plan: Arc<Plan>,
    segments: Arc<Vec<Segment>>,
    total_conns: u64,
    pipeline: usize,
    record_all: bool,
    u_latency: bool,
    timeout_ns: u64,
    slack: Slack,
    /// Reads come with kernel timestamps (seen at least one, never missed one), so
    /// responses may wait to be read.
    stamped: bool,
    stamps_missing: bool,
    /// The last wait skipped epoll: responses may sit unread on any connection.
    unread: bool,
    /// Realtime → monotonic conversion for the current batch of reads.
    offset: Option<RealtimeOffset>,
    /// Schedule start, measured window start and end (absolute monotonic ns).
    t0: u64,
    w0: u64,
    w1: u64,
    /// After the window: how long to wait for answers to requests scheduled in it.
    drain_end: u64,
    window_end: Arc<AtomicU64>,
    seg: Box<SegmentData>,
    seg_idx: usize,
    seg_end: u64,
    next_tick: u64,
    sample_start: u64,
    sample_count: u64,
    totals: Box<WorkerTotals>,
    cpu_start: Option<ThreadSample>,
    tx: Sender<WorkerMsg>,
}

/// Runs one worker thread to the end; every outcome is reported through `tx`.
pub fn run_worker(setup: WorkerSetup) {
    clock::tighten_timer_slack();
    block_termination_signals();
    let tx = setup.tx.clone();
    let id = setup.index;
    let handle = setup.handle.clone();
    let lua = handle.lua.lock().unwrap_or_else(|p| p.into_inner());
    let result = (|| -> Result<(), String> {
        let mut w = Worker::new(setup.index, &lua, &setup)?;
        w.preconnect();
        let _ = tx.send(WorkerMsg::Ready);
        let Ok(t0) = setup.start_rx.recv() else { return Ok(()) };
        w.start(t0);
        match w.run(&setup.stop, &setup.handle.stop) {
            Ok(()) => {
                w.finish();
                Ok(())
            }
            Err(e) => {
                // A script error ends the run: no results from this thread.
                w.close_all();
                Err(e)
            }
        }
    })();
    if let Err(error) = result {
        let _ = tx.send(WorkerMsg::Failed { worker: id, error });
    }
}

fn block_termination_signals() {
    // SAFETY: building a signal set and masking it for this thread only. SIGINT and
    // SIGTERM are then delivered to the main thread, which stops the run cleanly.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

impl<'a> Worker<'a> {
    fn new(id: usize, lua: &'a Lua, s: &WorkerSetup) -> Result<Worker<'a>, String> {
        let hooks = ThreadHooks::from_state(lua)?;
        let addr = s.handle.addr.lock().unwrap().ok_or("thread has no address")?;
        let mut static_req = Vec::new();
        if hooks.request.is_none() {
            hooks.make_request(&mut static_req)?;
            crate::http::count_requests(&static_req)
                .map_err(|e| format!("the request built by wrk.format() is invalid: {e}"))?;
        }
        let poller = Poller::new().map_err(|e| format!("epoll: {e}"))?;
        let conns = (0..s.conns)
            .map(|i| Conn {
                fd: -1,
                state: State::Closed,
                g: s.first_conn + i as u64,
                next: 0,
                next_due: NONE,
                next_at: NONE,
                delayed: false,
                ready: false,
                sched: 0,
                sent: 0,
                pending: 0,
                timed_out: false,
                counted: false,
                req_bytes: 0,
                resp_bytes: 0,
                free_at: 0,
                partial: false,
                wbuf: Vec::new(),
                woff: 0,
                use_static: hooks.request.is_none(),
                out_registered: false,
                generation: 0,
                parser: ResponseParser::new(hooks.response.is_some()),
            })
            .collect();
        Ok(Worker {
            id,
            poller,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 512],
            conns,
            heap: BinaryHeap::with_capacity(2 * s.conns + 1),
            sendq: Vec::with_capacity(s.conns),
            rbuf: vec![0u8; READ_BUF],
            static_req,
            first_request: s.first_request.clone(),
            hooks,
            lua,
            addr,
            plan: s.plan.clone(),
            segments: s.segments.clone(),
            total_conns: s.total_conns,
            pipeline: s.pipeline.max(1),
            record_all: s.record_all,
            u_latency: s.u_latency,
            timeout_ns: s.timeout_ns,
            slack: s.slack,
            stamped: false,
            stamps_missing: false,
            unread: false,
            offset: None,
            t0: 0,
            w0: 0,
            w1: 0,
            drain_end: 0,
            window_end: s.window_end.clone(),
            seg: Box::new(SegmentData::new(s.u_latency)),
            seg_idx: 0,
            seg_end: NONE,
            next_tick: 0,
            sample_start: 0,
            sample_count: 0,
            totals: Box::default(),
            cpu_start: None,
            tx: s.tx.clone(),
        })
    }

    /// Opens the connections before the clock starts, so the first requests do not
    /// pay for connection set-up. Failures here are not counted: the scheduled
    /// requests retry and count.
    fn preconnect(&mut self) {
        for i in 0..self.conns.len() {
            self.connect(i);
        }
        let deadline = clock::now_ns() + 1_000_000_000;
        while self.conns.iter().any(|c| c.state == State::Connecting) {
            let now = clock::now_ns();
            if now >= deadline {
                break;
            }
            let n = self.poller.wait(&mut self.events, deadline - now).unwrap_or(0);
            for e in 0..n {
                let (i, ev) = (self.events[e].u64 as usize, self.events[e].events);
                if self.conns[i].state == State::Connecting {
                    let _ = self.on_connect_ready(i, ev);
                }
            }
        }
    }

    fn start(&mut self, t0: u64) {
        self.t0 = t0;
        self.w0 = t0 + self.plan.window_start_ns;
        self.w1 = t0 + self.plan.window_end_ns;
        self.drain_end = self.w1 + self.timeout_ns;
        self.seg_end = self.w0 + self.segments.first().map_or(0, |s| s.end_ns);
        self.sample_start = self.w0;
        self.next_tick = t0;
        for i in 0..self.conns.len() {
            self.schedule_next(i, 0);
        }
    }

    /// Makes request k the next one of connection i and queues it.
    fn schedule_next(&mut self, i: usize, k: u64) {
        let c = &mut self.conns[i];
        c.next = k;
        c.delayed = false;
        c.ready = false;
        c.next_due = match self.plan.due_ns(c.g + k * self.total_conns) {
            Some(d) if self.t0 + d < self.w1 => self.t0 + d,
            _ => NONE,
        };
        c.next_at = c.next_due;
        if c.next_due != NONE {
            self.heap.push(Reverse((c.next_due, i as u32)));
        }
    }

    /// Whether an event at time t is counted: after the window starts, through the
    /// drain (the run loop stops at the drain's end).
    #[inline]
    fn in_window(&self, t: u64) -> bool {
        t >= self.w0
    }

    /// Nothing scheduled in the window is still unsent or unanswered.
    fn drained(&self) -> bool {
        self.conns
            .iter()
            .all(|c| c.next_due == NONE && !c.ready && !matches!(c.state, State::Writing | State::Awaiting))
    }

    fn run(&mut self, stop: &AtomicBool, thread_stop: &AtomicBool) -> Result<(), String> {
        let mut ready_events = 0;
        loop {
            self.sync_window_end();
            self.offset = None;
            self.handle_events(ready_events, clock::now_ns())?;
            let now = clock::now_ns();
            if stop.load(Ordering::Acquire) || thread_stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if now >= self.next_tick || (now >= self.seg_end && self.can_roll()) {
                // Responses left unread belong to the interval they arrived in, and a
                // timeout must not be counted for an answer that is merely unread.
                self.sweep(now)?;
            }
            self.roll_segments(now);
            // After the window, requests scheduled in it are still sent and their
            // responses awaited (up to --timeout), so a stall at the very end is
            // recorded rather than dropped. Nothing new is scheduled past the window.
            if now >= self.w1 && (self.drained() || now >= self.drain_end) {
                return Ok(());
            }
            if now >= self.next_tick {
                self.tick(now);
            }
            while let Some(&Reverse((at, i))) = self.heap.peek() {
                if at > now {
                    break;
                }
                self.heap.pop();
                self.on_due(i as usize, at)?;
            }
            // All reads first, then the sends back to back: the server finds them
            // together (fewer wake-ups on its side, and so cheaper sends on ours).
            for k in 0..self.sendq.len() {
                self.issue(self.sendq[k] as usize)?;
            }
            self.sendq.clear();
            ready_events = self.wait(now)?;
        }
    }

    fn handle_events(&mut self, n: usize, t: u64) -> Result<(), String> {
        for e in 0..n {
            let (i, ev) = (self.events[e].u64 as usize, self.events[e].events);
            self.on_event(i, ev, t)?;
        }
        Ok(())
    }

    /// Reads everything that arrived on any connection (and notices closes).
    fn sweep(&mut self, t: u64) -> Result<(), String> {
        let n = self.poller.wait(&mut self.events, 0).map_err(|e| format!("epoll_wait: {e}"))?;
        self.unread = false;
        self.handle_events(n, t)
    }

    /// Sleeps until the next thing to do and returns how many socket events are ready.
    fn wait(&mut self, now: u64) -> Result<usize, String> {
        let mut wake = self.next_tick.min(if now < self.w1 { self.w1 } else { self.drain_end });
        if self.can_roll() {
            wake = wake.min(self.seg_end);
        }
        if let Some(&Reverse((first, _))) = self.heap.peek() {
            let slack = self.slack.at(self.plan.rate_at(now.saturating_sub(self.t0)), self.total_conns);
            wake = wake.min(batching::wake_for(first, self.heap.iter().map(|e| e.0.0), slack));
        }
        let timeout = wake.saturating_sub(clock::now_ns());
        let prompt = !self.stamped
            || now >= self.w1
            || self.conns.iter().any(|c| {
                c.partial
                    || matches!(c.state, State::Connecting | State::Writing)
                    || (c.ready && c.state != State::Idle)
            });
        if prompt {
            self.unread = false;
            return self.poller.wait(&mut self.events, timeout).map_err(|e| format!("epoll_wait: {e}"));
        }
        // Responses carry their arrival time: each is read when its connection's next
        // request is due (or by a sweep), so no wake-up and no epoll call is spent on it.
        if timeout > 0 {
            clock::sleep_until(wake);
            self.unread = true;
        }
        // (With nothing to wait for, go round again: more is due already.)
        Ok(0)
    }

    /// The main thread may end the window early (a stop rule fired): nothing
    /// scheduled from then on is sent; what is in flight drains as usual.
    fn sync_window_end(&mut self) {
        let end = self.window_end.load(Ordering::Relaxed);
        if end >= self.w1 {
            return;
        }
        self.w1 = end.max(self.w0);
        self.drain_end = self.w1 + self.timeout_ns;
        for c in &mut self.conns {
            if c.next_due != NONE && c.next_due >= self.w1 {
                c.next_due = NONE;
                c.ready = false;
            }
        }
    }

    /// Closes every connection and hands the last segment and totals to main.
    fn finish(&mut self) {
        self.sync_window_end();
        let now = clock::now_ns();
        if now >= self.w0 && self.sample_count > 0 && self.totals.rates.hist.is_empty() {
            // A run shorter than one sampling period still gets a rate (never "nan").
            let elapsed = now.min(self.w1).saturating_sub(self.sample_start).max(1);
            self.totals.rates.record(self.sample_count * 1_000_000_000 / elapsed);
        }
        self.totals.unsent = self.unsent();
        self.close_all();
        let end = cpu_usage::sample_thread();
        self.totals.cpu = Some(self.cpu_start.as_ref().unwrap_or(&end).until(&end));
        let data = std::mem::replace(&mut self.seg, Box::new(SegmentData::new(self.u_latency)));
        let totals = std::mem::take(&mut self.totals);
        let _ = self.tx.send(WorkerMsg::Finished { worker: self.id, index: self.seg_idx, data, totals });
    }

    /// Requests scheduled in the window that never left (over capacity: the backlog).
    fn unsent(&self) -> u64 {
        let c_total = self.total_conns;
        let first_in_window = self.plan.due_before(self.plan.window_start_ns);
        // A worker that stops itself (thread:stop()) ends its window now.
        let end = self.w1.min(clock::now_ns());
        let end_in_window = self.plan.due_before(end.saturating_sub(self.t0));
        self.conns
            .iter()
            .map(|c| {
                // Requests g + k·C with first_in_window ≤ g + k·C < end_in_window, k ≥ next.
                let k_of = |n: u64| n.saturating_sub(c.g).div_ceil(c_total);
                let from = k_of(first_in_window).max(c.next);
                k_of(end_in_window).saturating_sub(from)
            })
            .sum()
    }

    fn close_all(&mut self) {
        for i in 0..self.conns.len() {
            self.close(i);
        }
    }

    /// Another interval follows the current one in the window (after the window's end,
    /// the last one takes the drain's answers).
    fn can_roll(&self) -> bool {
        self.seg_idx + 1 < self.segments.len() && self.seg_end < self.w1
    }

    fn roll_segments(&mut self, t: u64) {
        // Never past the interval that holds the window's end, even a just-shortened one.
        self.sync_window_end();
        while t >= self.seg_end && self.can_roll() {
            self.seg.oldest_pending_us = self.oldest_pending(self.seg_end) / 1000;
            let data = std::mem::replace(&mut self.seg, Box::new(SegmentData::new(self.u_latency)));
            let _ = self.tx.send(WorkerMsg::Segment { worker: self.id, index: self.seg_idx, data });
            self.seg_idx += 1;
            self.seg_end = self.w0 + self.segments[self.seg_idx].end_ns;
        }
    }

    /// How long the oldest counted request still unanswered at time t has waited
    /// since it was due (0 if none): a lower bound on latencies not yet recorded.
    fn oldest_pending(&self, t: u64) -> u64 {
        self.conns
            .iter()
            .filter_map(|c| {
                if matches!(c.state, State::Writing | State::Awaiting) && c.counted {
                    Some(c.sched)
                } else if c.ready && c.next_at != NONE {
                    Some(c.next_at)
                } else {
                    None
                }
            })
            .map(|since| t.saturating_sub(since))
            .max()
            .unwrap_or(0)
    }

    /// Every 100 ms: a Req/Sec sample and the timeout check; the CPU sample at the
    /// window's start.
    fn tick(&mut self, t: u64) {
        if t >= self.w0 && self.cpu_start.is_none() {
            self.cpu_start = Some(cpu_usage::sample_thread());
        }
        // Samples cover whole periods inside the window (none during the drain).
        if t >= self.sample_start + RATE_SAMPLE_NS && self.sample_start + RATE_SAMPLE_NS <= self.w1 {
            let elapsed = t.min(self.w1) - self.sample_start;
            self.totals.rates.record(self.sample_count * 1_000_000_000 / elapsed);
            self.sample_count = 0;
            self.sample_start = t;
        }
        for i in 0..self.conns.len() {
            let c = &mut self.conns[i];
            if matches!(c.state, State::Writing | State::Awaiting)
                && !c.timed_out
                && t.saturating_sub(c.sent) > self.timeout_ns
            {
                c.timed_out = true;
                if c.counted {
                    self.seg.errors.timeout += 1;
                }
            }
        }
        // Ticks are aligned to the window start so samples cover equal periods.
        self.next_tick = if t < self.w0 {
            self.w0.min(t + RATE_SAMPLE_NS)
        } else {
            self.w0 + ((t - self.w0) / RATE_SAMPLE_NS + 1) * RATE_SAMPLE_NS
        };
    }

    fn connect(&mut self, i: usize) {
        let c = &mut self.conns[i];
        match net::start_connect(&self.addr) {
            Ok((fd, done)) => {
                c.fd = fd;
                c.parser.reset();
                let interest = if done { READABLE } else { READABLE | WRITABLE };
                c.out_registered = !done;
                c.state = if done { State::Idle } else { State::Connecting };
                if done {
                    c.free_at = clock::now_ns();
                }
                if self.poller.add(fd, interest, i as u64).is_err() {
                    net::close(fd);
                    c.fd = -1;
                    c.state = State::Closed;
                }
            }
            Err(_) => c.state = State::Closed,
        }
    }

    /// A connect attempt failed; if a request was waiting for it, that request fails
    /// as a connect error (so a dead server yields one error per scheduled request).
    fn connect_failed(&mut self, i: usize) {
        self.close(i);
        if self.conns[i].ready {
            if self.in_window(clock::now_ns()) {
                self.seg.errors.connect += 1;
            }
            let k = self.conns[i].next + 1;
            self.schedule_next(i, k);
        }
    }

    fn on_connect_ready(&mut self, i: usize, _ev: u32) -> Result<(), String> {
        let fd = self.conns[i].fd;
        if net::take_connect_error(fd).is_some() {
            self.connect_failed(i);
            return Ok(());
        }
        let c = &mut self.conns[i];
        c.state = State::Idle;
        c.out_registered = false;
        c.free_at = clock::now_ns();
        let _ = self.poller.modify(fd, READABLE, i as u64);
        if c.ready {
            self.issue(i)?;
        }
        Ok(())
    }

    fn close(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.fd >= 0 {
            net::close(c.fd);
        }
        c.fd = -1;
        c.state = State::Closed;
        c.out_registered = false;
        c.generation = c.generation.wrapping_add(1);
        c.pending = 0;
        c.partial = false;
        c.parser.reset();
    }

    /// A heap entry for connection i at time `at` came due.
    fn on_due(&mut self, i: usize, at: u64) -> Result<(), String> {
        let c = &self.conns[i];
        if c.ready || c.next_due == NONE || at != c.next_at {
            return Ok(()); // stale entry
        }
        if self.hooks.delay.is_some() && !c.delayed {
            self.conns[i].delayed = true;
            let ms = self.hooks.delay_ms()?;
            if ms > 0.0 {
                let c = &mut self.conns[i];
                c.next_at = c.next_due + (ms * 1e6) as u64;
                if c.next_at > clock::now_ns() {
                    self.heap.push(Reverse((c.next_at, i as u32)));
                    return Ok(());
                }
            }
        }
        self.conns[i].ready = true;
        if self.conns[i].state == State::Awaiting && self.unread {
            // Its response has most likely arrived and waits to be read.
            self.offset = None;
            self.on_readable(i, clock::now_ns())?;
        }
        match self.conns[i].state {
            State::Idle => self.sendq.push(i as u32),
            State::Closed => {
                self.connect(i);
                match self.conns[i].state {
                    State::Closed => self.connect_failed(i),
                    State::Idle => self.sendq.push(i as u32),
                    _ => {}
                }
            }
            // Sent when the connect completes or the response arrives.
            State::Connecting | State::Writing | State::Awaiting => {}
        }
        Ok(())
    }

    /// Sends the due request of connection i (idle and ready).
    fn issue(&mut self, i: usize) -> Result<(), String> {
        if self.conns[i].state != State::Idle || !self.conns[i].ready {
            return Ok(());
        }
        let c = &mut self.conns[i];
        if let Some(first) = self.first_request.take() {
            c.wbuf = first;
            c.use_static = false;
        } else if self.hooks.request.is_some() {
            c.wbuf.clear();
            self.hooks.make_request(&mut c.wbuf)?;
            c.use_static = false;
        } else {
            c.use_static = true;
        }
        let request: &[u8] = if c.use_static { &self.static_req } else { &c.wbuf };
        c.parser.set_head(request.starts_with(b"HEAD "));
        c.req_bytes = request.len() as u64;
        c.sched = c.next_at;
        c.pending = self.pipeline;
        c.timed_out = false;
        c.woff = 0;
        c.sent = clock::now_ns();
        // Its release: when it could have left, the later of its due time and the moment
        // its connection became free. Counted when that is in the window (nothing due
        // after the window is sent): over capacity that includes a warm-up backlog
        // released in the window, and the generator's own lateness never moves a
        // request across the window's start.
        let release = c.sched.max(c.free_at);
        c.counted = release >= self.w0;
        c.state = State::Writing;
        if c.counted {
            self.totals.lag.record(c.sent.saturating_sub(release) / 1000);
        }
        let k = c.next + 1;
        self.schedule_next(i, k);
        self.flush_write(i);
        Ok(())
    }

    fn flush_write(&mut self, i: usize) {
        loop {
            let c = &mut self.conns[i];
            let buf = if c.use_static { &self.static_req[c.woff..] } else { &c.wbuf[c.woff..] };
            match net::write(c.fd, buf) {
                Ok(n) => {
                    c.woff += n;
                    if n == buf.len() {
                        c.state = State::Awaiting;
                        if c.out_registered {
                            c.out_registered = false;
                            let _ = self.poller.modify(c.fd, READABLE, i as u64);
                        }
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !c.out_registered {
                        c.out_registered = true;
                        let _ = self.poller.modify(c.fd, READABLE | WRITABLE, i as u64);
                    }
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    if c.counted {
                        self.seg.errors.write += 1;
                    }
                    self.drop_connection(i);
                    return;
                }
            }
        }
    }

    /// Closes connection i after an error or a close by the server (a request in
    /// flight is lost); it reconnects at once if it has more requests to send.
    fn drop_connection(&mut self, i: usize) {
        self.close(i);
        if self.conns[i].next_due != NONE {
            self.connect(i);
        }
    }

    /// A lost request in flight counts one read error (if counted).
    fn lose_request(&mut self, i: usize) {
        let c = &self.conns[i];
        if matches!(c.state, State::Writing | State::Awaiting) && c.counted {
            self.seg.errors.read += 1;
        }
        self.drop_connection(i);
    }

    fn on_event(&mut self, i: usize, ev: u32, t: u64) -> Result<(), String> {
        match self.conns[i].state {
            State::Closed => Ok(()),
            State::Connecting => self.on_connect_ready(i, ev),
            State::Idle | State::Writing | State::Awaiting => {
                let generation = self.conns[i].generation;
                if self.conns[i].state == State::Writing && ev & WRITABLE != 0 {
                    self.flush_write(i);
                }
                // Errors and hang-ups surface through read(), unless a failed write
                // already replaced the connection.
                let still_same = self.conns[i].generation == generation;
                if still_same && ev & (READABLE | libc::EPOLLHUP as u32 | libc::EPOLLERR as u32) != 0 {
                    self.on_readable(i, t)?;
                }
                Ok(())
            }
        }
    }

    fn on_readable(&mut self, i: usize, t: u64) -> Result<(), String> {
        let mut rbuf = std::mem::take(&mut self.rbuf);
        let r = self.read_all(i, t, &mut rbuf);
        self.rbuf = rbuf;
        let c = &mut self.conns[i];
        c.partial = c.state == State::Awaiting && c.parser.in_progress();
        r
    }

    /// When the bytes of a read arrived: the kernel's timestamp, else the time we read.
    fn arrival(&mut self, stamp: u64, i: usize, t: u64) -> u64 {
        if stamp == 0 {
            self.stamped = false;
            self.stamps_missing = true;
            return t;
        }
        self.stamped = !self.stamps_missing;
        let offset = *self.offset.get_or_insert_with(RealtimeOffset::now);
        // Never before the request left, never after we looked.
        offset.to_mono(stamp).clamp(self.conns[i].sent.min(t), t)
    }

    fn read_all(&mut self, i: usize, t: u64, rbuf: &mut [u8]) -> Result<(), String> {
        loop {
            let fd = self.conns[i].fd;
            if fd < 0 {
                return Ok(());
            }
            match net::read_stamped(fd, rbuf) {
                Ok((0, _)) => {
                    let busy = matches!(self.conns[i].state, State::Writing | State::Awaiting);
                    if busy && self.conns[i].state == State::Awaiting && self.conns[i].parser.finish_on_eof() {
                        // A body delimited by the close: complete() sees keep-alive off
                        // and reconnects.
                        return self.complete(i, t);
                    }
                    self.lose_request(i);
                    return Ok(());
                }
                Ok((n, stamp)) => {
                    let arrived = self.arrival(stamp, i, t);
                    let mut off = 0;
                    while off < n {
                        if self.conns[i].state == State::Idle {
                            // Bytes nobody asked for: the stream is out of sync.
                            if self.in_window(t) {
                                self.seg.errors.read += 1;
                            }
                            self.drop_connection(i);
                            return Ok(());
                        }
                        if self.conns[i].state != State::Awaiting {
                            self.lose_request(i);
                            return Ok(());
                        }
                        match self.conns[i].parser.feed(&rbuf[off..n]) {
                            Ok(Feed::NeedMore) => {
                                self.conns[i].resp_bytes += (n - off) as u64;
                                break;
                            }
                            Ok(Feed::Complete { consumed }) => {
                                off += consumed;
                                self.conns[i].resp_bytes += consumed as u64;
                                let generation = self.conns[i].generation;
                                self.complete(i, arrived)?;
                                if self.conns[i].generation != generation {
                                    // Closed (and maybe reopened): the rest of the
                                    // buffer belonged to the old connection.
                                    return Ok(());
                                }
                            }
                            Err(_) => {
                                self.lose_request(i);
                                return Ok(());
                            }
                        }
                    }
                    if n < rbuf.len() {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.lose_request(i);
                    return Ok(());
                }
            }
        }
    }

    /// A response of connection i arrived at time t.
    fn complete(&mut self, i: usize, t: u64) -> Result<(), String> {
        if t >= self.seg_end {
            self.roll_segments(t);
        }
        let c = &mut self.conns[i];
        c.pending = c.pending.saturating_sub(1);
        let status = c.parser.status();
        let keep_alive = c.parser.keep_alive();
        let resp_bytes = std::mem::take(&mut c.resp_bytes);
        if c.counted {
            // One consistent set: these responses' count, bytes, statuses and latencies.
            self.totals.status[(status as usize).min(999)] += 1;
            self.seg.requests += 1;
            self.seg.bytes_read += resp_bytes;
            self.seg.bytes_written += std::mem::take(&mut c.req_bytes);
            self.totals.last_done = self.totals.last_done.max(t);
            if t < self.w1 {
                self.sample_count += 1;
            }
            if status > 399 {
                self.seg.errors.status += 1;
            }
            if self.record_all || c.pending == 0 {
                self.seg.corrected.record(t.saturating_sub(c.sched) / 1000);
                if let Some(u) = &mut self.seg.uncorrected {
                    u.record(t.saturating_sub(c.sent) / 1000);
                }
            }
        }
        if self.hooks.response.is_some() {
            let c = &self.conns[i];
            self.hooks.response(self.lua, status, &c.parser.headers, &c.parser.body)?;
        }
        let c = &mut self.conns[i];
        c.parser.reset();
        if c.pending == 0 {
            c.state = State::Idle;
            c.free_at = t;
            if c.ready {
                self.sendq.push(i as u32);
            }
        }
        if !keep_alive {
            // Responses still expected on a closing connection are lost.
            if self.conns[i].pending > 0 && self.conns[i].counted {
                self.seg.errors.read += 1;
            }
            self.drop_connection(i);
        }
        Ok(())
    }
}
