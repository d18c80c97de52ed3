//! What a worker records: latencies, counters, status codes, errors, per
//! request class and per client, and a per-second timeline. Allocated once
//! per worker; recording never allocates (but for a first error message).
//! `merge` combines workers exactly, `merge_at` machines (each holding its
//! own range of clients); `crate::results::part` carries them between machines.
//!
//! With a window set, everything but the timeline counts only events inside
//! [start, end) from the run's start, so ramps are cut exactly.

pub mod h2;
mod histogram;
mod tally;
mod timeline;
mod tls;

use std::time::Duration;

pub(crate) use histogram::SlotCounts;
pub use histogram::{new_histogram, summarize, LatencySummary};
pub use tally::{live_latency_bucket, live_latency_lower_us, LiveTally, LIVE_LATENCY_BUCKETS};
pub use timeline::{Bucket, Timeline};
pub use tls::{cipher_name, protocol_name, Negotiated, NegotiatedCount};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;

/// Status codes are counted in a flat array indexed by code; larger codes count as the last.
const STATUS_SLOTS: usize = 600;

/// Counts of one request class.
#[derive(Debug, Clone)]
pub struct ClassStats {
    /// Successful responses.
    pub requests: u64,
    /// Bytes of successful responses (head + body).
    pub bytes: u64,
    /// Failed requests of this class, any kind.
    pub errors: u64,
    /// Latency of successful responses, µs.
    pub latency_us: Histogram<u64>,
}

/// A client's score (WebBench): what its connections achieved together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientScore {
    /// Successful responses.
    pub requests: u64,
    /// Bytes of successful responses.
    pub bytes: u64,
    /// Failed requests.
    pub errors: u64,
    /// Time its connections' lines were busy, µs: for each completion counted,
    /// from its exchange's begin to the later of the completion and the time
    /// line-speed pacing allows the next exchange (`slot::record_active`).
    /// With one connection per client, 8 × bytes ÷ this is the connection's
    /// bit rate (SPECweb99's conformance, reference §3.4).
    #[serde(default)]
    pub active_us: u64,
    /// Successful responses per class (only with `specweb99`; else empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub class_requests: Vec<u64>,
    /// Failed requests per class (only with `specweb99`; else empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub class_errors: Vec<u64>,
}

impl ClientScore {
    /// Adds `other` into `self`, per-class counts element by element.
    fn add(&mut self, other: &ClientScore) {
        self.requests += other.requests;
        self.bytes += other.bytes;
        self.errors += other.errors;
        self.active_us += other.active_us;
        add_counts(&mut self.class_requests, &other.class_requests);
        add_counts(&mut self.class_errors, &other.class_errors);
    }
}

fn add_counts(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// One completed response, as the slot saw it.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    /// Offset from the run's start.
    pub at: Duration,
    /// Status code.
    pub status: u16,
    /// Head plus body bytes.
    pub bytes: u64,
    /// Body bytes after transfer decoding.
    pub body_bytes: u64,
    /// From intended send (open loop) or first byte written (closed loop).
    pub latency: Duration,
    /// Request class index.
    pub class: usize,
    /// Client index.
    pub client: usize,
}

/// Counters and histograms of one worker, or of several merged.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Request latency in µs.
    pub latency_us: Histogram<u64>,
    /// TCP connect time in µs.
    pub connect_us: Histogram<u64>,
    /// TLS handshake time in µs (after the TCP connect).
    pub tls_handshake_us: Histogram<u64>,
    /// Complete responses with status 2xx or 3xx that passed validation.
    pub requests: u64,
    /// Complete responses of any status.
    pub responses: u64,
    /// Bytes received: heads plus bodies as sent (after TLS, before chunk decoding).
    pub bytes: u64,
    /// Body bytes of successful responses, after transfer decoding.
    pub body_bytes: u64,
    /// TCP connections established.
    pub connections_opened: u64,
    /// Reads that returned response bytes (not counted by window: a
    /// diagnostic of how the read buffer splits responses, not a result).
    pub reads: u64,
    /// The most bytes a single read returned; never above the read buffer.
    pub largest_read_bytes: u64,
    /// Naps the worker took instead of blocking (see `nap`; whole run).
    pub naps: u64,
    /// TLS handshakes completed.
    pub tls_handshakes: u64,
    /// Of those, handshakes that resumed a session.
    pub tls_resumed: u64,
    /// What those handshakes negotiated: protocol version and cipher suite.
    pub tls_negotiated: Negotiated,
    /// Failed requests by `ErrorKind::index()`.
    pub errors: [u64; ErrorKind::COUNT],
    /// Connects refused locally for want of a port (EADDRNOTAVAIL).
    pub addr_not_available: u64,
    /// First error message seen per kind, for the report's notes.
    pub first_error: [Option<String>; ErrorKind::COUNT],
    /// Per request class.
    pub classes: Vec<ClassStats>,
    /// Per client.
    pub clients: Vec<ClientScore>,
    /// Requests begun per class over the whole run (not windowed: SPECweb99's
    /// POST-log check needs every POST sent).
    pub issued: Vec<u64>,
    pub(crate) status: Box<[u64; STATUS_SLOTS]>,
    /// Per-second counts from the run's start (not windowed).
    pub timeline: Timeline,
    /// HTTP/2's figures (zero for HTTP/1.x).
    pub h2: h2::H2Counters,
    /// What a watcher sees while the run goes on (whole run, not windowed; never merged).
    pub live: Box<LiveTally>,
    window: Option<(Duration, Duration)>,
}

