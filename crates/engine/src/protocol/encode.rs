//! Request encoding. A run sends the same bytes over and over, so the
//! request is encoded once, up front; the hot path only copies slices of it.

use crate::config::HttpVersion;

/// What to put on the wire for one request.
#[derive(Debug, Clone)]
pub struct RequestSpec<'a> {
    /// Method token, e.g. `GET`.
    pub method: &'a str,
    /// Origin-form target: path plus optional `?query`.
    pub path_and_query: &'a str,
    /// Value of the `Host` header (host, plus `:port` when not the default).
    pub host: &'a str,
    /// Wire version.
    pub version: HttpVersion,
    /// Whether the connection should persist after the response.
    pub keepalive: bool,
    /// Extra headers in order; a `Host`, `Connection` or `User-Agent` here
    /// replaces crest's own.
    pub headers: &'a [(String, String)],
    /// Body bytes; sent with `Content-Length`.
    pub body: Option<&'a [u8]>,
}

/// Encodes `spec` into request bytes (head and body).
pub fn encode_request(spec: &RequestSpec<'_>) -> Vec<u8> {
    let has = |name: &str| spec.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut out = Vec::with_capacity(128 + spec.body.map_or(0, <[u8]>::len));
    push_line(&mut out, &[spec.method, " ", spec.path_and_query, " ", version_token(spec.version)]);
    if !has("host") {
        push_line(&mut out, &["Host: ", spec.host]);
    }
    if !has("user-agent") {
        push_line(&mut out, &[USER_AGENT]);
    }
    if !has("connection") {
        if let Some(line) = connection_line(spec.version, spec.keepalive) {
            push_line(&mut out, &[line]);
        }
    }
    for (name, value) in spec.headers {
        push_line(&mut out, &[name, ": ", value]);
    }
    if let Some(body) = spec.body {
        if !has("content-length") {
            push_line(&mut out, &["Content-Length: ", &body.len().to_string()]);
        }
    }
    out.extend_from_slice(b"\r\n");
    if let Some(body) = spec.body {
        out.extend_from_slice(body);
    }
    out
}

/// crest's `User-Agent` header line (without CRLF).
pub const USER_AGENT: &str = concat!("User-Agent: crest/", env!("CARGO_PKG_VERSION"));

/// The version as the request line writes it.
pub fn version_token(version: HttpVersion) -> &'static str {
    match version {
        HttpVersion::Http10 => "HTTP/1.0",
        HttpVersion::Http11 => "HTTP/1.1",
        // Never on the wire: HTTP/2 and HTTP/3 have no request line.
        HttpVersion::Http2 => "HTTP/2.0",
        HttpVersion::Http3 => "HTTP/3",
    }
}

/// The `Connection` header line (without CRLF) a request needs for the
/// connection to persist (`keepalive`) or not: each version's default needs
/// none, only the exception is sent.
pub fn connection_line(version: HttpVersion, keepalive: bool) -> Option<&'static str> {
    match (version, keepalive) {
        (HttpVersion::Http10, true) => Some("Connection: keep-alive"),
        (HttpVersion::Http11, false) => Some("Connection: close"),
        _ => None,
    }
}

fn push_line(out: &mut Vec<u8>, parts: &[&str]) {
    for part in parts {
        out.extend_from_slice(part.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}
