//! One connection's state machine: connect, send a request (write, maybe in parts),
//! read and parse its response(s), complete it; a close, a reset or bytes nobody
//! asked for lose the request in flight and reconnect. One request is in flight per
//! connection, like wrk2.
//!
//! `Conn` holds a connection's state and the transitions that need nothing else;
//! the `Worker` methods below add what a transition means for the schedule (the
//! next request), the counting (`Tally`) and the script (`request()`/`response()`).

use super::Worker;
use super::counting::Answer;
use crate::clock::{self, RealtimeOffset};
use crate::http::{Feed, ResponseParser};
use crate::net;
use crate::poller::{Poller, READABLE, WRITABLE};
use crate::recording::ErrorKind;
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

/// No time: a connection with no next request.
pub(super) const NONE: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Closed,
    Connecting,
    /// Connected, no request in flight.
    Idle,
    /// A request is partly written.
    Writing,
    /// Waiting for the response(s).
    Awaiting,
}

/// The connection's next request in the schedule.
pub(super) struct NextRequest {
    /// Its number among this connection's requests: global request `id + k·C`.
    pub k: u64,
    /// When the schedule has it due (absolute ns; `NONE` when it has no more for us).
    pub planned: u64,
    /// The same, while it is in the window: `NONE` once the window ends before it.
    pub due: u64,
    /// When it is meant to go out: the due time plus the script's `delay()`.
    pub intended: u64,
    /// `delay()` was already asked for it.
    pub delay_asked: bool,
    /// It has fallen due and goes out as soon as the connection can take it.
    pub waiting: bool,
}

/// The request in flight.
#[derive(Default)]
pub(super) struct InFlight {
    /// When it was due, and when it was meant to go out (its due time plus `delay()`):
    /// its corrected latency is measured from there.
    pub due: u64,
    pub intended: u64,
    pub sent: u64,
    /// Responses still expected (more than one when the script pipelines).
    pub responses_left: usize,
    pub timed_out: bool,
    /// Due in the measured window: it is counted, in this interval.
    pub counted: bool,
    pub interval: usize,
    /// Its bytes (added when its first response is counted) and those of the
    /// response being read.
    pub request_bytes: u64,
    pub response_bytes: u64,
}

pub(super) struct Conn {
    pub fd: RawFd,
    pub state: State,
    /// Global connection number g: it owns requests g, g + C, g + 2C, … of the schedule.
    pub id: u64,
    pub next: NextRequest,
    pub flight: InFlight,
    /// When the connection could last take a new request (connected, or the previous
    /// response arrived): a request's release is the later of this and its due time.
    pub free_at: u64,
    /// Part of a response has arrived: read the rest promptly.
    pub partial_response: bool,
    /// The request being written, unless it is the worker's static one, and how much
    /// of it is written.
    write_buf: Vec<u8>,
    written: usize,
    uses_static: bool,
    /// Registered for writability (a connect or a write under way).
    want_writable: bool,
    /// Bumped on every close, to notice a connection replaced under our feet.
    pub generation: u32,
    pub parser: ResponseParser,
}

/// How a write ended.
pub(super) enum Written {
    All,
    /// The socket is full; the rest goes when it is writable.
    Blocked,
    Failed,
}

impl Conn {
    pub fn new(id: u64, collect_responses: bool) -> Conn {
        Conn {
            fd: -1,
            state: State::Closed,
            id,
            next: NextRequest { k: 0, planned: NONE, due: NONE, intended: NONE, delay_asked: false, waiting: false },
            flight: InFlight::default(),
            free_at: 0,
            partial_response: false,
            write_buf: Vec::new(),
            written: 0,
            uses_static: true,
            want_writable: false,
            generation: 0,
            parser: ResponseParser::new(collect_responses),
        }
    }

    /// A request is being written or answered.
    #[inline]
    pub fn busy(&self) -> bool {
        matches!(self.state, State::Writing | State::Awaiting)
    }

