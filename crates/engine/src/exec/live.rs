//! Live progress: each worker publishes its running totals with relaxed
//! stores into its own cache lines; readers sum them. No locks, and a
//! worker never waits for a reader.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::Serialize;

use crate::error::ErrorKind;
use crate::results::stats::{Stats, LIVE_LATENCY_BUCKETS};

/// One worker's published totals.
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct LiveCounters {
    requests: AtomicU64,
    errors: AtomicU64,
    bytes: AtomicU64,
    connections_opened: AtomicU64,
    // The live tally (whole run, ramps included).
    completed: AtomicU64,
    received: AtomicU64,
    failed: [AtomicU64; ErrorKind::COUNT],
    latency: [AtomicU64; LIVE_LATENCY_BUCKETS],
}

impl Default for LiveCounters {
    fn default() -> Self {
        Self {
            requests: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            connections_opened: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            received: AtomicU64::new(0),
            failed: std::array::from_fn(|_| AtomicU64::new(0)),
            latency: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl LiveCounters {
    /// Called by the owning worker only, so stores never race.
    pub(crate) fn publish(&self, stats: &Stats) {
        self.requests.store(stats.requests, Relaxed);
        self.errors.store(stats.error_total(), Relaxed);
        self.bytes.store(stats.bytes, Relaxed);
        self.connections_opened.store(stats.connections_opened, Relaxed);
        let tally = &stats.live;
        // The histogram changes only with a success: most passes of a busy loop store one word, not 64.
        if self.completed.load(Relaxed) != tally.requests {
            for (slot, &n) in self.latency.iter().zip(tally.latency.iter()) {
                slot.store(n, Relaxed);
            }
            self.completed.store(tally.requests, Relaxed);
        }
        self.received.store(tally.received, Relaxed);
        for (slot, &n) in self.failed.iter().zip(tally.errors.iter()) {
            slot.store(n, Relaxed);
        }
    }
}

/// Totals of a run in progress.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LiveSnapshot {
    /// Seconds since the run's start (0 before it).
    pub elapsed_s: f64,
    /// Successful responses so far, inside the measured window.
    pub requests: u64,
    /// Failed requests so far, inside the measured window.
    pub errors: u64,
    /// Bytes received so far.
    pub bytes: u64,
    /// Connections established so far.
    pub connections_opened: u64,
    /// Successes over the whole run so far, ramps included.
    pub completed: u64,
    /// Bytes received over the whole run so far.
    pub received: u64,
    /// Failures over the whole run so far by `ErrorKind::index()`.
    pub failed: [u64; ErrorKind::COUNT],
    /// The successes' latencies by `live_latency_bucket` (whole run).
    #[serde(skip)]
    pub latency: [u64; LIVE_LATENCY_BUCKETS],
}

impl Default for LiveSnapshot {
    fn default() -> Self {
        Self {
            elapsed_s: 0.0,
            requests: 0,
            errors: 0,
            bytes: 0,
            connections_opened: 0,
            completed: 0,
            received: 0,
            failed: [0; ErrorKind::COUNT],
            latency: [0; LIVE_LATENCY_BUCKETS],
        }
    }
}

impl LiveSnapshot {
    pub(crate) fn sum<'a>(elapsed_s: f64, workers: impl Iterator<Item = &'a LiveCounters>) -> Self {
        let mut s = Self { elapsed_s, ..Self::default() };
        for w in workers {
            s.requests += w.requests.load(Relaxed);
            s.errors += w.errors.load(Relaxed);
            s.bytes += w.bytes.load(Relaxed);
            s.connections_opened += w.connections_opened.load(Relaxed);
            s.completed += w.completed.load(Relaxed);
            s.received += w.received.load(Relaxed);
            for (sum, slot) in s.failed.iter_mut().zip(w.failed.iter()) {
                *sum += slot.load(Relaxed);
            }
            for (sum, slot) in s.latency.iter_mut().zip(w.latency.iter()) {
                *sum += slot.load(Relaxed);
            }
        }
        s
    }
}
