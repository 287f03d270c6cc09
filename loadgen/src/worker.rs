//! One worker thread: an epoll loop over its share of the connections, sending each
//! request when the schedule says it is due and timing its response.
//!
//! Measurement model (per connection, one request in flight, like wrk2):
//! * request k of connection g is due at `plan.due_ns(g + k·C)`, and counts in the
//!   window and the interval of that due time (`counting`);
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
//!
//! `connection`: one connection's state machine; `counting`: what is counted, and
//! when; this module: the loop that ties them to the schedule.

mod connection;
mod counting;

use crate::batching::{self, Slack};
use crate::clock::{self, RealtimeOffset};
use crate::poller::Poller;
use crate::recording::{ErrorKind, Interval, WorkerMsg};
use crate::schedule::Plan;
use crate::script::{ThreadHandle, ThreadHooks};
use connection::{Conn, NONE, State};
use counting::Tally;
use mlua::Lua;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};

pub struct WorkerSetup {
    pub index: usize,
    /// Global index of this worker's first connection, and how many it has.
    pub first_conn: u64,
    pub conns: usize,
    pub total_conns: u64,
    pub plan: Arc<Plan>,
    pub intervals: Arc<Vec<Interval>>,
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

const READ_BUF: usize = 64 * 1024;

struct Worker<'a> {
    poller: Poller,
    events: Vec<libc::epoll_event>,
    conns: Vec<Conn>,
    /// (intended send time, connection) of each connection's next request. Entries
    /// that no longer match their connection are skipped when popped.
    due: BinaryHeap<Reverse<(u64, u32)>>,
    /// Connections whose due request can go out now (a response freed them).
    to_send: Vec<u32>,
    read_buf: Vec<u8>,
    static_request: Vec<u8>,
    first_request: Option<Vec<u8>>,
    hooks: ThreadHooks,
    lua: &'a Lua,
    addr: SocketAddr,
    plan: Arc<Plan>,
    total_conns: u64,
    pipeline: usize,
    record_all: bool,
    timeout_ns: u64,
    slack: Slack,
    /// Reads come with kernel timestamps (seen at least one, never missed one), so
    /// responses may wait to be read.
    reads_stamped: bool,
    stamps_missing: bool,
    /// The last wait skipped epoll: responses may sit unread on any connection.
    maybe_unread: bool,
    /// Realtime → monotonic conversion for the current batch of reads.
    realtime_offset: Option<RealtimeOffset>,
    /// When the schedule started (absolute monotonic ns): request n is due at this
    /// plus `plan.due_ns(n)`.
    schedule_start: u64,
    /// After the window: how long to wait for answers to requests scheduled in it.
    drain_end: u64,
    /// Set by the main thread to end the window early.
    early_window_end: Arc<AtomicU64>,
    /// The next Req/Sec sample and timeout check.
    next_tick: u64,
    tally: Tally,
}

