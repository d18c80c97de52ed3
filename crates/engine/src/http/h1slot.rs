//! An HTTP/1 slot is one of the run's connections: it holds at most one live
//! transport at a time and drives requests through it, one exchange (a
//! batch of `pipeline` requests) after another. The worker tells it what
//! happened through one entry point, `Slot::handle`; all of its I/O is then
//! attempted in `drive`, which steps through the phases until the socket
//! would block. Nothing here recurses, sleeps or allocates per request.
//! Which request to send is `select`'s business (or, with SPECweb99, the
//! slot's own draw and writer, `specweb99`), whether a body is the expected
//! one `validate`'s. A slot also paces itself to `line_speed_bps` and, with
//! `keepalive_requests`, closes each connection after its drawn count.

use std::io;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::ctx::{micros_between, Ctx, Event, CONNECT_BACKOFF};
use super::dial::{self, Connected};
use super::plan::Plan;
use super::validate;
use crate::connection::Transport;
use crate::error::ErrorKind;
use crate::protocol::{Response, ResponseDecoder};
use crate::results::stats::Completion;
use crate::specweb99::{self, BodyCheck, Cookie, FileId, Op};

/// How long a closing connection waits for the server's FIN, so the server,
/// not crest, holds the TIME_WAIT state and the client's ports stay free.
const DRAIN_GRACE: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Begin the next exchange now.
    Ready,
    /// Begin once the current batch of events is handled.
    Queued,
    /// Wait until the time, then begin (think time or open-loop pacing).
    Waiting(Instant),
    Connecting,
    Handshaking,
    Writing,
    Reading,
    /// Exchange done, connection closing: wait briefly for the peer's FIN.
    Draining,
    /// Quota used up or the run over; this slot is finished.
    Done,
}

/// Whether `drive` goes on to the next phase or waits for an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The phase moved on (or can make more progress): step again.
    Continue,
    /// Nothing more until the socket or a timer says so.
    Wait,
}

/// A slot's SPECweb99 state: its identity, its last ad, its request buffer
/// (allocated once) and the checker of the response it awaits.
struct Specweb99Slot {
    /// Global connection index: POST's `client=`.
    global: u32,
    cookie: Cookie,
    op: Op,
    file: FileId,
    request: Vec<u8>,
    check: BodyCheck,
}

pub(crate) struct Slot {
    token: usize,
    client: usize,
    /// The table entry being sent, its class, and the target of the live transport.
    current: usize,
    class: usize,
    target: usize,
    /// Requests the live connection may still carry (None: no limit).
    conn_left: Option<u32>,
    /// When the slot began its first exchange; bytes received since (pacing).
    first_begin: Option<Instant>,
    received: u64,
    /// µs from the start to where the line time of the next completion
    /// counts from: the end of the previous one's line time, or when the
    /// exchange was due if that is later (think time is not line time).
    mark_us: u64,
    /// µs from the start to when the next exchange is due: its schedule, not
    /// the timer's wake-up, so the event loop's lateness is not line time.
    due_us: u64,
    specweb99: Option<Box<Specweb99Slot>>,
    phase: Phase,
    transport: Option<Transport>,
    source: Option<IpAddr>,
    readable: bool,
    writable: bool,
    /// The peer's FIN has been signalled on this socket (no further edge will come).
    read_closed: bool,
    decoder: ResponseDecoder,
    /// Bytes of the batch written so far, and the batch length.
    write_off: usize,
    batch_len: usize,
    /// Responses still owed for the current batch.
    inflight: u32,
    /// When the current request was meant to go (open loop) or was begun.
    intended: Instant,
    /// Where latency counts from for the current batch.
    sent_at: Instant,
    /// When the current exchange (or drain) gives up.
    deadline: Instant,
    phase_started: Instant,
}

