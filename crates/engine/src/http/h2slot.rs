//! An HTTP/2 slot: one of the run's connections, carrying up to `streams`
//! requests at once, one per lane (`lane`: a user of its own, its timing
//! and what it records; `Lanes`: what this slot and `h3slot` do with their
//! lanes alike). The lanes share the connection, whose protocol
//! state is `protocol::h2::Session`'s; this module owns the I/O (connect,
//! TLS with ALPN h2, reads into the worker's buffer, writes) and when each
//! lane's request goes out. When the server sends GOAWAY, the streams it
//! still serves finish, those it refused are sent again on the next
//! connection, and the connection is replaced once idle. Like `h1slot`, it
//! never recurses, sleeps or allocates per request.

use std::io;
use std::net::IpAddr;
use std::time::Instant;

use super::ctx::{Ctx, Event};
use super::dial::{self, Connected};
use super::exchange::{Awaited, Who};
use super::lane::{LanePhase, Lanes};
use super::plan::Plan;
use crate::connection::Transport;
use crate::error::ErrorKind;
use crate::protocol::h2::{Event as H2Event, Response as H2Response, Session, SessionSettings};
use crate::protocol::Response;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conn {
    /// No connection: one is opened when a lane has a request to send.
    Idle,
    Connecting,
    Handshaking,
    Open,
    /// Every lane is done.
    Done,
}

pub(crate) struct H2Slot {
    token: usize,
    target: usize,
    source: Option<IpAddr>,
    conn: Conn,
    transport: Option<Transport>,
    session: Session,
    lanes: Lanes,
    readable: bool,
    writable: bool,
    read_closed: bool,
    /// When the connect or the TLS handshake gives up.
    conn_deadline: Instant,
    conn_started: Instant,
    /// This connection's first request block went out: the shared fields are in the server's table.
    primed: bool,
}

impl H2Slot {
    /// The run's connection `index` (of client `client`), whose lane `k` first begins at `first(k)`.
    pub fn new(
        token: usize,
        index: u32,
        client: usize,
        plan: &Plan,
        source: Option<IpAddr>,
        first: impl Fn(u32) -> Instant,
    ) -> Self {
        let h2 = plan.http2.expect("invariant: an HTTP/2 slot in an HTTP/2 plan");
        let lanes = Lanes::new(plan, index, h2.streams, Who { client, token }, first);
        let settings = SessionSettings {
            lanes: h2.streams,
            stream_window: h2.stream_window,
            connection_window: h2.connection_window,
            max_field_bytes: plan.max_header_bytes,
        };
        let now = Instant::now();
        Self {
            token,
            target: plan.requests.first().map_or(0, |r| r.target),
            source,
            conn: Conn::Idle,
            transport: None,
            session: Session::new(settings, plan.max_header_bytes),
            lanes,
            readable: false,
            writable: false,
            read_closed: false,
            conn_deadline: now,
            conn_started: now,
            primed: false,
        }
    }

