//! A whole log as the compact table the engine sends from, read once as a
//! stream (a multi-GB log is never held whole): each distinct request
//! (method and target) once in `entries`, and per logged request only its
//! time offset and entry index (12 bytes), plus, for sessions, the order of
//! requests grouped per client. `load` caches the last tables read, so a
//! ladder's mixes, the input gate and the fan-out's engines read a log once.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::class::{classify, CLASSES};
use crate::error::ReplayError;
use crate::format::Format;
use crate::line::{parse_line, unescape, LineError, Record};

/// How requests are grouped into sessions (one virtual user each).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SessionKey {
    /// Client address and user agent.
    #[default]
    Client,
    /// The value of this cookie (requests without it: by client address and user agent).
    Cookie(String),
}

/// How a log is read.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// A name from `format::NAMES` or a format string.
    pub format: String,
    /// How sessions are keyed.
    pub session_key: SessionKey,
    /// A gap longer than this between a client's requests starts a new session.
    pub session_gap_s: f64,
    /// Lines that do not parse before the reader gives up (0: the first one stops it).
    pub max_bad_lines: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self { format: "auto".into(), session_key: SessionKey::Client, session_gap_s: 1800.0, max_bad_lines: 0 }
    }
}

/// One distinct request of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Method as logged.
    pub method: String,
    /// Path and query as logged.
    pub target: String,
    /// The status most often logged for it.
    pub status: u16,
    /// The body size most often logged for it with that status (0 when the format logs none).
    pub body_bytes: u64,
    /// How many times it was logged.
    pub count: u64,
    /// Index into `CLASSES`.
    pub class: u32,
}

/// A log read whole: what the engine sends from.
#[derive(Debug)]
pub struct Table {
    /// The format it was read in (resolved when `auto`).
    pub format: Format,
    /// Distinct requests, in order of first appearance.
    pub entries: Vec<Entry>,
    /// Per logged request, in time order (stable: equal times keep the log's order):
    /// µs from the first request.
    pub offsets_us: Vec<u64>,
    /// Per logged request, in the same order: its index into `entries`.
    pub requests: Vec<u32>,
    /// Sessions: request positions (into `offsets_us`/`requests`) grouped
    /// per session, sessions in order of their first request, each in time order.
    pub session_order: Vec<u32>,
    /// Where each session starts in `session_order` (its end is the next one's start).
    pub session_starts: Vec<u32>,
    /// Lines read, and lines skipped as unreplayable.
    pub lines: u64,
    /// Logged requests skipped as unreplayable (garbage request lines).
    pub skipped: u64,
    /// Lines skipped because they are not in the format (at most `max_bad_lines`).
    pub bad_lines: u64,
    /// Unix µs of the first request.
    pub first_unix_us: i64,
    /// The largest number of requests the log shows in flight at once (needs a logged duration; else None).
    pub peak_concurrency: Option<u32>,
}

/// What Python sees of a table: everything but the per-request columns.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Format name as resolved.
    pub format: String,
    /// Lines read.
    pub lines: u64,
    /// Logged requests in the table.
    pub requests: u64,
    /// Logged requests skipped as unreplayable.
    pub skipped: u64,
    /// Lines skipped as not in the format (at most `max_bad_lines`).
    pub bad_lines: u64,
    /// Distinct requests.
    pub distinct: u64,
    /// Sessions.
    pub sessions: u64,
    /// Unix seconds of the first request.
    pub first_unix_s: f64,
    /// From the first request to the last, seconds.
    pub duration_s: f64,
    /// Largest number in flight at once, when the log says.
    pub peak_concurrency: Option<u32>,
    /// Requests per class (indexed as `CLASSES`).
    pub class_requests: Vec<u64>,
    /// Class names (`CLASSES`).
    pub classes: Vec<String>,
    /// Bytes the table holds in memory (columns and entries).
    pub table_bytes: u64,
    /// The distinct requests (all of them).
    pub entries: Vec<Entry>,
}

