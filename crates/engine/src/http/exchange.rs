//! One exchange, the same for an HTTP/1 slot and an HTTP/2 or HTTP/3 lane:
//! when it was meant to go (`intended`), when it was due, where its latency
//! counts from, when it gives up, how it ends (a checked response or a
//! failure), the line time it is charged, and when the next one begins.
//! Also the one table from timeouts to error kinds (`Awaited`). It owns no
//! connection and no protocol, and it allocates nothing.

use std::fmt;
use std::time::{Duration, Instant};

use super::ctx::{micros_between, Ctx, CONNECT_BACKOFF};
use super::plan::Plan;
use super::validate::Invalid;
use crate::error::ErrorKind;
use crate::protocol::Response;
use crate::results::stats::Completion;

/// Whose exchanges they are: the slot's client (where they are scored) and
/// token (where its wake-ups go).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Who {
    pub client: usize,
    pub token: usize,
}

/// What a slot waited for when its timeout passed, and the error kind that
/// makes. A wait for a peer that answered, or for a TCP connect, is
/// `ErrorKind::Timeout`, whatever the protocol. One exception decides the race
/// between a timeout and a connect error over UDP: a QUIC handshake to which
/// nothing at all came back is `ErrorKind::Connect`, as the ICMP port
/// unreachable that usually answers it is (`h3slot`). The kernel answers a TCP
/// connect to a closed port with a reset every time, so a TCP connect with no
/// answer is a listener that did not take it (an accept queue that overflowed,
/// which `listen_overflow` reads from timeouts). Over UDP, "nobody listening"
/// is answered by an ICMP message that a host may rate-limit or a firewall
/// drop, and that waits unread when the event loop runs late, so silence and
/// the ICMP answer are one fact (no QUIC server answered there) and count
/// alike. `Connect` is otherwise for an attempt refused or failed outright (a
/// reset, ICMP unreachable, no local address), which says something else about
/// the target than a slow answer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Awaited {
    /// The TCP connect and TLS handshake of a multiplexed connection.
    Connection,
    /// The rest of a QUIC handshake (connect and TLS 1.3 in one) to which the server answered.
    QuicHandshake,
    /// A QUIC handshake to which no datagram came back: nobody serves QUIC there.
    QuicNoAnswer,
    /// A complete response (for HTTP/1, the whole exchange, connect included).
    Response,
}

impl Awaited {
    /// The error kind a request fails with when this timeout passes.
    pub const fn kind(self) -> ErrorKind {
        match self {
            Self::QuicNoAnswer => ErrorKind::Connect,
            Self::Connection | Self::QuicHandshake | Self::Response => ErrorKind::Timeout,
        }
    }

    /// The failure's message: "no complete response within 10s".
    pub const fn message(self, timeout: Duration) -> TimedOut {
        TimedOut { awaited: self, timeout }
    }
}

/// A timeout's message, written when a stats record keeps it (no allocation here).
pub(crate) struct TimedOut {
    awaited: Awaited,
    timeout: Duration,
}

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.awaited {
            Awaited::Connection => "connection",
            Awaited::QuicHandshake => "QUIC handshake",
            Awaited::QuicNoAnswer => "answer to the QUIC handshake",
            Awaited::Response => "complete response",
        };
        write!(f, "no {what} within {:?}", self.timeout)
    }
}

/// A status other than the one expected (a replay's logged status, a script step's
/// `expect_status`; written only when a stats record keeps it).
struct UnexpectedStatus {
    got: u16,
    expected: u16,
}

impl fmt::Display for UnexpectedStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "status {} where {} was expected", self.got, self.expected)
    }
}

#[derive(Debug)]
pub(crate) struct Exchange {
    /// The class of the request being sent.
    pub class: usize,
    /// When the current request was meant to go (open loop) or was begun.
    intended: Instant,
    /// Where latency counts from.
    pub sent_at: Instant,
    /// When the current exchange gives up.
    pub deadline: Instant,
    /// µs from the start to where the line time of the next completion
    /// counts from: the end of the previous one's line time, or when the
    /// exchange was due if that is later (think time is not line time).
    mark_us: u64,
    /// µs from the start to when the next exchange is due: its schedule, not
    /// the timer's wake-up, so the event loop's lateness is not line time.
    due_us: u64,
    /// When the first exchange began; bytes received since (line-speed pacing).
    first_begin: Option<Instant>,
    received: u64,
}

impl Exchange {
    /// Exchanges whose first is meant to begin at `first`.
    pub fn new(first: Instant) -> Self {
        Self {
            class: 0,
            intended: first,
            sent_at: first,
            deadline: first,
            mark_us: 0,
            due_us: 0,
            first_begin: None,
            received: 0,
        }
    }

