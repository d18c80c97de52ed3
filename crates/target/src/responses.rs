//! Response construction shared by every route: the body type, the constant
//! headers, and the small plain-text error pages.
//!
//! Keeps the hot path cheap: header values are static or precomputed by the
//! caller. It must not know about routing or the filesystem.

use bytes::Bytes;
use http::header::{ALLOW, CONTENT_LENGTH, CONTENT_TYPE, SERVER};
use http::{HeaderValue, Response, StatusCode};
use http_body_util::Full;

pub(crate) type Body = Full<Bytes>;
pub(crate) type Resp = Response<Body>;

pub(crate) const SERVER_NAME: HeaderValue = HeaderValue::from_static("crest");
const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");

/// A successful response. For HEAD the body is left out but Content-Length
/// still announces the size a GET would have sent.
pub(crate) fn ok(body: Bytes, content_type: HeaderValue, content_length: HeaderValue, head: bool) -> Resp {
    let body = if head { Bytes::new() } else { body };
    let mut resp = Response::new(Full::new(body));
    let headers = resp.headers_mut();
    headers.reserve(4);
    headers.insert(SERVER, SERVER_NAME);
    headers.insert(CONTENT_TYPE, content_type);
    headers.insert(CONTENT_LENGTH, content_length);
    resp
}

/// A short plain-text error page such as `404 Not Found`.
pub(crate) fn error(status: StatusCode) -> Resp {
    let text = format!("{} {}\n", status.as_str(), status.canonical_reason().unwrap_or(""));
    let len = HeaderValue::from(text.len());
    let mut resp = ok(Bytes::from(text), TEXT_PLAIN, len, false);
    *resp.status_mut() = status;
    resp
}

pub(crate) fn method_not_allowed(allow: &'static str) -> Resp {
    let mut resp = error(StatusCode::METHOD_NOT_ALLOWED);
    resp.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
    resp
}