impl Table {
    /// Reads a log from `reader` (a stream; `path` only names it in messages).
    ///
    /// # Errors
    /// `ReplayError` for an unknown format, a line that does not parse (with its number), or no requests.
    pub fn read(mut reader: impl std::io::BufRead, path: &str, options: &Options) -> Result<Self, ReplayError> {
        if !(options.session_gap_s.is_finite() && options.session_gap_s > 0.0) {
            return Err(ReplayError::Format(format!(
                "session_gap_s is {}: give a gap in seconds above 0 (1800 is the usual half hour)",
                options.session_gap_s
            )));
        }
        let mut format = Format::parse(&options.format)?;
        let mut builder = Builder::new(options, format.logs_duration());
        let (mut line_no, mut lines, mut skipped, mut bad) = (0u64, 0u64, 0u64, 0u64);
        let read_error = |e: std::io::Error| ReplayError::Read { path: path.into(), why: e.to_string() };
        let mut buf = Vec::with_capacity(8192);
        loop {
            buf.clear();
            if reader.read_until(b'\n', &mut buf).map_err(read_error)? == 0 {
                break;
            }
            line_no += 1;
            if line_no == 1 && buf.starts_with(&[0x1f, 0x8b]) {
                return Err(ReplayError::Read {
                    path: path.into(),
                    why: "it is gzip-compressed: gunzip it first (crest reads plain-text logs)".into(),
                });
            }
            let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.trim_ascii().is_empty() {
                continue;
            }
            lines += 1;
            if format.is_auto() {
                format = Format::detect(line).map_err(|e| ReplayError::Line {
                    path: path.into(),
                    line: line_no,
                    why: e.to_string(),
                })?;
                builder.durations = format.logs_duration();
            }
            match parse_line(line, &format) {
                Ok(record) => builder.add(&record),
                Err(LineError::Unreplayable) => skipped += 1,
                Err(LineError::Malformed(why)) => {
                    bad += 1;
                    if bad > options.max_bad_lines {
                        return Err(ReplayError::Line {
                            path: path.into(),
                            line: line_no,
                            why: format!(
                                "{why} (format {}): give the log's own format string as {{format}}, or let bad \
                                 lines be skipped with {{max_bad_lines}}",
                                format.name
                            ),
                        });
                    }
                }
            }
        }
        if builder.times.is_empty() {
            return Err(ReplayError::Empty {
                path: path.into(),
                why: format!(
                    "{lines} lines: {skipped} requests that cannot be sent again, {bad} not in format {}",
                    format.name
                ),
            });
        }
        Ok(builder.finish(format, lines, skipped, bad))
    }

    /// Logged requests.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether the table holds no request (never true of a table `read` returned).
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Sessions.
    pub fn sessions(&self) -> usize {
        self.session_starts.len()
    }

    /// Positions of session `s`'s requests, in time order.
    pub fn session(&self, s: usize) -> &[u32] {
        let start = self.session_starts[s] as usize;
        let end = self.session_starts.get(s + 1).map_or(self.session_order.len(), |&e| e as usize);
        &self.session_order[start..end]
    }

    /// Bytes the table holds in memory.
    pub fn memory_bytes(&self) -> u64 {
        let columns = self.offsets_us.capacity() * 8
            + (self.requests.capacity() + self.session_order.capacity() + self.session_starts.capacity()) * 4;
        let entries = self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.entries.iter().map(|e| e.method.capacity() + e.target.capacity()).sum::<usize>();
        (std::mem::size_of::<Self>() + columns + entries) as u64
    }

    /// What Python sees of it.
    pub fn summary(&self) -> Summary {
        let mut class_requests = vec![0; CLASSES.len()];
        for entry in &self.entries {
            class_requests[entry.class as usize] += entry.count;
        }
        Summary {
            format: self.format.name.clone(),
            lines: self.lines,
            requests: self.len() as u64,
            skipped: self.skipped,
            bad_lines: self.bad_lines,
            distinct: self.entries.len() as u64,
            sessions: self.sessions() as u64,
            first_unix_s: self.first_unix_us as f64 / 1e6,
            duration_s: self.offsets_us.last().copied().unwrap_or(0) as f64 / 1e6,
            peak_concurrency: self.peak_concurrency,
            class_requests,
            classes: CLASSES.iter().map(|c| (*c).to_string()).collect(),
            table_bytes: self.memory_bytes(),
            entries: self.entries.clone(),
        }
    }
}

