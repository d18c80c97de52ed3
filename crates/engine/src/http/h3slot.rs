//! An HTTP/3 slot: one of the run's QUIC connections, carrying up to
//! `streams` requests at once, one per lane (`lane`, as in `h2slot`). This module
//! owns the I/O: a connected UDP socket, datagrams in and out, and the QUIC
//! timers (armed on the worker's wake-up heap); `protocol::h3::Session`
//! owns the protocol. The connect time of an HTTP/3 connection is its QUIC
//! handshake, which is also its TLS handshake. A handshake to which nothing
//! came back by the timeout is a `Connect` error, as ICMP unreachable or a
//! handshake the server ends is: nobody serves QUIC there, whether or not the
//! ICMP answer arrived (`exchange::Awaited` says why); one the server answered
//! but did not finish is a `Timeout`.
//! What it does with its lanes is `Lanes`', shared with `h2slot`. Unlike
//! HTTP/1 and HTTP/2, quinn-proto allocates per datagram and per stream.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use mio::net::UdpSocket;
use mio::{Interest, Token};

use super::ctx::{Ctx, Event};
use super::exchange::{Awaited, Who};
use super::lane::{LanePhase, Lanes};
use super::plan::Plan;
use crate::connection;
use crate::error::ErrorKind;
use crate::protocol::h3::{Event as H3Event, Response as H3Response, Session, SessionSettings};
use crate::protocol::Response;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conn {
    /// No connection: one is opened when a lane has a request to send.
    Idle,
    /// The QUIC handshake is under way.
    Handshaking,
    Open,
    /// Every lane is done.
    Done,
}

pub(crate) struct H3Slot {
    token: usize,
    target: usize,
    source: Option<IpAddr>,
    remote: SocketAddr,
    conn: Conn,
    socket: Option<UdpSocket>,
    /// quinn-udp's view of `socket`: reads with GRO, sends with GSO (and the cmsgs they need).
    udp: Option<quinn_udp::UdpSocketState>,
    session: Session,
    lanes: Lanes,
    writable: bool,
    conn_deadline: Instant,
    conn_started: Instant,
    /// A datagram came back on this connection: the server answered its handshake.
    answered: bool,
    /// The QUIC timer on the worker's wake-up heap, if one is.
    armed: Option<Instant>,
}

impl H3Slot {
    /// The run's connection `index` (of client `client`), whose lane `k` first begins at `first(k)`.
    pub fn new(
        token: usize,
        index: u32,
        client: usize,
        plan: &Plan,
        source: Option<IpAddr>,
        first: impl Fn(u32) -> Instant,
    ) -> Self {
        let h3 = plan.http3.expect("invariant: an HTTP/3 slot in an HTTP/3 plan");
        let lanes = Lanes::new(plan, index, h3.streams, Who { client, token }, first);
        let target = plan.requests.first().map_or(0, |r| r.target);
        let now = Instant::now();
        Self {
            token,
            target,
            source,
            remote: plan.targets[target].addr,
            conn: Conn::Idle,
            socket: None,
            udp: None,
            session: Session::new(session_settings(plan)),
            lanes,
            writable: true,
            conn_deadline: now,
            conn_started: now,
            answered: false,
            armed: None,
        }
    }