    /// The times the lanes first begin.
    pub fn first_wakeups(&self) -> impl Iterator<Item = Instant> + '_ {
        self.lanes.first_wakeups()
    }

    /// The one entry point, as `Slot::handle`.
    pub fn handle(&mut self, ctx: &mut Ctx, event: Event, now: Instant) {
        match event {
            Event::Io { readable, writable, read_closed } => {
                self.readable |= readable;
                self.writable |= writable;
                self.read_closed |= read_closed;
                if self.conn == Conn::Idle {
                    // A stale event of a closed socket.
                    return;
                }
            }
            Event::Sweep => self.sweep(ctx, now),
            Event::Timer(_) | Event::Dequeued | Event::RunEnded => {}
        }
        if self.lanes.wake(ctx, event, now) {
            self.conn = Conn::Done;
            self.transport = None;
        }
        self.drive(ctx, now);
    }

    fn sweep(&mut self, ctx: &mut Ctx, now: Instant) {
        if matches!(self.conn, Conn::Connecting | Conn::Handshaking) && now >= self.conn_deadline {
            let awaited = Awaited::Connection;
            self.fail_connection(ctx, now, awaited.kind(), &awaited.message(ctx.plan.timeout));
            return;
        }
        let session = &mut self.session;
        self.lanes.sweep(ctx, now, Awaited::Response, |k| session.cancel(k));
    }

    /// Runs the connection until it must wait for the socket or a time.
    fn drive(&mut self, ctx: &mut Ctx, now: Instant) {
        loop {
            let more = match self.conn {
                Conn::Done => return,
                Conn::Idle => {
                    if !self.lanes.any(LanePhase::Pending) {
                        return;
                    }
                    self.open(ctx, now)
                }
                Conn::Connecting => self.connecting(ctx, now),
                Conn::Handshaking => self.handshaking(ctx, now),
                Conn::Open => self.pump(ctx),
            };
            if !more {
                return;
            }
        }
    }

    fn open(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        self.readable = false;
        self.writable = false;
        self.read_closed = false;
        self.session.reset();
        self.primed = false;
        self.conn_started = now;
        self.conn_deadline = now + ctx.plan.timeout;
        match dial::dial(ctx, self.target, self.source, self.token) {
            Ok(transport) => {
                self.transport = Some(transport);
                self.conn = Conn::Connecting;
                true
            }
            Err(e) => {
                self.fail_connection(ctx, now, e.kind(), &e);
                false
            }
        }
    }

    fn connecting(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        if !self.writable {
            return false;
        }
        match dial::connected(ctx, &mut self.transport, self.target, self.conn_started, now) {
            Ok(Connected::Waiting) => {
                self.writable = false;
                false
            }
            Ok(Connected::Ready) => {
                self.conn = Conn::Open;
                true
            }
            Ok(Connected::Handshaking) => {
                self.conn = Conn::Handshaking;
                self.conn_started = now;
                true
            }
            Err(e) => {
                self.fail_connection(ctx, now, e.kind(), &e);
                false
            }
        }
    }

    fn handshaking(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        let transport = self.transport.as_mut().expect("invariant: handshaking has a transport");
        match dial::handshake(ctx, transport, self.conn_started, now) {
            Ok(true) if !transport.alpn_h2() => {
                self.fail_connection(ctx, now, ErrorKind::Tls, &"the server did not agree to HTTP/2 (ALPN h2)");
                false
            }
            Ok(true) => {
                self.conn = Conn::Open;
                true
            }
            Ok(false) => false,
            Err(e) => {
                self.fail_connection(ctx, now, e.kind(), &e);
                false
            }
        }
    }

    /// One pass over an open connection: read what arrived, open streams
    /// for pending lanes, write what the session queued. `true` to pass again.
    fn pump(&mut self, ctx: &mut Ctx) -> bool {
        if self.readable && !self.read_all(ctx) {
            // The connection ended: `drive` opens another if a lane is pending.
            return true;
        }
        let now = Instant::now();
        self.open_streams(ctx, now);
        if self.session.bodies_waiting() {
            let body = &ctx.plan.body[..];
            self.session.send_bodies(&|_| Some(body));
        }
        if !self.write_out(ctx, now) {
            return false;
        }
        // A connection the server is closing (or whose ids ran out) is replaced once its streams are done.
        if (self.session.going_away() || self.session.exhausted()) && self.session.open_streams() == 0 {
            self.close_quietly();
            return self.lanes.any(LanePhase::Pending);
        }
        self.readable
    }

    /// Reads until the socket would block; `false` when the connection ended.
    fn read_all(&mut self, ctx: &mut Ctx) -> bool {
        loop {
            let transport = self.transport.as_mut().expect("invariant: an open connection has a transport");
            let read = transport.read(&mut ctx.scratch);
            let now = Instant::now();
            let n = match read {
                Ok(0) => {
                    if self.lanes.any(LanePhase::InFlight) {
                        self.fail_connection(ctx, now, ErrorKind::Read, &"connection closed before the response");
                    } else {
                        // An idle connection the server closed: the next request opens another.
                        self.close_quietly();
                    }
                    return false;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    return true;
                }
                Err(e) => {
                    let kind = if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) {
                        ErrorKind::Tls
                    } else {
                        ErrorKind::Read
                    };
                    self.fail_connection(ctx, now, kind, &e);
                    return false;
                }
            };
            let short = n < ctx.scratch.len() && !self.read_closed && matches!(transport, Transport::Plain(_));
            ctx.stats.record_read(n);
            ctx.stats.record_bytes(ctx.offset(now), n as u64);
            let Self { session, lanes, .. } = self;
            let scratch = std::mem::take(&mut ctx.scratch);
            let result = session.receive(&scratch[..n], &mut |event| on_event(ctx, lanes, event, now));
            ctx.scratch = scratch;
            if let Err(e) = result {
                let kind = if e.by_peer { ErrorKind::Reset } else { ErrorKind::Parse };
                // Tell the server why (best effort), then give up the connection.
                if let Some(t) = self.transport.as_mut() {
                    let _ = t.write(self.session.output());
                    let _ = t.flush();
                }
                self.fail_connection(ctx, now, kind, &e);
                return false;
            }
            self.lanes.queue_ready(ctx);
            if short {
                // A short plain read emptied the socket (see `h1slot`).
                self.readable = false;
                return true;
            }
        }
    }

    /// Opens streams for pending lanes while the session allows.
    fn open_streams(&mut self, ctx: &mut Ctx, now: Instant) {
        if !self.session.ready() {
            return;
        }
        let plan = &ctx.plan;
        for k in 0..self.lanes.len() {
            if self.lanes[k].phase != LanePhase::Pending || !self.session.can_open(k as u32) {
                continue;
            }
            let lane = &mut self.lanes[k];
            let blocks = &plan.requests[lane.current].h2;
            // The first block on a connection puts the shared fields in the server's table; later ones name them.
            let block = if blocks.table_bytes == 0 || self.session.peer_table_bytes() < blocks.table_bytes {
                &blocks.plain
            } else if self.primed {
                &blocks.indexed
            } else {
                self.primed = true;
                &blocks.priming
            };
            self.session.open(k as u32, block, &plan.body);
            lane.sent(ctx, now);
            ctx.stats.h2.record_open(self.session.open_streams(), block.len(), blocks.raw_bytes);
        }
    }

    /// Writes what the session queued; `false` when the socket would block or the connection failed.
    fn write_out(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        let transport = self.transport.as_mut().expect("invariant: an open connection has a transport");
        while !self.session.output().is_empty() {
            match transport.write(self.session.output()) {
                Ok(0) => {
                    self.fail_connection(ctx, now, ErrorKind::Write, &"connection closed while writing");
                    return false;
                }
                Ok(n) => self.session.consumed(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.writable = false;
                    return false;
                }
                Err(e) => {
                    self.fail_connection(ctx, now, ErrorKind::Write, &e);
                    return false;
                }
            }
        }
        match transport.flush() {
            Ok(true) => true,
            Ok(false) => {
                self.writable = false;
                false
            }
            Err(e) => {
                self.fail_connection(ctx, now, ErrorKind::Write, &e);
                false
            }
        }
    }

    /// Drops the connection without failing anything (lanes pending keep their requests).
    fn close_quietly(&mut self) {
        self.transport = None;
        self.conn = if self.lanes.all_done() { Conn::Done } else { Conn::Idle };
    }

    /// The connection failed: every request drawn on it (sent or waiting to be) fails with `kind`.
    fn fail_connection(&mut self, ctx: &mut Ctx, now: Instant, kind: ErrorKind, message: &dyn std::fmt::Display) {
        self.transport = None;
        self.lanes.fail_all(ctx, now, kind, message);
        self.conn = if self.lanes.all_done() { Conn::Done } else { Conn::Idle };
    }
}

