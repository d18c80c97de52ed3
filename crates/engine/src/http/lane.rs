//! Lanes: the users of one multiplexed connection (HTTP/2 or HTTP/3 stream
//! slots). In a closed loop a lane sends, waits for its response, thinks
//! and sends again; in an open loop it keeps its own schedule. `Lane` owns
//! what one lane does between requests (its request, its `Exchange`, the
//! body bytes its check needs); `Lanes` owns what an HTTP/2 and an HTTP/3
//! slot do with their lanes alike: the worker's events fanned out to them,
//! the sweep of expired requests, failing one lane or every lane of a
//! failed connection, and queueing the slot when a lane is ready. The slots
//! (`h2slot`, `h3slot`) own the connection and the protocol; nothing here
//! touches either, and nothing allocates after `Lanes::new`.

use std::ops::{Index, IndexMut};
use std::time::Instant;

use super::ctx::{Ctx, Event};
use super::exchange::{Awaited, Exchange, Who};
use super::page::{self, Next};
use super::plan::Plan;
use super::validate;
use crate::error::ErrorKind;
use crate::protocol::Response;

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

#[derive(Debug)]
pub(crate) struct Lane {
    pub phase: LanePhase,
    /// The table entry being sent.
    pub current: usize,
    /// The current request's timing, class and line time.
    x: Exchange,
    /// The first body bytes of the current response (content checks), sized once.
    captured: Vec<u8>,
}

impl Lane {
    /// A lane that first begins at `at`, keeping up to `capture` body bytes for content checks.
    fn new(at: Instant, capture: usize) -> Self {
        Self { phase: LanePhase::Waiting(at), current: 0, x: Exchange::new(at), captured: Vec::with_capacity(capture) }
    }

    /// Draws the lane's next request (it is then `Pending`); `false` when there
    /// is none (quota used up or the run over): the lane is then done.
    fn begin(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        let over = ctx.end.is_some_and(|end| now >= end);
        let batch = if over { None } else { ctx.selector.next(&ctx.plan) };
        let Some(batch) = batch else { return false };
        self.begin_entry(ctx, batch.entry, now);
        true
    }

    /// Begins table entry `entry` (it is then `Pending`).
    fn begin_entry(&mut self, ctx: &mut Ctx, entry: usize, now: Instant) {
        self.current = entry;
        self.x.begin(ctx, ctx.plan.requests[entry].class, now);
        self.captured.clear();
        self.phase = LanePhase::Pending;
        ctx.stats.record_issued(self.x.class, 1);
    }

    /// The request went out on a stream.
    pub fn sent(&mut self, ctx: &Ctx, now: Instant) {
        self.phase = LanePhase::InFlight;
        self.x.sent(ctx, now);
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
        let request = &ctx.plan.requests[self.current];
        let (verdict, expect_status) = (validate::check(request, response, &self.captured), request.expect_status);
        let as_expected = page::as_expected(verdict.is_ok(), response.status, expect_status);
        self.x.complete(ctx, who, response, wire_bytes, verdict, expect_status, now);
        if ctx.pages.is_some() && ctx.page_answered_on_lane(who.token, as_expected, now) {
            ctx.ready.push(who.token); // parked lanes of this connection have work
        }
        self.schedule_next(ctx, who, now, now);
    }

    /// The request failed with `kind`; the next one is scheduled (after a short back-off for a failed connect).
    pub fn fail(&mut self, ctx: &mut Ctx, who: Who, now: Instant, kind: ErrorKind, message: &dyn std::fmt::Display) {
        let earliest = self.x.fail(ctx, who, 1, kind, message, now);
        if ctx.pages.is_some() && ctx.page_answered_on_lane(who.token, false, now) {
            ctx.ready.push(who.token);
        }
        self.schedule_next(ctx, who, now, earliest);
    }

    /// When the lane's next request begins: at once (`Queued`: the slot queues itself) or later.
    fn schedule_next(&mut self, ctx: &mut Ctx, who: Who, now: Instant, earliest: Instant) {
        self.phase = match self.x.schedule_next(ctx, who, now, earliest) {
            None => LanePhase::Queued,
            Some(at) => LanePhase::Waiting(at),
        };
    }
}

/// The lanes of one multiplexed connection.
pub(crate) struct Lanes {
    lanes: Vec<Lane>,
    /// The slot's client and token.
    pub who: Who,
    /// Lanes not yet `Done`.
    live: usize,
    /// The slot's token is in `Ctx::ready`.
    queued: bool,
}

impl Lanes {
    /// The `streams` lanes of connection `index` (of `who`), lane `k` first
    /// beginning at `first(k)`; each keeps the longest body prefix the requests check.
    pub fn new(plan: &Plan, index: u32, streams: u32, who: Who, first: impl Fn(u32) -> Instant) -> Self {
        let capture = plan.requests.iter().filter_map(|r| r.expect_body_prefix.as_ref().map(Vec::len)).max();
        let lanes: Vec<Lane> =
            (0..streams).map(|k| Lane::new(first(index * streams + k), capture.unwrap_or(0))).collect();
        Self { live: lanes.len(), lanes, who, queued: false }
    }

    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Every lane is done: the slot is finished.
    pub fn all_done(&self) -> bool {
        self.live == 0
    }

