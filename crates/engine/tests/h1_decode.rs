//! Response framing (RFC 9112 §6.3) on raw bytes: whole, byte by byte, split
//! at every index, pipelined, and malformed.

use crest_engine::protocol::chunked::ChunkError;
use crest_engine::protocol::{DecodeError, Response, ResponseDecoder};

const MAX_HEAD: usize = 8192;
const MAX_BODY: u64 = 1 << 20;

fn decoder() -> ResponseDecoder {
    ResponseDecoder::new(MAX_HEAD, MAX_BODY, false)
}

fn head_decoder() -> ResponseDecoder {
    ResponseDecoder::new(MAX_HEAD, MAX_BODY, true)
}

/// Length of the first head in `bytes` (through the blank line).
fn head_len(bytes: &[u8]) -> usize {
    bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("a blank line") + 4
}

fn resp(status: u16, head_bytes: usize, body_bytes: u64, keep_alive: bool) -> Response {
    Response { status, head_bytes: head_bytes as u64, body_bytes, keep_alive }
}

/// Feeds `parts` in order, re-feeding whatever a call leaves unconsumed, as
/// the engine does. Returns every response and the total bytes consumed.
/// Checks the framing contract on every call: nothing is left unconsumed
/// unless a response ended.
fn feed(d: &mut ResponseDecoder, parts: &[&[u8]]) -> Result<(Vec<Response>, usize), DecodeError> {
    let mut out = Vec::new();
    let mut total = 0;
    for part in parts {
        let mut rest = *part;
        loop {
            let (used, r) = d.decode(rest)?;
            assert!(used <= rest.len(), "consumed {used} of {}", rest.len());
            total += used;
            rest = &rest[used..];
            match r {
                Some(r) => out.push(r),
                None => {
                    assert!(rest.is_empty(), "{} bytes left unconsumed without a response", rest.len());
                    break;
                }
            }
            if rest.is_empty() {
                break;
            }
        }
    }
    Ok((out, total))
}

/// Asserts `bytes` decode to exactly `want` (and consume every byte) when fed
/// whole, byte by byte, split at every index and split at every pair of indices
/// (the latter only for short inputs), each time on a fresh decoder made by `mk`.
fn assert_every_split(mk: impl Fn() -> ResponseDecoder, bytes: &[u8], want: &[Response]) {
    let check = |parts: &[&[u8]], how: &str| {
        let mut d = mk();
        let (rs, used) = feed(&mut d, parts).unwrap_or_else(|e| panic!("{how}: {e}"));
        assert_eq!(rs, want, "{how}");
        assert_eq!(used, bytes.len(), "{how}: consumed counts do not add up");
        assert!(d.is_idle(), "{how}: decoder not idle after the last response");
        assert_eq!(d.decode_eof(), Ok(None), "{how}: nothing should be pending");
    };
    check(&[bytes], "whole");
    let bytes1: Vec<&[u8]> = bytes.chunks(1).collect();
    check(&bytes1, "byte by byte");
    for i in 0..=bytes.len() {
        check(&[&bytes[..i], &bytes[i..]], &format!("split at {i}"));
    }
    if bytes.len() <= 200 {
        for i in 0..=bytes.len() {
            for j in i..=bytes.len() {
                check(&[&bytes[..i], &bytes[i..j], &bytes[j..]], &format!("split at {i},{j}"));
            }
        }
    }
}

// ---- Content-Length --------------------------------------------------------

const CL: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nX-Extra: a, b\r\n\r\nHello, world!";

#[test]
fn content_length_whole() {
    let mut d = decoder();
    assert!(d.is_idle());
    let (used, r) = d.decode(CL).unwrap();
    assert_eq!(used, CL.len());
    assert_eq!(r, Some(resp(200, CL.len() - 13, 13, true)));
    assert!(d.is_idle());
}

#[test]
fn content_length_every_split() {
    assert_every_split(decoder, CL, &[resp(200, CL.len() - 13, 13, true)]);
}

#[test]
fn content_length_zero() {
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    assert_every_split(decoder, bytes, &[resp(200, bytes.len(), 0, true)]);
}

#[test]
fn content_length_body_looks_like_a_response() {
    let body = b"HTTP/1.1 500 X\r\n\r\n";
    let bytes = [&b"HTTP/1.1 201 Created\r\nContent-Length: 18\r\n\r\n"[..], body].concat();
    assert_every_split(decoder, &bytes, &[resp(201, bytes.len() - 18, 18, true)]);
}

#[test]
fn content_length_header_name_and_whitespace_variants() {
    for field in
        ["content-length: 4", "CONTENT-LENGTH: 4", "Content-Length:4", "Content-Length:   4   ", "Content-Length: 0004"]
    {
        let bytes = format!("HTTP/1.1 200 OK\r\n{field}\r\n\r\nbody");
        let mut d = decoder();
        let (used, r) = d.decode(bytes.as_bytes()).unwrap();
        assert_eq!(used, bytes.len(), "{field:?}");
        assert_eq!(r, Some(resp(200, bytes.len() - 4, 4, true)), "{field:?}");
    }
}

