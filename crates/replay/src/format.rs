//! Which log formats crest reads, compiled once into a `Format`: the named
//! ones (nginx's and Apache's `combined` and `common`, the `crest` format
//! crest's own adapters write, Caddy's JSON access log, H2O's default), or a
//! custom format string in Apache's `LogFormat` words (`%h %t "%r" %>s %b`)
//! or nginx's `log_format` words (`$remote_addr [$time_local] "$request"`).
//! `auto` picks one from the first line (`Format::detect`, which lives with the
//! line parser it tries each format with). Knows nothing of files.
//!
//! When a server writes the line decides what its time means: nginx (`$msec`,
//! `$time_local`, `$time_iso8601`) and Caddy (`ts`) log when the request
//! ENDS, Apache (`%t`, `%{msec}t`; `%{end:…}t` is the end), lighttpd, H2O and
//! crest's built-in target when it STARTS. The table uses that with a logged
//! duration to place each request at its start.

use crate::error::ReplayError;

/// A compiled log format.
#[derive(Debug, Clone, PartialEq)]
pub struct Format {
    /// The name it was given by (`combined`, …, or `custom`), for messages and the disclosure.
    pub name: String,
    // Private: the compiled shape (fields and literals, or JSON).
    pub(crate) shape: Shape,
    // Whether the logged time is the request's end (else its start); `Shape::Crest` decides per line.
    pub(crate) at_end: bool,
}

/// How a line is laid out (private to the reader).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// Fields between literal separators, in order.
    Fields(Vec<Piece>),
    /// One JSON object per line (Caddy).
    CaddyJson,
    /// What crest's adapters write: `ADDR [TIME] "REQUEST" STATUS BYTES[ DURATION]`, TIME either
    /// Unix seconds with a fraction (nginx `$msec`, the built-in target) or integer milliseconds
    /// (Apache, lighttpd and H2O `%{msec}t`), DURATION either seconds with a fraction (nginx's
    /// `$request_time`, logged at the end) or integer µs (Apache's `%D`, logged at the start).
    Crest,
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
    /// `2000-10-10T13:55:36-07:00` ($time_iso8601).
    TimeIso8601,
    /// Unix seconds, with or without a fraction ($msec, %{sec}t).
    UnixSeconds,
    /// Unix milliseconds, an integer (Apache's %{msec}t).
    UnixMillis,
    /// Unix microseconds, an integer (%{usec}t).
    UnixMicros,
    /// Milliseconds within the second, added to the time (%{msec_frac}t).
    MillisFrac,
    /// Microseconds within the second, added to the time (%{usec_frac}t).
    MicrosFrac,
    /// `METHOD TARGET PROTOCOL` (%r, $request).
    RequestLine,
    /// Method alone (%m, $request_method).
    Method,
    /// Path and query (%U%q, $request_uri, $uri$is_args$args).
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
    /// Time taken, µs (%D, %{us}T).
    DurationMicros,
    /// Time taken, ms (%{ms}T).
    DurationMillis,
    /// Time taken, seconds with a fraction ($request_time, %T).
    DurationSeconds,
    /// Anything else: skipped.
    Other,
}