    /// The times the lanes first begin.
    pub fn first_wakeups(&self) -> impl Iterator<Item = Instant> + '_ {
        self.lanes.first_wakeups()
    }

    /// The one entry point, as `Slot::handle`.
    pub fn handle(&mut self, ctx: &mut Ctx, event: Event, now: Instant) {
        let mut readable = false;
        match event {
            Event::Io { readable: r, writable, .. } => {
                readable = r;
                self.writable |= writable;
                if self.socket.is_none() {
                    return;
                }
            }
            Event::Timer(at) if self.armed == Some(at) => self.armed = None,
            Event::Sweep => self.sweep(ctx, now),
            Event::Timer(_) | Event::Dequeued | Event::RunEnded => {}
        }
        if self.lanes.wake(ctx, event, now) {
            // Say goodbye (best effort), then let the socket go.
            self.session.close(now);
            self.flush(ctx, now);
            self.drop_connection();
            self.conn = Conn::Done;
        }
        self.drive(ctx, readable, now);
    }

    fn sweep(&mut self, ctx: &mut Ctx, now: Instant) {
        let handshake = if self.answered { Awaited::QuicHandshake } else { Awaited::QuicNoAnswer };
        if self.conn == Conn::Handshaking && now >= self.conn_deadline {
            self.fail_connection(ctx, now, handshake.kind(), &handshake.message(ctx.plan.timeout));
            return;
        }
        // A request whose deadline passes while the handshake is under way waited for the handshake.
        let awaited = if self.conn == Conn::Handshaking { handshake } else { Awaited::Response };
        let session = &mut self.session;
        self.lanes.sweep(ctx, now, awaited, |k| session.cancel(k));
    }

    /// Runs the connection until it must wait for the socket or a time; a
    /// connection that ended while lanes wait with requests is replaced at once.
    fn drive(&mut self, ctx: &mut Ctx, mut readable: bool, mut now: Instant) {
        loop {
            if self.conn == Conn::Done {
                return;
            }
            if self.conn == Conn::Idle {
                // A failed open fails the pending lanes, so this ends.
                if !self.lanes.any(LanePhase::Pending) || !self.open(ctx, now) {
                    return;
                }
                readable = false;
            }
            if readable && !self.read_all(ctx) {
                readable = false;
                continue;
            }
            now = Instant::now();
            self.on_timeout(ctx, now);
            if self.check_end(ctx, now) {
                readable = false;
                continue;
            }
            self.open_streams(ctx, now);
            self.session.send_rest();
            self.flush(ctx, now);
            if self.check_end(ctx, now) {
                continue;
            }
            // A connection the server is leaving is replaced once its streams are done.
            if self.session.going_away() && self.session.open_streams() == 0 {
                self.session.close(now);
                self.flush(ctx, now);
                self.drop_connection();
                self.conn = Conn::Idle;
                continue;
            }
            self.arm(ctx);
            return;
        }
    }

    fn open(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        self.conn_started = now;
        self.conn_deadline = now + ctx.plan.timeout;
        self.answered = false;
        let plan = &ctx.plan;
        let mut socket = match connection::connect_udp(self.remote, self.source, plan.socket_rcvbuf_bytes) {
            Ok(s) => s,
            Err(e) => {
                if connection::is_addr_not_available(&e) {
                    ctx.stats.addr_not_available += 1;
                }
                self.fail_connection(ctx, now, ErrorKind::Connect, &e);
                return false;
            }
        };
        if let Err(e) = ctx.registry.register(&mut socket, Token(self.token), Interest::READABLE | Interest::WRITABLE) {
            self.fail_connection(ctx, now, ErrorKind::Connect, &e);
            return false;
        }
        match quinn_udp::UdpSocketState::new((&socket).into()) {
            Ok(state) => self.udp = Some(state),
            Err(e) => {
                self.fail_connection(ctx, now, ErrorKind::Connect, &e);
                return false;
            }
        }
        self.socket = Some(socket);
        self.writable = true;
        let config = ctx.quic.as_ref().expect("invariant: an HTTP/3 worker has a QUIC config");
        let name = plan.targets[self.target].tls_name.as_ref().expect("invariant: HTTP/3 targets are https");
        if let Err(e) = self.session.connect(now, config, self.remote, &name.to_str()) {
            self.drop_connection();
            self.fail_connection(ctx, now, ErrorKind::Connect, &e);
            return false;
        }
        self.conn = Conn::Handshaking;
        true
    }

    /// Reads datagrams until the socket would block; `false` when the connection failed.
    fn read_all(&mut self, ctx: &mut Ctx) -> bool {
        loop {
            let (Some(socket), Some(udp)) = (self.socket.as_ref(), self.udp.as_ref()) else { return false };
            let now = Instant::now();
            // One read may bring several datagrams the server sent at once (GRO): `stride` bytes each.
            let mut meta = [quinn_udp::RecvMeta::default()];
            let received = udp.recv(socket.into(), &mut [io::IoSliceMut::new(&mut ctx.scratch)], &mut meta);
            let (n, stride) = match received {
                Ok(_) => (meta[0].len, meta[0].stride.max(1)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) => {
                    // ICMP unreachable on the connected socket: nobody serves QUIC there.
                    let kind = if self.conn == Conn::Handshaking { ErrorKind::Connect } else { ErrorKind::Read };
                    self.fail_connection(ctx, now, kind, &e);
                    return false;
                }
            };
            ctx.stats.record_read(n);
            ctx.stats.record_bytes(ctx.offset(now), n as u64);
            self.answered = true;
            let remote = self.remote;
            let Self { session, lanes, conn, conn_started, .. } = self;
            let scratch = std::mem::take(&mut ctx.scratch);
            let mut buffers = std::mem::take(&mut ctx.quic_buffers);
            let mut connected = false;
            for datagram in scratch[..n].chunks(stride) {
                session.receive(now, remote, datagram, &mut buffers, &mut |event| {
                    if let H3Event::Connected = event {
                        connected = true;
                    }
                    on_event(ctx, lanes, event, now);
                });
            }
            ctx.scratch = scratch;
            ctx.quic_buffers = buffers;
            if connected && *conn == Conn::Handshaking {
                *conn = Conn::Open;
                record_handshake(ctx, now - *conn_started, now);
            }
            self.lanes.queue_ready(ctx);
            if self.check_end(ctx, now) {
                return false;
            }
        }
    }

    /// QUIC's timers that are due.
    fn on_timeout(&mut self, ctx: &mut Ctx, now: Instant) {
        if self.session.timeout().is_none_or(|at| at > now) {
            return;
        }
        let Self { session, lanes, .. } = self;
        session.handle_timeout(now, &mut |event| on_event(ctx, lanes, event, now));
        self.lanes.queue_ready(ctx);
    }

    /// Puts the next QUIC timeout on the worker's heap if it is earlier than the one there.
    fn arm(&mut self, ctx: &mut Ctx) {
        if let Some(at) = self.session.timeout() {
            if self.armed.is_none_or(|armed| at < armed) {
                self.armed = Some(at);
                ctx.wakeups.push(std::cmp::Reverse((at, self.token)));
            }
        }
    }

    /// If the connection ended: fails what was on it (or keeps it for the next
    /// connection when the end was clean) and lets the socket go; `true` then.
    fn check_end(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        let Some(end) = self.session.ended() else { return false };
        let in_flight = self.lanes.any(LanePhase::InFlight);
        if end.clean && !in_flight {
            self.flush(ctx, now);
            self.drop_connection();
            self.conn = if self.lanes.all_done() { Conn::Done } else { Conn::Idle };
            return true;
        }
        let kind = if end.tls {
            ErrorKind::Tls
        } else if self.conn == Conn::Handshaking {
            ErrorKind::Connect
        } else if !end.by_peer {
            // crest (or quinn-proto) closed it: the server broke HTTP/3 or QUIC, as a malformed HTTP/2 frame.
            ErrorKind::Parse
        } else {
            ErrorKind::Read
        };
        let why = format!("QUIC connection ended: {}", end.why);
        self.flush(ctx, now);
        self.fail_connection(ctx, now, kind, &why);
        true
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
            let request = &plan.requests[lane.current];
            let bytes = ctx.quic_buffers.request(lane.current, &request.h3);
            if !self.session.open(k as u32, bytes, request.head) {
                // The server's stream limit: the rest wait for it to grant more.
                break;
            }
            lane.sent(ctx, now);
            ctx.stats.h2.record_open(self.session.open_streams() as u32, request.h3_block_bytes, request.h3_raw_bytes);
        }
    }

    /// Sends the datagrams the session has, until the socket would block:
    /// a batch of up to `MAX_BATCH` per `sendmsg` where the kernel segments
    /// it (GSO), one per call where it does not (quinn-udp's
    /// `max_gso_segments` is then 1). Each connection has a socket of its own,
    /// so there is nothing for `sendmmsg` to gather across connections.
    fn flush(&mut self, ctx: &mut Ctx, now: Instant) {
        if !self.writable {
            return;
        }
        loop {
            let (Some(socket), Some(udp)) = (self.socket.as_ref(), self.udp.as_ref()) else { return };
            let max = udp.max_gso_segments();
            let Some((contents, stride)) = self.session.next_datagrams(now, max) else { return };
            let transmit = quinn_udp::Transmit {
                destination: self.remote,
                ecn: None,
                contents,
                segment_size: (contents.len() > stride).then_some(stride),
                src_ip: None,
            };
            match udp.try_send(socket.into(), &transmit) {
                Ok(()) => self.session.sent(),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.writable = false;
                    return;
                }
                // The kernel would not segment the batch: quinn-udp sends one datagram per
                // call from now on, and QUIC sends again what this batch carried, as if lost.
                Err(e)
                    if transmit.segment_size.is_some()
                        && matches!(e.raw_os_error(), Some(libc::EIO | libc::EINVAL)) =>
                {
                    self.session.sent();
                }
                Err(e) => {
                    let kind = if self.conn == Conn::Handshaking { ErrorKind::Connect } else { ErrorKind::Write };
                    self.fail_connection(ctx, now, kind, &e);
                    return;
                }
            }
        }
    }

    fn drop_connection(&mut self) {
        // Closing the socket takes it out of the event loop.
        self.socket = None;
        self.udp = None;
        self.session.reset();
        self.armed = None;
    }

    /// The connection failed: every request drawn on it fails with `kind`.
    fn fail_connection(&mut self, ctx: &mut Ctx, now: Instant, kind: ErrorKind, message: &dyn std::fmt::Display) {
        self.drop_connection();
        self.lanes.fail_all(ctx, now, kind, message);
        self.conn = if self.lanes.all_done() { Conn::Done } else { Conn::Idle };
    }
}