#[test]
fn content_length_repeated_with_same_value_is_accepted() {
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc";
    let mut d = decoder();
    assert_eq!(d.decode(bytes), Ok((bytes.len(), Some(resp(200, bytes.len() - 3, 3, true)))));
}

#[test]
fn content_length_large_body_fed_in_pieces() {
    let n = 1_000_000usize;
    let mut bytes = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    let head = bytes.len();
    bytes.extend(std::iter::repeat_n(b'b', n));
    let parts: Vec<&[u8]> = bytes.chunks(16 * 1024).collect();
    let mut d = decoder();
    let (rs, used) = feed(&mut d, &parts).unwrap();
    assert_eq!(rs, vec![resp(200, head, n as u64, true)]);
    assert_eq!(used, bytes.len());
}

#[test]
fn content_length_exactly_max_body() {
    let mut d = ResponseDecoder::new(MAX_HEAD, 5, false);
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    assert_eq!(d.decode(bytes), Ok((bytes.len(), Some(resp(200, bytes.len() - 5, 5, true)))));
}

#[test]
fn status_codes_and_reason_phrases() {
    for (line, status) in [
        ("HTTP/1.1 200 OK", 200),
        ("HTTP/1.1 404 Not Found", 404),
        ("HTTP/1.1 500 Internal Server Error", 500),
        ("HTTP/1.1 302 ", 302),
        ("HTTP/1.1 299 Whatever You Like", 299),
        ("HTTP/1.1 599 x", 599),
    ] {
        let bytes = format!("{line}\r\nContent-Length: 2\r\n\r\nok");
        let mut d = decoder();
        let (used, r) = d.decode(bytes.as_bytes()).unwrap();
        assert_eq!(used, bytes.len(), "{line:?}");
        assert_eq!(r.map(|r| r.status), Some(status), "{line:?}");
    }
}

#[test]
fn many_header_fields() {
    let mut bytes = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..40 {
        bytes.extend_from_slice(format!("X-Header-{i}: value {i}\r\n").as_bytes());
    }
    bytes.extend_from_slice(b"Content-Length: 1\r\n\r\n!");
    let mut d = decoder();
    assert_eq!(d.decode(&bytes), Ok((bytes.len(), Some(resp(200, bytes.len() - 1, 1, true)))));
}

// ---- pipelining ------------------------------------------------------------

#[test]
fn pipelined_two_responses_in_one_buffer() {
    let first = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst";
    let second = b"HTTP/1.1 201 Created\r\nContent-Length: 6\r\n\r\nsecond";
    let bytes = [&first[..], &second[..]].concat();
    let mut d = decoder();
    let (used, r) = d.decode(&bytes).unwrap();
    assert!(used < bytes.len());
    assert_eq!(used, first.len());
    assert_eq!(r, Some(resp(200, first.len() - 5, 5, true)));
    assert!(d.is_idle());
    let (used2, r2) = d.decode(&bytes[used..]).unwrap();
    assert_eq!(used2, second.len());
    assert_eq!(r2, Some(resp(201, second.len() - 6, 6, true)));
    assert!(d.is_idle());
}

#[test]
fn pipelined_mixed_framings_every_split() {
    let a = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
    let b = b"HTTP/1.1 204 No Content\r\n\r\n";
    let c = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x\r\nhi\r\n0\r\nT: 1\r\n\r\n";
    let e = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n";
    let f = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let g = b"HTTP/1.1 503 Busy\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy";
    let bytes = [&a[..], b, c, e, f, g].concat();
    let want = [
        resp(200, a.len() - 3, 3, true),
        resp(204, b.len(), 0, true),
        resp(200, head_len(c), 2, true),
        resp(304, e.len(), 0, true),
        resp(200, f.len() - 25, 0, true),
        resp(503, g.len() - 4, 4, false),
    ];
    assert_eq!(f.len() - 25, head_len(&f[25..]));
    assert_every_split(decoder, &bytes, &want);
}

#[test]
fn pipelined_responses_returned_one_per_call() {
    let one = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
    let bytes: Vec<u8> = one.iter().copied().cycle().take(one.len() * 10).collect();
    let mut d = decoder();
    let mut off = 0;
    for k in 0..10 {
        let (used, r) = d.decode(&bytes[off..]).unwrap();
        assert_eq!(used, one.len(), "response {k}");
        assert_eq!(r, Some(resp(200, one.len() - 1, 1, true)));
        off += used;
    }
    assert_eq!(off, bytes.len());
}

#[test]
fn pipelined_second_response_partial() {
    let first = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let second = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd";
    for cut in 1..second.len() {
        let bytes = [&first[..], &second[..cut]].concat();
        let mut d = decoder();
        let (used, r) = d.decode(&bytes).unwrap();
        assert_eq!((used, r), (first.len(), Some(resp(200, first.len() - 2, 2, true))));
        let (used2, r2) = d.decode(&bytes[used..]).unwrap();
        assert_eq!((used2, r2), (cut, None), "cut at {cut}");
        assert!(!d.is_idle());
        let (used3, r3) = d.decode(&second[cut..]).unwrap();
        assert_eq!(used3, second.len() - cut);
        assert_eq!(r3, Some(resp(200, second.len() - 4, 4, true)));
    }
}

