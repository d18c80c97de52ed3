//! Error vocabulary of the engine: `ConfigError` for bad input (raised before
//! any traffic), `StartError` adding failures of the machine at start, and
//! `ErrorKind` for per-request failures, which are data.

use std::fmt;

/// A configuration the engine refuses, found before any socket exists.
///
/// `field` is the `RunConfig` key the rule is about; the message is one line
/// and may name other keys as `{key}` placeholders, so that a caller can
/// reword them as the flag or setting its user wrote (`Display` shows the
/// bare key names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The `RunConfig` key at fault (empty when the JSON itself is malformed).
    pub field: &'static str,
    /// One line; `{key}` stands for a `RunConfig` key.
    pub template: String,
}

impl ConfigError {
    pub(crate) fn new(field: &'static str, template: impl Into<String>) -> Self {
        Self { field, template: template.into() }
    }

    /// The message with each `{key}` placeholder replaced by `name(key)`.
    pub fn render(&self, name: impl Fn(&str) -> String) -> String {
        let mut out = String::with_capacity(self.template.len());
        let mut rest = self.template.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) if is_key(&after[..close]) => {
                    out.push_str(&name(&after[..close]));
                    rest = &after[close + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

fn is_key(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(str::to_string))
    }
}

impl std::error::Error for ConfigError {}

/// Why a run could not start: bad input, or the machine refused a resource
/// (an event loop, a thread, TLS setup) for a configuration that was valid.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration breaks a rule; nothing was sent.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The operating system refused what the run needs; one line naming it.
    #[error("{0}")]
    Machine(String),
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
    /// The response broke HTTP/1.x or HTTP/2 framing (an HTTP/2 connection
    /// error: malformed frame, bad header block, flow control) or a size limit.
    Parse,
    /// A successful response whose body is not what the manifest says.
    Validation,
    /// The server reset the request's HTTP/2 stream (RST_STREAM), or ended the
    /// connection with an error code (GOAWAY) before the response.
    Reset,
}

impl ErrorKind {
    /// Number of kinds; `index()` is below it.
    pub const COUNT: usize = 9;
    /// All kinds in report order.
    pub const ALL: [ErrorKind; Self::COUNT] = [
        Self::Connect,
        Self::Tls,
        Self::Timeout,
        Self::Read,
        Self::Write,
        Self::Status,
        Self::Parse,
        Self::Validation,
        Self::Reset,
    ];

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
            Self::Reset => "reset",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
