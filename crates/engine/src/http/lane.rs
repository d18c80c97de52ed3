//! A lane: one user of a multiplexed connection (an HTTP/2 or HTTP/3
//! stream slot). In a closed loop it sends, waits for its response, thinks
//! and sends again; in an open loop it keeps its own schedule. This module
//! owns what a lane does between requests, the same for both protocols:
//! drawing its next request, its timing, and what it records when its
//! exchange ends. The slots (`h2slot`, `h3slot`) own the connection and
//! the protocol; nothing here touches either, and nothing allocates.

use std::time::Instant;

use super::ctx::{micros_between, Ctx, CONNECT_BACKOFF};
use super::validate;
use crate::error::ErrorKind;
use crate::protocol::Response;
use crate::results::stats::Completion;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LanePhase {
    /// Begins its next request at this time.
    Waiting(Instant),
    /// Begins once the current batch of events is handled.
    Queued,
    /// A request drawn, waiting for the connection or for a stream to be free.
    Pending,
    /// Its stream is open.
    InFlight,
    /// Quota used up or the run over.
    Done,
}

/// Whose lane it is: the slot's client and token (where its wake-ups go).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Who {
    pub client: usize,
    pub token: usize,
}

#[derive(Debug)]
pub(crate) struct Lane {
    pub phase: LanePhase,
    /// The table entry being sent, and its class.
    pub current: usize,
    pub class: usize,
    /// When the current request was meant to go (open loop) or was begun.
    intended: Instant,
    /// Where latency counts from.
    pub sent_at: Instant,
    /// When the current request gives up.
    pub deadline: Instant,
    /// µs from the start to where the line time of the next completion counts from (see `h1slot`).
    mark_us: u64,
    due_us: u64,
    begun: bool,
    /// The first body bytes of the current response (content checks), sized once.
    captured: Vec<u8>,
}

impl Lane {
    /// A lane that first begins at `at`, keeping up to `capture` body bytes for content checks.
    pub fn new(at: Instant, capture: usize) -> Self {
        Self {
            phase: LanePhase::Waiting(at),
            current: 0,
            class: 0,
            intended: at,
            sent_at: at,
            deadline: at,
            mark_us: 0,
            due_us: 0,
            begun: false,
            captured: Vec::with_capacity(capture),
        }
    }

    /// Draws the lane's next request (it is then `Pending`); `false` when there
    /// is none (quota used up or the run over): the slot marks the lane done.
    pub fn begin(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        let over = ctx.end.is_some_and(|end| now >= end);
        let batch = if over { None } else { ctx.selector.next(&ctx.plan) };
        let Some(batch) = batch else { return false };
        let plan = &ctx.plan;
        if !self.begun {
            self.begun = true;
            self.mark_us = micros_between(ctx.origin, now);
        } else {
            self.mark_us = self.mark_us.max(self.due_us);
        }
        self.current = batch.entry;
        self.class = plan.requests[batch.entry].class;
        self.captured.clear();
        self.deadline = now + plan.timeout;
        self.sent_at = if plan.schedule.is_open_loop() { self.intended } else { now };
        self.phase = LanePhase::Pending;
        ctx.stats.record_issued(self.class, 1);
        true
    }

    /// The request went out on a stream (a closed loop counts from here, after any connect).
    pub fn sent(&mut self, ctx: &Ctx, now: Instant) {
        self.phase = LanePhase::InFlight;
        if !ctx.plan.schedule.is_open_loop() {
            self.sent_at = now;
        }
    }

    /// Keeps the first body bytes the request's content check needs.
    pub fn capture(&mut self, ctx: &Ctx, bytes: &[u8]) {
        let want = ctx.plan.requests[self.current].expect_body_prefix.as_ref().map_or(0, Vec::len);
        if self.captured.len() < want {
            let take = (want - self.captured.len()).min(bytes.len());
            self.captured.extend_from_slice(&bytes[..take]);
        }
    }

    /// The response is complete: checked, recorded (`wire_bytes` as the bytes it took), and the next request scheduled.
    pub fn complete(&mut self, ctx: &mut Ctx, who: Who, response: &Response, wire_bytes: u64, now: Instant) {
        let at = ctx.offset(now);
        let latency = now - self.sent_at;
        ctx.nap.observe(latency, now);
        match validate::check(&ctx.plan.requests[self.current], response, &self.captured) {
            Err(why) => ctx.stats.record_error(at, ErrorKind::Validation, self.class, who.client, Some(&why)),
            Ok(()) => ctx.stats.record_response(&Completion {
                at,
                status: response.status,
                bytes: wire_bytes,
                body_bytes: response.body_bytes,
                latency,
                class: self.class,
                client: who.client,
            }),
        }
        self.record_active(ctx, who.client, now);
        self.schedule_next(ctx, who.token, now, now);
    }

    /// The request failed with `kind`; the next one is scheduled (after a short back-off for a failed connect).
    pub fn fail(&mut self, ctx: &mut Ctx, who: Who, now: Instant, kind: ErrorKind, message: &dyn std::fmt::Display) {
        ctx.stats.record_error(ctx.offset(now), kind, self.class, who.client, Some(message));
        self.record_active(ctx, who.client, now);
        let earliest = if kind == ErrorKind::Connect { now + CONNECT_BACKOFF } else { now };
        self.schedule_next(ctx, who.token, now, earliest);
    }

    /// As `Slot::record_active`, per lane (no line-speed pacing with HTTP/2 or HTTP/3).
    fn record_active(&mut self, ctx: &mut Ctx, client: usize, now: Instant) {
        let end_us = micros_between(ctx.origin, now);
        ctx.stats.record_active(ctx.offset(now), client, end_us.saturating_sub(self.mark_us));
        self.mark_us = end_us;
    }

    /// Decides when the lane's next request begins: at once (`Queued`) or later.
    fn schedule_next(&mut self, ctx: &mut Ctx, token: usize, now: Instant, earliest: Instant) {
        let schedule = ctx.plan.schedule;
        let intended = self.intended.saturating_duration_since(ctx.origin);
        let done = now.saturating_duration_since(ctx.origin);
        self.intended = ctx.origin + schedule.next_send(intended, done);
        let at = self.intended.max(earliest);
        self.due_us = micros_between(ctx.origin, at);
        if at <= now {
            self.phase = LanePhase::Queued;
        } else {
            self.phase = LanePhase::Waiting(at);
            ctx.wakeups.push(std::cmp::Reverse((at, token)));
        }
    }
}

/// The lanes of connection `index` of a plan with `streams` lanes per connection, lane `k`
/// first beginning at `first(k)`; each keeps the longest body prefix the requests check.
pub(crate) fn lanes_of(
    plan: &super::plan::Plan,
    index: u32,
    streams: u32,
    first: impl Fn(u32) -> Instant,
) -> Vec<Lane> {
    let capture = plan.requests.iter().filter_map(|r| r.expect_body_prefix.as_ref().map(Vec::len)).max();
    (0..streams).map(|k| Lane::new(first(index * streams + k), capture.unwrap_or(0))).collect()
}

/// The times the lanes first begin.
pub(crate) fn first_wakeups(lanes: &[Lane]) -> impl Iterator<Item = Instant> + '_ {
    lanes.iter().filter_map(|l| match l.phase {
        LanePhase::Waiting(at) => Some(at),
        _ => None,
    })
}