impl Slot {
    /// A slot, the run's connection `index`, that begins its first exchange at `first`.
    pub fn new(token: usize, index: u32, client: usize, plan: &Plan, source: Option<IpAddr>, first: Instant) -> Self {
        let mut decoder = ResponseDecoder::new(plan.max_header_bytes, plan.max_body_bytes, false);
        let specweb99 = plan.specweb99.as_ref().map(|sw| {
            decoder.set_header_capture("set-cookie", "found_cookie=");
            let global = sw.first_connection.wrapping_add(index);
            Box::new(Specweb99Slot {
                global,
                cookie: Cookie { user_id: 10_000 + global % sw.users, last_ad: global % specweb99::ADS },
                op: Op::Static,
                file: FileId { dir: 0, class: 0, file: 0 },
                request: Vec::with_capacity(specweb99::request::REQUEST_CAPACITY),
                check: BodyCheck::new(),
            })
        });
        Self {
            token,
            client,
            current: 0,
            class: 0,
            target: 0,
            conn_left: None,
            first_begin: None,
            received: 0,
            mark_us: 0,
            due_us: 0,
            specweb99,
            phase: Phase::Waiting(first),
            transport: None,
            source,
            readable: false,
            writable: false,
            read_closed: false,
            decoder,
            write_off: 0,
            batch_len: 0,
            inflight: 0,
            intended: first,
            sent_at: first,
            deadline: first,
            phase_started: first,
        }
    }

    /// When the slot waits to begin its next exchange, if it does.
    pub fn waiting_until(&self) -> Option<Instant> {
        match self.phase {
            Phase::Waiting(at) => Some(at),
            _ => None,
        }
    }

    /// The one entry point: what happened, then as much progress as it allows.
    pub fn handle(&mut self, ctx: &mut Ctx, event: Event, now: Instant) {
        match event {
            Event::Io { readable, writable, read_closed } => {
                self.readable |= readable;
                self.writable |= writable;
                self.read_closed |= read_closed;
            }
            Event::Timer(at) => {
                if self.phase != Phase::Waiting(at) {
                    return; // a stale wake-up
                }
                self.phase = Phase::Ready;
            }
            Event::Dequeued => {
                if self.phase != Phase::Queued {
                    return;
                }
                self.phase = Phase::Ready;
            }
            Event::Sweep => match self.phase {
                Phase::Connecting | Phase::Handshaking | Phase::Writing | Phase::Reading if now >= self.deadline => {
                    let timeout = ctx.plan.timeout;
                    self.fail(ctx, now, ErrorKind::Timeout, &format_args!("no complete response within {timeout:?}"));
                }
                Phase::Draining if now >= self.deadline => self.close_and_schedule(ctx, now),
                _ => return,
            },
            Event::RunEnded => {
                if matches!(self.phase, Phase::Waiting(_) | Phase::Ready | Phase::Queued) {
                    self.finish(ctx);
                }
                return;
            }
        }
        self.drive(ctx, now);
    }

    /// Runs the state machine until it must wait for the socket or a time.
    fn drive(&mut self, ctx: &mut Ctx, now: Instant) {
        loop {
            let step = match self.phase {
                Phase::Ready => self.begin(ctx, now),
                Phase::Waiting(_) | Phase::Queued => return self.watch_idle(),
                Phase::Connecting => self.connecting(ctx, now),
                Phase::Handshaking => self.handshaking(ctx, now),
                Phase::Writing => self.writing(ctx, now),
                Phase::Reading => self.reading(ctx),
                Phase::Draining => self.draining(ctx, now),
                Phase::Done => return,
            };
            if step == Step::Wait {
                return;
            }
        }
    }

    fn finish(&mut self, ctx: &mut Ctx) {
        self.phase = Phase::Done;
        self.transport = None;
        ctx.active -= 1;
    }

