//! Request encoding, checked byte for byte.

use crest_engine::protocol::{encode_request, RequestSpec, ResponseDecoder};
use crest_engine::HttpVersion;

const UA: &str = concat!("User-Agent: crest/", env!("CARGO_PKG_VERSION"), "\r\n");

fn spec<'a>(version: HttpVersion, keepalive: bool, headers: &'a [(String, String)]) -> RequestSpec<'a> {
    RequestSpec { method: "GET", path_and_query: "/", host: "example.com", version, keepalive, headers, body: None }
}

fn h(name: &str, value: &str) -> (String, String) {
    (name.to_string(), value.to_string())
}

/// Shows bytes readably when an assertion fails.
fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_bytes(actual: Vec<u8>, expected: &str) {
    assert_eq!(show(&actual), expected);
    assert_eq!(actual, expected.as_bytes());
}

#[test]
fn user_agent_carries_crate_version() {
    let out = encode_request(&spec(HttpVersion::Http11, true, &[]));
    let text = show(&out);
    let expected = format!("\r\nUser-Agent: crest/{}\r\n", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&expected), "{text:?}");
    assert_eq!(text.matches("User-Agent:").count(), 1);
}

#[test]
fn get_http11_keepalive_sends_no_connection_header() {
    let out = encode_request(&spec(HttpVersion::Http11, true, &[]));
    assert_bytes(out, &format!("GET / HTTP/1.1\r\nHost: example.com\r\n{UA}\r\n"));
}

#[test]
fn get_http11_close_sends_connection_close() {
    let out = encode_request(&spec(HttpVersion::Http11, false, &[]));
    assert_bytes(out, &format!("GET / HTTP/1.1\r\nHost: example.com\r\n{UA}Connection: close\r\n\r\n"));
}

#[test]
fn get_http10_without_keepalive_sends_no_connection_header() {
    let out = encode_request(&spec(HttpVersion::Http10, false, &[]));
    assert_bytes(out, &format!("GET / HTTP/1.0\r\nHost: example.com\r\n{UA}\r\n"));
}

#[test]
fn get_http10_keepalive_sends_connection_keep_alive() {
    let out = encode_request(&spec(HttpVersion::Http10, true, &[]));
    assert_bytes(out, &format!("GET / HTTP/1.0\r\nHost: example.com\r\n{UA}Connection: keep-alive\r\n\r\n"));
}

#[test]
fn path_and_query_and_method_are_copied_verbatim() {
    let mut s = spec(HttpVersion::Http11, true, &[]);
    s.method = "DELETE";
    s.path_and_query = "/a/b%20c?x=1&y=%2F";
    s.host = "127.0.0.1:8080";
    assert_bytes(
        encode_request(&s),
        &format!("DELETE /a/b%20c?x=1&y=%2F HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}\r\n"),
    );
}

#[test]
fn custom_headers_follow_crest_headers_in_given_order() {
    let headers = [h("X-Zeta", "1"), h("Accept", "*/*"), h("X-Alpha", "two words"), h("X-Zeta", "again")];
    let out = encode_request(&spec(HttpVersion::Http11, true, &headers));
    assert_bytes(
        out,
        &format!(
            "GET / HTTP/1.1\r\nHost: example.com\r\n{UA}\
             X-Zeta: 1\r\nAccept: */*\r\nX-Alpha: two words\r\nX-Zeta: again\r\n\r\n"
        ),
    );
}

#[test]
fn custom_headers_after_connection_close() {
    let headers = [h("Accept", "text/html")];
    let out = encode_request(&spec(HttpVersion::Http11, false, &headers));
    assert_bytes(
        out,
        &format!("GET / HTTP/1.1\r\nHost: example.com\r\n{UA}Connection: close\r\nAccept: text/html\r\n\r\n"),
    );
}

#[test]
fn user_host_replaces_crest_host() {
    let headers = [h("Host", "virtual.test")];
    let out = encode_request(&spec(HttpVersion::Http11, true, &headers));
    assert_bytes(out, &format!("GET / HTTP/1.1\r\n{UA}Host: virtual.test\r\n\r\n"));
}

