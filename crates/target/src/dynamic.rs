//! `/dyn/env`: an in-process dynamic page, crest's analogue of WebBench's
//! ISAPI test. Every response is an HTML page of exactly `PAGE_BYTES` bytes
//! listing the request's environment, so benchmarks measure per-request work
//! without process creation and with a fixed transfer size.
//!
//! Owns rendering, escaping and the request counter; it must not do I/O.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::header::{HOST, USER_AGENT};
use http::Request;

use crate::conn_info::{self, ConnInfo};

pub(crate) const PAGE_BYTES: usize = 1024;
pub(crate) const SCRIPT_NAME: &str = "/dyn/env";

const HEAD: &str = "<!DOCTYPE html>\n<html><head><title>crest /dyn/env</title></head>\n\
                    <body><h1>Request environment</h1>\n<table>\n";
const TAIL: &str = "</table>\n</body></html>\n";
const ROW_OVERHEAD: usize = "<tr><th></th><td></td></tr>\n".len();
/// No single value may take more than this, so one huge header cannot push
/// every other row off the page.
const MAX_VALUE_BYTES: usize = 160;
const ELLIPSIS: &str = "\u{2026}";

#[derive(Default)]
pub(crate) struct DynamicPage {
    requests: AtomicU64,
}

impl DynamicPage {
    pub(crate) fn render<B>(&self, req: &Request<B>, conn: &ConnInfo) -> Bytes {
        let count = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        let headers = req.headers();
        let rows: [(&str, &str); 14] = [
            ("REQUEST_COUNT", &count.to_string()),
            ("REQUEST_METHOD", req.method().as_str()),
            ("QUERY_STRING", req.uri().query().unwrap_or("")),
            ("SERVER_PROTOCOL", conn_info::protocol(req.version())),
            ("REMOTE_ADDR", &conn.peer.ip().to_string()),
            ("REMOTE_PORT", &conn.peer.port().to_string()),
            ("SERVER_NAME", &conn_info::server_name(headers, conn.local)),
            ("SERVER_PORT", &conn.local.port().to_string()),
            ("HTTPS", if conn.tls { "on" } else { "off" }),
            ("HTTP_HOST", conn_info::header_str(headers, HOST)),
            ("HTTP_USER_AGENT", conn_info::header_str(headers, USER_AGENT)),
            ("SCRIPT_NAME", SCRIPT_NAME),
            ("PATH_INFO", ""),
            ("SERVER_SOFTWARE", concat!("crest-target/", env!("CARGO_PKG_VERSION"))),
        ];
        Bytes::from(page(&rows))
    }
}

/// Lays out the rows and pads (or truncates) to exactly `PAGE_BYTES`.
fn page(rows: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(PAGE_BYTES);
    out.push_str(HEAD);
    let limit = PAGE_BYTES - TAIL.len();
    for (name, value) in rows {
        let escaped = escape(value);
        let value = clip(&escaped, MAX_VALUE_BYTES);
        let Some(room) = limit.checked_sub(out.len() + ROW_OVERHEAD + name.len()) else {
            break;
        };
        let value = clip(&value, room);
        if value.len() > room {
            break;
        }
        let _ = writeln!(out, "<tr><th>{name}</th><td>{value}</td></tr>");
    }
    let gap = limit - out.len();
    pad(&mut out, gap);
    out.push_str(TAIL);
    debug_assert_eq!(out.len(), PAGE_BYTES);
    out
}

/// `s` if it fits in `max` bytes, else the longest prefix that keeps
/// characters and HTML entities whole followed by an ellipsis. The result
/// can exceed `max` only when not even the ellipsis fits.
fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    let mut end = max.saturating_sub(ELLIPSIS.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    // Every '&' in escaped text starts an entity; never cut one in half.
    if let Some(amp) = s[..end].rfind('&') {
        if !s[amp..end].contains(';') {
            end = amp;
        }
    }
    if max < ELLIPSIS.len() {
        return s.into();
    }
    format!("{}{ELLIPSIS}", &s[..end]).into()
}

fn pad(out: &mut String, n: usize) {
    // An HTML comment keeps the padding invisible; very small gaps are
    // plain whitespace, which HTML ignores just as well.
    if n >= 7 {
        out.push_str("<!--");
        out.push_str(&" ".repeat(n - 7));
        out.push_str("-->");
    } else {
        out.push_str(&"\n".repeat(n));
    }
}

pub(crate) fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.bytes().any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'')) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_size_small_and_huge() {
        assert_eq!(page(&[("A", "b")]).len(), PAGE_BYTES);
        let long = "<&>".repeat(2000);
        let rows: Vec<(&str, &str)> = (0..20).map(|_| ("QUERY_STRING", long.as_str())).collect();
        let p = page(&rows);
        assert_eq!(p.len(), PAGE_BYTES);
        assert!(!p.contains("<&>"));
        assert!(p.ends_with(TAIL));
    }

    #[test]
    fn escapes_and_clips_whole_entities() {
        assert_eq!(escape("<script>"), "&lt;script&gt;");
        let e = escape("aaaa<b");
        assert_eq!(clip(&e, 8), format!("aaaa{ELLIPSIS}"));
        assert_eq!(clip("ab", 5), "ab");
    }

    #[test]
    fn every_size_is_exact() {
        for n in 0..1200 {
            let v = "x".repeat(n);
            let rows = [("A", v.as_str()), ("B", v.as_str()), ("C", v.as_str())];
            assert_eq!(page(&rows).len(), PAGE_BYTES, "n = {n}");
        }
    }
}