/// The head limit applies to each response, not to the buffer holding several.
#[test]
fn pipelined_heads_each_under_limit_but_buffer_over() {
    let one = b"HTTP/1.1 200 OK\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\nContent-Length: 0\r\n\r\n";
    let limit = one.len() + 4;
    let bytes: Vec<u8> = one.iter().copied().cycle().take(one.len() * 5).collect();
    let want = vec![resp(200, one.len(), 0, true); 5];
    assert_every_split(|| ResponseDecoder::new(limit, MAX_BODY, false), &bytes, &want);
}

// ---- HEAD ------------------------------------------------------------------

#[test]
fn head_request_ignores_content_length() {
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n";
    assert_every_split(head_decoder, bytes, &[resp(200, bytes.len(), 0, true)]);
}

#[test]
fn head_request_ignores_chunked() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_every_split(head_decoder, bytes, &[resp(200, bytes.len(), 0, true)]);
}

#[test]
fn head_request_ignores_content_length_above_max_body() {
    let mut d = ResponseDecoder::new(MAX_HEAD, 10, true);
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n";
    assert_eq!(d.decode(bytes), Ok((bytes.len(), Some(resp(200, bytes.len(), 0, true)))));
}

#[test]
fn head_request_http10_without_length_is_not_close_delimited() {
    let bytes = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n";
    let mut d = head_decoder();
    assert_eq!(d.decode(bytes), Ok((bytes.len(), Some(resp(200, bytes.len(), 0, false)))));
    assert_eq!(d.decode_eof(), Ok(None));
}

#[test]
fn head_request_pipelined() {
    let one = b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n";
    let bytes = [&one[..], &one[..], &one[..]].concat();
    let want = vec![resp(200, one.len(), 0, true); 3];
    assert_every_split(head_decoder, &bytes, &want);
    // The first call stops right after the first head.
    let mut d = head_decoder();
    let (used, r) = d.decode(&bytes).unwrap();
    assert_eq!((used, r), (one.len(), Some(resp(200, one.len(), 0, true))));
}

#[test]
fn head_request_error_status_has_no_body() {
    let bytes = b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\n";
    let mut d = head_decoder();
    assert_eq!(d.decode(bytes), Ok((bytes.len(), Some(resp(404, bytes.len(), 0, true)))));
}

// ---- 204 / 304 ---------------------------------------------------------------

#[test]
fn no_content_204_without_length() {
    let bytes = b"HTTP/1.1 204 No Content\r\nDate: today\r\n\r\n";
    assert_every_split(decoder, bytes, &[resp(204, bytes.len(), 0, true)]);
}

#[test]
fn not_modified_304_without_length() {
    let bytes = b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n";
    assert_every_split(decoder, bytes, &[resp(304, bytes.len(), 0, true)]);
}

#[test]
fn not_modified_304_ignores_content_length() {
    // A 304 may carry the Content-Length of the selected representation.
    let bytes = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 500\r\n\r\n";
    assert_every_split(decoder, bytes, &[resp(304, bytes.len(), 0, true)]);
}

#[test]
fn no_content_204_ignores_transfer_encoding() {
    let bytes = b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_every_split(decoder, bytes, &[resp(204, bytes.len(), 0, true)]);
}

#[test]
fn no_content_204_then_next_response_in_same_buffer() {
    let a = b"HTTP/1.1 204 No Content\r\n\r\n";
    let b = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    let bytes = [&a[..], &b[..]].concat();
    let mut d = decoder();
    assert_eq!(d.decode(&bytes), Ok((a.len(), Some(resp(204, a.len(), 0, true)))));
    assert_eq!(d.decode(&bytes[a.len()..]), Ok((b.len(), Some(resp(200, b.len() - 2, 2, true)))));
}

#[test]
fn http10_204_is_complete_without_close() {
    let bytes = b"HTTP/1.0 204 No Content\r\n\r\n";
    let mut d = decoder();
    assert_eq!(d.decode(bytes), Ok((bytes.len(), Some(resp(204, bytes.len(), 0, false)))));
}

// ---- 1xx interim responses -------------------------------------------------

const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

#[test]
fn continue_then_ok() {
    let fin = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone";
    let bytes = [CONTINUE, &fin[..]].concat();
    let mut d = decoder();
    let (used, r) = d.decode(&bytes).unwrap();
    assert_eq!(used, bytes.len());
    // head_bytes counts only the final response's head.
    assert_eq!(r, Some(resp(200, fin.len() - 4, 4, true)));
}

#[test]
fn continue_then_ok_every_split() {
    let fin = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone";
    let bytes = [CONTINUE, &fin[..]].concat();
    assert_every_split(decoder, &bytes, &[resp(200, fin.len() - 4, 4, true)]);
}