    /// Starts connecting; `slot` is its index in the worker (the epoll token).
    pub fn open(&mut self, poller: &Poller, addr: &SocketAddr, slot: usize) {
        let Ok((fd, done)) = net::start_connect(addr) else {
            self.state = State::Closed;
            return;
        };
        self.fd = fd;
        self.parser.reset();
        self.want_writable = !done;
        self.state = if done { State::Idle } else { State::Connecting };
        if done {
            self.free_at = clock::now_ns();
        }
        let interest = if done { READABLE } else { READABLE | WRITABLE };
        if poller.add(fd, interest, slot as u64).is_err() {
            net::close(fd);
            self.fd = -1;
            self.state = State::Closed;
        }
    }

    /// A connect under way succeeded.
    pub fn connected(&mut self, poller: &Poller, slot: usize) {
        self.state = State::Idle;
        self.want_writable = false;
        self.free_at = clock::now_ns();
        let _ = poller.modify(self.fd, READABLE, slot as u64);
    }

    pub fn close(&mut self) {
        if self.fd >= 0 {
            net::close(self.fd);
        }
        self.fd = -1;
        self.state = State::Closed;
        self.want_writable = false;
        self.generation = self.generation.wrapping_add(1);
        self.flight.responses_left = 0;
        self.partial_response = false;
        self.parser.reset();
    }

    /// Makes the next request the one in flight, sent now; `request` is `None` for
    /// the worker's static request. Returns its release time.
    pub fn begin(&mut self, request: Option<Vec<u8>>, static_request: &[u8], responses: usize) -> u64 {
        self.uses_static = request.is_none();
        if let Some(r) = request {
            self.write_buf = r;
        }
        let bytes: &[u8] = if self.uses_static { static_request } else { &self.write_buf };
        self.parser.set_head(bytes.starts_with(b"HEAD "));
        self.flight = InFlight {
            due: self.next.due,
            intended: self.next.intended,
            sent: clock::now_ns(),
            responses_left: responses,
            timed_out: false,
            counted: false,
            interval: 0,
            request_bytes: bytes.len() as u64,
            // A response lost half-way belongs to no counted request: its bytes go with it.
            response_bytes: 0,
        };
        self.written = 0;
        self.state = State::Writing;
        self.flight.intended.max(self.free_at)
    }

    /// The buffer a dynamic request is built in (reused between requests).
    pub fn request_buffer(&mut self) -> &mut Vec<u8> {
        self.write_buf.clear();
        &mut self.write_buf
    }

    /// Writes what it can of the request in flight.
    pub fn write_some(&mut self, poller: &Poller, slot: usize, static_request: &[u8]) -> Written {
        loop {
            let buf = if self.uses_static { &static_request[self.written..] } else { &self.write_buf[self.written..] };
            match net::write(self.fd, buf) {
                Ok(n) if n == buf.len() => {
                    self.written += n;
                    self.state = State::Awaiting;
                    self.watch_writable(poller, slot, false);
                    return Written::All;
                }
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.watch_writable(poller, slot, true);
                    return Written::Blocked;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Written::Failed,
            }
        }
    }

    fn watch_writable(&mut self, poller: &Poller, slot: usize, on: bool) {
        if self.want_writable != on {
            self.want_writable = on;
            let interest = if on { READABLE | WRITABLE } else { READABLE };
            let _ = poller.modify(self.fd, interest, slot as u64);
        }
    }

    /// Since when the oldest work of this connection has waited: its counted request
    /// in flight since it was meant to go out, or its next request since it fell due.
    pub fn waiting_since(&self) -> Option<u64> {
        if self.busy() && self.flight.counted {
            Some(self.flight.intended)
        } else if self.next.waiting && self.next.intended != NONE {
            Some(self.next.intended)
        } else {
            None
        }
    }

    /// The due time of this connection's oldest request still open: its counted request
    /// in flight, or else the first it has not sent (`NONE`: neither).
    pub fn open_since(&self) -> u64 {
        if self.busy() && self.flight.counted { self.flight.due } else { self.next.planned }
    }

    /// Nothing scheduled in the window is still unsent or unanswered here.
    pub fn done_with_window(&self) -> bool {
        self.next.due == NONE && !self.next.waiting && !self.busy()
    }

    /// The request in flight became a timeout at time t (once): the interval it counts
    /// in, if it is counted.
    pub fn times_out(&mut self, t: u64, timeout_ns: u64) -> Option<usize> {
        if !self.busy() || self.flight.timed_out || t.saturating_sub(self.flight.sent) <= timeout_ns {
            return None;
        }
        self.flight.timed_out = true;
        self.flight.counted.then_some(self.flight.interval)
    }
}

