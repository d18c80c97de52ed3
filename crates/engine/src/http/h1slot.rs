//! An HTTP/1 slot is one of the run's connections: it holds at most one live
//! transport at a time and drives requests through it, one exchange (a
//! batch of `pipeline` requests) after another. The worker tells it what
//! happened through one entry point, `Slot::handle`; all of its I/O is then
//! attempted in `drive`, which steps through the phases until the socket
//! would block. Nothing here recurses, sleeps or allocates per request.
//! Which request to send is `select`'s business (or, with SPECweb99, the
//! slot's own draw and writer, `specweb99`), whether a body is the expected
//! one `validate`'s. A slot also paces itself to `line_speed_bps` and, with
//! `keepalive_requests`, closes each connection after its drawn count. A
//! replayed request that is not yet due waits in the slot (`pending`). With
//! a script the slot is a virtual user (`script::User`): the script writes
//! each step's request into the user's buffer and judges its response.

use std::io;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::ctx::{Ctx, Event};
use super::dial::{self, Connected};
use super::exchange::{Awaited, Exchange, Who};
use super::page;
use super::plan::Plan;
use super::select::{Batch, Due};
use super::validate;
use crate::connection::Transport;
use crate::error::ErrorKind;
use crate::protocol::{Response, ResponseDecoder};
use crate::script;
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
    /// The table entry being sent, and the target of the live transport.
    current: usize,
    target: usize,
    /// Requests the live connection may still carry (None: no limit).
    conn_left: Option<u32>,
    /// A replayed request drawn before its time: sent when the slot's wait ends.
    pending: Option<Batch>,
    /// The current exchange's timing, its class, and its line time; its
    /// `deadline` is also the end of a closing connection's grace.
    x: Exchange,
    specweb99: Option<Box<Specweb99Slot>>,
    /// A script's virtual user, and the end of its think time after a step.
    script: Option<Box<script::User>>,
    think_until: Option<Instant>,
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
        let script = plan.script.as_ref().map(|sp| {
            decoder.set_cookie_capture();
            Box::new(sp.script.user(index))
        });
        Self {
            token,
            client,
            current: 0,
            target: 0,
            conn_left: None,
            pending: None,
            x: Exchange::new(first),
            specweb99,
            script,
            think_until: None,
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
                Phase::Connecting | Phase::Handshaking | Phase::Writing | Phase::Reading if now >= self.x.deadline => {
                    let awaited = Awaited::Response;
                    self.fail(ctx, now, awaited.kind(), &awaited.message(ctx.plan.timeout));
                }
                Phase::Draining if now >= self.x.deadline => self.close_and_schedule(ctx, now),
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
        let drawn = if over { Ok(None) } else { self.draw(ctx, now) };
        let batch = match drawn {
            Ok(batch) => batch,
            // A page load's connection with nothing to send yet: a sibling's answer queues it.
            Err(at) if ctx.pages.is_some() && at == ctx.parked_at() => {
                self.phase = Phase::Queued;
                return Step::Wait;
            }
            Err(at) => {
                self.phase = Phase::Waiting(at);
                ctx.wakeups.push(std::cmp::Reverse((at, self.token)));
                return Step::Wait;
            }
        };
        let Some(batch) = batch else {
            self.finish(ctx);
            return Step::Wait;
        };
        if batch.new_session {
            // A session is a new user: it does not inherit the last one's connection.
            self.transport = None;
        }
        self.current = batch.entry;
        let (class, target) = match (&mut self.specweb99, &ctx.plan.specweb99, &self.script, &ctx.plan.script) {
            (Some(slot), Some(sw), ..) => {
                let (op, file) = sw.mix.draw(ctx.selector.rng());
                (slot.op, slot.file) = (op, file);
                (specweb99::class_index(op, file.class), sw.site.endpoint(op).target)
            }
            (.., Some(user), Some(sp)) => (user.step, sp.target),
            _ => {
                let request = &ctx.plan.requests[self.current];
                self.decoder.set_head_request(request.head);
                self.decoder.set_capture(request.expect_body_prefix.as_ref().map_or(0, Vec::len));
                self.batch_len = request.bytes.len() * batch.requests as usize;
                (request.class, request.target)
            }
        };
        self.x.begin(ctx, class, now);
        if target != self.target {
            // A request for another server cannot use this connection.
            self.transport = None;
            self.target = target;
        }
        if self.transport.is_none() {
            // A new connection: how many requests it carries.
            self.conn_left = ctx.plan.keepalive_draw.map(|draw| draw.draw(ctx.selector.rng()));
        }
        if batch.session_ends {
            // The user leaves: its connection closes after this request, the server's FIN awaited.
            self.conn_left = Some(1);
        }
        let plan = &ctx.plan;
        let last = match self.conn_left {
            Some(left) => left <= 1,
            None => !plan.keepalive,
        };
        if let (Some(slot), Some(sw)) = (&mut self.specweb99, &plan.specweb99) {
            sw.site.write(&mut slot.request, slot.op, slot.file, slot.global, slot.cookie, last);
            slot.check.start(slot.op, slot.file);
            self.batch_len = slot.request.len();
        }
        if let (Some(user), Some(sp)) = (&mut self.script, &plan.script) {
            sp.script.write(user, &sp.host, last);
            self.decoder.set_head_request(sp.script.is_head(user.step));
            // Only a step that extracts keeps its body (up to the cap; the buffer was reserved once).
            self.decoder.set_capture(if sp.script.step_extracts(user.step) { script::BODY_CAPTURE_BYTES } else { 0 });
            self.batch_len = user.request.len();
        }
        ctx.stats.record_issued(class, batch.requests);
        self.inflight = batch.requests;
        self.write_off = 0;
        if self.transport.is_some() {
            self.phase = Phase::Writing;
            return Step::Continue;
        }
        self.open(ctx, now)
    }

    /// The next batch: a replayed request drawn earlier whose time has come,
    /// or the selector's next (None: none is left). `Err(at)`: the drawn
    /// request is a replayed one not due before `at`; it waits in `pending`.
    fn draw(&mut self, ctx: &mut Ctx, now: Instant) -> Result<Option<Batch>, Instant> {
        if let Some(batch) = self.pending.take() {
            return Ok(Some(batch));
        }
        if ctx.pages.is_some() {
            return ctx.page_draw(self.token, now);
        }
        let Some(batch) = ctx.selector.next_for(&ctx.plan, self.token) else { return Ok(None) };
        let at = match batch.due {
            Due::Now => return Ok(Some(batch)),
            // A timed replay's logged time, or a session's logged gap after its last response.
            Due::At(offset) => ctx.origin + offset,
            Due::After(gap) => now + gap,
        };
        self.x.intend(ctx, at);
        if at > now {
            self.pending = Some(batch);
            return Err(at);
        }
        Ok(Some(batch))
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
                self.start_writing(ctx, now);
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
                self.start_writing(ctx, now);
                Step::Continue
            }
            Ok(false) => Step::Wait,
            Err(e) => self.fail(ctx, now, e.kind(), &e),
        }
    }

    fn start_writing(&mut self, ctx: &Ctx, now: Instant) {
        self.phase = Phase::Writing;
        self.x.sent(ctx, now);
    }

    fn writing(&mut self, ctx: &mut Ctx, now: Instant) -> Step {
        let transport = self.transport.as_mut().expect("invariant: writing has a transport");
        let plan = &ctx.plan;
        let out = match (&self.specweb99, &self.script) {
            (Some(slot), _) => &slot.request[..],
            (None, Some(user)) => &user.request[..],
            _ if plan.pipeline > 1 => &plan.batch[..self.batch_len],
            _ => &plan.requests[self.current].bytes[..],
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
        self.x.received(n);
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
                self.x.class,
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
        let mut expect_status = ctx.plan.requests.get(self.current).and_then(|r| r.expect_status);
        let verdict = match (&mut self.specweb99, &mut self.script, &ctx.plan.script) {
            (Some(slot), ..) => {
                let (verdict, ad) =
                    validate::check_specweb99(&response, &mut slot.check, self.decoder.captured_header());
                // The next CAD and POST requests say which ad this connection saw last.
                if let (Op::Cad, Some(ad)) = (slot.op, ad.and_then(|ad| u32::try_from(ad).ok())) {
                    slot.cookie.last_ad = ad;
                }
                verdict
            }
            (None, Some(user), Some(sp)) => {
                let step = user.step;
                expect_status = sp.script.expect_status(step);
                self.think_until = Some(now + sp.script.think(step));
                let (body, cookies) = (self.decoder.captured(), self.decoder.captured_cookies());
                sp.script.judge(user, response.status, body, cookies).map_err(validate::Invalid::Script)
            }
            _ => validate::check(&ctx.plan.requests[self.current], &response, self.decoder.captured()),
        };
        let wire_bytes = response.head_bytes + response.body_bytes;
        let as_expected = page::as_expected(verdict.is_ok(), response.status, expect_status);
        self.x.complete(ctx, self.who(), &response, wire_bytes, verdict, expect_status, now);
        if let Some(left) = &mut self.conn_left {
            *left = left.saturating_sub(1);
        }
        self.inflight -= 1;
        if self.inflight > 0 {
            return;
        }
        if ctx.pages.is_some() {
            ctx.page_answered(self.token, as_expected, now);
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
            self.x.deadline = now + DRAIN_GRACE;
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
        let earliest = self.x.fail(ctx, self.who(), self.inflight.max(1), kind, message, now);
        if ctx.pages.is_some() {
            ctx.page_answered(self.token, false, now);
        }
        self.inflight = 0;
        self.transport = None;
        self.decoder.reset();
        if let (Some(user), Some(sp)) = (&mut self.script, &ctx.plan.script) {
            // A step without a response failed: the user starts again.
            sp.script.restart(user);
        }
        self.schedule_next(ctx, now, earliest);
        Step::Continue
    }

    fn who(&self) -> Who {
        Who { client: self.client, token: self.token }
    }

    /// Decides when the next exchange begins: at once (`Queued`) or later.
    fn schedule_next(&mut self, ctx: &mut Ctx, now: Instant, earliest: Instant) {
        // A script step's think time holds the next step back, however the connection ended.
        let earliest = self.think_until.take().map_or(earliest, |until| earliest.max(until));
        match self.x.schedule_next(ctx, self.who(), now, earliest) {
            // Begin after the worker has read every ready socket, as wrk does:
            // reads first, then writes, one pass each per loop.
            None => {
                self.phase = Phase::Queued;
                ctx.ready.push(self.token);
            }
            Some(at) => self.phase = Phase::Waiting(at),
        }
    }
}