#[test]
fn continue_alone_yields_nothing() {
    let mut d = decoder();
    assert_eq!(d.decode(CONTINUE), Ok((CONTINUE.len(), None)));
    let fin = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(d.decode(fin), Ok((fin.len(), Some(resp(404, fin.len(), 0, true)))));
}

#[test]
fn several_interim_responses_then_final() {
    let early = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
    let processing = b"HTTP/1.1 102 Processing\r\n\r\n";
    let fin = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let bytes = [CONTINUE, early, processing, early, &fin[..]].concat();
    assert_every_split(decoder, &bytes, &[resp(200, head_len(fin), 3, true)]);
}

#[test]
fn interim_with_content_length_has_no_body() {
    let interim = b"HTTP/1.1 100 Continue\r\nContent-Length: 10\r\n\r\n";
    let fin = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let bytes = [&interim[..], &fin[..]].concat();
    assert_every_split(decoder, &bytes, &[resp(200, fin.len() - 2, 2, true)]);
}

#[test]
fn interim_then_close_delimited_final() {
    let fin = b"HTTP/1.0 200 OK\r\n\r\nstream";
    let bytes = [CONTINUE, &fin[..]].concat();
    let mut d = decoder();
    assert_eq!(d.decode(&bytes), Ok((bytes.len(), None)));
    assert_eq!(d.decode_eof(), Ok(Some(resp(200, fin.len() - 6, 6, false))));
}

/// The head limit applies to the final head alone: an interim response and
/// a partial final head together may exceed it.
#[test]
fn interim_plus_partial_final_head_under_per_head_limit() {
    let fin = b"HTTP/1.1 200 OK\r\nX-A: 0123456789\r\nContent-Length: 0\r\n\r\n";
    let limit = fin.len();
    let bytes = [CONTINUE, &fin[..]].concat();
    for cut in CONTINUE.len()..bytes.len() {
        let mut d = ResponseDecoder::new(limit, MAX_BODY, false);
        let (rs, used) = feed(&mut d, &[&bytes[..cut], &bytes[cut..]]).unwrap();
        assert_eq!(rs, vec![resp(200, fin.len(), 0, true)], "cut at {cut}");
        assert_eq!(used, bytes.len());
    }
}

// ---- connection persistence ------------------------------------------------

#[test]
fn http10_without_length_reads_until_close() {
    let head = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n";
    let mut d = decoder();
    assert_eq!(d.decode(head), Ok((head.len(), None)));
    assert!(!d.is_idle());
    assert_eq!(d.decode(b"some "), Ok((5, None)));
    assert_eq!(d.decode(b"body"), Ok((4, None)));
    assert_eq!(d.decode(b""), Ok((0, None)));
    assert_eq!(d.decode_eof(), Ok(Some(resp(200, head.len(), 9, false))));
    assert!(d.is_idle());
    assert_eq!(d.decode_eof(), Ok(None));
}

#[test]
fn http10_without_length_every_split() {
    let bytes = b"HTTP/1.0 200 OK\r\nServer: x\r\n\r\n0123456789\r\n\r\nHTTP/1.1 200 OK\r\n\r\n";
    let head = head_len(bytes);
    let want = resp(200, head, (bytes.len() - head) as u64, false);
    let run = |parts: &[&[u8]], how: &str| {
        let mut d = decoder();
        let (rs, used) = feed(&mut d, parts).unwrap();
        assert!(rs.is_empty(), "{how}: completed before close");
        assert_eq!(used, bytes.len(), "{how}");
        assert_eq!(d.decode_eof(), Ok(Some(want)), "{how}");
    };
    run(&[bytes], "whole");
    run(&bytes.chunks(1).collect::<Vec<_>>(), "byte by byte");
    for i in 0..=bytes.len() {
        run(&[&bytes[..i], &bytes[i..]], &format!("split at {i}"));
    }
}

#[test]
fn http10_without_length_empty_body_then_close() {
    let bytes = b"HTTP/1.0 200 OK\r\n\r\n";
    let mut d = decoder();
    assert_eq!(d.decode(bytes), Ok((bytes.len(), None)));
    assert_eq!(d.decode_eof(), Ok(Some(resp(200, bytes.len(), 0, false))));
}

#[test]
fn http11_without_length_reads_until_close() {
    let bytes = b"HTTP/1.1 200 OK\r\n\r\nabc";
    let mut d = decoder();
    assert_eq!(d.decode(bytes), Ok((bytes.len(), None)));
    assert_eq!(d.decode_eof(), Ok(Some(resp(200, bytes.len() - 3, 3, false))));
}

#[test]
fn until_close_keep_alive_header_does_not_make_it_persistent() {
    let bytes = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nabc";
    let mut d = decoder();
    assert_eq!(d.decode(bytes), Ok((bytes.len(), None)));
    assert_eq!(d.decode_eof(), Ok(Some(resp(200, bytes.len() - 3, 3, false))));
}

