//! One log line to one `Record`, on bytes only (sans-IO): no allocation, the
//! record borrows from the line. Tested on every named format and on lines
//! cut short at every byte.

use crate::format::Format;

/// What crest takes from one logged request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// When the request was logged, µs since the Unix epoch (a server logs
    /// at the request's start or end: the format says which, crest keeps it as logged).
    pub time_us: i64,
    /// `GET`, `POST`, … as logged.
    pub method: &'a [u8],
    /// Path and query as logged (`/a/b?c=d`).
    pub target: &'a [u8],
    /// Status code as logged.
    pub status: u16,
    /// Response body bytes, when the format logs them (`-` is 0).
    pub body_bytes: Option<u64>,
    /// Client address as logged (empty when the format has none).
    pub client: &'a [u8],
    /// User agent as logged (empty when none).
    pub user_agent: &'a [u8],
    /// Cookie header as logged (empty when none).
    pub cookie: &'a [u8],
    /// Time taken, µs, when logged.
    pub duration_us: Option<u64>,
}

/// Why one line did not parse: the message (without path and line number,
/// which the caller adds), or that the line is a logged request crest cannot
/// replay (a garbage request line such as a TLS hello sent to a plain port,
/// logged by nginx as `"\x16\x03…" 400`): those are counted and skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// The line is not in the format: the reader stops with this message.
    Malformed(String),
    /// A well-formed line whose request cannot be sent again: skipped and counted.
    Unreplayable,
}

/// Parses one line (without its newline) in `format`, which must not be `auto`.
///
/// # Errors
/// `LineError::Malformed` with what did not match; `LineError::Unreplayable` for a logged garbage request.
pub fn parse_line<'a>(line: &'a [u8], format: &Format) -> Result<Record<'a>, LineError> {
    let _ = (line, format);
    todo!()
}
