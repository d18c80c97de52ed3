//! Parts: a run's results in a lossless, mergeable wire form, and `merge_parts`, which merges them exactly.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;
use crate::results::report::{RunFacts, RunReport};
use crate::results::stats::h2::H2Counters;
use crate::results::stats::{Bucket, ClientScore, NegotiatedCount, SlotCounts, Stats, Timeline};

/// The wire format's version; a part of another version is refused.
pub const PART_FORMAT: u32 = 1;

/// Why parts cannot be read or merged: one line, naming the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MergeError(pub String);

/// A run's results: everything its `RunReport` is built from. Each node of a
/// cluster runs the engine over its own clients (numbered from 0) with
/// `RunConfig::report_part`; its report's `part` is `to_json` of this, the
/// whole `Stats` (histograms as base64 HdrHistogram V2) with the `RunFacts`.
#[derive(Debug, Clone)]
pub struct Part {
    /// The run's merged stats, clients numbered from 0.
    pub stats: Stats,
    /// What the report needs to know of the run.
    pub facts: RunFacts,
    /// How long the run lasted.
    pub elapsed: Duration,
    /// CPU time the engine's worker threads used.
    pub cpu: Duration,
    /// Stopped by a cancel.
    pub cancelled: bool,
}

impl Part {
    /// The part's wire form.
    pub fn to_json(&self) -> String {
        let wire = Wire {
            format: PART_FORMAT,
            facts: self.facts.clone(),
            elapsed_ns: nanos(self.elapsed),
            client_cpu_ns: nanos(self.cpu),
            cancelled: self.cancelled,
            stats: StatsWire::from(&self.stats),
        };
        serde_json::to_string(&wire).expect("invariant: a part serializes (string keys, finite numbers)")
    }

    /// Reads a part's wire form, checking it whole: a malformed part is an
    /// error, never a panic or a silently different result.
    pub fn from_json(json: &str) -> Result<Self, MergeError> {
        let (mut part, histograms) = Self::decode(json)?;
        let mut sums = Sums::default();
        histograms.add_to(&mut sums, &mut Vec::new())?;
        sums.record_into(&mut part.stats);
        Ok(part)
    }

    /// The report of this part alone.
    pub fn into_report(self) -> RunReport {
        RunReport::new(self.stats, &self.facts, self.elapsed, self.cpu, self.cancelled)
    }

    /// The part with empty histograms, and its histograms still encoded.
    fn decode(json: &str) -> Result<(Self, Encoded<'_>), MergeError> {
        let wire: Wire = serde_json::from_str(json).map_err(|e| MergeError(format!("malformed part: {e}")))?;
        if wire.format != PART_FORMAT {
            return Err(MergeError(format!(
                "part format {} is not {PART_FORMAT}: the part comes from another crest version",
                wire.format
            )));
        }
        let (stats, histograms) = wire.stats.split(&wire.facts)?;
        let part = Self {
            stats,
            facts: wire.facts,
            elapsed: Duration::from_nanos(wire.elapsed_ns),
            cpu: Duration::from_nanos(wire.client_cpu_ns),
            cancelled: wire.cancelled,
        };
        Ok((part, histograms))
    }

    /// A part with nothing in it yet, to merge parts like `like` into.
    fn empty(like: &RunFacts) -> Self {
        let facts = RunFacts { threads: 0, connections: 0, rate_rps: like.rate_rps.map(|_| 0.0), ..like.clone() };
        Self {
            stats: Stats::new(None, like.classes.len(), 0, like.window),
            facts,
            elapsed: Duration::ZERO,
            cpu: Duration::ZERO,
            cancelled: false,
        }
    }