impl Stats {
    /// Empty stats for `classes` classes and `clients` clients, with room
    /// for a run of `expected` length, counting only inside `window`.
    pub fn new(
        expected: Option<Duration>,
        classes: usize,
        clients: usize,
        window: Option<(Duration, Duration)>,
    ) -> Self {
        Self {
            latency_us: new_histogram(),
            connect_us: new_histogram(),
            tls_handshake_us: new_histogram(),
            requests: 0,
            responses: 0,
            bytes: 0,
            body_bytes: 0,
            connections_opened: 0,
            reads: 0,
            naps: 0,
            largest_read_bytes: 0,
            tls_handshakes: 0,
            tls_resumed: 0,
            tls_negotiated: Negotiated::default(),
            errors: [0; ErrorKind::COUNT],
            addr_not_available: 0,
            first_error: Default::default(),
            classes: (0..classes.max(1))
                .map(|_| ClassStats { requests: 0, bytes: 0, errors: 0, latency_us: new_histogram() })
                .collect(),
            clients: vec![ClientScore::default(); clients.max(1)],
            issued: vec![0; classes.max(1)],
            status: Box::new([0; STATUS_SLOTS]),
            timeline: Timeline::new(expected),
            h2: h2::H2Counters::default(),
            live: Box::default(),
            window,
        }
    }

    /// Counts requests per class per client too (SPECweb99's per-connection
    /// checks); sized here, once, so recording never allocates.
    pub fn with_client_classes(mut self) -> Self {
        let classes = self.classes.len();
        for client in &mut self.clients {
            client.class_requests = vec![0; classes];
            client.class_errors = vec![0; classes];
        }
        self
    }

    fn in_window(&self, at: Duration) -> bool {
        self.window.is_none_or(|(start, end)| at >= start && at < end)
    }

    /// A complete response that passed framing; judged by status here.
    pub fn record_response(&mut self, c: &Completion) {
        self.record_judged(c, (200..400).contains(&c.status), None);
    }

    /// A complete response whose status the caller judged (`success`: the
    /// status a replay expects, which may be a 404); a failure is a status
    /// error, with `why` as its message when given.
    pub fn record_judged(&mut self, c: &Completion, success: bool, why: Option<&dyn std::fmt::Display>) {
        if !success {
            self.record_error(c.at, ErrorKind::Status, c.class, c.client, why);
            if self.in_window(c.at) {
                self.responses += 1;
                self.status[usize::from(c.status).min(STATUS_SLOTS - 1)] += 1;
            }
            return;
        }
        self.timeline.at(c.at.as_secs() as usize).requests += 1;
        self.live.success(micros(c.latency));
        if !self.in_window(c.at) {
            return;
        }
        self.status[usize::from(c.status).min(STATUS_SLOTS - 1)] += 1;
        self.body_bytes += c.body_bytes;
        self.count_success(c.class, c.client, c.latency, c.bytes);
    }

    /// A file operation of `class` that did what its loadfile line expects,
    /// completed at `at` after `latency`, moving `bytes` data bytes (which
    /// the caller also records with `record_bytes`). No status code: the
    /// status counts are HTTP's.
    pub fn record_operation(&mut self, at: Duration, class: usize, client: usize, latency: Duration, bytes: u64) {
        self.timeline.at(at.as_secs() as usize).requests += 1;
        self.live.success(micros(latency));
        if self.in_window(at) {
            self.count_success(class, client, latency, bytes);
        }
    }

    /// One success inside the window, HTTP response or file operation alike.
    fn count_success(&mut self, class: usize, client: usize, latency: Duration, bytes: u64) {
        self.responses += 1;
        self.requests += 1;
        let us = micros(latency);
        self.latency_us.saturating_record(us);
        let stats = &mut self.classes[class];
        stats.requests += 1;
        stats.bytes += bytes;
        stats.latency_us.saturating_record(us);
        let score = &mut self.clients[client];
        score.requests += 1;
        score.bytes += bytes;
        if let Some(n) = score.class_requests.get_mut(class) {
            *n += 1;
        }
    }

