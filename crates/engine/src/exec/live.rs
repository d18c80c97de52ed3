//! Live progress: each worker publishes its running totals with relaxed
//! stores into its own cache line; readers sum them. No locks, and a
//! worker never waits for a reader.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::results::stats::Stats;

/// One worker's published totals.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct LiveCounters {
    requests: AtomicU64,
    errors: AtomicU64,
    bytes: AtomicU64,
    connections_opened: AtomicU64,
}

impl LiveCounters {
    /// Called by the owning worker only, so stores never race.
    pub(crate) fn publish(&self, stats: &Stats) {
        self.requests.store(stats.requests, Relaxed);
        self.errors.store(stats.error_total(), Relaxed);
        self.bytes.store(stats.bytes, Relaxed);
        self.connections_opened.store(stats.connections_opened, Relaxed);
    }
}

/// Totals of a run in progress.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct LiveSnapshot {
    /// Seconds since the run's start (0 before it).
    pub elapsed_s: f64,
    /// Successful responses so far.
    pub requests: u64,
    /// Failed requests so far.
    pub errors: u64,
    /// Bytes received so far.
    pub bytes: u64,
    /// Connections established so far.
    pub connections_opened: u64,
}

impl LiveSnapshot {
    pub(crate) fn sum<'a>(elapsed_s: f64, workers: impl Iterator<Item = &'a LiveCounters>) -> Self {
        let mut s = Self { elapsed_s, ..Self::default() };
        for w in workers {
            s.requests += w.requests.load(Relaxed);
            s.errors += w.errors.load(Relaxed);
            s.bytes += w.bytes.load(Relaxed);
            s.connections_opened += w.connections_opened.load(Relaxed);
        }
        s
    }
}