    /// Adds `other` (part `index`, clients from `first_client`) into this
    /// merge of parts from `first`. The facts of a run must agree; counts add.
    fn absorb(&mut self, other: &Part, first_client: usize, (first, index): (usize, usize)) -> Result<(), MergeError> {
        let (a, b) = (&self.facts, &other.facts);
        let differ = |what: &str, mine: String, theirs: String| {
            Err(MergeError(format!("part {index} differs from part {first} in {what}: {theirs} vs {mine}")))
        };
        if a.classes != b.classes {
            return differ("its classes", format!("{:?}", a.classes), format!("{:?}", b.classes));
        }
        if a.window != b.window {
            return differ("its window", format!("{:?}", a.window), format!("{:?}", b.window));
        }
        if a.duration != b.duration {
            return differ("its duration", format!("{:?}", a.duration), format!("{:?}", b.duration));
        }
        let model = |f: &RunFacts| if f.rate_rps.is_some() { "open loop" } else { "closed loop" }.to_string();
        if a.rate_rps.is_some() != b.rate_rps.is_some() {
            return differ("its load model", model(a), model(b));
        }
        self.stats.merge_at(&other.stats, first_client);
        let f = &mut self.facts;
        f.threads = f.threads.saturating_add(b.threads);
        f.connections = f.connections.saturating_add(b.connections);
        f.rate_rps = f.rate_rps.zip(b.rate_rps).map(|(x, y)| x + y);
        self.elapsed = self.elapsed.max(other.elapsed);
        self.cpu = self.cpu.saturating_add(other.cpu);
        self.cancelled |= other.cancelled;
        Ok(())
    }
}

/// Merges the parts of one run's nodes, each `(part JSON, first client)`: a
/// part's client `i` becomes client `first_client + i`, and the merged stats
/// hold as many clients as the highest `first_client` plus its part's
/// clients. Counts, histograms, timelines, threads, connections, CPU time and
/// open-loop rates add up; the elapsed time is the longest; cancelled if any
/// was; the first error message of a kind is the first part's that has one.
/// Class names, window, duration and load model must agree. The report is
/// the one a single engine holding every part's stats would give (no `part`).
///
/// Parts are read on up to as many threads as the machine has cores, each
/// merging its own run of consecutive parts, then merged in order.
pub fn merge_parts(parts: &[(&str, u32)]) -> Result<RunReport, MergeError> {
    if parts.is_empty() {
        return Err(MergeError("no parts to merge".into()));
    }
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(parts.len());
    if threads == 1 {
        return merge_run(parts, 0).map(Part::into_report);
    }
    let run = parts.len().div_ceil(threads);
    let merged: Vec<Result<(usize, Part), MergeError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .chunks(run)
            .enumerate()
            .map(|(i, chunk)| scope.spawn(move || merge_run(chunk, i * run).map(|part| (i * run, part))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    let mut merged = merged.into_iter();
    let (_, mut all) = merged.next().expect("invariant: at least one part")?;
    for run in merged {
        let (first, part) = run?;
        all.absorb(&part, 0, (0, first))?;
    }
    Ok(all.into_report())
}

/// Merges consecutive parts, the first of them part `first`: each part's
/// stats but its histograms with `Stats::merge_at` (its own histograms are
/// left empty), its histograms summed slot by slot straight from their
/// encoding, and recorded into the merged stats at the end.
fn merge_run(parts: &[(&str, u32)], first: usize) -> Result<Part, MergeError> {
    let (mut sums, mut scratch) = (Sums::default(), Vec::new());
    let mut merged: Option<Part> = None;
    for (i, &(json, first_client)) in parts.iter().enumerate() {
        let index = first + i;
        let at = |e: MergeError| MergeError(format!("part {index}: {e}"));
        let (part, histograms) = Part::decode(json).map_err(at)?;
        let all = merged.get_or_insert_with(|| Part::empty(&part.facts));
        all.absorb(&part, first_client as usize, (first, index))?;
        histograms.add_to(&mut sums, &mut scratch).map_err(at)?;
    }
    let mut merged = merged.expect("invariant: a run has at least one part");
    sums.record_into(&mut merged.stats);
    Ok(merged)
}

/// Whole nanoseconds, saturating past 584 years.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A part on the wire; `format` first, so another version is told apart.
#[derive(Serialize, Deserialize)]
struct Wire<'a> {
    format: u32,
    facts: RunFacts,
    elapsed_ns: u64,
    client_cpu_ns: u64,
    cancelled: bool,
    #[serde(borrow)]
    stats: StatsWire<'a>,
}

/// `Stats` on the wire; histograms as base64 HdrHistogram V2, error kinds
/// and status codes as keys.
#[derive(Serialize, Deserialize)]
struct StatsWire<'a> {
    #[serde(borrow)]
    latency_us: Cow<'a, str>,
    #[serde(borrow)]
    connect_us: Cow<'a, str>,
    #[serde(borrow)]
    tls_handshake_us: Cow<'a, str>,
    requests: u64,
    responses: u64,
    bytes: u64,
    body_bytes: u64,
    connections_opened: u64,
    reads: u64,
    largest_read_bytes: u64,
    #[serde(default)]
    naps: u64,
    tls_handshakes: u64,
    tls_resumed: u64,
    /// Handshakes per negotiated (protocol, cipher suite), and those not kept as a pair.
    #[serde(default)]
    tls_negotiated: Vec<NegotiatedCount>,
    #[serde(default)]
    tls_negotiated_other: u64,
    errors: BTreeMap<Cow<'a, str>, u64>,
    addr_not_available: u64,
    first_error: BTreeMap<Cow<'a, str>, String>,
    #[serde(borrow)]
    classes: Vec<ClassWire<'a>>,
    clients: Vec<ClientScore>,
    /// Requests begun per class, whole run.
    #[serde(default)]
    issued: Vec<u64>,
    status: BTreeMap<u16, u64>,
    timeline: Vec<Bucket>,
    /// HTTP/2's counters (absent from HTTP/1.x parts).
    #[serde(default, skip_serializing_if = "H2Counters::is_empty")]
    h2: H2Counters,
}

