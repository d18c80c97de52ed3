//! A whole log as the compact table the engine sends from, read once as a
//! stream (a multi-GB log is never held whole): each distinct request
//! (method and target) once in `entries`, and per logged request only its
//! time offset and entry index (12 bytes), plus, for sessions, the order of
//! requests grouped per client. `load` caches the last tables read, so a
//! ladder's mixes, the input gate and the fan-out's engines read a log once.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::ReplayError;
use crate::format::Format;

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
    pub fn read(reader: impl std::io::BufRead, path: &str, options: &Options) -> Result<Self, ReplayError> {
        let _ = (reader, path, options);
        todo!()
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
        todo!()
    }

    /// What Python sees of it.
    pub fn summary(&self) -> Summary {
        todo!()
    }
}

/// Reads the log at `path` (a file; `.gz` is not read: gunzip it first), or
/// returns the table already read from the same file (same size and
/// modification time) with the same options: the last few tables are kept.
///
/// # Errors
/// As `Table::read`, and `ReplayError::Read` when the file cannot be opened.
pub fn load(path: &Path, options: &Options) -> Result<Arc<Table>, ReplayError> {
    let _ = (path, options);
    todo!()
}