    /// The next exchange is due at `at` (a replay's logged time or a
    /// session's gap): an open loop's latency counts from there, and the
    /// wait until then is not line time.
    pub fn intend(&mut self, ctx: &Ctx, at: Instant) {
        self.intended = at;
        self.due_us = micros_between(ctx.origin, at);
    }

    /// An exchange of a request of `class` begins now.
    pub fn begin(&mut self, ctx: &Ctx, class: usize, now: Instant) {
        if self.first_begin.is_none() {
            self.first_begin = Some(now);
            self.mark_us = micros_between(ctx.origin, now);
        } else {
            self.mark_us = self.mark_us.max(self.due_us);
        }
        self.class = class;
        self.deadline = now + ctx.plan.timeout;
        self.sent_at = if ctx.plan.schedule.is_open_loop() { self.intended } else { now };
    }

    /// The request goes out now: a closed loop counts from here, after any connect.
    pub fn sent(&mut self, ctx: &Ctx, now: Instant) {
        if !ctx.plan.schedule.is_open_loop() {
            self.sent_at = now;
        }
    }

    /// `n` bytes arrived on the exchange's connection (line-speed pacing).
    pub fn received(&mut self, n: usize) {
        self.received += n as u64;
    }

    /// A response is complete: recorded as `verdict` says (`wire_bytes` as
    /// the bytes it took; a success when its status is `expect_status`, or
    /// any 2xx or 3xx without one), its line time charged.
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &mut self,
        ctx: &mut Ctx,
        who: Who,
        response: &Response,
        wire_bytes: u64,
        verdict: Result<(), Invalid>,
        expect_status: Option<u16>,
        now: Instant,
    ) {
        let at = ctx.offset(now);
        let latency = now - self.sent_at;
        ctx.nap.observe(latency, now);
        match verdict {
            Err(why) => ctx.stats.record_error(at, ErrorKind::Validation, self.class, who.client, Some(&why)),
            Ok(()) => {
                let completion = Completion {
                    at,
                    status: response.status,
                    bytes: wire_bytes,
                    body_bytes: response.body_bytes,
                    latency,
                    class: self.class,
                    client: who.client,
                };
                match expect_status {
                    None => ctx.stats.record_response(&completion),
                    Some(expected) => {
                        let why = UnexpectedStatus { got: response.status, expected };
                        ctx.stats.record_judged(&completion, response.status == expected, Some(&why));
                    }
                }
            }
        }
        self.charge(ctx, who.client, now);
    }

    /// `requests` requests of the exchange failed with `kind`: recorded, the
    /// line time charged. Returns the earliest the next exchange may begin
    /// (after a short back-off for a failed connect).
    pub fn fail(
        &mut self,
        ctx: &mut Ctx,
        who: Who,
        requests: u32,
        kind: ErrorKind,
        message: &dyn fmt::Display,
        now: Instant,
    ) -> Instant {
        let at = ctx.offset(now);
        for _ in 0..requests {
            ctx.stats.record_error(at, kind, self.class, who.client, Some(message));
        }
        self.charge(ctx, who.client, now);
        if kind == ErrorKind::Connect {
            now + CONNECT_BACKOFF
        } else {
            now
        }
    }

    /// Adds the time the connection's line needed for this completion to the
    /// client's active time: from the exchange's begin to the later of now and
    /// the moment pacing lets the next exchange begin. A pause the line speed
    /// imposes after a large response is charged to that response, so a
    /// window's bit rate does not depend on where a large file fell; served
    /// faster than its line, a connection is credited exactly the line speed.
    /// Whole µs since the start, so the sum is exact.
    fn charge(&mut self, ctx: &mut Ctx, client: usize, now: Instant) {
        let end = self.paced_until(&ctx.plan).map_or(now, |paced| now.max(paced));
        let end_us = micros_between(ctx.origin, end);
        ctx.stats.record_active(ctx.offset(now), client, end_us.saturating_sub(self.mark_us));
        self.mark_us = end_us;
    }

    /// Decides when the next exchange begins, not before `earliest`: `None`
    /// for at once (the caller queues it), or the time, whose wake-up is then
    /// on the worker's heap.
    pub fn schedule_next(&mut self, ctx: &mut Ctx, who: Who, now: Instant, earliest: Instant) -> Option<Instant> {
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
            return None;
        }
        ctx.wakeups.push(std::cmp::Reverse((at, who.token)));
        Some(at)
    }

    /// USER_LINE_SPEED: the next exchange may not begin before every byte
    /// received so far could have come at the line speed (None: unpaced;
    /// always for HTTP/2 and HTTP/3, whose plans refuse a line speed).
    fn paced_until(&self, plan: &Plan) -> Option<Instant> {
        let (bps, first) = (plan.line_speed_bps?, self.first_begin?);
        Some(first + Duration::from_secs_f64(self.received as f64 * 8.0 / bps))
    }
}