    fn begin(&mut self, ctx: &mut Ctx, now: Instant) -> Step {
        // Nothing is sent after the end, even within the last batch of events.
        let over = ctx.end.is_some_and(|end| now >= end);
        let batch = if over { None } else { ctx.selector.next(&ctx.plan) };
        let Some(batch) = batch else {
            self.finish(ctx);
            return Step::Wait;
        };
        if self.first_begin.is_none() {
            self.first_begin = Some(now);
            self.mark_us = micros_between(ctx.origin, now);
        } else {
            self.mark_us = self.mark_us.max(self.due_us);
        }
        self.current = batch.entry;
        let target = match (&mut self.specweb99, &ctx.plan.specweb99) {
            (Some(slot), Some(sw)) => {
                let (op, file) = sw.mix.draw(ctx.selector.rng());
                (slot.op, slot.file) = (op, file);
                self.class = specweb99::class_index(op, file.class);
                sw.site.endpoint(op).target
            }
            _ => {
                let request = &ctx.plan.requests[self.current];
                self.class = request.class;
                self.decoder.set_head_request(request.head);
                self.decoder.set_capture(request.expect_body_prefix.as_ref().map_or(0, Vec::len));
                self.batch_len = request.bytes.len() * batch.requests as usize;
                request.target
            }
        };
        if target != self.target {
            // A request for another server cannot use this connection.
            self.transport = None;
            self.target = target;
        }
        if self.transport.is_none() {
            // A new connection: how many requests it carries.
            self.conn_left = ctx.plan.keepalive_draw.map(|draw| draw.draw(ctx.selector.rng()));
        }
        let plan = &ctx.plan;
        if let (Some(slot), Some(sw)) = (&mut self.specweb99, &plan.specweb99) {
            let last = match self.conn_left {
                Some(left) => left <= 1,
                None => !plan.keepalive,
            };
            sw.site.write(&mut slot.request, slot.op, slot.file, slot.global, slot.cookie, last);
            slot.check.start(slot.op, slot.file);
            self.batch_len = slot.request.len();
        }
        ctx.stats.record_issued(self.class, batch.requests);
        self.inflight = batch.requests;
        self.write_off = 0;
        self.deadline = now + plan.timeout;
        self.sent_at = if plan.schedule.is_open_loop() { self.intended } else { now };
        if self.transport.is_some() {
            self.phase = Phase::Writing;
            return Step::Continue;
        }
        self.open(ctx, now)
    }

    fn open(&mut self, ctx: &mut Ctx, now: Instant) -> Step {
        self.readable = false;
        self.writable = false;
        self.read_closed = false;
        self.decoder.reset();
        match dial::dial(ctx, self.target, self.source, self.token) {
            Ok(transport) => {
                self.transport = Some(transport);
                self.phase = Phase::Connecting;
                self.phase_started = now;
                Step::Continue
            }
            Err(e) => self.fail(ctx, now, e.kind(), &e),
        }
    }

    fn connecting(&mut self, ctx: &mut Ctx, now: Instant) -> Step {
        if !self.writable {
            return Step::Wait;
        }
        match dial::connected(ctx, &mut self.transport, self.target, self.phase_started, now) {
            Ok(Connected::Waiting) => {
                self.writable = false;
                Step::Wait
            }
            Ok(Connected::Ready) => {
                self.start_writing(now, &ctx.plan);
                Step::Continue
            }
            Ok(Connected::Handshaking) => {
                self.phase = Phase::Handshaking;
                self.phase_started = now;
                Step::Continue
            }
            Err(e) => self.fail(ctx, now, e.kind(), &e),
        }
    }

    fn handshaking(&mut self, ctx: &mut Ctx, now: Instant) -> Step {
        let transport = self.transport.as_mut().expect("invariant: handshaking has a transport");
        match dial::handshake(ctx, transport, self.phase_started, now) {
            Ok(true) => {
                self.start_writing(now, &ctx.plan);
                Step::Continue
            }
            Ok(false) => Step::Wait,
            Err(e) => self.fail(ctx, now, e.kind(), &e),
        }
    }

    fn start_writing(&mut self, now: Instant, plan: &Plan) {
        self.phase = Phase::Writing;
        // Closed loop counts from the first byte written, after any connect.
        if !plan.schedule.is_open_loop() {
            self.sent_at = now;
        }
    }

