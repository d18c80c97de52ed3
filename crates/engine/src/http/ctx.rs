//! What a worker shares with its connections, and what it tells them: the
//! vocabulary below every slot kind (`h1slot`, `h2slot`, `h3slot`, their
//! `lane`s and `dial`). Holds no connection and drives none; a slot kind
//! must not reach into another for these.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::Registry;
use rustls::ClientConfig;

use super::page::{self, Next, PageLoads};
use super::plan::Plan;
use super::select::{Batch, Due, Selector};
use crate::exec::nap::Nap;
use crate::results::stats::Stats;

/// Pause after a failed connect so a dead target is not hammered in a spin.
pub(crate) const CONNECT_BACKOFF: Duration = Duration::from_millis(10);

/// What a worker shares with its slots: one per worker thread.
pub(crate) struct Ctx {
    pub plan: Arc<Plan>,
    pub stats: Stats,
    /// The worker's read buffer (`Plan::read_buffer_bytes`): every read of
    /// every slot goes here and is parsed out at once.
    pub scratch: Box<[u8]>,
    /// HTTP/3: where the worker's sessions copy what they hand quinn-proto.
    pub quic_buffers: crate::protocol::h3::Buffers,
    pub registry: Registry,
    pub tls: Option<Arc<ClientConfig>>,
    /// HTTP/3: the worker's QUIC client configuration (TLS 1.3, ALPN h3).
    pub quic: Option<quinn_proto::ClientConfig>,
    pub origin: Instant,
    /// When the run ends (None: by quota or cancel only).
    pub end: Option<Instant>,
    /// Which request each exchange sends, within the worker's quota.
    pub selector: Selector,
    /// Slots not yet `Done`.
    pub active: usize,
    /// Slots to begin their next exchange after this batch of events
    /// (preallocated: one entry per slot at most).
    pub ready: Vec<usize>,
    /// Slots waiting for a time: (wake time, slot index). At most one live
    /// entry per slot; a stale one is recognised by its time.
    pub wakeups: std::collections::BinaryHeap<std::cmp::Reverse<(Instant, usize)>>,
    /// The worker's recent responses, which say whether it may nap.
    pub nap: Nap,
    /// A HAR's page loads: the worker's clients as browsers.
    pub pages: Option<PageLoads>,
}

impl Ctx {
    pub(crate) fn offset(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.origin)
    }

    /// When a parked page-load place would wake if nothing woke it: a
    /// sentinel, never reached in a run.
    pub(crate) fn parked_at(&self) -> Instant {
        self.origin + page::PARKED_FOR
    }

    /// What HTTP/1 connection `token` of a page load sends next (its
    /// client's places are its consecutive connections), as a slot's draw
    /// says it: a request now, or `Err` of when to ask again (`parked_at`:
    /// when a sibling's answer queues it).
    pub(crate) fn page_draw(&mut self, token: usize, now: Instant) -> Result<Option<Batch>, Instant> {
        let per_client = self.plan.connections_per_client.max(1) as usize;
        let parked = self.parked_at();
        let (Some(loads), Some(pages)) = (&mut self.pages, &self.plan.pages) else { return Ok(None) };
        match loads.next(pages, token / per_client, token % per_client, now) {
            Next::Send(entry) => {
                Ok(Some(Batch { entry, requests: 1, due: Due::Now, new_session: false, session_ends: false }))
            }
            Next::At(at) => Err(at),
            Next::Park => Err(parked),
        }
    }

    /// HTTP/1 connection `token`'s page request ended (`ok`: as expected):
    /// a loaded page is recorded, and the connections its answer gives work
    /// are queued.
    pub(crate) fn page_answered(&mut self, token: usize, ok: bool, now: Instant) {
        let per_client = self.plan.connections_per_client.max(1) as usize;
        let at = self.offset(now);
        let (Some(loads), Some(pages)) = (&mut self.pages, &self.plan.pages) else { return };
        let client = token / per_client;
        let done = loads.answered(pages, client, ok, now);
        if let Some(loaded) = done.loaded {
            page::record(&mut self.stats, self.plan.window, at, loaded);
        }
        self.ready.extend(done.woken().map(|place| client * per_client + place));
    }

    /// What lane `lane` of multiplexed connection `token` (a client of its
    /// own) sends next.
    pub(crate) fn page_next_for_lane(&mut self, token: usize, lane: usize, now: Instant) -> Next {
        match (&mut self.pages, &self.plan.pages) {
            (Some(loads), Some(pages)) => loads.next(pages, token, lane, now),
            _ => Next::Park,
        }
    }

    /// A lane's page request on connection `token` ended: a loaded page is
    /// recorded; `true` when parked lanes of the connection have work.
    pub(crate) fn page_answered_on_lane(&mut self, token: usize, ok: bool, now: Instant) -> bool {
        let at = self.offset(now);
        let (Some(loads), Some(pages)) = (&mut self.pages, &self.plan.pages) else { return false };
        let done = loads.answered(pages, token, ok, now);
        if let Some(loaded) = done.loaded {
            page::record(&mut self.stats, self.plan.window, at, loaded);
        }
        done.wake != 0
    }
}

/// What the worker tells a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The event loop reported readiness on the slot's socket.
    Io { readable: bool, writable: bool, read_closed: bool },
    /// A wake-up time the slot asked for (through `Ctx::wakeups`) has come.
    Timer(Instant),
    /// The batch of events during which the slot queued itself is handled.
    Dequeued,
    /// The worker's periodic sweep: an exchange past its deadline fails.
    Sweep,
    /// The run has ended: a slot waiting to begin its next exchange never will.
    RunEnded,
}

/// Whole µs from `origin` to `at`.
pub(crate) fn micros_between(origin: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(origin).as_micros()).unwrap_or(u64::MAX)
}
