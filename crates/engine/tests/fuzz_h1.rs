//! Fuzzing HTTP/1.x response framing and chunked bodies: arbitrary bytes,
//! the captured responses of h1_decode.rs and h1_chunked.rs mutated, and
//! header and chunk tokens strung together, each fed whole and cut into
//! random reads. Nothing may panic, and however the input is cut the decoder
//! must frame the same responses with the same bodies and fail or not alike
//! (which error a failure names may differ: a head cut short can be too large
//! before it is seen to be malformed).

use crate::fuzz_support::{config, input, parts, split};
use crest_engine::protocol::chunked::{ChunkError, ChunkedDecoder};
use crest_engine::protocol::{DecodeError, Response, ResponseDecoder};
use proptest::prelude::*;

const SEEDS: &[&[u8]] = &[
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nX-Extra: a, b\r\n\r\nHello, world!",
    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA;name=value\r\n0123456789\r\n1f; ext ; q=\"a b;c\"\r\nabcdefghijklmnopqrstuvwxyzABCDE\r\n00b\r\nhello world\r\n0;last\r\nX-Checksum: abc\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc",
    b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\n\r\nbodyHTTP/1.0 200 OK\r\n\r\nuntil close",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 100\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n  b\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
];

const TOKENS: &[&[u8]] = &[
    b"HTTP/1.1 ",
    b"HTTP/1.0 ",
    b"200 OK",
    b"100 Continue",
    b"204",
    b"304",
    b"101",
    b"\r\n",
    b"\n",
    b"\r\n\r\n",
    b"Content-Length: ",
    b"content-length:",
    b"Transfer-Encoding: ",
    b"chunked",
    b"gzip, ",
    b"Connection: ",
    b"close",
    b"keep-alive",
    b"X-A: b",
    b"  folded",
    b"0",
    b"5",
    b"10",
    b"ffff",
    b"18446744073709551615",
    b"99999999999999999999",
    b";ext=1",
    b"hello",
    b"0\r\n\r\n",
    b"5\r\nhello\r\n",
    b"Trailer: x\r\n",
    b":",
    b" ",
];

/// What a decoder made of a stream: the responses, each one's body, and whether it failed;
/// then what it said when the stream closed (when it had not failed).
#[derive(Debug, PartialEq)]
struct Framed {
    responses: Vec<(Response, Vec<u8>)>,
    failed: Option<DecodeError>,
    at_close: Option<Result<Option<Response>, DecodeError>>,
}

fn frame_responses(bytes_parts: &[&[u8]], head_request: bool, max_head: usize) -> Framed {
    let mut d = ResponseDecoder::new(max_head, 1 << 20, head_request);
    let mut framed = Framed { responses: Vec::new(), failed: None, at_close: None };
    let mut body = Vec::new();
    for part in bytes_parts {
        let mut rest = *part;
        loop {
            match d.decode_with(rest, &mut |b| body.extend_from_slice(b)) {
                Err(e) => {
                    framed.failed = Some(e);
                    return framed;
                }
                Ok((used, response)) => {
                    assert!(used <= rest.len(), "consumed {used} of {} bytes", rest.len());
                    rest = &rest[used..];
                    match response {
                        Some(r) => framed.responses.push((r, std::mem::take(&mut body))),
                        None => {
                            assert!(rest.is_empty(), "{} bytes left without a response", rest.len());
                            break;
                        }
                    }
                    if rest.is_empty() {
                        break;
                    }
                }
            }
        }
    }
    let at_close = d.decode_eof();
    if let Ok(Some(r)) = at_close {
        framed.responses.push((r, std::mem::take(&mut body)));
    }
    framed.at_close = Some(at_close);
    framed
}

/// Whole and cut, the same responses; both fail or neither does.
fn assert_alike(whole: &Framed, cut: &Framed) -> Result<(), TestCaseError> {
    let n = whole.responses.len().min(cut.responses.len());
    prop_assert_eq!(&whole.responses[..n], &cut.responses[..n]);
    prop_assert_eq!(whole.failed.is_some(), cut.failed.is_some(), "whole {:?}, cut {:?}", whole, cut);
    if whole.failed.is_none() {
        prop_assert_eq!(whole, cut);
    }
    Ok(())
}