/// `ClassStats` on the wire.
#[derive(Serialize, Deserialize)]
struct ClassWire<'a> {
    requests: u64,
    bytes: u64,
    errors: u64,
    #[serde(borrow)]
    latency_us: Cow<'a, str>,
}

impl From<&Stats> for StatsWire<'static> {
    fn from(s: &Stats) -> Self {
        let kinds = ErrorKind::ALL.iter();
        Self {
            latency_us: encode(&s.latency_us).into(),
            connect_us: encode(&s.connect_us).into(),
            tls_handshake_us: encode(&s.tls_handshake_us).into(),
            requests: s.requests,
            responses: s.responses,
            bytes: s.bytes,
            body_bytes: s.body_bytes,
            connections_opened: s.connections_opened,
            reads: s.reads,
            largest_read_bytes: s.largest_read_bytes,
            naps: s.naps,
            tls_handshakes: s.tls_handshakes,
            tls_resumed: s.tls_resumed,
            tls_negotiated: s.tls_negotiated.counts().collect(),
            tls_negotiated_other: s.tls_negotiated.other(),
            errors: kinds.clone().map(|k| (k.name().into(), s.errors[k.index()])).collect(),
            addr_not_available: s.addr_not_available,
            first_error: kinds.filter_map(|k| Some((k.name().into(), s.first_error[k.index()].clone()?))).collect(),
            classes: s
                .classes
                .iter()
                .map(|c| ClassWire {
                    requests: c.requests,
                    bytes: c.bytes,
                    errors: c.errors,
                    latency_us: encode(&c.latency_us).into(),
                })
                .collect(),
            clients: s.clients.clone(),
            issued: s.issued.clone(),
            status: s.status_counts().collect(),
            timeline: s.timeline.buckets().to_vec(),
            h2: s.h2,
        }
    }
}

/// A part's histograms as they came: base64 HdrHistogram V2.
struct Encoded<'a> {
    latency_us: Cow<'a, str>,
    connect_us: Cow<'a, str>,
    tls_handshake_us: Cow<'a, str>,
    classes: Vec<(String, Cow<'a, str>)>,
}

impl Encoded<'_> {
    /// Adds each histogram into its sum; `scratch` holds the bytes.
    fn add_to(&self, sums: &mut Sums, scratch: &mut Vec<u8>) -> Result<(), MergeError> {
        let mut add = |what: &str, sum: &mut SlotCounts, b64: &str| {
            scratch.clear();
            base64::engine::general_purpose::STANDARD
                .decode_vec(b64, scratch)
                .map_err(|e| format!("not base64 ({e})"))
                .and_then(|()| sum.add_v2(scratch))
                .map_err(|e| bad(format!("{what}: {e}")))
        };
        add("latency_us", &mut sums.latency_us, &self.latency_us)?;
        add("connect_us", &mut sums.connect_us, &self.connect_us)?;
        add("tls_handshake_us", &mut sums.tls_handshake_us, &self.tls_handshake_us)?;
        if sums.classes.len() < self.classes.len() {
            sums.classes.resize_with(self.classes.len(), SlotCounts::default);
        }
        for (sum, (name, b64)) in sums.classes.iter_mut().zip(&self.classes) {
            add(&format!("class {name:?} latency_us"), sum, b64)?;
        }
        Ok(())
    }
}