/// Per distinct request while reading: its most frequent statuses (Misra–Gries over three
/// slots, exact unless it was logged with more than three statuses) and, per status, the
/// size most often logged with it (a majority vote: exact when one size is logged more than
/// half the time, as a file's is). Bounded: 112 bytes per distinct request, dropped after reading.
#[derive(Clone, Copy, Default)]
struct Tally {
    slots: [Slot; 3],
    first: (u16, u64),
}

#[derive(Clone, Copy, Default)]
struct Slot {
    status: u16,
    count: u32,
    votes: u32,
    size: u64,
    // The entry's count when this status took the slot: which of two tied statuses came first.
    first: u64,
}

impl Tally {
    fn add(&mut self, status: u16, size: u64, seen: u64) {
        if let Some(slot) = self.slots.iter_mut().find(|s| s.count > 0 && s.status == status) {
            slot.count += 1;
            if slot.size == size {
                slot.votes += 1;
            } else if slot.votes == 0 {
                (slot.size, slot.votes) = (size, 1);
            } else {
                slot.votes -= 1;
            }
        } else if let Some(slot) = self.slots.iter_mut().find(|s| s.count == 0) {
            *slot = Slot { status, count: 1, votes: 1, size, first: seen };
        } else {
            for slot in &mut self.slots {
                slot.count -= 1;
            }
        }
    }

    /// The most frequent status (on a tie, the one seen first) and its size.
    fn best(&self) -> (u16, u64) {
        let mut best: Option<&Slot> = None;
        for slot in self.slots.iter().filter(|s| s.count > 0) {
            if best.is_none_or(|b| slot.count > b.count || (slot.count == b.count && slot.first < b.first)) {
                best = Some(slot);
            }
        }
        best.map_or(self.first, |s| (s.status, s.size))
    }
}

/// A `u64` that is already a hash, used as its own.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Index = HashMap<u64, u32, BuildHasherDefault<PassThrough>>;

const NONE: u32 = u32::MAX;

/// A fast 64-bit hash of byte strings, eight bytes a step (SipHash was a third of the read
/// time). Not collision-proof: an entry's collision is resolved by comparing the strings;
/// two session keys that collide would make one session.
fn hash(parts: &[&[u8]]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let mut h = 0u64;
    for part in parts {
        let mut words = part.chunks_exact(8);
        for word in &mut words {
            h = mix(h, u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or_default()));
        }
        let mut last = [0u8; 8];
        last[..words.remainder().len()].copy_from_slice(words.remainder());
        h = mix(mix(h, u64::from_le_bytes(last)), part.len() as u64);
    }
    // The index uses the hash as is (PassThrough): spread every bit (MurmurHash3's finish).
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A cookie's value in a `Cookie` header (`a=1; NAME=value`).
fn cookie_value<'a>(header: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    header.split(|&b| b == b';').find_map(|pair| {
        let pair = pair.trim_ascii();
        let eq = pair.iter().position(|&b| b == b'=')?;
        (&pair[..eq] == name).then(|| &pair[eq + 1..]).filter(|v| !v.is_empty())
    })
}

/// What a log becomes while it is read: per logged request its time, entry and session key
/// (24 bytes in log order), and the distinct requests with an index to find them.
struct Builder<'o> {
    options: &'o Options,
    durations: bool,
    // Whether any line logged its duration (the `crest` format's is optional).
    timed: bool,
    times: Vec<i64>,
    ends: Vec<i64>,
    entry_of: Vec<u32>,
    keys: Vec<u64>,
    entries: Vec<Entry>,
    tallies: Vec<Tally>,
    index: Index,
    // Per entry, the next entry whose (method, target) hashed alike (a collision), or NONE.
    chain: Vec<u32>,
    scratch: Vec<u8>,
}

