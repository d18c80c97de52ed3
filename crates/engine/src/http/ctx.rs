//! What a worker shares with its connections, and what it tells them: the
//! vocabulary below every slot kind (`h1slot`, `h2slot`, `h3slot`, their
//! `lane`s and `dial`). Holds no connection and drives none; a slot kind
//! must not reach into another for these.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::Registry;
use rustls::ClientConfig;

use super::plan::Plan;
use super::select::Selector;
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
    pub pages: Option<super::page::PageLoads>,
}

impl Ctx {
    pub(crate) fn offset(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.origin)
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