#[test]
fn user_user_agent_replaces_crest_user_agent() {
    let headers = [h("User-Agent", "bench/9")];
    let out = encode_request(&spec(HttpVersion::Http11, true, &headers));
    assert_bytes(out, "GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: bench/9\r\n\r\n");
}

#[test]
fn user_connection_replaces_crest_connection_http11_close() {
    let headers = [h("Connection", "Upgrade")];
    let out = encode_request(&spec(HttpVersion::Http11, false, &headers));
    assert_bytes(out, &format!("GET / HTTP/1.1\r\nHost: example.com\r\n{UA}Connection: Upgrade\r\n\r\n"));
}

#[test]
fn user_connection_replaces_crest_connection_http10_keepalive() {
    let headers = [h("Connection", "close")];
    let out = encode_request(&spec(HttpVersion::Http10, true, &headers));
    assert_bytes(out, &format!("GET / HTTP/1.0\r\nHost: example.com\r\n{UA}Connection: close\r\n\r\n"));
}

#[test]
fn replacement_matches_header_names_case_insensitively() {
    let headers = [h("hOST", "a.test"), h("user-agent", "ua/1"), h("CONNECTION", "keep-alive")];
    let out = encode_request(&spec(HttpVersion::Http11, false, &headers));
    assert_bytes(out, "GET / HTTP/1.1\r\nhOST: a.test\r\nuser-agent: ua/1\r\nCONNECTION: keep-alive\r\n\r\n");
}

#[test]
fn all_three_replaced_keep_user_order() {
    let headers = [h("Connection", "close"), h("X-A", "1"), h("User-Agent", "u"), h("Host", "h")];
    let out = encode_request(&spec(HttpVersion::Http11, true, &headers));
    assert_bytes(out, "GET / HTTP/1.1\r\nConnection: close\r\nX-A: 1\r\nUser-Agent: u\r\nHost: h\r\n\r\n");
}

#[test]
fn post_body_gets_content_length_and_follows_head() {
    let body = b"{\"k\":\"v\"}";
    let headers = [h("Content-Type", "application/json")];
    let mut s = spec(HttpVersion::Http11, true, &headers);
    s.method = "POST";
    s.path_and_query = "/submit";
    s.body = Some(body);
    assert_bytes(
        encode_request(&s),
        &format!(
            "POST /submit HTTP/1.1\r\nHost: example.com\r\n{UA}\
             Content-Type: application/json\r\nContent-Length: 9\r\n\r\n{{\"k\":\"v\"}}"
        ),
    );
}

#[test]
fn post_body_http10_close() {
    let mut s = spec(HttpVersion::Http10, false, &[]);
    s.method = "POST";
    s.body = Some(b"a=1");
    assert_bytes(
        encode_request(&s),
        &format!("POST / HTTP/1.0\r\nHost: example.com\r\n{UA}Content-Length: 3\r\n\r\na=1"),
    );
}

#[test]
fn post_body_http11_close_orders_connection_before_content_length() {
    let mut s = spec(HttpVersion::Http11, false, &[]);
    s.method = "PUT";
    s.body = Some(b"xyz");
    assert_bytes(
        encode_request(&s),
        &format!("PUT / HTTP/1.1\r\nHost: example.com\r\n{UA}Connection: close\r\nContent-Length: 3\r\n\r\nxyz"),
    );
}

#[test]
fn empty_body_sends_content_length_zero() {
    let mut s = spec(HttpVersion::Http11, true, &[]);
    s.method = "POST";
    s.body = Some(b"");
    assert_bytes(encode_request(&s), &format!("POST / HTTP/1.1\r\nHost: example.com\r\n{UA}Content-Length: 0\r\n\r\n"));
}