/// Runs one worker thread to the end; every outcome is reported through `tx`.
pub fn run_worker(setup: WorkerSetup) {
    clock::tighten_timer_slack();
    block_termination_signals();
    let tx = setup.tx.clone();
    let handle = setup.handle.clone();
    let lua = handle.lua.lock().unwrap_or_else(|p| p.into_inner());
    let result = (|| -> Result<(), String> {
        let mut w = Worker::new(&lua, &setup)?;
        w.preconnect();
        let _ = tx.send(WorkerMsg::Ready);
        let Ok(start) = setup.start_rx.recv() else { return Ok(()) };
        w.start(start);
        let outcome = w.run(&setup.stop, &setup.handle.stop);
        match &outcome {
            Ok(()) => w.finish(),
            // A script error ends the run: no results from this thread.
            Err(_) => w.close_all(),
        }
        outcome
    })();
    if let Err(error) = result {
        let _ = tx.send(WorkerMsg::Failed { worker: setup.index, error });
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
    fn new(lua: &'a Lua, s: &WorkerSetup) -> Result<Worker<'a>, String> {
        let hooks = ThreadHooks::from_state(lua)?;
        let addr = s.handle.addr.lock().unwrap().ok_or("thread has no address")?;
        let mut static_request = Vec::new();
        if hooks.request.is_none() {
            hooks.make_request(&mut static_request)?;
            crate::http::count_requests(&static_request)
                .map_err(|e| format!("the request built by wrk.format() is invalid: {e}"))?;
        }
        let poller = Poller::new().map_err(|e| format!("epoll: {e}"))?;
        let collect_responses = hooks.response.is_some();
        let conns = (0..s.conns).map(|i| Conn::new(s.first_conn + i as u64, collect_responses)).collect();
        Ok(Worker {
            poller,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 512],
            conns,
            due: BinaryHeap::with_capacity(2 * s.conns + 1),
            to_send: Vec::with_capacity(s.conns),
            read_buf: vec![0u8; READ_BUF],
            static_request,
            first_request: s.first_request.clone(),
            hooks,
            lua,
            addr,
            plan: s.plan.clone(),
            total_conns: s.total_conns,
            pipeline: s.pipeline.max(1),
            record_all: s.record_all,
            timeout_ns: s.timeout_ns,
            slack: s.slack,
            reads_stamped: false,
            stamps_missing: false,
            maybe_unread: false,
            realtime_offset: None,
            schedule_start: 0,
            drain_end: 0,
            early_window_end: s.window_end.clone(),
            next_tick: 0,
            tally: Tally::new(s.index, s.tx.clone(), s.intervals.clone(), s.u_latency),
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
                    let _ = self.on_event(i, ev, now);
                }
            }
        }
    }

    fn start(&mut self, schedule_start: u64) {
        self.schedule_start = schedule_start;
        let window_end = schedule_start + self.plan.window_end_ns;
        self.tally.start(schedule_start + self.plan.window_start_ns, window_end);
        self.drain_end = window_end + self.timeout_ns;
        self.next_tick = schedule_start;
        for i in 0..self.conns.len() {
            self.schedule_next(i, 0);
        }
    }

    /// Makes request k the next one of connection i and queues it.
    fn schedule_next(&mut self, i: usize, k: u64) {
        let c = &mut self.conns[i];
        c.next.k = k;
        c.next.delay_asked = false;
        c.next.waiting = false;
        c.next.planned = self.plan.due_ns(c.id + k * self.total_conns).map_or(NONE, |d| self.schedule_start + d);
        c.next.due = if c.next.planned < self.tally.window_end { c.next.planned } else { NONE };
        c.next.intended = c.next.due;
        if c.next.due != NONE {
            self.due.push(Reverse((c.next.due, i as u32)));
        }
    }

    /// Nothing scheduled in the window is still unsent or unanswered.
    fn drained(&self) -> bool {
        self.conns.iter().all(Conn::done_with_window)
    }

    fn run(&mut self, stop: &AtomicBool, thread_stop: &AtomicBool) -> Result<(), String> {
        let mut ready_events = 0;
        loop {
            self.sync_window_end();
            self.realtime_offset = None;
            self.handle_events(ready_events, clock::now_ns())?;
            let now = clock::now_ns();
            if stop.load(Ordering::Acquire) || thread_stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if now >= self.next_tick || self.tally.next_roll().is_some_and(|end| now >= end) {
                // Responses left unread belong to the interval they arrived in, and a
                // timeout must not be counted for an answer that is merely unread.
                self.sweep(now)?;
            }
            self.roll_intervals(now);
            // After the window, requests scheduled in it are still sent and their
            // responses awaited (up to --timeout), so a stall at the very end is
            // recorded rather than dropped. Nothing new is scheduled past the window.
            if now >= self.tally.window_end && (self.drained() || now >= self.drain_end) {
                return Ok(());
            }
            if now >= self.next_tick {
                self.tick(now);
            }
            self.send_due(now)?;
            ready_events = self.wait(now)?;
        }
    }

    /// Takes every request due by `now`; then sends all that can go, after all reads:
    /// back to back, the server finds them together (fewer wake-ups on its side, and
    /// so cheaper sends on ours).
    fn send_due(&mut self, now: u64) -> Result<(), String> {
        while let Some(&Reverse((at, i))) = self.due.peek() {
            if at > now {
                break;
            }
            self.due.pop();
            self.on_due(i as usize, at)?;
        }
        for k in 0..self.to_send.len() {
            self.issue(self.to_send[k] as usize)?;
        }
        self.to_send.clear();
        Ok(())
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
        self.maybe_unread = false;
        self.handle_events(n, t)
    }

    /// Sleeps until the next thing to do and returns how many socket events are ready.
    fn wait(&mut self, now: u64) -> Result<usize, String> {
        let window_end = self.tally.window_end;
        let mut wake = self.next_tick.min(if now < window_end { window_end } else { self.drain_end });
        if let Some(end) = self.tally.next_roll() {
            wake = wake.min(end);
        }
        if let Some(&Reverse((first, _))) = self.due.peek() {
            let rate = self.plan.rate_at(now.saturating_sub(self.schedule_start));
            let slack = self.slack.at(rate, self.total_conns);
            wake = wake.min(batching::wake_for(first, self.due.iter().map(|e| e.0.0), slack));
        }
        let timeout = wake.saturating_sub(clock::now_ns());
        if !self.reads_stamped || now >= window_end || self.conns.iter().any(needs_prompt_events) {
            self.maybe_unread = false;
            return self.poller.wait(&mut self.events, timeout).map_err(|e| format!("epoll_wait: {e}"));
        }
        // Responses carry their arrival time: each is read when its connection's next
        // request is due (or by a sweep), so no wake-up and no epoll call is spent on it.
        if timeout > 0 {
            clock::sleep_until(wake);
            self.maybe_unread = true;
        }
        // (With nothing to wait for, go round again: more is due already.)
        Ok(0)
    }

    /// The main thread may end the window early (a stop rule fired): nothing
    /// scheduled from then on is sent; what is in flight drains as usual.
    fn sync_window_end(&mut self) {
        let end = self.early_window_end.load(Ordering::Relaxed);
        if end >= self.tally.window_end {
            return;
        }
        let end = end.max(self.tally.window_start);
        self.tally.window_end = end;
        self.drain_end = end + self.timeout_ns;
        for c in self.conns.iter_mut().filter(|c| c.next.due != NONE && c.next.due >= end) {
            c.next.due = NONE;
            c.next.waiting = false;
        }
    }

    /// Counts the requests still unanswered, closes every connection and hands the
    /// last report and the totals to main; where each connection's unsent requests
    /// begin goes with them (main counts them once the window's end is final).
    fn finish(&mut self) {
        self.sync_window_end();
        let now = clock::now_ns();
        for c in &self.conns {
            if c.busy() && c.flight.counted {
                self.tally.unanswered(c.flight.interval);
            }
        }
        self.close_all();
        let open_since = self.conns.iter().map(Conn::open_since).min().unwrap_or(NONE);
        let first_unsent = self.conns.iter().map(|c| c.id + c.next.k * self.total_conns).collect();
        self.tally.finish(now, open_since, first_unsent);
    }

    fn close_all(&mut self) {
        for c in &mut self.conns {
            c.close();
        }
    }

    fn roll_intervals(&mut self, t: u64) {
        // Never past the interval that holds the window's end, even a just-shortened one.
        self.sync_window_end();
        let conns = &self.conns;
        let open_since = || conns.iter().map(Conn::open_since).min().unwrap_or(NONE);
        // How long the oldest counted request still unanswered has waited since it was
        // due: a lower bound on latencies not yet recorded.
        let oldest_wait = |at: u64| conns.iter().filter_map(Conn::waiting_since).map(|s| at.saturating_sub(s)).max();
        self.tally.roll(t, open_since, |at| oldest_wait(at).unwrap_or(0));
    }

    /// Every `counting::TICK_NS`: a Req/Sec sample and the timeout check.
    fn tick(&mut self, t: u64) {
        self.next_tick = self.tally.tick(t);
        for c in &mut self.conns {
            if let Some(interval) = c.times_out(t, self.timeout_ns) {
                self.tally.error(ErrorKind::Timeout, interval);
            }
        }
    }

    /// A heap entry for connection i at time `at` came due.
    fn on_due(&mut self, i: usize, at: u64) -> Result<(), String> {
        let next = &self.conns[i].next;
        if next.waiting || next.due == NONE || at != next.intended {
            return Ok(()); // stale entry
        }
        if self.hooks.delay.is_some() && !next.delay_asked && self.postpone(i)? {
            return Ok(());
        }
        self.conns[i].next.waiting = true;
        if self.conns[i].state == State::Awaiting && self.maybe_unread {
            // Its response has most likely arrived and waits to be read.
            self.realtime_offset = None;
            self.on_readable(i, clock::now_ns())?;
        }
        match self.conns[i].state {
            State::Idle => self.to_send.push(i as u32),
            State::Closed => self.reconnect_for_due(i),
            // Sent when the connect completes or the response arrives.
            State::Connecting | State::Writing | State::Awaiting => {}
        }
        Ok(())
    }

    /// Asks the script's `delay()` for connection i's next request; whether it moved
    /// the request's intended send time into the future.
    fn postpone(&mut self, i: usize) -> Result<bool, String> {
        self.conns[i].next.delay_asked = true;
        let ms = self.hooks.delay_ms()?;
        if ms <= 0.0 {
            return Ok(false);
        }
        let next = &mut self.conns[i].next;
        next.intended = next.due + (ms * 1e6) as u64;
        if next.intended <= clock::now_ns() {
            return Ok(false);
        }
        self.due.push(Reverse((next.intended, i as u32)));
        Ok(true)
    }

    /// A request fell due on a closed connection: connect, and send at once if that
    /// completes right away.
    fn reconnect_for_due(&mut self, i: usize) {
        self.connect(i);
        match self.conns[i].state {
            State::Closed => self.connect_failed(i),
            State::Idle => self.to_send.push(i as u32),
            _ => {}
        }
    }
}

/// The loop must wait on socket events, not just sleep: a connect, a partial write or
/// response is under way, or a due request waits for its connection.
fn needs_prompt_events(c: &Conn) -> bool {
    c.partial_response
        || matches!(c.state, State::Connecting | State::Writing)
        || (c.next.waiting && c.state != State::Idle)
}