impl Field {
    /// How a message names it.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Field::Client => "client address",
            Field::TimeLocal => "time [dd/Mon/yyyy:hh:mm:ss +zzzz]",
            Field::TimeIso8601 => "ISO 8601 time",
            Field::UnixSeconds => "Unix time in seconds",
            Field::UnixMillis => "Unix time in milliseconds",
            Field::UnixMicros => "Unix time in microseconds",
            Field::MillisFrac => "milliseconds of the time",
            Field::MicrosFrac => "microseconds of the time",
            Field::RequestLine => "request line",
            Field::Method => "method",
            Field::Target => "request target",
            Field::Status => "status",
            Field::BodyBytes => "body bytes",
            Field::SentBytes => "bytes sent",
            Field::UserAgent => "user agent",
            Field::Cookie => "cookie",
            Field::DurationMicros => "duration in µs",
            Field::DurationMillis => "duration in ms",
            Field::DurationSeconds => "duration in seconds",
            Field::Other => "field",
        }
    }

    /// Whether its value is a number (it then ends at a space, so extra trailing fields are ignored).
    pub(crate) fn is_number(self) -> bool {
        matches!(
            self,
            Field::UnixSeconds
                | Field::UnixMillis
                | Field::UnixMicros
                | Field::MillisFrac
                | Field::MicrosFrac
                | Field::Status
                | Field::BodyBytes
                | Field::SentBytes
                | Field::DurationMicros
                | Field::DurationMillis
                | Field::DurationSeconds
        )
    }

    fn is_time(self) -> bool {
        matches!(
            self,
            Field::TimeLocal | Field::TimeIso8601 | Field::UnixSeconds | Field::UnixMillis | Field::UnixMicros
        )
    }
}

/// The names `Format::parse` accepts besides a format string.
pub const NAMES: &[&str] = &["auto", "combined", "common", "crest", "caddy", "h2o"];

const COMMON: &str = r#"%h %l %u %t "%r" %>s %b"#;
const COMBINED: &str = r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i""#;

/// What every format message ends with: what crest reads.
const READS: &str = "crest reads auto, combined, common, crest, caddy, h2o, or a format string in Apache's \
                     LogFormat % words or nginx's log_format $ words";

impl Format {
    /// A named format or a format string (Apache's `%` words or nginx's `$` words).
    ///
    /// # Errors
    /// `ReplayError::Format` naming the unknown name or directive and what crest reads.
    pub fn parse(spec: &str) -> Result<Self, ReplayError> {
        let named = |name: &str, shape: Shape, at_end: bool| Ok(Self { name: name.into(), shape, at_end });
        match spec.trim() {
            "auto" => named("auto", Shape::Fields(Vec::new()), false),
            // The time of these has one-second resolution and no duration beside it: start or end cannot matter.
            "combined" => named("combined", Shape::Fields(apache(COMBINED)?), false),
            "common" => named("common", Shape::Fields(apache(COMMON)?), false),
            "h2o" => named("h2o", Shape::Fields(apache(COMBINED)?), false),
            "crest" => named("crest", Shape::Crest, false),
            "caddy" => named("caddy", Shape::CaddyJson, true),
            "" => Err(ReplayError::Format(format!("the log format is empty: {READS}"))),
            custom => {
                let (pieces, at_end) = if is_nginx(custom) {
                    (nginx(custom)?, true)
                } else if custom.contains('%') {
                    (apache(custom)?, custom.contains("{end:"))
                } else {
                    return Err(ReplayError::Format(format!("unknown log format {custom:?}: {READS}")));
                };
                check(&pieces, custom)?;
                named("custom", Shape::Fields(pieces), at_end)
            }
        }
    }

    /// Whether this is `auto` (to be resolved by `detect` on the first line).
    pub fn is_auto(&self) -> bool {
        self.name == "auto"
    }

    /// Whether the format logs how long each request took.
    pub fn logs_duration(&self) -> bool {
        match &self.shape {
            Shape::Fields(pieces) => pieces.iter().any(|p| {
                matches!(p, Piece::Field(Field::DurationMicros | Field::DurationMillis | Field::DurationSeconds))
            }),
            Shape::CaddyJson | Shape::Crest => true,
        }
    }
}

fn bad(what: String) -> ReplayError {
    ReplayError::Format(format!("{what}: {READS}"))
}

/// An nginx `log_format` string: it names a `$variable` (Apache's strings have none).
fn is_nginx(spec: &str) -> bool {
    spec.as_bytes().windows(2).any(|w| w[0] == b'$' && (w[1].is_ascii_alphabetic() || w[1] == b'_' || w[1] == b'{'))
}