impl Worker<'_> {
    /// Starts connecting connection i.
    pub(super) fn connect(&mut self, i: usize) {
        self.conns[i].open(&self.poller, &self.addr, i);
    }

    /// A connect attempt failed; if a request was waiting for it, that request fails
    /// as a connect error (so a dead server yields one error per scheduled request).
    pub(super) fn connect_failed(&mut self, i: usize) {
        self.conns[i].close();
        if self.conns[i].next.waiting {
            if let Some(interval) = self.tally.dispatched(self.conns[i].next.due) {
                self.tally.error(ErrorKind::Connect, interval);
            }
            let k = self.conns[i].next.k + 1;
            self.schedule_next(i, k);
        }
    }

    fn on_connect_ready(&mut self, i: usize) -> Result<(), String> {
        if net::take_connect_error(self.conns[i].fd).is_some() {
            self.connect_failed(i);
            return Ok(());
        }
        self.conns[i].connected(&self.poller, i);
        if self.conns[i].next.waiting {
            self.issue(i)?;
        }
        Ok(())
    }

    /// Sends the due request of connection i (if it is idle and the request waiting).
    pub(super) fn issue(&mut self, i: usize) -> Result<(), String> {
        if self.conns[i].state != State::Idle || !self.conns[i].next.waiting {
            return Ok(());
        }
        let request = if let Some(first) = self.first_request.take() {
            Some(first)
        } else if self.hooks.request.is_some() {
            let mut buf = std::mem::take(self.conns[i].request_buffer());
            self.hooks.make_request(&mut buf)?;
            Some(buf)
        } else {
            None
        };
        let release = self.conns[i].begin(request, &self.static_request, self.pipeline);
        let flight = &mut self.conns[i].flight;
        if let Some(interval) = self.tally.dispatched(flight.due) {
            (flight.counted, flight.interval) = (true, interval);
            self.tally.lag(flight.sent, release);
        }
        let k = self.conns[i].next.k + 1;
        self.schedule_next(i, k);
        self.write(i);
        Ok(())
    }

    fn write(&mut self, i: usize) {
        if let Written::Failed = self.conns[i].write_some(&self.poller, i, &self.static_request) {
            let flight = &self.conns[i].flight;
            if flight.counted {
                self.tally.error(ErrorKind::Write, flight.interval);
            }
            self.drop_connection(i);
        }
    }

    /// Closes connection i after an error or a close by the server (a request in
    /// flight is lost); it reconnects at once if it has more requests to send.
    pub(super) fn drop_connection(&mut self, i: usize) {
        self.conns[i].close();
        if self.conns[i].next.due != NONE {
            self.connect(i);
        }
    }

    /// A lost request in flight counts one read error (if counted).
    fn lose_request(&mut self, i: usize) {
        let c = &self.conns[i];
        if c.busy() && c.flight.counted {
            self.tally.error(ErrorKind::Read, c.flight.interval);
        }
        self.drop_connection(i);
    }

    pub(super) fn on_event(&mut self, i: usize, ev: u32, t: u64) -> Result<(), String> {
        match self.conns[i].state {
            State::Closed => Ok(()),
            State::Connecting => self.on_connect_ready(i),
            State::Idle | State::Writing | State::Awaiting => {
                let generation = self.conns[i].generation;
                if self.conns[i].state == State::Writing && ev & WRITABLE != 0 {
                    self.write(i);
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

    /// Reads everything that arrived on connection i (looked at time t).
    pub(super) fn on_readable(&mut self, i: usize, t: u64) -> Result<(), String> {
        let mut buf = std::mem::take(&mut self.read_buf);
        let r = self.read_all(i, t, &mut buf);
        self.read_buf = buf;
        let c = &mut self.conns[i];
        c.partial_response = c.state == State::Awaiting && c.parser.in_progress();
        r
    }

    /// When the bytes of a read arrived: the kernel's timestamp, else the time we read.
    fn arrival(&mut self, stamp: u64, i: usize, t: u64) -> u64 {
        if stamp == 0 {
            self.reads_stamped = false;
            self.stamps_missing = true;
            return t;
        }
        self.reads_stamped = !self.stamps_missing;
        let offset = *self.realtime_offset.get_or_insert_with(RealtimeOffset::now);
        // Never before the request left, never after we looked.
        offset.to_mono(stamp).clamp(self.conns[i].flight.sent.min(t), t)
    }

    fn read_all(&mut self, i: usize, t: u64, buf: &mut [u8]) -> Result<(), String> {
        loop {
            let fd = self.conns[i].fd;
            if fd < 0 {
                return Ok(());
            }
            match net::read_stamped(fd, buf) {
                Ok((0, _)) => return self.on_peer_close(i, t),
                Ok((n, stamp)) => {
                    let arrived = self.arrival(stamp, i, t);
                    // A short read emptied the socket.
                    if !self.parse(i, t, arrived, &buf[..n])? || n < buf.len() {
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

    /// The server closed connection i.
    fn on_peer_close(&mut self, i: usize, t: u64) -> Result<(), String> {
        if self.conns[i].state == State::Awaiting && self.conns[i].parser.finish_on_eof() {
            // A body delimited by the close: complete() sees keep-alive off and reconnects.
            return self.complete(i, t);
        }
        self.lose_request(i);
        Ok(())
    }

    /// Feeds `bytes` (arrived at `arrived`) to connection i's response parser,
    /// completing every response in them. Returns whether the connection is still
    /// the same and open, so that reading it may go on.
    fn parse(&mut self, i: usize, t: u64, arrived: u64, bytes: &[u8]) -> Result<bool, String> {
        let mut offset = 0;
        while offset < bytes.len() {
            match self.conns[i].state {
                State::Awaiting => {}
                State::Idle => {
                    // Bytes nobody asked for: the stream is out of sync.
                    self.tally.stray_error(ErrorKind::Read, t);
                    self.drop_connection(i);
                    return Ok(false);
                }
                _ => {
                    self.lose_request(i);
                    return Ok(false);
                }
            }
            let rest = &bytes[offset..];
            match self.conns[i].parser.feed(rest) {
                Ok(Feed::NeedMore) => {
                    self.conns[i].flight.response_bytes += rest.len() as u64;
                    return Ok(true);
                }
                Ok(Feed::Complete { consumed }) => {
                    offset += consumed;
                    self.conns[i].flight.response_bytes += consumed as u64;
                    let generation = self.conns[i].generation;
                    self.complete(i, arrived)?;
                    if self.conns[i].generation != generation {
                        // Closed (and maybe reopened): the rest belonged to the old connection.
                        return Ok(false);
                    }
                }
                Err(_) => {
                    self.lose_request(i);
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// A response of connection i arrived at time t.
    fn complete(&mut self, i: usize, t: u64) -> Result<(), String> {
        // The reports of the run's clock go out before what arrived after them.
        if self.tally.past_interval(t) {
            self.roll_intervals(t);
        }
        let c = &mut self.conns[i];
        c.flight.responses_left = c.flight.responses_left.saturating_sub(1);
        let status = c.parser.status();
        let keep_alive = c.parser.keep_alive();
        let bytes_read = std::mem::take(&mut c.flight.response_bytes);
        if c.flight.counted {
            let record = self.record_all || c.flight.responses_left == 0;
            self.tally.response(&Answer {
                interval: c.flight.interval,
                arrived: t,
                status,
                bytes_read,
                bytes_written: std::mem::take(&mut c.flight.request_bytes),
                latency_from: record.then_some((c.flight.intended, c.flight.sent)),
            });
        }
        if self.hooks.response.is_some() {
            let c = &self.conns[i];
            self.hooks.response(self.lua, status, &c.parser.headers, &c.parser.body)?;
        }
        let c = &mut self.conns[i];
        c.parser.reset();
        if c.flight.responses_left == 0 {
            c.state = State::Idle;
            c.free_at = t;
            if c.next.waiting {
                self.to_send.push(i as u32);
            }
        }
        if !keep_alive {
            // Responses still expected on a closing connection are lost.
            let flight = &self.conns[i].flight;
            if flight.responses_left > 0 && flight.counted {
                self.tally.error(ErrorKind::Read, flight.interval);
            }
            self.drop_connection(i);
        }
        Ok(())
    }
}