#[test]
fn until_close_over_max_body() {
    let mut d = ResponseDecoder::new(MAX_HEAD, 8, false);
    assert_eq!(d.decode(b"HTTP/1.0 200 OK\r\n\r\n12345").map(|(_, r)| r), Ok(None));
    assert_eq!(d.decode(b"678"), Ok((3, None)));
    assert_eq!(d.decode(b"9"), Err(DecodeError::BodyTooLarge(8)));
}

#[test]
fn http10_keep_alive_with_content_length() {
    let bytes = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok";
    assert_every_split(decoder, bytes, &[resp(200, bytes.len() - 2, 2, true)]);
}

#[test]
fn http10_keep_alive_token_case_and_lists() {
    for value in ["Keep-Alive", "KEEP-ALIVE", "foo, keep-alive", " keep-alive , bar", ", keep-alive,"] {
        let bytes = format!("HTTP/1.0 200 OK\r\nConnection: {value}\r\nContent-Length: 0\r\n\r\n");
        let mut d = decoder();
        let (_, r) = d.decode(bytes.as_bytes()).unwrap();
        assert_eq!(r.map(|r| r.keep_alive), Some(true), "{value:?}");
    }
}

#[test]
fn http10_with_content_length_defaults_to_close() {
    let bytes = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
    assert_every_split(decoder, bytes, &[resp(200, bytes.len() - 2, 2, false)]);
}

#[test]
fn http11_defaults_to_keep_alive() {
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let mut d = decoder();
    assert_eq!(d.decode(bytes), Ok((bytes.len(), Some(resp(200, bytes.len() - 2, 2, true)))));
}

#[test]
fn http11_connection_close() {
    let bytes = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
    assert_every_split(decoder, bytes, &[resp(200, bytes.len() - 2, 2, false)]);
}

#[test]
fn http11_connection_close_token_case_and_lists() {
    for value in
        ["Close", "CLOSE", "upgrade, close", "close, keep-alive", "keep-alive, close", "te,close", "close,", ",,close"]
    {
        let bytes = format!("HTTP/1.1 200 OK\r\nConnection: {value}\r\nContent-Length: 0\r\n\r\n");
        let mut d = decoder();
        let (_, r) = d.decode(bytes.as_bytes()).unwrap();
        assert_eq!(r.map(|r| r.keep_alive), Some(false), "{value:?}");
    }
}

#[test]
fn http11_connection_close_in_second_field() {
    let bytes = b"HTTP/1.1 200 OK\r\nConnection: te\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    let mut d = decoder();
    let (_, r) = d.decode(bytes).unwrap();
    assert_eq!(r.map(|r| r.keep_alive), Some(false));
}

#[test]
fn connection_token_must_match_whole() {
    // "closed" and "not-close" are other tokens, not "close".
    for value in ["closed", "not-close", "keep-alive-ish"] {
        let bytes = format!("HTTP/1.1 200 OK\r\nConnection: {value}\r\nContent-Length: 0\r\n\r\n");
        let mut d = decoder();
        let (_, r) = d.decode(bytes.as_bytes()).unwrap();
        assert_eq!(r.map(|r| r.keep_alive), Some(true), "{value:?}");
    }
}

#[test]
fn keep_alive_is_per_response() {
    let a = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let b = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    let c = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n";
    let bytes = [&a[..], b, c, a].concat();
    let want = [
        resp(200, a.len(), 0, true),
        resp(200, b.len(), 0, false),
        resp(200, c.len(), 0, true),
        resp(200, a.len(), 0, true),
    ];
    assert_every_split(decoder, &bytes, &want);
}

// ---- chunked through the response decoder --------------------------------

const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
a;foo=bar\r\n0123456789\r\nF\r\nabcdefghijklmno\r\nf; q=\"x\"\r\npqrstuvwxyzABCD\r\n0\r\nX-Trailer: yes\r\nX-Another: 2\r\n\r\n";

#[test]
fn chunked_with_extensions_and_trailers_every_split() {
    assert_every_split(decoder, CHUNKED, &[resp(200, head_len(CHUNKED), 40, true)]);
}

#[test]
fn chunked_then_content_length_pipelined() {
    let next = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!";
    let bytes = [CHUNKED, &next[..]].concat();
    let mut d = decoder();
    assert_eq!(d.decode(&bytes), Ok((CHUNKED.len(), Some(resp(200, head_len(CHUNKED), 40, true)))));
    assert_eq!(d.decode(&bytes[CHUNKED.len()..]), Ok((next.len(), Some(resp(200, next.len() - 1, 1, true)))));
}

#[test]
fn chunked_over_max_body() {
    let mut d = ResponseDecoder::new(MAX_HEAD, 39, false);
    assert_eq!(d.decode(CHUNKED), Err(DecodeError::BodyTooLarge(39)));
    let mut d = ResponseDecoder::new(MAX_HEAD, 39, false);
    assert_eq!(feed(&mut d, &CHUNKED.chunks(3).collect::<Vec<_>>()), Err(DecodeError::BodyTooLarge(39)));
    let mut d = ResponseDecoder::new(MAX_HEAD, 40, false);
    assert_eq!(d.decode(CHUNKED), Ok((CHUNKED.len(), Some(resp(200, head_len(CHUNKED), 40, true)))));
}

