//! What a worker records: latencies, counters, status codes, errors and a
//! per-second timeline. Allocated once per worker; recording never
//! allocates. `merge` combines workers (or machines) exactly.

mod histogram;
mod timeline;

use std::time::Duration;

pub use histogram::{new_histogram, summarize, LatencySummary};
pub use timeline::{Bucket, Timeline};

use hdrhistogram::Histogram;

use crate::error::ErrorKind;

/// Status codes are counted in a flat array indexed by code.
const STATUS_SLOTS: usize = 600;

/// Counters and histograms of one worker, or of several merged.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Request latency in µs (from intended send in open loop, first byte written in closed loop).
    pub latency_us: Histogram<u64>,
    /// TCP connect time in µs.
    pub connect_us: Histogram<u64>,
    /// TLS handshake time in µs (after the TCP connect).
    pub tls_handshake_us: Histogram<u64>,
    /// Complete responses with status 2xx or 3xx.
    pub requests: u64,
    /// Complete responses of any status.
    pub responses: u64,
    /// Bytes received: heads plus bodies as sent (after TLS, before chunk decoding).
    pub bytes: u64,
    /// Body bytes after transfer decoding, of complete responses.
    pub body_bytes: u64,
    /// TCP connections established.
    pub connections_opened: u64,
    /// TLS handshakes completed.
    pub tls_handshakes: u64,
    /// Of those, handshakes that resumed a session.
    pub tls_resumed: u64,
    /// Failed requests by `ErrorKind::index()`.
    pub errors: [u64; ErrorKind::COUNT],
    /// Connects refused locally for want of a port (EADDRNOTAVAIL).
    pub addr_not_available: u64,
    /// First error message seen per kind, for the report's notes.
    pub first_error: [Option<String>; ErrorKind::COUNT],
    status: Box<[u64; STATUS_SLOTS]>,
    /// Per-second counts from the run's start.
    pub timeline: Timeline,
}

impl Stats {
    /// Empty stats with room for a run of `expected` length.
    pub fn new(expected: Option<Duration>) -> Self {
        Self {
            latency_us: new_histogram(),
            connect_us: new_histogram(),
            tls_handshake_us: new_histogram(),
            requests: 0,
            responses: 0,
            bytes: 0,
            body_bytes: 0,
            connections_opened: 0,
            tls_handshakes: 0,
            tls_resumed: 0,
            errors: [0; ErrorKind::COUNT],
            addr_not_available: 0,
            first_error: Default::default(),
            status: Box::new([0; STATUS_SLOTS]),
            timeline: Timeline::new(expected),
        }
    }

    /// A complete response `second`s into the run.
    pub fn record_response(&mut self, second: usize, status: u16, body_bytes: u64, latency: Duration) {
        self.responses += 1;
        self.status[usize::from(status).min(STATUS_SLOTS - 1)] += 1;
        if (200..400).contains(&status) {
            self.requests += 1;
            self.body_bytes += body_bytes;
            self.latency_us.saturating_record(micros(latency));
            self.timeline.at(second).requests += 1;
        } else {
            self.record_error(second, ErrorKind::Status, None);
        }
    }

    /// Bytes read from a connection `second`s into the run.
    pub fn record_bytes(&mut self, second: usize, n: u64) {
        self.bytes += n;
        self.timeline.at(second).bytes += n;
    }

    /// A failed request; `message` is kept only for the first of its kind.
    pub fn record_error(&mut self, second: usize, kind: ErrorKind, message: Option<&dyn std::fmt::Display>) {
        self.errors[kind.index()] += 1;
        self.timeline.at(second).errors += 1;
        if let (None, Some(m)) = (&self.first_error[kind.index()], message) {
            self.first_error[kind.index()] = Some(m.to_string());
        }
    }

    /// A TCP connection established after `elapsed`.
    pub fn record_connect(&mut self, elapsed: Duration) {
        self.connections_opened += 1;
        self.connect_us.saturating_record(micros(elapsed));
    }

    /// A TLS handshake completed after `elapsed`.
    pub fn record_tls_handshake(&mut self, elapsed: Duration, resumed: bool) {
        self.tls_handshakes += 1;
        self.tls_resumed += u64::from(resumed);
        self.tls_handshake_us.saturating_record(micros(elapsed));
    }

    /// Total failed requests.
    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// (status code, count) for every code seen.
    pub fn status_counts(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.status.iter().enumerate().filter(|(_, &n)| n > 0).map(|(code, &n)| (code as u16, n))
    }

    /// Adds `other` into `self`; exact for every field.
    pub fn merge(&mut self, other: &Stats) {
        // Histograms share bounds (all built by new_histogram), so adding cannot fail.
        self.latency_us.add(&other.latency_us).expect("invariant: same histogram bounds");
        self.connect_us.add(&other.connect_us).expect("invariant: same histogram bounds");
        self.tls_handshake_us.add(&other.tls_handshake_us).expect("invariant: same histogram bounds");
        self.requests += other.requests;
        self.responses += other.responses;
        self.bytes += other.bytes;
        self.body_bytes += other.body_bytes;
        self.connections_opened += other.connections_opened;
        self.tls_handshakes += other.tls_handshakes;
        self.tls_resumed += other.tls_resumed;
        self.addr_not_available += other.addr_not_available;
        for i in 0..ErrorKind::COUNT {
            self.errors[i] += other.errors[i];
            if self.first_error[i].is_none() {
                self.first_error[i].clone_from(&other.first_error[i]);
            }
        }
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        self.timeline.merge(&other.timeline);
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}