/// The session's settings from the plan.
pub(crate) fn session_settings(plan: &Plan) -> SessionSettings {
    let h3 = plan.http3.expect("invariant: an HTTP/3 plan");
    SessionSettings {
        lanes: h3.streams,
        max_field_bytes: plan.max_header_bytes,
        stream_window: u64::from(h3.stream_window),
        connection_window: u64::from(h3.connection_window),
    }
}

/// A QUIC handshake is a connect and a TLS 1.3 handshake in one.
fn record_handshake(ctx: &mut Ctx, elapsed: std::time::Duration, now: Instant) {
    ctx.stats.record_connect(elapsed);
    ctx.stats.record_tls_handshake(elapsed, false, (Some(rustls::ProtocolVersion::TLSv1_3), None));
    ctx.nap.observe(elapsed, now);
}

/// What the session reported about a lane.
fn on_event(ctx: &mut Ctx, lanes: &mut Lanes, event: H3Event<'_>, now: Instant) {
    match event {
        H3Event::Connected => {}
        H3Event::Body { lane, bytes } => lanes[lane as usize].capture(ctx, bytes),
        H3Event::Response { lane, response } => complete(ctx, lanes, lane as usize, &response, now),
        H3Event::Reset { lane, code } => {
            ctx.stats.h2.resets += 1;
            let why = format_args!("server reset the stream: {}", crate::protocol::h3::frame::code::name(code));
            lanes.fail(ctx, lane as usize, now, ErrorKind::Reset, &why);
        }
        H3Event::Malformed { lane, reason } => lanes.fail(ctx, lane as usize, now, ErrorKind::Parse, &reason),
        H3Event::Refused { lane } => {
            // Never processed: sent again on the next connection, counted once.
            ctx.stats.h2.refused += 1;
            lanes[lane as usize].phase = LanePhase::Pending;
        }
        H3Event::GoAway => ctx.stats.h2.goaways += 1,
    }
}

fn complete(ctx: &mut Ctx, lanes: &mut Lanes, lane: usize, r: &H3Response, now: Instant) {
    let response =
        Response { status: r.status, head_bytes: r.head_block_bytes, body_bytes: r.body_bytes, keep_alive: true };
    ctx.stats.h2.response_header_block_bytes += r.head_block_bytes;
    ctx.stats.h2.response_header_raw_bytes += r.head_raw_bytes;
    let who = lanes.who;
    lanes[lane].complete(ctx, who, &response, r.stream_bytes, now);
}
