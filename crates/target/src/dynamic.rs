//! `/dyn/env`: an in-process dynamic page, crest's analogue of WebBench's
//! ISAPI test. The page is crest-dynamic's environment page, the very code
//! `crest-env` (CGI) and `crest-fcgi` (FastCGI) run, filled from the request
//! with the variables a CGI script would see, so in-process, CGI and FastCGI
//! mixes do the same rendering work and transfer the same 1024 bytes.
//!
//! Owns mapping a request onto the page's variables; it must not do I/O.

use std::borrow::Cow;

use bytes::Bytes;
use crest_dynamic::env_page;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, USER_AGENT};
use http::Request;

use crate::conn_info::{self, ConnInfo};

pub(crate) const PAGE_BYTES: usize = env_page::PAGE_BYTES;
pub(crate) const SCRIPT_NAME: &str = "/dyn/env";
pub(crate) const SERVER_SOFTWARE: &str = concat!("crest-target/", env!("CARGO_PKG_VERSION"));

/// The page for `req`: each of `env_page::VARIABLES` valued as the built-in
/// target's CGI would set it (see `cgi.rs`), unset ones shown empty.
pub(crate) fn render<B>(req: &Request<B>, conn: &ConnInfo) -> Bytes {
    let headers = req.headers();
    let page = env_page::render_vars(|name| -> Option<Cow<'_, [u8]>> {
        let text = |s: &'static str| Some(Cow::Borrowed(s.as_bytes()));
        let owned = |s: String| Some(Cow::Owned(s.into_bytes()));
        match name {
            "SERVER_SOFTWARE" => text(SERVER_SOFTWARE),
            "SERVER_NAME" => owned(conn_info::server_name(headers, conn.local)),
            "SERVER_PORT" => owned(conn.local.port().to_string()),
            "SERVER_PROTOCOL" => text(conn_info::protocol(req.version())),
            "GATEWAY_INTERFACE" => text("CGI/1.1"),
            "REQUEST_METHOD" => Some(Cow::Borrowed(req.method().as_str().as_bytes())),
            "SCRIPT_NAME" => text(SCRIPT_NAME),
            // The route matches SCRIPT_NAME exactly: there is never a PATH_INFO.
            "PATH_INFO" => None,
            "QUERY_STRING" => Some(Cow::Borrowed(req.uri().query().unwrap_or("").as_bytes())),
            "REMOTE_ADDR" => owned(conn.peer.ip().to_string()),
            "REMOTE_PORT" => owned(conn.peer.port().to_string()),
            "HTTP_HOST" => conn_info::header_bytes(headers, &HOST),
            "HTTP_USER_AGENT" => conn_info::header_bytes(headers, &USER_AGENT),
            "CONTENT_TYPE" => headers.get(CONTENT_TYPE).map(|v| Cow::Borrowed(v.as_bytes())),
            // The body is not read here, so its declared length stands in
            // for the length CGI counts.
            "CONTENT_LENGTH" => {
                headers.get(CONTENT_LENGTH).filter(|v| v.as_bytes() != b"0").map(|v| Cow::Borrowed(v.as_bytes()))
            }
            "HTTPS" => conn.tls.then(|| text("on")).flatten(),
            _ => None,
        }
    });
    Bytes::copy_from_slice(&page)
}