    /// Whether a lane is in `phase`.
    pub fn any(&self, phase: LanePhase) -> bool {
        self.lanes.iter().any(|l| l.phase == phase)
    }

    /// The times the lanes first begin.
    pub fn first_wakeups(&self) -> impl Iterator<Item = Instant> + '_ {
        self.lanes.iter().filter_map(|l| match l.phase {
            LanePhase::Waiting(at) => Some(at),
            _ => None,
        })
    }

    /// The worker's event, for the lanes: a lane whose time came or that was
    /// queued draws its next request; at the run's end a waiting lane is
    /// done. `true` when the last lane just finished (the worker's count of
    /// active slots is then down by one): the slot lets its connection go.
    pub fn wake(&mut self, ctx: &mut Ctx, event: Event, now: Instant) -> bool {
        let live = self.live;
        match event {
            Event::Timer(_) => {
                for k in 0..self.lanes.len() {
                    if matches!(self.lanes[k].phase, LanePhase::Waiting(at) if at <= now) {
                        self.begin(ctx, k, now);
                    }
                }
            }
            Event::Dequeued => {
                self.queued = false;
                let parked = LanePhase::Waiting(ctx.parked_at());
                for k in 0..self.lanes.len() {
                    if self.lanes[k].phase == LanePhase::Queued || self.lanes[k].phase == parked {
                        self.begin(ctx, k, now);
                    }
                }
            }
            Event::RunEnded => {
                for k in 0..self.lanes.len() {
                    if matches!(self.lanes[k].phase, LanePhase::Waiting(_) | LanePhase::Queued) {
                        self.done(ctx, k);
                    }
                }
            }
            Event::Io { .. } | Event::Sweep => {}
        }
        live > 0 && self.live == 0
    }

    /// Lane `k` draws its next request, or is done.
    fn begin(&mut self, ctx: &mut Ctx, k: usize, now: Instant) {
        if ctx.pages.is_some() {
            return self.begin_page(ctx, k, now);
        }
        if !self.lanes[k].begin(ctx, now) {
            self.done(ctx, k);
        }
    }

    /// A page load's lane: its client's next request, its think time, or
    /// parked until an answer on the connection gives it work.
    fn begin_page(&mut self, ctx: &mut Ctx, k: usize, now: Instant) {
        if ctx.end.is_some_and(|end| now >= end) {
            return self.done(ctx, k);
        }
        match ctx.page_next_for_lane(self.who.token, k, now) {
            Next::Send(entry) => self.lanes[k].begin_entry(ctx, entry, now),
            Next::At(at) => {
                self.lanes[k].phase = LanePhase::Waiting(at);
                ctx.wakeups.push(std::cmp::Reverse((at, self.who.token)));
            }
            Next::Park => self.lanes[k].phase = LanePhase::Waiting(ctx.parked_at()),
        }
    }

    fn done(&mut self, ctx: &mut Ctx, k: usize) {
        self.lanes[k].phase = LanePhase::Done;
        self.live -= 1;
        if self.live == 0 {
            ctx.active -= 1;
        }
    }

    /// Fails every request past its deadline as `awaited` says (what the
    /// connection was doing: a response, or its handshake), calling
    /// `cancel(k)` first for a lane whose stream is open.
    pub fn sweep(&mut self, ctx: &mut Ctx, now: Instant, awaited: Awaited, mut cancel: impl FnMut(u32)) {
        for k in 0..self.lanes.len() {
            let lane = &self.lanes[k];
            if matches!(lane.phase, LanePhase::Pending | LanePhase::InFlight) && now >= lane.x.deadline {
                if lane.phase == LanePhase::InFlight {
                    cancel(k as u32);
                }
                self.fail(ctx, k, now, awaited.kind(), &awaited.message(ctx.plan.timeout));
            }
        }
    }

    /// Lane `k`'s request failed with `kind`.
    pub fn fail(&mut self, ctx: &mut Ctx, k: usize, now: Instant, kind: ErrorKind, message: &dyn std::fmt::Display) {
        self.lanes[k].fail(ctx, self.who, now, kind, message);
        self.queue_ready(ctx);
    }

    /// The connection failed: every request drawn on it (sent or waiting to be) fails with `kind`.
    pub fn fail_all(&mut self, ctx: &mut Ctx, now: Instant, kind: ErrorKind, message: &dyn std::fmt::Display) {
        for k in 0..self.lanes.len() {
            if matches!(self.lanes[k].phase, LanePhase::Pending | LanePhase::InFlight) {
                self.lanes[k].fail(ctx, self.who, now, kind, message);
            }
        }
        self.queue_ready(ctx);
    }

    /// Puts the slot on the worker's ready list if a lane is queued.
    pub fn queue_ready(&mut self, ctx: &mut Ctx) {
        if !self.queued && self.any(LanePhase::Queued) {
            self.queued = true;
            ctx.ready.push(self.who.token);
        }
    }
}

impl Index<usize> for Lanes {
    type Output = Lane;

    fn index(&self, k: usize) -> &Lane {
        &self.lanes[k]
    }
}

impl IndexMut<usize> for Lanes {
    fn index_mut(&mut self, k: usize) -> &mut Lane {
        &mut self.lanes[k]
    }
}
