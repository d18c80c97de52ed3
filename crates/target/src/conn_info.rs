//! Facts about a connection and request that both the dynamic page and CGI
//! expose as "environment" values (RFC 3875 meta-variable semantics).
//!
//! Pure functions over already-parsed data; no I/O here.

use std::borrow::Cow;
use std::net::SocketAddr;

use http::header::{HeaderName, HOST};
use http::{HeaderMap, Version};

/// The connection a request arrived on. `Copy` so each request can carry it
/// without touching shared reference counts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnInfo {
    pub peer: SocketAddr,
    pub local: SocketAddr,
    pub tls: bool,
}

pub(crate) fn protocol(version: Version) -> &'static str {
    match version {
        Version::HTTP_09 => "HTTP/0.9",
        Version::HTTP_10 => "HTTP/1.0",
        Version::HTTP_2 => "HTTP/2.0",
        Version::HTTP_3 => "HTTP/3.0",
        _ => "HTTP/1.1",
    }
}

/// SERVER_NAME: the host the client asked for (Host without port), falling
/// back to the address the connection was accepted on.
pub(crate) fn server_name(headers: &HeaderMap, local: SocketAddr) -> String {
    let host = headers.get(HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:_".contains(&b));
    if valid {
        name.to_owned()
    } else {
        local.ip().to_string()
    }
}

/// A header's value as its HTTP_* variable holds it: repeated fields joined
/// with ", " (RFC 3875 4.1.18), `None` when absent.
pub(crate) fn header_bytes<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<Cow<'a, [u8]>> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    let Some(second) = values.next() else {
        return Some(Cow::Borrowed(first.as_bytes()));
    };
    let mut joined = first.as_bytes().to_vec();
    for v in std::iter::once(second).chain(values) {
        joined.extend_from_slice(b", ");
        joined.extend_from_slice(v.as_bytes());
    }
    Some(Cow::Owned(joined))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn server_name_from_host() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let mut h = HeaderMap::new();
        assert_eq!(server_name(&h, local), "127.0.0.1");
        h.insert(HOST, HeaderValue::from_static("example.org:8080"));
        assert_eq!(server_name(&h, local), "example.org");
        h.insert(HOST, HeaderValue::from_static("[::1]:8080"));
        assert_eq!(server_name(&h, local), "::1");
        h.insert(HOST, HeaderValue::from_static("<bad>"));
        assert_eq!(server_name(&h, local), "127.0.0.1");
    }
}