#[test]
fn chunked_bad_size() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::Chunked(ChunkError::BadSize)));
}

#[test]
fn chunked_missing_crlf_after_data() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcde\r\n0\r\n\r\n";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::Chunked(ChunkError::BadDelimiter)));
}

#[test]
fn chunked_too_long_size() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n123456789abcdef01\r\n";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::Chunked(ChunkError::BadSize)));
}

// ---- malformed heads ---------------------------------------------------------

/// Feeds `bytes` whole, byte by byte and split at every index: each way must
/// fail with an error matching `ok_err`, and never yield a response.
fn assert_fails_every_split(mk: impl Fn() -> ResponseDecoder, bytes: &[u8], ok_err: impl Fn(&DecodeError) -> bool) {
    let check = |parts: &[&[u8]], how: &str| {
        let mut d = mk();
        match feed(&mut d, parts) {
            Err(e) => assert!(ok_err(&e), "{how}: unexpected error {e:?}"),
            Ok((rs, _)) => panic!("{how}: accepted {:?} as {rs:?}", String::from_utf8_lossy(bytes)),
        }
    };
    check(&[bytes], "whole");
    check(&bytes.chunks(1).collect::<Vec<_>>(), "byte by byte");
    for i in 0..=bytes.len() {
        check(&[&bytes[..i], &bytes[i..]], &format!("split at {i}"));
    }
}

fn is_head_error(e: &DecodeError) -> bool {
    matches!(e, DecodeError::Head(_))
}

#[test]
fn bad_status_code() {
    assert!(matches!(decoder().decode(b"HTTP/1.1 abc OK\r\n\r\n"), Err(DecodeError::Head(_))));
    assert_fails_every_split(decoder, b"HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n", is_head_error);
}

#[test]
fn garbage_instead_of_status_line() {
    assert!(matches!(decoder().decode(b"hello\r\n\r\n"), Err(DecodeError::Head(_))));
    assert_fails_every_split(decoder, b"hello\r\n\r\n", is_head_error);
}

#[test]
fn other_bad_status_lines() {
    for line in [
        &b"HTTP/1.1 20 OK\r\n\r\n"[..],
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/2.0 200 OK\r\n\r\n",
        b"HTTP/1.1200 OK\r\n\r\n",
        b"http/1.1 200 OK\r\n\r\n",
        b"ICY 200 OK\r\n\r\n",
        b"\x00\x01\x02\x03\r\n\r\n",
    ] {
        assert_fails_every_split(decoder, line, is_head_error);
    }
}

#[test]
fn bad_header_line() {
    assert_fails_every_split(decoder, b"HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", is_head_error);
    assert_fails_every_split(decoder, b"HTTP/1.1 200 OK\r\nBad\x01Name: v\r\n\r\n", is_head_error);
}

#[test]
fn garbage_after_a_complete_response_is_rejected_as_the_next() {
    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let bytes = [&ok[..], b"garbage\r\n\r\n"].concat();
    let mut d = decoder();
    assert_eq!(d.decode(&bytes), Ok((ok.len(), Some(resp(200, ok.len(), 0, true)))));
    assert!(matches!(d.decode(&bytes[ok.len()..]), Err(DecodeError::Head(_))));
}

/// RFC 9112 §5.2: "A user agent that receives an obs-fold in a response
/// message ... MUST replace each received obs-fold with one or more SP
/// octets prior to interpreting the field value."
#[test]
fn obs_fold_in_response_header_is_accepted() {
    let bytes = b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(decoder().decode(bytes), Ok((bytes.len(), Some(resp(200, bytes.len() - 2, 2, true)))));
}

// ---- head size limit ---------------------------------------------------------

/// A head of exactly `n` bytes.
fn head_of_size(n: usize) -> Vec<u8> {
    let fixed = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Pad: \r\n\r\n".len();
    assert!(n > fixed);
    let bytes =
        format!("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Pad: {}\r\n\r\n", "p".repeat(n - fixed)).into_bytes();
    assert_eq!(bytes.len(), n);
    bytes
}

const LIMIT: usize = 256;

fn limited() -> ResponseDecoder {
    ResponseDecoder::new(LIMIT, MAX_BODY, false)
}

#[test]
fn head_exactly_at_limit_is_accepted() {
    let bytes = head_of_size(LIMIT);
    assert_every_split(limited, &bytes, &[resp(200, LIMIT, 0, true)]);
}

#[test]
fn head_one_over_limit_is_rejected() {
    let bytes = head_of_size(LIMIT + 1);
    assert_fails_every_split(limited, &bytes, |e| *e == DecodeError::HeadTooLarge(LIMIT));
}

#[test]
fn oversized_head_whole_and_split() {
    let bytes = head_of_size(LIMIT * 3);
    assert_eq!(limited().decode(&bytes), Err(DecodeError::HeadTooLarge(LIMIT)));
    assert_fails_every_split(limited, &bytes, |e| *e == DecodeError::HeadTooLarge(LIMIT));
}