/// Adds a field, merging a path followed at once by its query into one target.
fn push(pieces: &mut Vec<Piece>, field: Field, query: bool) {
    if query {
        if let Some(Piece::Field(Field::Target)) = pieces.last() {
            return;
        }
    }
    pieces.push(Piece::Field(field));
}

fn push_literal(pieces: &mut Vec<Piece>, bytes: &[u8]) {
    if let Some(Piece::Literal(lit)) = pieces.last_mut() {
        lit.extend_from_slice(bytes);
    } else if !bytes.is_empty() {
        pieces.push(Piece::Literal(bytes.to_vec()));
    }
}

/// Compiles Apache `LogFormat` words. A config file's `\"` is taken as `"`.
fn apache(spec: &str) -> Result<Vec<Piece>, ReplayError> {
    let b = spec.as_bytes();
    let mut pieces = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 < b.len() => {
                let c = match b[i + 1] {
                    b'n' => b'\n',
                    b't' => b'\t',
                    c => c,
                };
                push_literal(&mut pieces, &[c]);
                i += 2;
            }
            b'%' => {
                i += 1;
                // Modifiers: status conditions (`!200,304`), `<`/`>` (original or final request).
                while i < b.len()
                    && (b[i] == b'!' || b[i] == b',' || b[i] == b'<' || b[i] == b'>' || b[i].is_ascii_digit())
                {
                    i += 1;
                }
                let mut arg: Option<&str> = None;
                if i < b.len() && b[i] == b'{' {
                    let close =
                        spec[i..].find('}').ok_or_else(|| bad(format!("format {spec:?} has an unclosed %{{")))?;
                    arg = Some(&spec[i + 1..i + close]);
                    i += close + 1;
                }
                let Some(&letter) = b.get(i) else {
                    return Err(bad(format!("format {spec:?} ends in a lone %")));
                };
                i += 1;
                if letter == b'%' {
                    push_literal(&mut pieces, b"%");
                    continue;
                }
                let field = apache_field(letter, arg).ok_or_else(|| {
                    let word = match arg {
                        Some(a) => format!("%{{{a}}}{}", letter as char),
                        None => format!("%{}", letter as char),
                    };
                    bad(format!("format {spec:?}: unknown directive {word}"))
                })?;
                if letter == b't' && arg.is_none() {
                    // %t writes its own brackets: `[10/Oct/2000:13:55:36 -0700]`.
                    push_literal(&mut pieces, b"[");
                    pieces.push(Piece::Field(field));
                    push_literal(&mut pieces, b"]");
                } else {
                    push(&mut pieces, field, letter == b'q');
                }
            }
            _ => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'%' && b[i] != b'\\' {
                    i += 1;
                }
                push_literal(&mut pieces, &b[start..i]);
            }
        }
    }
    Ok(pieces)
}

fn apache_field(letter: u8, arg: Option<&str>) -> Option<Field> {
    let header = |name: &str| {
        if name.eq_ignore_ascii_case("user-agent") {
            Field::UserAgent
        } else if name.eq_ignore_ascii_case("cookie") {
            Field::Cookie
        } else {
            Field::Other
        }
    };
    Some(match (letter, arg) {
        (b'h' | b'a', _) => Field::Client,
        (b't', None) => Field::TimeLocal,
        (b't', Some(a)) => {
            let a = a.strip_prefix("begin:").or_else(|| a.strip_prefix("end:")).unwrap_or(a);
            match a {
                "sec" => Field::UnixSeconds,
                "msec" => Field::UnixMillis,
                "usec" => Field::UnixMicros,
                "msec_frac" => Field::MillisFrac,
                "usec_frac" => Field::MicrosFrac,
                _ => return None,
            }
        }
        (b'r', None) => Field::RequestLine,
        (b'm', None) => Field::Method,
        (b'U', None) => Field::Target,
        (b'q', None) => Field::Other,
        (b's', None) => Field::Status,
        (b'b' | b'B', None) => Field::BodyBytes,
        (b'O', None) => Field::SentBytes,
        (b'D', None) => Field::DurationMicros,
        (b'T', None) => Field::DurationSeconds,
        (b'T', Some("s")) => Field::DurationSeconds,
        (b'T', Some("ms")) => Field::DurationMillis,
        (b'T', Some("us")) => Field::DurationMicros,
        (b'i', Some(name)) => header(name),
        (b'o' | b'e' | b'n' | b'C' | b'x' | b'p' | b'P' | b'c' | b'^', Some(_)) => Field::Other,
        (
            b'l' | b'u' | b'v' | b'V' | b'p' | b'P' | b'H' | b'f' | b'A' | b'k' | b'L' | b'R' | b'X' | b'I' | b'S',
            None,
        ) => Field::Other,
        _ => return None,
    })
}