fn responses() -> BoxedStrategy<Vec<u8>> {
    input(SEEDS.iter().map(|s| s.to_vec()).collect(), TOKENS, 600)
}

/// The body of a chunked response, as the chunked decoder sees it.
#[derive(Debug, PartialEq)]
struct Dechunked {
    consumed: usize,
    data: Vec<u8>,
    done: bool,
    failed: Option<ChunkError>,
}

fn dechunk(bytes_parts: &[&[u8]]) -> Dechunked {
    let mut d = ChunkedDecoder::default();
    let mut out = Dechunked { consumed: 0, data: Vec::new(), done: false, failed: None };
    for part in bytes_parts {
        let mut data = Vec::new();
        match d.feed_with(part, |b| data.extend_from_slice(b)) {
            Err(e) => {
                out.data.extend_from_slice(&data);
                out.failed = Some(e);
                return out;
            }
            Ok(p) => {
                assert!(p.consumed <= part.len());
                assert_eq!(p.data_bytes, data.len() as u64, "data bytes counted and handed out differ");
                assert!(!out.done || p.consumed == 0, "bytes consumed after the body ended");
                assert!(p.done || p.consumed == part.len(), "bytes left over before the body ended");
                out.consumed += p.consumed;
                out.data.extend_from_slice(&data);
                out.done |= p.done;
            }
        }
    }
    out
}

const CHUNK_SEEDS: &[&[u8]] = &[
    b"A;name=value\r\n0123456789\r\n1f; ext ; q=\"a b;c\"\r\nabcdefghijklmnopqrstuvwxyzABCDE\r\n1F\r\nFGHIJKLMNOPQRSTUVWXYZ0123456789\r\n00b\r\nhello world\r\n0;last\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n",
    b"5\r\nhello\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n",
    b"5\nhello\n0\n\n",
    b"5 \t;x\r\nhello\r\n000000000000000\r\n\r\n",
];

const CHUNK_TOKENS: &[&[u8]] = &[
    b"0",
    b"5",
    b"a",
    b"F",
    b"fffffffffffffff",
    b"\r\n",
    b"\n",
    b"\r",
    b";",
    b" ",
    b"\t",
    b"ext=\"q\"",
    b"hello",
    b"0\r\n\r\n",
    b"5\r\nhello\r\n",
    b"X-T: 1\r\n",
];

proptest! {
    #![proptest_config(config("fuzz_h1", 256))]

    #[test]
    fn response_framing_is_the_same_however_the_bytes_are_cut(
        bytes in responses(),
        cut in split(),
        head_request in any::<bool>(),
        small_head in any::<bool>(),
    ) {
        // A small head limit reaches the too-large paths; the usual one the rest.
        let max_head = if small_head { 48 } else { 8192 };
        let whole = frame_responses(&[&bytes[..]], head_request, max_head);
        let cut = frame_responses(&parts(&bytes, &cut), head_request, max_head);
        assert_alike(&whole, &cut)?;
    }

    #[test]
    fn chunked_bodies_are_the_same_however_the_bytes_are_cut(
        bytes in input(CHUNK_SEEDS.iter().map(|s| s.to_vec()).collect(), CHUNK_TOKENS, 300),
        cut in split(),
    ) {
        let whole = dechunk(&[&bytes[..]]);
        let cut = dechunk(&parts(&bytes, &cut));
        prop_assert_eq!(whole.failed.is_some(), cut.failed.is_some(), "whole {:?}, cut {:?}", whole, cut);
        if whole.failed.is_none() {
            prop_assert_eq!(&whole, &cut);
        } else {
            // Data handed out before the failure is a prefix of what the whole input gave.
            let n = whole.data.len().min(cut.data.len());
            prop_assert_eq!(&whole.data[..n], &cut.data[..n]);
        }
    }
}
