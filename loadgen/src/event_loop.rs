//! One worker thread: an epoll loop over its share of the connections, sending each
//! request when the schedule says it is due and timing its response.
//!
//! Measurement model (per connection, one request in flight, like wrk2):
//! * request k of connection g is due at `plan.due_ns(g + k·C)`;
//! * corrected latency = response time − due time, so a request that goes out late
//!   because the connection was still busy is still measured from its schedule;
//! * uncorrected latency (`-U`) = response time − actual send time.
//!
//! The loop sleeps with `epoll_pwait2` exactly until the earliest due request (timer
//! slack lowered to 1 ns), or `--send-slack` later; every request due by the time it
//! wakes is sent in one pass.
//! No allocation per request on the fast path: buffers are reused, the static request
//! is built once, and responses reach Lua only when a `response` hook exists.

use crate::clock;
use crate::http::{Feed, ResponseParser};
use crate::net;
use crate::poller::{Poller, READABLE, WRITABLE};
use crate::recording::{RateSamples, Segment, SegmentData, StatusCounts};
use crate::schedule::Plan;
use crate::script::{ThreadHandle, ThreadHooks};
use mlua::Lua;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// The worker's last (possibly partial) segment comes with its totals;
    /// `last_done` is when its last counted response arrived (0 if none).
    Finished {
        worker: usize,
        index: usize,
        data: Box<SegmentData>,
        status: StatusCounts,
        rates: Box<RateSamples>,
        last_done: u64,
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
    /// `--send-slack`: the loop sleeps until the earliest due request plus this.
    pub send_slack_ns: u64,
    pub u_latency: bool,
    /// Record every response of a pipelined batch (wrk2's default; `-B` turns it off).
    pub record_all: bool,
    /// Requests per `request()` result (more than one when a script pipelines).
    pub pipeline: usize,
    /// Thread 0's first request, already produced while checking the script.
    pub first_request: Option<Vec<u8>>,
    pub handle: Arc<ThreadHandle>,
    pub stop: Arc<AtomicBool>,
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
    /// Index of this connection's next (or current) request.
    k: u64,
    /// Due time of request k (absolute monotonic ns), NONE when the schedule is over.
    due: u64,
    /// Intended send time: `due` plus the script's `delay()`.
    send_at: u64,
    delayed: bool,
    /// A due request waits for the connect to finish.
    want_send: bool,
    sched: u64,
    sent: u64,
    pending: usize,
    timed_out: bool,
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
    heap: BinaryHeap<Reverse<(u64, u32)>>,
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
    send_slack_ns: u64,
    /// Schedule start, measured window start and end (absolute monotonic ns).
    t0: u64,
    w0: u64,
    w1: u64,
    /// After the window: how long to wait for answers to requests scheduled in it.
    drain_end: u64,
    seg: Box<SegmentData>,
    seg_idx: usize,
    seg_end: u64,
    next_tick: u64,
    sample_start: u64,
    sample_count: u64,
    rates: RateSamples,
    status: StatusCounts,
    /// Arrival of the last counted response (the run's real end when it drains).
    last_done: u64,
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
                k: 0,
                due: NONE,
                send_at: NONE,
                delayed: false,
                want_send: false,
                sched: 0,
                sent: 0,
                pending: 0,
                timed_out: false,
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
            heap: BinaryHeap::with_capacity(s.conns + 1),
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
            send_slack_ns: s.send_slack_ns,
            t0: 0,
            w0: 0,
            w1: 0,
            drain_end: 0,
            seg: Box::new(SegmentData::new(s.u_latency)),
            seg_idx: 0,
            seg_end: NONE,
            next_tick: 0,
            sample_start: 0,
            sample_count: 0,
            rates: RateSamples::default(),
            status: vec![0; 1000],
            last_done: 0,
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
            let c = &mut self.conns[i];
            c.k = 0;
            c.due = self.plan.due_ns(c.g).map_or(NONE, |d| t0 + d);
            c.send_at = c.due;
            if c.due != NONE {
                self.heap.push(Reverse((c.due, i as u32)));
            }
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
        self.heap.is_empty()
            && self.conns.iter().all(|c| !c.want_send && !matches!(c.state, State::Writing | State::Awaiting))
    }

    fn run(&mut self, stop: &AtomicBool, thread_stop: &AtomicBool) -> Result<(), String> {
        loop {
            let now = clock::now_ns();
            if stop.load(Ordering::Relaxed) || thread_stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            // After the window, requests scheduled in it are still sent and their
            // responses awaited (up to --timeout), so a stall at the very end is
            // recorded rather than dropped. Nothing new is scheduled past the window.
            if now >= self.w1 && (self.drained() || now >= self.drain_end) {
                return Ok(());
            }
            self.roll_segments(now);
            if now >= self.next_tick {
                self.tick(now);
            }
            while let Some(&Reverse((at, i))) = self.heap.peek() {
                if at > now {
                    break;
                }
                self.heap.pop();
                self.issue(i as usize)?;
            }
            let mut wake = self.next_tick.min(if now < self.w1 { self.w1 } else { self.drain_end });
            if now >= self.w0 && self.seg_idx + 1 < self.segments.len() {
                wake = wake.min(self.seg_end);
            }
            if let Some(&Reverse((at, _))) = self.heap.peek() {
                // with --send-slack, requests falling due meanwhile go out in the same pass
                wake = wake.min(at.saturating_add(self.send_slack_ns));
            }
            let timeout = wake.saturating_sub(clock::now_ns());
            let n = self.poller.wait(&mut self.events, timeout).map_err(|e| format!("epoll_wait: {e}"))?;
            if n == 0 {
                continue;
            }
            let t = clock::now_ns();
            self.roll_segments(t);
            for e in 0..n {
                let (i, ev) = (self.events[e].u64 as usize, self.events[e].events);
                self.on_event(i, ev, t)?;
            }
        }
    }

    /// Closes every connection and hands the last segment and totals to main.
    fn finish(&mut self) {
        let now = clock::now_ns();
        if now >= self.w0 && self.sample_count > 0 && self.rates.hist.is_empty() {
            // A run shorter than one sampling period still gets a rate (never "nan").
            let elapsed = now.min(self.w1).saturating_sub(self.sample_start).max(1);
            self.rates.record(self.sample_count * 1_000_000_000 / elapsed);
        }
        self.close_all();
        let data = std::mem::replace(&mut self.seg, Box::new(SegmentData::new(self.u_latency)));
        let _ = self.tx.send(WorkerMsg::Finished {
            worker: self.id,
            index: self.seg_idx,
            data,
            last_done: self.last_done,
            status: std::mem::take(&mut self.status),
            rates: Box::new(std::mem::take(&mut self.rates)),
        });
    }

    fn close_all(&mut self) {
        for i in 0..self.conns.len() {
            self.close(i);
        }
    }

    fn roll_segments(&mut self, t: u64) {
        while t >= self.seg_end && self.seg_idx + 1 < self.segments.len() {
            let data = std::mem::replace(&mut self.seg, Box::new(SegmentData::new(self.u_latency)));
            let _ = self.tx.send(WorkerMsg::Segment { worker: self.id, index: self.seg_idx, data });
            self.seg_idx += 1;
            self.seg_end = self.w0 + self.segments[self.seg_idx].end_ns;
        }
    }

    /// Every 100 ms: a Req/Sec sample and the timeout check.
    fn tick(&mut self, t: u64) {
        // Samples cover whole periods inside the window (none during the drain).
        if t >= self.sample_start + RATE_SAMPLE_NS && self.sample_start + RATE_SAMPLE_NS <= self.w1 {
            let elapsed = t.min(self.w1) - self.sample_start;
            self.rates.record(self.sample_count * 1_000_000_000 / elapsed);
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
                if self.in_window(t) {
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
        if self.conns[i].want_send {
            self.conns[i].want_send = false;
            if self.in_window(clock::now_ns()) {
                self.seg.errors.connect += 1;
            }
            self.advance(i);
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
        let _ = self.poller.modify(fd, READABLE, i as u64);
        if c.want_send {
            c.want_send = false;
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
        c.parser.reset();
    }

    /// Moves connection i to its next scheduled request.
    fn advance(&mut self, i: usize) {
        let c = &mut self.conns[i];
        c.k += 1;
        c.delayed = false;
        c.due = self.plan.due_ns(c.g + c.k * self.total_conns).map_or(NONE, |d| self.t0 + d);
        c.send_at = c.due;
        if c.due != NONE {
            self.heap.push(Reverse((c.due, i as u32)));
        }
    }

    /// The request of connection i is due: send it (connecting first if needed).
    fn issue(&mut self, i: usize) -> Result<(), String> {
        match self.conns[i].state {
            State::Closed => {
                self.conns[i].want_send = true;
                self.connect(i);
                match self.conns[i].state {
                    State::Closed => self.connect_failed(i),
                    State::Idle => {
                        self.conns[i].want_send = false;
                        return self.issue(i);
                    }
                    _ => {}
                }
                return Ok(());
            }
            State::Connecting => {
                self.conns[i].want_send = true;
                return Ok(());
            }
            State::Idle => {}
            State::Writing | State::Awaiting => return Ok(()),
        }
        if self.hooks.delay.is_some() && !self.conns[i].delayed {
            self.conns[i].delayed = true;
            let ms = self.hooks.delay_ms()?;
            if ms > 0.0 {
                let c = &mut self.conns[i];
                c.send_at = c.due + (ms * 1e6) as u64;
                if c.send_at > clock::now_ns() {
                    self.heap.push(Reverse((c.send_at, i as u32)));
                    return Ok(());
                }
            }
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
        c.sched = c.send_at;
        c.pending = self.pipeline;
        c.timed_out = false;
        c.woff = 0;
        c.sent = clock::now_ns();
        c.state = State::Writing;
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
                    let t = c.sent;
                    if t >= self.w0 {
                        self.seg.bytes_written += n as u64;
                    }
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
                    if self.in_window(clock::now_ns()) {
                        self.seg.errors.write += 1;
                    }
                    self.drop_connection(i, true);
                    return;
                }
            }
        }
    }

    /// Closes connection i after an error or a close by the server; a request in
    /// flight fails and the connection reconnects at once for its next request.
    fn drop_connection(&mut self, i: usize, request_failed: bool) {
        self.close(i);
        if request_failed {
            self.advance(i);
        }
        if self.conns[i].due != NONE {
            self.connect(i);
        }
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
        r
    }

    fn read_all(&mut self, i: usize, t: u64, rbuf: &mut [u8]) -> Result<(), String> {
        loop {
            let fd = self.conns[i].fd;
            if fd < 0 {
                return Ok(());
            }
            match net::read(fd, rbuf) {
                Ok(0) => {
                    let busy = matches!(self.conns[i].state, State::Writing | State::Awaiting);
                    if busy && self.conns[i].state == State::Awaiting && self.conns[i].parser.finish_on_eof() {
                        // A body delimited by the close: complete() sees keep-alive off
                        // and reconnects.
                        return self.complete(i, t);
                    }
                    if busy && self.in_window(t) {
                        self.seg.errors.read += 1;
                    }
                    self.drop_connection(i, busy);
                    return Ok(());
                }
                Ok(n) => {
                    if t >= self.w0 {
                        self.seg.bytes_read += n as u64;
                    }
                    let mut off = 0;
                    while off < n {
                        if self.conns[i].state != State::Awaiting {
                            // Bytes nobody asked for: the stream is out of sync.
                            if self.in_window(t) {
                                self.seg.errors.read += 1;
                            }
                            let busy = self.conns[i].state == State::Writing;
                            self.drop_connection(i, busy);
                            return Ok(());
                        }
                        match self.conns[i].parser.feed(&rbuf[off..n]) {
                            Ok(Feed::NeedMore) => break,
                            Ok(Feed::Complete { consumed }) => {
                                off += consumed;
                                let generation = self.conns[i].generation;
                                self.complete(i, t)?;
                                if self.conns[i].generation != generation {
                                    // Closed (and maybe reopened): the rest of the
                                    // buffer belonged to the old connection.
                                    return Ok(());
                                }
                            }
                            Err(_) => {
                                if self.in_window(t) {
                                    self.seg.errors.read += 1;
                                }
                                self.drop_connection(i, true);
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
                    let busy = matches!(self.conns[i].state, State::Writing | State::Awaiting);
                    if busy && self.in_window(t) {
                        self.seg.errors.read += 1;
                    }
                    self.drop_connection(i, busy);
                    return Ok(());
                }
            }
        }
    }

    /// A response of connection i completed at time t.
    fn complete(&mut self, i: usize, t: u64) -> Result<(), String> {
        let (w0, w1) = (self.w0, self.w1);
        let c = &mut self.conns[i];
        c.pending = c.pending.saturating_sub(1);
        let status = c.parser.status();
        let keep_alive = c.parser.keep_alive();
        // Counted by schedule: the request was due inside the window.
        if c.sched >= w0 && c.sched < w1 {
            self.status[(status as usize).min(999)] += 1;
            self.seg.requests += 1;
            self.last_done = self.last_done.max(t);
            if t < w1 {
                self.sample_count += 1;
            }
            if status > 399 {
                self.seg.errors.status += 1;
            }
            if self.record_all || c.pending == 0 {
                self.seg.corrected.record((t - c.sched) / 1000);
                if let Some(u) = &mut self.seg.uncorrected {
                    u.record((t - c.sent) / 1000);
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
            self.advance(i);
        }
        if !keep_alive {
            let lost = self.conns[i].pending > 0;
            if lost && self.in_window(t) {
                self.seg.errors.read += 1;
            }
            self.drop_connection(i, lost);
        }
        Ok(())
    }
}
