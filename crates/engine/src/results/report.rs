//! `RunReport`: the merged result of a run in the shape that crosses the
//! binding (serde) and is stored. It is built in one place, `RunReport::new`,
//! from merged `Stats` plus `RunFacts` (what the report needs to know of the
//! run: from the HTTP or file plan for a local run, from the parts for a cluster's).
//! Rates are computed here, once; the merged `Stats` stay available to Rust
//! callers that merge further, and `part` carries them to other machines.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;
pub use crate::results::stats::LatencySummary;
use crate::results::stats::{cipher_name, protocol_name, summarize, Stats};

/// One second of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineEntry {
    /// Whole seconds since the start.
    pub second: usize,
    /// Successful responses.
    pub requests: u64,
    /// Failed requests.
    pub errors: u64,
    /// Bytes received.
    pub bytes: u64,
}

/// One request class's results.
#[derive(Debug, Clone, Serialize)]
pub struct ClassReport {
    /// Successful responses.
    pub requests: u64,
    /// Bytes of successful responses.
    pub bytes: u64,
    /// Failed requests.
    pub errors: u64,
    /// `requests / window_s`.
    pub rps: f64,
    /// `bytes / window_s`.
    #[serde(rename = "throughput_Bps")]
    pub throughput_bps: f64,
    /// Latency of successful responses.
    pub latency_us: LatencySummary,
}

/// One client's score (WebBench).
#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    /// Client index.
    pub client: usize,
    /// Successful responses.
    pub requests: u64,
    /// Bytes of successful responses.
    pub bytes: u64,
    /// Failed requests.
    pub errors: u64,
    /// `requests / window_s`.
    pub rps: f64,
    /// `bytes / window_s`.
    #[serde(rename = "throughput_Bps")]
    pub throughput_bps: f64,
    /// Time its connections were active, µs (see `ClientScore::active_us`):
    /// 8 × bytes ÷ this is a single connection's bit rate.
    pub active_us: u64,
    /// Successful responses per class, aligned with the run's classes (only with `specweb99`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub class_requests: Vec<u64>,
    /// Failed requests per class, aligned with the run's classes (only with `specweb99`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub class_errors: Vec<u64>,
}

/// Handshakes that negotiated one protocol version and cipher suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsNegotiation {
    /// Protocol version, e.g. "TLSv1.3"; "other" for handshakes not told apart.
    pub protocol: String,
    /// IANA cipher suite name, e.g. "TLS_AES_128_GCM_SHA256"; "other" as above.
    pub cipher: String,
    /// Handshakes that negotiated it.
    pub handshakes: u64,
}

fn negotiations(stats: &Stats) -> Vec<TlsNegotiation> {
    let n = &stats.tls_negotiated;
    let mut out: Vec<TlsNegotiation> = n
        .counts()
        .map(|c| TlsNegotiation {
            protocol: protocol_name(c.protocol),
            cipher: cipher_name(c.cipher),
            handshakes: c.handshakes,
        })
        .collect();
    if n.other() > 0 {
        out.push(TlsNegotiation { protocol: "other".into(), cipher: "other".into(), handshakes: n.other() });
    }
    out
}

/// The result of one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// Successful (2xx/3xx) complete responses.
    pub requests: u64,
    /// Complete responses of any status.
    pub responses: u64,
    /// Failed requests by kind.
    pub errors: BTreeMap<&'static str, u64>,
    /// Explanations of what went wrong, for people.
    pub error_notes: Vec<String>,
    /// Length of the run, seconds.
    pub duration_s: f64,
    /// Seconds over which counts and rates are measured: the window's
    /// length (cut short by a cancel), or the whole run without one.
    pub window_s: f64,
    /// `requests / window_s`.
    pub rps: f64,
    /// Bytes received (heads + bodies).
    pub bytes: u64,
    /// Body bytes of complete responses.
    pub body_bytes: u64,
    /// `bytes / window_s`.
    #[serde(rename = "throughput_Bps")]
    pub throughput_bps: f64,
    /// Per request class, by name.
    pub classes: BTreeMap<String, ClassReport>,
    /// Per client, in client order.
    pub clients: Vec<ClientReport>,
    /// Requests begun per class over the whole run, window or not.
    pub issued_by_class: BTreeMap<String, u64>,
    /// Latency of successful requests.
    pub latency_us: LatencySummary,
    /// Responses by status code.
    pub status: BTreeMap<String, u64>,
    /// TCP connections established.
    pub connections_opened: u64,
    /// TCP connect time.
    pub connect_us: LatencySummary,
    /// TLS handshakes completed.
    pub tls_handshakes: u64,
    /// Of those, resumed sessions.
    pub tls_resumed: u64,
    /// What the handshakes negotiated, one entry per (protocol, cipher suite) in the order first seen.
    pub tls_negotiated: Vec<TlsNegotiation>,
    /// TLS handshake time.
    pub tls_handshake_us: LatencySummary,
    /// HTTP/2's figures; absent for HTTP/1.x runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h2: Option<crate::results::stats::h2::H2Counters>,
    /// Per-second counts.
    pub timeline: Vec<TimelineEntry>,
    /// The latency histogram, HdrHistogram V2 + deflate, base64: merge it exactly.
    pub histogram_b64: String,
    /// CPU time the engine's worker threads used.
    pub client_cpu_s: f64,
    /// Naps the worker threads took instead of blocking on their sockets (`RunConfig::nap`).
    pub naps: u64,
    /// Worker threads.
    pub threads: u32,
    /// Connections.
    pub connections: u32,
    /// Stopped by a cancel.
    pub cancelled: bool,
    /// Latency counted from intended send times.
    pub open_loop: bool,
    /// Intended total rate (open loop).
    pub rate_rps: Option<f64>,
    /// The run's results in `crate::results::part`'s wire form (JSON), for merging
    /// with other machines' exactly; only when `RunConfig::report_part` asks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// The merged raw stats.
    #[serde(skip)]
    pub stats: Stats,
}

