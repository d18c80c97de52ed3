//! Which log formats crest reads, compiled once into a `Format`: the named
//! ones (nginx's and Apache's `combined` and `common`, the `crest` format
//! crest's own adapters write, Caddy's JSON access log, H2O's default), or a
//! custom format string in Apache's `LogFormat` words (`%h %t "%r" %>s %b`)
//! or nginx's `log_format` words (`$remote_addr [$time_local] "$request"`).
//! `auto` picks one from the first line. Knows nothing of files.

use crate::error::ReplayError;

/// A compiled log format.
#[derive(Debug, Clone, PartialEq)]
pub struct Format {
    /// The name it was given by (`combined`, …, or `custom`), for messages and the disclosure.
    pub name: String,
    // Private: the compiled shape (fields and literals, or JSON).
    pub(crate) shape: Shape,
}

/// How a line is laid out (private to the reader).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// Fields between literal separators, in order.
    Fields(Vec<Piece>),
    /// One JSON object per line (Caddy).
    CaddyJson,
}

/// One piece of a field-based format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    /// Bytes that must appear as written.
    Literal(Vec<u8>),
    /// A field crest uses or skips.
    Field(Field),
}

/// What a field of a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// Client address (%h, %a, $remote_addr).
    Client,
    /// `[10/Oct/2000:13:55:36 -0700]` without the brackets (%t, $time_local).
    TimeLocal,
    /// Unix seconds with a fraction (%{msec}t as `sec.msec`, $msec).
    UnixSeconds,
    /// Unix milliseconds, an integer (Apache's %{msec}t).
    UnixMillis,
    /// Unix microseconds, an integer (%{usec}t).
    UnixMicros,
    /// `METHOD TARGET PROTOCOL` (%r, $request).
    RequestLine,
    /// Method alone (%m, $request_method).
    Method,
    /// Path and query (%U%q, $request_uri).
    Target,
    /// Status code (%s, %>s, $status).
    Status,
    /// Response body bytes, `-` for none (%b, %B, $body_bytes_sent).
    BodyBytes,
    /// Bytes sent including headers (%O, $bytes_sent): used when no body size is logged.
    SentBytes,
    /// User agent (%{User-Agent}i, $http_user_agent).
    UserAgent,
    /// Cookie header (%{Cookie}i, $http_cookie).
    Cookie,
    /// Time taken, µs (%D).
    DurationMicros,
    /// Time taken, seconds with a fraction ($request_time, %T).
    DurationSeconds,
    /// Anything else: skipped.
    Other,
}

/// The names `Format::parse` accepts besides a format string.
pub const NAMES: &[&str] = &["auto", "combined", "common", "crest", "caddy", "h2o"];

impl Format {
    /// A named format or a format string (Apache's `%` words or nginx's `$` words).
    ///
    /// # Errors
    /// `ReplayError::Format` naming the unknown name or directive and what crest reads.
    pub fn parse(spec: &str) -> Result<Self, ReplayError> {
        let _ = spec;
        todo!()
    }

    /// For `auto`: the format the first non-empty line is in.
    ///
    /// # Errors
    /// `ReplayError::Format` when no known format fits (the caller adds the path and line).
    pub fn detect(first_line: &[u8]) -> Result<Self, ReplayError> {
        let _ = first_line;
        todo!()
    }

    /// Whether this is `auto` (to be resolved by `detect` on the first line).
    pub fn is_auto(&self) -> bool {
        self.name == "auto"
    }
}
