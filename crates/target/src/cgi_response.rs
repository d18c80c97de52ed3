//! Parsing a CGI program's output (RFC 3875 section 6) into an HTTP response.
//!
//! Pure function over the captured bytes: it never runs processes and never
//! panics; anything that is not a well-formed CGI response is `None`, which
//! the caller turns into a 500.

use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::Full;

use crate::responses::{Resp, SERVER_NAME};

/// More header lines than any sane script emits; beyond this it is garbage.
const MAX_HEADER_LINES: usize = 100;

pub(crate) fn parse(output: Vec<u8>) -> Option<Resp> {
    let output = Bytes::from(output);
    let mut resp = Response::new(Full::default());
    let mut status = None;
    let mut pos = 0;
    let mut lines = 0;
    loop {
        let rest = &output[pos..];
        let nl = rest.iter().position(|&b| b == b'\n')?;
        let line = &rest[..nl];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        pos += nl + 1;
        if line.is_empty() {
            break;
        }
        lines += 1;
        if lines > MAX_HEADER_LINES {
            return None;
        }
        let colon = line.iter().position(|&b| b == b':')?;
        let name = HeaderName::from_bytes(&line[..colon]).ok()?;
        let value = HeaderValue::from_bytes(line[colon + 1..].trim_ascii()).ok()?;
        if name.as_str() == "status" {
            status = Some(parse_status(&value)?);
        } else if !is_managed_by_server(&name) {
            resp.headers_mut().append(name, value);
        }
    }
    let headers = resp.headers();
    let location = headers.contains_key(header::LOCATION);
    // A document response must say what it is; a redirect or an explicit
    // status is enough otherwise. Anything else is not a CGI response.
    if status.is_none() && !location && !headers.contains_key(header::CONTENT_TYPE) {
        return None;
    }
    *resp.status_mut() = match status {
        Some(s) => s,
        None if location => StatusCode::FOUND,
        None => StatusCode::OK,
    };
    resp.headers_mut().entry(header::SERVER).or_insert(SERVER_NAME);
    *resp.body_mut() = Full::new(output.slice(pos..));
    Some(resp)
}

/// `Status: 404 Not Found` -> 404. The reason phrase is not kept: hyper
/// writes the canonical one.
fn parse_status(value: &HeaderValue) -> Option<StatusCode> {
    let code = value.to_str().ok()?.split_ascii_whitespace().next()?;
    if code.len() != 3 {
        return None;
    }
    StatusCode::from_bytes(code.as_bytes()).ok()
}

/// Framing and connection headers are the server's business: the script
/// cannot know how the response is transferred.
fn is_managed_by_server(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "content-length" | "transfer-encoding" | "connection" | "keep-alive" | "upgrade" | "te" | "trailer"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn body(resp: Resp) -> Bytes {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(resp.into_body().collect()).unwrap().to_bytes()
    }

    #[test]
    fn document_response() {
        let r = parse(b"Content-Type: text/plain\r\nX-A: 1\r\n\r\nhello\n".to_vec()).unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()["content-type"], "text/plain");
        assert_eq!(r.headers()["x-a"], "1");
        assert_eq!(r.headers()["server"], "crest");
        assert_eq!(body(r), "hello\n");
    }

    #[test]
    fn status_and_location() {
        let r = parse(b"Status: 404 Not Found\nContent-Type: text/html\n\n".to_vec()).unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        let r = parse(b"Location: http://x/\n\n".to_vec()).unwrap();
        assert_eq!(r.status(), StatusCode::FOUND);
        let r = parse(b"Content-Type: a/b\nContent-Length: 99\nConnection: close\n\nx".to_vec()).unwrap();
        assert!(!r.headers().contains_key("content-length"));
        assert!(!r.headers().contains_key("connection"));
    }

    #[test]
    fn garbage_is_rejected() {
        for bad in [
            &b""[..],
            b"hello world",
            b"no colon here\n\n",
            b"X-Only: 1\n\nbody",
            b"Status: abc\n\n",
            b"Bad Name: x\n\n",
        ] {
            assert!(parse(bad.to_vec()).is_none(), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