/// What a report needs to know of the run besides its `Stats`: the plan's
/// facts for a local run, the merged ones for a cluster's. Travels in a part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFacts {
    /// Class names, by class index.
    pub classes: Vec<String>,
    /// Offsets from the start between which completions are counted.
    #[serde(rename = "window_ns", with = "window_ns")]
    pub window: Option<(Duration, Duration)>,
    /// Run length, if bounded by time.
    #[serde(rename = "duration_ns", with = "duration_ns")]
    pub duration: Option<Duration>,
    /// Intended total rate of an open loop; None for a closed loop.
    pub rate_rps: Option<f64>,
    /// Worker threads.
    pub threads: u32,
    /// Connections.
    pub connections: u32,
}

/// Whole nanoseconds, saturating past 584 years.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

mod duration_ns {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        d.map(super::nanos).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_nanos))
    }
}

mod window_ns {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(w: &Option<(Duration, Duration)>, s: S) -> Result<S::Ok, S::Error> {
        w.map(|(start, end)| [super::nanos(start), super::nanos(end)]).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<(Duration, Duration)>, D::Error> {
        Ok(Option::<[u64; 2]>::deserialize(d)?
            .map(|[start, end]| (Duration::from_nanos(start), Duration::from_nanos(end))))
    }
}

impl RunReport {
    /// The report of `stats`, gathered over `elapsed` by a run with `facts`
    /// whose workers used `cpu`; the one constructor of local and merged
    /// reports. `part` is left out.
    pub fn new(stats: Stats, facts: &RunFacts, elapsed: Duration, cpu: Duration, cancelled: bool) -> Self {
        let window = match facts.window {
            // Drained completions count in a window that reaches past the end,
            // but the seconds measured stop at the end: nothing was sent after it.
            Some((start, end)) => end.min(facts.duration.unwrap_or(elapsed)).min(elapsed).saturating_sub(start),
            None => elapsed,
        };
        let secs = window.as_secs_f64();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        Self {
            requests: stats.requests,
            responses: stats.responses,
            errors: ErrorKind::ALL.iter().map(|k| (k.name(), stats.errors[k.index()])).collect(),
            error_notes: notes(&stats),
            duration_s: elapsed.as_secs_f64(),
            window_s: secs,
            rps: per_s(stats.requests),
            bytes: stats.bytes,
            body_bytes: stats.body_bytes,
            throughput_bps: per_s(stats.bytes),
            classes: facts
                .classes
                .iter()
                .zip(&stats.classes)
                .map(|(name, c)| {
                    let report = ClassReport {
                        requests: c.requests,
                        bytes: c.bytes,
                        errors: c.errors,
                        rps: per_s(c.requests),
                        throughput_bps: per_s(c.bytes),
                        latency_us: summarize(&c.latency_us),
                    };
                    (name.clone(), report)
                })
                .collect(),
            clients: stats
                .clients
                .iter()
                .enumerate()
                .map(|(client, c)| ClientReport {
                    client,
                    requests: c.requests,
                    bytes: c.bytes,
                    errors: c.errors,
                    rps: per_s(c.requests),
                    throughput_bps: per_s(c.bytes),
                    active_us: c.active_us,
                    class_requests: c.class_requests.clone(),
                    class_errors: c.class_errors.clone(),
                })
                .collect(),
            issued_by_class: facts.classes.iter().cloned().zip(stats.issued.iter().copied()).collect(),
            latency_us: summarize(&stats.latency_us),
            status: stats.status_counts().map(|(code, n)| (code.to_string(), n)).collect(),
            connections_opened: stats.connections_opened,
            connect_us: summarize(&stats.connect_us),
            tls_handshakes: stats.tls_handshakes,
            tls_resumed: stats.tls_resumed,
            tls_negotiated: negotiations(&stats),
            tls_handshake_us: summarize(&stats.tls_handshake_us),
            h2: (!stats.h2.is_empty()).then_some(stats.h2),
            timeline: stats
                .timeline
                .buckets()
                .iter()
                .enumerate()
                .map(|(second, b)| TimelineEntry { second, requests: b.requests, errors: b.errors, bytes: b.bytes })
                .collect(),
            histogram_b64: encode_histogram(&stats),
            client_cpu_s: cpu.as_secs_f64(),
            naps: stats.naps,
            threads: facts.threads,
            connections: facts.connections,
            cancelled,
            open_loop: facts.rate_rps.is_some(),
            rate_rps: facts.rate_rps,
            part: None,
            stats,
        }
    }
}

fn encode_histogram(stats: &Stats) -> String {
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(&stats.latency_us, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
        Err(_) => String::new(),
    }
}

fn notes(stats: &Stats) -> Vec<String> {
    let mut notes = Vec::new();
    if stats.addr_not_available > 0 {
        notes.push(format!(
            "{} connects failed with EADDRNOTAVAIL: the local ports toward this target are used up (TIME_WAIT). \
             Use keep-alive, fewer new connections per second, or spread source addresses with \
             --source-addrs 127.0.0.2-127.0.0.50 for a loopback target",
            stats.addr_not_available
        ));
    }
    for kind in ErrorKind::ALL {
        let n = stats.errors[kind.index()];
        if let (true, Some(first)) = (n > 0, &stats.first_error[kind.index()]) {
            notes.push(format!("{kind}: {n} × e.g. \"{first}\""));
        }
    }
    notes
}