#[test]
fn no_body_sends_no_content_length() {
    let out = encode_request(&spec(HttpVersion::Http11, true, &[]));
    assert!(!show(&out).to_ascii_lowercase().contains("content-length"));
    assert!(out.ends_with(b"\r\n\r\n"));
}

#[test]
fn binary_body_is_copied_exactly() {
    let body: Vec<u8> = (0..=255u8).chain(b"\r\n\r\n".iter().copied()).collect();
    let mut s = spec(HttpVersion::Http11, true, &[]);
    s.method = "POST";
    s.body = Some(&body);
    let out = encode_request(&s);
    let head = format!("POST / HTTP/1.1\r\nHost: example.com\r\n{UA}Content-Length: 260\r\n\r\n");
    assert_eq!(&out[..head.len()], head.as_bytes());
    assert_eq!(&out[head.len()..], &body[..]);
}

#[test]
fn user_content_length_is_not_duplicated() {
    let headers = [h("Content-Length", "4")];
    let mut s = spec(HttpVersion::Http11, true, &headers);
    s.method = "POST";
    s.body = Some(b"abcd");
    let out = encode_request(&s);
    assert_bytes(out, &format!("POST / HTTP/1.1\r\nHost: example.com\r\n{UA}Content-Length: 4\r\n\r\nabcd"));
}

#[test]
fn encoding_is_deterministic() {
    let headers = [h("X-A", "1")];
    let mut s = spec(HttpVersion::Http11, true, &headers);
    s.body = Some(b"hi");
    assert_eq!(encode_request(&s), encode_request(&s.clone()));
}

/// Every encoded request is a well-formed HTTP/1.x request head: each line
/// ends in CRLF, the head ends with a blank line, and the body length matches.
#[test]
fn encoded_heads_are_well_formed() {
    let headers = [h("Accept", "*/*"), h("X-Long", &"v".repeat(300))];
    for version in [HttpVersion::Http10, HttpVersion::Http11] {
        for keepalive in [false, true] {
            for body in [None, Some(&b""[..]), Some(&b"payload"[..])] {
                let mut s = spec(version, keepalive, &headers);
                s.body = body;
                let out = encode_request(&s);
                let end = out.windows(4).position(|w| w == b"\r\n\r\n").expect("head terminator") + 4;
                let head = &out[..end];
                let body_len = out.len() - end;
                assert_eq!(body_len, body.map_or(0, <[u8]>::len));
                // No bare CR or LF anywhere in the head.
                for (i, &b) in head.iter().enumerate() {
                    if b == b'\n' {
                        assert_eq!(head[i - 1], b'\r');
                    }
                    if b == b'\r' {
                        assert_eq!(head[i + 1], b'\n');
                    }
                }
                let text = show(head);
                let first = text.split("\r\n").next().unwrap();
                let want = match version {
                    HttpVersion::Http10 => "GET / HTTP/1.0",
                    HttpVersion::Http11 => "GET / HTTP/1.1",
                    HttpVersion::Http2 | HttpVersion::Http3 => unreachable!("HTTP/1 encoding only"),
                };
                assert_eq!(first, want);
                assert_eq!(text.matches("\r\nHost: ").count(), 1);
                if body.is_some() {
                    assert!(text.contains(&format!("\r\nContent-Length: {body_len}\r\n")));
                }
            }
        }
    }
}

/// Sanity check tying both halves together: the decoder is usable with a
/// HEAD request built by the encoder (HEAD responses have no body).
#[test]
fn head_request_round_trip_with_decoder() {
    let mut s = spec(HttpVersion::Http11, true, &[]);
    s.method = "HEAD";
    let out = encode_request(&s);
    assert!(out.starts_with(b"HEAD / HTTP/1.1\r\n"));
    let mut d = ResponseDecoder::new(8192, 1 << 20, true);
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 12345\r\n\r\n";
    let (used, r) = d.decode(resp).unwrap();
    assert_eq!(used, resp.len());
    let r = r.expect("complete");
    assert_eq!(r.body_bytes, 0);
    assert!(r.keep_alive);
}