    /// `n` requests of `class` begun (whenever: not windowed).
    pub fn record_issued(&mut self, class: usize, n: u32) {
        self.issued[class] += u64::from(n);
    }

    /// A connection of `client` was active for `us` µs up to a completion
    /// at `at` (the caller takes differences of whole µs since the start, so
    /// a connection's sum is exact).
    pub fn record_active(&mut self, at: Duration, client: usize, us: u64) {
        if self.in_window(at) {
            self.clients[client].active_us += us;
        }
    }

    /// Bytes read from a connection at offset `at`.
    pub fn record_bytes(&mut self, at: Duration, n: u64) {
        self.timeline.at(at.as_secs() as usize).bytes += n;
        self.live.received += n;
        if self.in_window(at) {
            self.bytes += n;
        }
    }

    /// One read returned `n` bytes.
    pub fn record_read(&mut self, n: usize) {
        self.reads += 1;
        self.largest_read_bytes = self.largest_read_bytes.max(n as u64);
    }

    /// A failed request; `message` is kept only for the first of its kind.
    pub fn record_error(
        &mut self,
        at: Duration,
        kind: ErrorKind,
        class: usize,
        client: usize,
        message: Option<&dyn std::fmt::Display>,
    ) {
        self.timeline.at(at.as_secs() as usize).errors += 1;
        self.live.failure(kind);
        if !self.in_window(at) {
            return;
        }
        self.errors[kind.index()] += 1;
        self.classes[class].errors += 1;
        let score = &mut self.clients[client];
        score.errors += 1;
        if let Some(n) = score.class_errors.get_mut(class) {
            *n += 1;
        }
        if let (None, Some(m)) = (&self.first_error[kind.index()], message) {
            self.first_error[kind.index()] = Some(m.to_string());
        }
    }

    /// A TCP connection established after `elapsed`.
    pub fn record_connect(&mut self, elapsed: Duration) {
        self.connections_opened += 1;
        self.connect_us.saturating_record(micros(elapsed));
    }

    /// A TLS handshake completed after `elapsed`, having negotiated `negotiated` (protocol, cipher suite).
    pub fn record_tls_handshake(
        &mut self,
        elapsed: Duration,
        resumed: bool,
        negotiated: (Option<rustls::ProtocolVersion>, Option<rustls::CipherSuite>),
    ) {
        self.tls_handshakes += 1;
        self.tls_resumed += u64::from(resumed);
        self.tls_negotiated.record(negotiated.0, negotiated.1);
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

    /// Adds `other` into `self`; exact for every field. Both hold the same
    /// clients (the workers of one run).
    pub fn merge(&mut self, other: &Stats) {
        self.merge_at(other, 0);
    }

    /// Adds `other` into `self` with its client `i` counted as client
    /// `first_client + i` (another machine's share of the clients); the
    /// clients grow to hold them. Exact for every field; a first error
    /// message already held is kept.
    pub fn merge_at(&mut self, other: &Stats, first_client: usize) {
        // Histograms share bounds (all built by new_histogram), so adding cannot fail.
        let add = |a: &mut Histogram<u64>, b: &Histogram<u64>| a.add(b).expect("invariant: same histogram bounds");
        add(&mut self.latency_us, &other.latency_us);
        add(&mut self.connect_us, &other.connect_us);
        add(&mut self.tls_handshake_us, &other.tls_handshake_us);
        self.requests += other.requests;
        self.responses += other.responses;
        self.bytes += other.bytes;
        self.body_bytes += other.body_bytes;
        self.connections_opened += other.connections_opened;
        self.reads += other.reads;
        self.naps += other.naps;
        self.largest_read_bytes = self.largest_read_bytes.max(other.largest_read_bytes);
        self.tls_handshakes += other.tls_handshakes;
        self.tls_resumed += other.tls_resumed;
        self.tls_negotiated.merge(&other.tls_negotiated);
        self.addr_not_available += other.addr_not_available;
        for i in 0..ErrorKind::COUNT {
            self.errors[i] += other.errors[i];
            if self.first_error[i].is_none() {
                self.first_error[i].clone_from(&other.first_error[i]);
            }
        }
        for (a, b) in self.classes.iter_mut().zip(&other.classes) {
            a.requests += b.requests;
            a.bytes += b.bytes;
            a.errors += b.errors;
            add(&mut a.latency_us, &b.latency_us);
        }
        let end = first_client + other.clients.len();
        if self.clients.len() < end {
            self.clients.resize(end, ClientScore::default());
        }
        for (a, b) in self.clients[first_client..].iter_mut().zip(&other.clients) {
            a.add(b);
        }
        add_counts(&mut self.issued, &other.issued);
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        self.timeline.merge(&other.timeline);
        self.h2.merge(&other.h2);
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}