/// Compiles nginx `log_format` words; any variable crest does not use is skipped.
fn nginx(spec: &str) -> Result<Vec<Piece>, ReplayError> {
    let b = spec.as_bytes();
    let mut pieces = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let name_ok = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if b[i] == b'$' && i + 1 < b.len() && (name_ok(b[i + 1]) || b[i + 1] == b'{') {
            let name = if b[i + 1] == b'{' {
                let close = spec[i..].find('}').ok_or_else(|| bad(format!("format {spec:?} has an unclosed ${{")))?;
                let name = &spec[i + 2..i + close];
                i += close + 1;
                name
            } else {
                let start = i + 1;
                i = start;
                while i < b.len() && name_ok(b[i]) {
                    i += 1;
                }
                &spec[start..i]
            };
            let (field, query) = match name {
                "remote_addr" | "realip_remote_addr" => (Field::Client, false),
                "time_local" => (Field::TimeLocal, false),
                "time_iso8601" => (Field::TimeIso8601, false),
                "msec" => (Field::UnixSeconds, false),
                "request" => (Field::RequestLine, false),
                "request_method" => (Field::Method, false),
                "request_uri" | "uri" | "document_uri" => (Field::Target, false),
                "is_args" | "args" | "query_string" => (Field::Other, true),
                "status" => (Field::Status, false),
                "body_bytes_sent" => (Field::BodyBytes, false),
                "bytes_sent" => (Field::SentBytes, false),
                "request_time" => (Field::DurationSeconds, false),
                "http_user_agent" => (Field::UserAgent, false),
                "http_cookie" => (Field::Cookie, false),
                _ => (Field::Other, false),
            };
            push(&mut pieces, field, query);
        } else {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'$' {
                i += 1;
            }
            push_literal(&mut pieces, &b[start..i]);
        }
    }
    Ok(pieces)
}

/// A custom format must say which request was made and how it was answered, and two fields
/// need text between them (a field ends where the next text starts).
fn check(pieces: &[Piece], spec: &str) -> Result<(), ReplayError> {
    let has = |f: Field| pieces.contains(&Piece::Field(f));
    if !(has(Field::RequestLine) || (has(Field::Method) && has(Field::Target))) {
        return Err(bad(format!(
            "format {spec:?} logs no request: it needs %r or $request (or the method and the target: %m and %U%q, \
             or $request_method and $request_uri)"
        )));
    }
    if !has(Field::Status) {
        return Err(bad(format!("format {spec:?} logs no status: it needs %>s or $status")));
    }
    if pieces.iter().filter(|p| matches!(p, Piece::Field(f) if f.is_time())).count() > 1 {
        return Err(bad(format!("format {spec:?} logs the time twice: keep one time field")));
    }
    for pair in pieces.windows(2) {
        if let [Piece::Field(a), Piece::Field(b)] = pair {
            return Err(bad(format!(
                "format {spec:?}: the {} and the {} fields have no text between them, so where one ends cannot \
                 be read",
                a.label(),
                b.label()
            )));
        }
    }
    Ok(())
}