    fn writing(&mut self, ctx: &mut Ctx, now: Instant) -> Step {
        let transport = self.transport.as_mut().expect("invariant: writing has a transport");
        let plan = &ctx.plan;
        let out = match &self.specweb99 {
            Some(slot) => &slot.request[..],
            None if plan.pipeline > 1 => &plan.batch[..self.batch_len],
            None => &plan.requests[self.current].bytes[..],
        };
        while self.write_off < self.batch_len {
            match transport.write(&out[self.write_off..]) {
                Ok(0) => return self.fail(ctx, now, ErrorKind::Write, &"connection closed while writing"),
                Ok(n) => self.write_off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.writable = false;
                    return Step::Wait;
                }
                Err(e) => return self.fail(ctx, now, ErrorKind::Write, &e),
            }
        }
        match transport.flush() {
            Ok(true) => {
                self.phase = Phase::Reading;
                Step::Continue
            }
            Ok(false) => Step::Wait,
            Err(e) => self.fail(ctx, now, ErrorKind::Write, &e),
        }
    }

    fn reading(&mut self, ctx: &mut Ctx) -> Step {
        if !self.readable {
            return Step::Wait;
        }
        let transport = self.transport.as_mut().expect("invariant: reading has a transport");
        let read = transport.read(&mut ctx.scratch);
        let now = Instant::now();
        let n = match read {
            Ok(0) => {
                return match self.decoder.decode_eof() {
                    Ok(Some(response)) => {
                        self.transport = None;
                        self.complete(ctx, now, response);
                        Step::Continue
                    }
                    Ok(None) => self.fail(ctx, now, ErrorKind::Read, &"connection closed before the response"),
                    Err(e) => self.fail(ctx, now, ErrorKind::Read, &e),
                };
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.readable = false;
                return Step::Wait;
            }
            Err(e) => {
                let kind = if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) {
                    ErrorKind::Tls
                } else {
                    ErrorKind::Read
                };
                return self.fail(ctx, now, kind, &e);
            }
        };
        // A short plain read emptied the socket: skip the read that would
        // only say EAGAIN (one syscall per request); the next arrival raises
        // a fresh edge. Not after a FIN, which raises none, and not for TLS,
        // whose buffered records a short read does not account for.
        if n < ctx.scratch.len() && !self.read_closed && matches!(transport, Transport::Plain(_)) {
            self.readable = false;
        }
        ctx.stats.record_read(n);
        ctx.stats.record_bytes(ctx.offset(now), n as u64);
        self.received += n as u64;
        let mut off = 0;
        while off < n {
            let decoded = {
                let mut check = self.specweb99.as_deref_mut().map(|slot| &mut slot.check);
                self.decoder.decode_with(&ctx.scratch[off..n], &mut |body| {
                    if let Some(check) = check.as_mut() {
                        check.feed(body);
                    }
                })
            };
            match decoded {
                Ok((used, response)) => {
                    off += used;
                    if let Some(response) = response {
                        self.complete(ctx, now, response);
                        if self.inflight == 0 {
                            break;
                        }
                    }
                }
                Err(e) => return self.fail(ctx, now, ErrorKind::Parse, &e),
            }
        }
        if self.inflight == 0 && off < n {
            // The exchange is over; bytes nobody asked for poison the connection.
            self.transport = None;
            ctx.stats.record_error(
                ctx.offset(now),
                ErrorKind::Parse,
                self.class,
                self.client,
                Some(&"data after the last response"),
            );
            if self.phase == Phase::Draining {
                self.schedule_next(ctx, now, now);
            }
        }
        Step::Continue
    }

    /// One response of the batch is complete.
    fn complete(&mut self, ctx: &mut Ctx, now: Instant, response: Response) {
        let at = ctx.offset(now);
        let latency = now - self.sent_at;
        ctx.nap.observe(latency, now);
        let verdict = match &mut self.specweb99 {
            Some(slot) => {
                let (verdict, ad) =
                    validate::check_specweb99(&response, &mut slot.check, self.decoder.captured_header());
                // The next CAD and POST requests say which ad this connection saw last.
                if let (Op::Cad, Some(ad)) = (slot.op, ad.and_then(|ad| u32::try_from(ad).ok())) {
                    slot.cookie.last_ad = ad;
                }
                verdict
            }
            None => validate::check(&ctx.plan.requests[self.current], &response, self.decoder.captured()),
        };
        match verdict {
            Err(why) => ctx.stats.record_error(at, ErrorKind::Validation, self.class, self.client, Some(&why)),
            Ok(()) => ctx.stats.record_response(&Completion {
                at,
                status: response.status,
                bytes: response.head_bytes + response.body_bytes,
                body_bytes: response.body_bytes,
                latency,
                class: self.class,
                client: self.client,
            }),
        }
        self.record_active(ctx, now);
        if let Some(left) = &mut self.conn_left {
            *left = left.saturating_sub(1);
        }
        self.inflight -= 1;
        if self.inflight > 0 {
            return;
        }
        let count_done = self.conn_left == Some(0);
        if self.transport.is_some() && (count_done || !(response.keep_alive && ctx.plan.keepalive)) {
            if count_done && response.keep_alive {
                // The server would keep the connection: tell it we are done
                // (FIN) rather than wait out the grace for its close.
                if let Some(transport) = self.transport.as_mut() {
                    let _ = transport.socket().shutdown(std::net::Shutdown::Write);
                }
            }
            self.phase = Phase::Draining;
            self.deadline = now + DRAIN_GRACE;
        } else {
            self.schedule_next(ctx, now, now);
        }
    }

    fn draining(&mut self, ctx: &mut Ctx, now: Instant) -> Step {
        if !self.readable {
            return Step::Wait;
        }
        let transport = self.transport.as_mut().expect("invariant: draining has a transport");
        match transport.read(&mut ctx.scratch) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.readable = false;
                Step::Wait
            }
            // EOF, stray bytes or an error: the connection is done either way.
            _ => {
                self.close_and_schedule(ctx, now);
                Step::Continue
            }
        }
    }

    fn close_and_schedule(&mut self, ctx: &mut Ctx, now: Instant) {
        self.transport = None;
        self.schedule_next(ctx, now, now);
    }

    /// While waiting on a kept-alive connection, a readable event means the
    /// server closed it (idle timeout) or misbehaved: drop it quietly and
    /// reconnect on the next request.
    fn watch_idle(&mut self) {
        if !self.readable {
            return;
        }
        if let Some(transport) = self.transport.as_mut() {
            let mut probe = [0u8; 1];
            match transport.read(&mut probe) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable = false,
                _ => self.transport = None,
            }
        }
    }

    fn fail(&mut self, ctx: &mut Ctx, now: Instant, kind: ErrorKind, message: &dyn std::fmt::Display) -> Step {
        let at = ctx.offset(now);
        for _ in 0..self.inflight.max(1) {
            ctx.stats.record_error(at, kind, self.class, self.client, Some(message));
        }
        self.record_active(ctx, now);
        self.inflight = 0;
        self.transport = None;
        self.decoder.reset();
        let earliest = if kind == ErrorKind::Connect { now + CONNECT_BACKOFF } else { now };
        self.schedule_next(ctx, now, earliest);
        Step::Continue
    }

    /// Adds the time the connection's line needed for this completion to the
    /// client's active time: from the exchange's begin to the later of now and
    /// the moment pacing lets the next exchange begin. A pause the line speed
    /// imposes after a large response is charged to that response, so a
    /// window's bit rate does not depend on where a large file fell; served
    /// faster than its line, a connection is credited exactly the line speed.
    /// Whole µs since the start, so the sum is exact.
    fn record_active(&mut self, ctx: &mut Ctx, now: Instant) {
        let end = self.paced_until(&ctx.plan).map_or(now, |paced| now.max(paced));
        let end_us = micros_between(ctx.origin, end);
        ctx.stats.record_active(ctx.offset(now), self.client, end_us.saturating_sub(self.mark_us));
        self.mark_us = end_us;
    }

    /// Decides when the next exchange begins: at once (`Queued`) or later.
    fn schedule_next(&mut self, ctx: &mut Ctx, now: Instant, earliest: Instant) {
        let schedule = ctx.plan.schedule;
        let intended = self.intended.saturating_duration_since(ctx.origin);
        let done = now.saturating_duration_since(ctx.origin);
        self.intended = ctx.origin + schedule.next_send(intended, done);
        let mut at = self.intended.max(earliest);
        if let Some(paced) = self.paced_until(&ctx.plan) {
            at = at.max(paced);
        }
        self.due_us = micros_between(ctx.origin, at);
        if at <= now {
            // Begin after the worker has read every ready socket, as wrk does:
            // reads first, then writes, one pass each per loop.
            self.phase = Phase::Queued;
            ctx.ready.push(self.token);
        } else {
            self.phase = Phase::Waiting(at);
            ctx.wakeups.push(std::cmp::Reverse((at, self.token)));
        }
    }
}

impl Slot {
    /// USER_LINE_SPEED: the next exchange may not begin before every byte
    /// received so far could have come at the line speed (None: unpaced).
    fn paced_until(&self, plan: &Plan) -> Option<Instant> {
        let (bps, first) = (plan.line_speed_bps?, self.first_begin?);
        Some(first + Duration::from_secs_f64(self.received as f64 * 8.0 / bps))
    }
}