#[test]
fn oversized_head_with_body_in_same_buffer() {
    let mut bytes = head_of_size(LIMIT + 50);
    bytes.extend_from_slice(b"body bytes");
    assert_eq!(limited().decode(&bytes), Err(DecodeError::HeadTooLarge(LIMIT)));
}

/// A head that never ends must be cut off once it passes the limit, not
/// buffered indefinitely: the error comes no later than the feed that takes
/// the total past `max_header_bytes`.
#[test]
fn endless_head_errors_as_soon_as_limit_is_passed() {
    for piece in [1usize, 7, 64, 255, 256, 257, 1000] {
        let mut d = limited();
        let mut stream = b"HTTP/1.1 200 OK\r\n".to_vec();
        while stream.len() < 100 * LIMIT {
            stream.extend_from_slice(b"X-Endless: more\r\n");
        }
        let mut fed = 0;
        let mut failed = false;
        for part in stream.chunks(piece) {
            fed += part.len();
            match d.decode(part) {
                Ok((used, r)) => {
                    assert_eq!((used, r), (part.len(), None));
                    assert!(fed <= LIMIT, "piece {piece}: {fed} head bytes accepted with a limit of {LIMIT}");
                }
                Err(e) => {
                    assert_eq!(e, DecodeError::HeadTooLarge(LIMIT));
                    failed = true;
                    break;
                }
            }
        }
        assert!(failed, "piece {piece}: endless head never rejected");
        assert!(fed <= LIMIT + piece, "piece {piece}: rejected only after {fed} bytes");
    }
}

#[test]
fn endless_head_first_feed_larger_than_limit() {
    let mut stream = b"HTTP/1.1 200 OK\r\n".to_vec();
    stream.extend(std::iter::repeat_n(b'a', LIMIT * 2));
    assert_eq!(limited().decode(&stream), Err(DecodeError::HeadTooLarge(LIMIT)));
}

#[test]
fn oversized_interim_head_is_rejected() {
    let mut interim = b"HTTP/1.1 100 Continue\r\nX-Pad: ".to_vec();
    interim.extend(std::iter::repeat_n(b'p', LIMIT));
    interim.extend_from_slice(b"\r\n\r\n");
    let bytes = [&interim[..], b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"].concat();
    assert_fails_every_split(limited, &bytes, |e| *e == DecodeError::HeadTooLarge(LIMIT));
}

// ---- Content-Length errors -------------------------------------------------

#[test]
fn conflicting_content_lengths() {
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::BadContentLength));
    assert_fails_every_split(decoder, bytes, |e| *e == DecodeError::BadContentLength);
}

#[test]
fn conflicting_content_lengths_in_one_field() {
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::BadContentLength));
}

#[test]
fn non_numeric_content_length() {
    for value in ["abc", "-1", "+5", "5a", "0x10", "1 2", "1.5", "", "  ", "٣"] {
        let bytes = format!("HTTP/1.1 200 OK\r\nContent-Length: {value}\r\n\r\nxxxxxxxx");
        assert_eq!(decoder().decode(bytes.as_bytes()), Err(DecodeError::BadContentLength), "{value:?}");
    }
    assert_fails_every_split(decoder, b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", |e| {
        *e == DecodeError::BadContentLength
    });
}

#[test]
fn overflowing_content_length() {
    for value in ["18446744073709551616", "99999999999999999999999999"] {
        let bytes = format!("HTTP/1.1 200 OK\r\nContent-Length: {value}\r\n\r\n");
        let r = decoder().decode(bytes.as_bytes());
        assert!(matches!(r, Err(DecodeError::BadContentLength | DecodeError::BodyTooLarge(_))), "{value}: {r:?}");
    }
}

#[test]
fn content_length_above_max_body() {
    let mut d = ResponseDecoder::new(MAX_HEAD, 4, false);
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    assert_eq!(d.decode(bytes), Err(DecodeError::BodyTooLarge(4)));
    // Rejected from the head alone, before any body arrives.
    let mut d = ResponseDecoder::new(MAX_HEAD, 4, false);
    assert_eq!(d.decode(&bytes[..head_len(bytes)]), Err(DecodeError::BodyTooLarge(4)));
    assert_fails_every_split(
        || ResponseDecoder::new(MAX_HEAD, 4, false),
        bytes,
        |e| *e == DecodeError::BodyTooLarge(4),
    );
    let huge = b"HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n\r\n";
    assert_eq!(decoder().decode(huge), Err(DecodeError::BodyTooLarge(MAX_BODY)));
}

// ---- EOF -----------------------------------------------------------------------

#[test]
fn eof_on_fresh_decoder() {
    let mut d = decoder();
    assert_eq!(d.decode_eof(), Ok(None));
    assert!(d.is_idle());
}

#[test]
fn eof_after_complete_response() {
    let mut d = decoder();
    d.decode(CL).unwrap();
    assert_eq!(d.decode_eof(), Ok(None));
}

#[test]
fn eof_after_empty_feed() {
    let mut d = decoder();
    assert_eq!(d.decode(b""), Ok((0, None)));
    assert!(d.is_idle());
    assert_eq!(d.decode_eof(), Ok(None));
}