/// The histograms of parts being merged, summed per slot.
#[derive(Default)]
struct Sums {
    latency_us: SlotCounts,
    connect_us: SlotCounts,
    tls_handshake_us: SlotCounts,
    classes: Vec<SlotCounts>,
}

impl Sums {
    /// Records the sums into the histograms of `stats`.
    fn record_into(&self, stats: &mut Stats) {
        self.latency_us.record_into(&mut stats.latency_us);
        self.connect_us.record_into(&mut stats.connect_us);
        self.tls_handshake_us.record_into(&mut stats.tls_handshake_us);
        for (sum, class) in self.classes.iter().zip(&mut stats.classes) {
            sum.record_into(&mut class.latency_us);
        }
    }
}

impl<'a> StatsWire<'a> {
    /// The stats with empty histograms, and the histograms still encoded.
    fn split(self, facts: &RunFacts) -> Result<(Stats, Encoded<'a>), MergeError> {
        if self.classes.len() != facts.classes.len() {
            return Err(bad(format!("{} class stats for {} class names", self.classes.len(), facts.classes.len())));
        }
        let mut stats = Stats::new(None, self.classes.len(), 0, facts.window);
        let mut errors = [0; ErrorKind::COUNT];
        for (name, n) in self.errors {
            errors[kind(&name)?.index()] = n;
        }
        let mut first_error: [Option<String>; ErrorKind::COUNT] = Default::default();
        for (name, message) in self.first_error {
            first_error[kind(&name)?.index()] = Some(message);
        }
        for (code, n) in self.status {
            *stats
                .status
                .get_mut(usize::from(code))
                .ok_or_else(|| bad(format!("status code {code} out of range")))? = n;
        }
        let mut classes = Vec::with_capacity(self.classes.len());
        for ((c, mine), name) in self.classes.into_iter().zip(&mut stats.classes).zip(&facts.classes) {
            (mine.requests, mine.bytes, mine.errors) = (c.requests, c.bytes, c.errors);
            classes.push((name.clone(), c.latency_us));
        }
        stats.requests = self.requests;
        stats.responses = self.responses;
        stats.bytes = self.bytes;
        stats.body_bytes = self.body_bytes;
        stats.connections_opened = self.connections_opened;
        stats.reads = self.reads;
        stats.largest_read_bytes = self.largest_read_bytes;
        stats.naps = self.naps;
        stats.tls_handshakes = self.tls_handshakes;
        stats.tls_resumed = self.tls_resumed;
        stats.h2 = self.h2;
        for c in &self.tls_negotiated {
            stats.tls_negotiated.add(c.protocol, c.cipher, c.handshakes);
        }
        stats.tls_negotiated.set_other(stats.tls_negotiated.other() + self.tls_negotiated_other);
        stats.errors = errors;
        stats.addr_not_available = self.addr_not_available;
        stats.first_error = first_error;
        stats.clients = self.clients;
        if !self.issued.is_empty() {
            if self.issued.len() != facts.classes.len() {
                return Err(bad(format!("{} issued counts for {} classes", self.issued.len(), facts.classes.len())));
            }
            stats.issued = self.issued;
        }
        stats.timeline = Timeline::from_buckets(self.timeline);
        let encoded = Encoded {
            latency_us: self.latency_us,
            connect_us: self.connect_us,
            tls_handshake_us: self.tls_handshake_us,
            classes,
        };
        Ok((stats, encoded))
    }
}

fn bad(why: String) -> MergeError {
    MergeError(format!("malformed part: {why}"))
}

fn kind(name: &str) -> Result<ErrorKind, MergeError> {
    ErrorKind::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| bad(format!("unknown error kind {name:?}")))
}

fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(h, &mut bytes).expect("invariant: serializing into a Vec cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