/// What the session reported about a lane.
fn on_event(ctx: &mut Ctx, lanes: &mut Lanes, event: H2Event<'_>, now: Instant) {
    match event {
        H2Event::Ready => {}
        H2Event::Body { lane, bytes } => lanes[lane as usize].capture(ctx, bytes),
        H2Event::Response { lane, response } => complete(ctx, lanes, lane as usize, &response, now),
        H2Event::Reset { lane, code } => {
            ctx.stats.h2.resets += 1;
            let why = format_args!("server reset the stream: {}", crate::protocol::h2::frame::code::name(code));
            lanes.fail(ctx, lane as usize, now, ErrorKind::Reset, &why);
        }
        H2Event::Malformed { lane, reason } => lanes.fail(ctx, lane as usize, now, ErrorKind::Parse, &reason),
        H2Event::Refused { lane } => {
            // Never processed: sent again on the next connection, counted once.
            ctx.stats.h2.refused += 1;
            lanes[lane as usize].phase = LanePhase::Pending;
        }
        H2Event::GoAway { .. } => ctx.stats.h2.goaways += 1,
    }
}

fn complete(ctx: &mut Ctx, lanes: &mut Lanes, lane: usize, r: &H2Response, now: Instant) {
    let response =
        Response { status: r.status, head_bytes: r.head_block_bytes, body_bytes: r.body_bytes, keep_alive: true };
    ctx.stats.h2.response_header_block_bytes += r.head_block_bytes;
    ctx.stats.h2.response_header_raw_bytes += r.head_raw_bytes;
    let who = lanes.who;
    lanes[lane].complete(ctx, who, &response, r.head_block_bytes + r.flow_bytes, now);
}