#[test]
fn truncated_body_then_eof() {
    let head = head_len(CL);
    for cut in head..CL.len() {
        let mut d = decoder();
        assert_eq!(d.decode(&CL[..cut]), Ok((cut, None)), "cut at {cut}");
        assert_eq!(d.decode_eof(), Err(DecodeError::Truncated), "cut at {cut}");
    }
}

#[test]
fn truncated_head_then_eof() {
    for cut in 1..head_len(CL) {
        let mut d = decoder();
        assert_eq!(d.decode(&CL[..cut]), Ok((cut, None)), "cut at {cut}");
        assert!(!d.is_idle(), "cut at {cut}");
        assert_eq!(d.decode_eof(), Err(DecodeError::Truncated), "cut at {cut}");
    }
}

#[test]
fn truncated_chunked_then_eof() {
    for cut in head_len(CHUNKED)..CHUNKED.len() {
        let mut d = decoder();
        assert_eq!(d.decode(&CHUNKED[..cut]), Ok((cut, None)), "cut at {cut}");
        assert_eq!(d.decode_eof(), Err(DecodeError::Truncated), "cut at {cut}");
    }
}

#[test]
fn truncated_second_pipelined_response_then_eof() {
    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let bytes = [&ok[..], b"HTTP/1.1 200 OK\r\nContent-Le"].concat();
    let mut d = decoder();
    let (rs, used) = feed(&mut d, &[&bytes]).unwrap();
    assert_eq!(rs.len(), 1);
    assert_eq!(used, bytes.len());
    assert_eq!(d.decode_eof(), Err(DecodeError::Truncated));
}

// ---- reset / is_idle -------------------------------------------------------

#[test]
fn is_idle_through_a_response() {
    let mut d = decoder();
    assert!(d.is_idle());
    d.decode(&CL[..1]).unwrap();
    assert!(!d.is_idle(), "one byte of the head seen");
    d.decode(&CL[1..head_len(CL)]).unwrap();
    assert!(!d.is_idle(), "head complete, body pending");
    d.decode(&CL[head_len(CL)..CL.len() - 1]).unwrap();
    assert!(!d.is_idle(), "one body byte pending");
    let (_, r) = d.decode(&CL[CL.len() - 1..]).unwrap();
    assert!(r.is_some());
    assert!(d.is_idle());
}

#[test]
fn reset_forgets_partial_head() {
    let mut d = decoder();
    d.decode(b"HTTP/1.1 200 OK\r\nContent-Len").unwrap();
    assert!(!d.is_idle());
    d.reset();
    assert!(d.is_idle());
    assert_eq!(d.decode_eof(), Ok(None));
    let (used, r) = d.decode(CL).unwrap();
    assert_eq!((used, r), (CL.len(), Some(resp(200, CL.len() - 13, 13, true))));
}

#[test]
fn reset_forgets_partial_body() {
    let mut d = decoder();
    d.decode(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly a bit").unwrap();
    assert!(!d.is_idle());
    d.reset();
    assert!(d.is_idle());
    assert_eq!(d.decode_eof(), Ok(None));
    // Bytes that would have been body are now parsed as a new head.
    let (used, r) = d.decode(CL).unwrap();
    assert_eq!((used, r), (CL.len(), Some(resp(200, CL.len() - 13, 13, true))));
}

#[test]
fn reset_forgets_close_delimited_body() {
    let mut d = decoder();
    d.decode(b"HTTP/1.0 200 OK\r\n\r\nstreaming").unwrap();
    d.reset();
    assert_eq!(d.decode_eof(), Ok(None));
}

#[test]
fn reset_after_error_recovers() {
    let mut d = decoder();
    assert!(d.decode(b"garbage\r\n\r\n").is_err());
    d.reset();
    assert!(d.is_idle());
    assert_eq!(d.decode(CL), Ok((CL.len(), Some(resp(200, CL.len() - 13, 13, true)))));

    let mut d = limited();
    assert!(d.decode(&head_of_size(LIMIT - 10)[..LIMIT - 20]).unwrap().1.is_none());
    assert!(d.decode(&[b'x'; LIMIT]).is_err());
    d.reset();
    let ok = head_of_size(LIMIT);
    assert_eq!(d.decode(&ok), Ok((LIMIT, Some(resp(200, LIMIT, 0, true)))));
}

#[test]
fn reset_on_idle_decoder_is_harmless() {
    let mut d = decoder();
    d.reset();
    assert!(d.is_idle());
    assert_eq!(d.decode(CL), Ok((CL.len(), Some(resp(200, CL.len() - 13, 13, true)))));
}

#[test]
fn decoder_is_reused_across_many_responses() {
    let mut d = decoder();
    for i in 0..1000u64 {
        let body = "x".repeat((i % 50) as usize);
        let bytes = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        let (used, r) = d.decode(bytes.as_bytes()).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(r.map(|r| r.body_bytes), Some(i % 50));
        assert!(d.is_idle());
    }
}
