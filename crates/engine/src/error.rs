//! Error vocabulary of the engine: `ConfigError` for bad input (raised before
//! any traffic) and `ErrorKind` for per-request failures, which are data.

use std::fmt;

/// A configuration the engine refuses; the message names the field, the value
/// and the rule, and fits on one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

impl ConfigError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

/// Why a request failed. Counted per kind; never aborts a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// TCP connect failed (refused, unreachable, no local address or port).
    Connect,
    /// The TLS handshake or record layer failed.
    Tls,
    /// No complete response within the request timeout.
    Timeout,
    /// Reading failed: reset, or the peer closed before the response ended.
    Read,
    /// Writing the request failed.
    Write,
    /// A complete response whose status is not 2xx or 3xx.
    Status,
    /// The response broke HTTP/1.x framing or a size limit.
    Parse,
    /// A successful response whose body is not what the manifest says.
    Validation,
}

impl ErrorKind {
    /// Number of kinds; `index()` is below it.
    pub const COUNT: usize = 8;
    /// All kinds in report order.
    pub const ALL: [ErrorKind; Self::COUNT] =
        [Self::Connect, Self::Tls, Self::Timeout, Self::Read, Self::Write, Self::Status, Self::Parse, Self::Validation];

    /// Dense index for counter arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Tls => "tls",
            Self::Timeout => "timeout",
            Self::Read => "read",
            Self::Write => "write",
            Self::Status => "status",
            Self::Parse => "parse",
            Self::Validation => "validation",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