impl<'o> Builder<'o> {
    fn new(options: &'o Options, durations: bool) -> Self {
        Self {
            options,
            durations,
            timed: false,
            times: Vec::new(),
            ends: Vec::new(),
            entry_of: Vec::new(),
            keys: Vec::new(),
            entries: Vec::new(),
            tallies: Vec::new(),
            index: Index::default(),
            chain: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn add(&mut self, r: &Record<'_>) {
        let took = r.duration_us.unwrap_or(0).min(i64::MAX as u64) as i64;
        let start = if r.logged_at_end { r.time_us.saturating_sub(took) } else { r.time_us };
        self.times.push(start);
        if self.durations {
            // nginx logs a 0.3 ms request as 0.000: it was still in flight for a moment.
            self.ends.push(start.saturating_add(took.max(1)));
            self.timed |= r.duration_us.is_some();
        }
        let entry = self.intern(r.method, r.target);
        self.entry_of.push(entry);
        let e = entry as usize;
        self.entries[e].count += 1;
        self.tallies[e].add(r.status, r.body_bytes.unwrap_or(0), self.entries[e].count);
        let key = match &self.options.session_key {
            SessionKey::Cookie(name) => cookie_value(r.cookie, name.as_bytes()).map(|v| hash(&[b"cookie", v])),
            SessionKey::Client => None,
        };
        self.keys.push(key.unwrap_or_else(|| hash(&[r.client, r.user_agent])));
        if self.entries[e].count == 1 {
            self.tallies[e].first = (r.status, r.body_bytes.unwrap_or(0));
        }
    }

    /// The entry of (method, target), made on first sight; the target is kept unescaped.
    fn intern(&mut self, method: &[u8], target: &[u8]) -> u32 {
        unescape(target, &mut self.scratch);
        let h = hash(&[method, &self.scratch]);
        let head = self.index.get(&h).copied().unwrap_or(NONE);
        let mut at = head;
        while at != NONE {
            let e = &self.entries[at as usize];
            if e.method.as_bytes() == method && e.target.as_bytes() == self.scratch.as_slice() {
                return at;
            }
            at = self.chain[at as usize];
        }
        let id = self.entries.len() as u32;
        self.entries.push(Entry {
            method: String::from_utf8_lossy(method).into_owned(),
            target: String::from_utf8_lossy(&self.scratch).into_owned(),
            status: 0,
            body_bytes: 0,
            count: 0,
            class: 0,
        });
        self.tallies.push(Tally::default());
        self.chain.push(head);
        self.index.insert(h, id);
        id
    }

    fn finish(self, format: Format, lines: u64, skipped: u64, bad_lines: u64) -> Table {
        let Builder { options, timed, times, ends, entry_of, keys, mut entries, tallies, .. } = self;
        for (entry, tally) in entries.iter_mut().zip(&tallies) {
            (entry.status, entry.body_bytes) = tally.best();
            entry.class = classify(entry.method.as_bytes(), entry.target.as_bytes(), entry.status, entry.body_bytes);
        }
        entries.shrink_to_fit();
        let mut order: Vec<u32> = (0..times.len() as u32).collect();
        // Stable: equal times keep the log's order. A log written at each request's end is
        // nearly sorted already, which this sort is quick on.
        order.sort_by_key(|&i| times[i as usize]);
        let first_unix_us = times[order[0] as usize];
        let offsets_us: Vec<u64> = order.iter().map(|&i| (times[i as usize] - first_unix_us) as u64).collect();
        let requests: Vec<u32> = order.iter().map(|&i| entry_of[i as usize]).collect();
        drop(entry_of);
        let peak_concurrency = timed.then(|| peak(&order, &times, ends));
        let (session_order, session_starts) = sessions(&order, &times, &keys, options.session_gap_s);
        Table {
            format,
            entries,
            offsets_us,
            requests,
            session_order,
            session_starts,
            lines,
            skipped,
            bad_lines,
            first_unix_us,
            peak_concurrency,
        }
    }
}

/// The most requests in flight at once, each over [start, end).
fn peak(order: &[u32], times: &[i64], mut ends: Vec<i64>) -> u32 {
    ends.sort_unstable();
    let (mut ended, mut most) = (0usize, 0usize);
    for (started, &i) in order.iter().enumerate() {
        let t = times[i as usize];
        while ended < ends.len() && ends[ended] <= t {
            ended += 1;
        }
        most = most.max(started + 1 - ended.min(started + 1));
    }
    most as u32
}

/// Positions grouped per session: a key's requests, split where the gap between two exceeds `gap_s`.
fn sessions(order: &[u32], times: &[i64], keys: &[u64], gap_s: f64) -> (Vec<u32>, Vec<u32>) {
    let gap_us = (gap_s * 1e6).min(i64::MAX as f64) as i64;
    let mut open: HashMap<u64, (u32, i64), BuildHasherDefault<PassThrough>> = HashMap::default();
    let mut session_of = Vec::with_capacity(order.len());
    let mut sizes: Vec<u32> = Vec::new();
    for &i in order {
        let (t, key) = (times[i as usize], keys[i as usize]);
        let next = sizes.len() as u32;
        let slot = open.entry(key).or_insert((next, t));
        if slot.0 != next && t - slot.1 > gap_us {
            *slot = (next, t);
        }
        slot.1 = t;
        if slot.0 == next {
            sizes.push(0);
        }
        sizes[slot.0 as usize] += 1;
        session_of.push(slot.0);
    }
    let mut session_starts = Vec::with_capacity(sizes.len());
    let mut at = 0u32;
    for &n in &sizes {
        session_starts.push(at);
        at += n;
    }
    let mut fill = session_starts.clone();
    let mut session_order = vec![0u32; order.len()];
    for (position, &s) in session_of.iter().enumerate() {
        session_order[fill[s as usize] as usize] = position as u32;
        fill[s as usize] += 1;
    }
    (session_order, session_starts)
}

/// Reads the log at `path` (a file; `.gz` is not read: gunzip it first), or
/// returns the table already read from the same file (same size and
/// modification time) with the same options: the last few tables are kept.
///
/// # Errors
/// As `Table::read`, and `ReplayError::Read` when the file cannot be opened.
pub fn load(path: &Path, options: &Options) -> Result<Arc<Table>, ReplayError> {
    let shown = path.display().to_string();
    let cannot = |e: std::io::Error| ReplayError::Read { path: shown.clone(), why: e.to_string() };
    let file = std::fs::File::open(path).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if meta.is_dir() {
        return Err(ReplayError::Read { path: shown, why: "it is a directory: give the log file".into() });
    }
    let key = CacheKey {
        path: std::fs::canonicalize(path).map_err(cannot)?,
        len: meta.len(),
        modified: meta.modified().ok(),
        options: options.clone(),
    };
    if let Some(table) = cache().iter().find(|(k, _)| *k == key).map(|(_, t)| Arc::clone(t)) {
        return Ok(table);
    }
    // Read without the lock: another log's load need not wait for this one.
    let table = Arc::new(Table::read(std::io::BufReader::with_capacity(1 << 16, file), &shown, options)?);
    let mut kept = cache();
    kept.retain(|(k, _)| *k != key);
    kept.push((key, Arc::clone(&table)));
    if kept.len() > CACHED {
        kept.remove(0);
    }
    Ok(table)
}

/// Tables `load` keeps: a ladder's mixes and a fan-out's engines read one log, a comparison two.
const CACHED: usize = 2;

#[derive(PartialEq)]
struct CacheKey {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
    options: Options,
}

static CACHE: Mutex<Vec<(CacheKey, Arc<Table>)>> = Mutex::new(Vec::new());

fn cache() -> std::sync::MutexGuard<'static, Vec<(CacheKey, Arc<Table>)>> {
    // A panic while the lock was held leaves a list that is still whole.
    CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
