//! `Transfer-Encoding: chunked` body decoding on raw bytes, both through
//! `ChunkedDecoder` directly and through `ResponseDecoder`.

use crest_engine::protocol::chunked::{ChunkError, ChunkedDecoder};
use crest_engine::protocol::{DecodeError, Response, ResponseDecoder};

/// A body with extensions (with and without values, quoted, with BWS),
/// upper- and lower-case hex sizes, leading zeros and trailers.
const BODY: &[u8] = b"A;name=value\r\n0123456789\r\n\
1f; ext ; q=\"a b;c\"\r\nabcdefghijklmnopqrstuvwxyzABCDE\r\n\
1F\r\nFGHIJKLMNOPQRSTUVWXYZ0123456789\r\n\
00b\r\nhello world\r\n\
0;last\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n";
const BODY_DATA: u64 = 10 + 31 + 31 + 11;

#[derive(Debug, PartialEq, Eq)]
struct Fed {
    consumed: usize,
    data: u64,
    done: bool,
}

/// Feeds `parts` in order into a fresh decoder, summing its progress.
/// Checks that the decoder consumes every byte it is given until it is done.
fn feed_parts(parts: &[&[u8]]) -> Result<Fed, ChunkError> {
    let mut d = ChunkedDecoder::default();
    let mut fed = Fed { consumed: 0, data: 0, done: false };
    for part in parts {
        let p = d.feed(part)?;
        assert!(p.consumed <= part.len());
        assert!(p.data_bytes <= p.consumed as u64);
        if fed.done {
            assert_eq!((p.consumed, p.data_bytes), (0, 0), "bytes consumed after done");
        }
        if !p.done {
            assert_eq!(p.consumed, part.len(), "bytes left over before the body ended");
        }
        fed.consumed += p.consumed;
        fed.data += p.data_bytes;
        fed.done = p.done;
    }
    Ok(fed)
}

fn whole(input: &[u8]) -> Result<Fed, ChunkError> {
    feed_parts(&[input])
}

fn byte_by_byte(input: &[u8]) -> Result<Fed, ChunkError> {
    let parts: Vec<&[u8]> = input.chunks(1).collect();
    feed_parts(&parts)
}

fn done(consumed: usize, data: u64) -> Fed {
    Fed { consumed, data, done: true }
}

#[test]
fn single_chunk() {
    let body = b"5\r\nhello\r\n0\r\n\r\n";
    assert_eq!(whole(body), Ok(done(body.len(), 5)));
}

#[test]
fn zero_chunk_only() {
    assert_eq!(whole(b"0\r\n\r\n"), Ok(done(5, 0)));
}

#[test]
fn lowercase_and_uppercase_hex_sizes() {
    for size in ["a", "A", "1f", "1F", "fF", "Ff", "10", "00000A"] {
        let n = usize::from_str_radix(size, 16).unwrap();
        let body = format!("{size}\r\n{}\r\n0\r\n\r\n", "x".repeat(n));
        assert_eq!(whole(body.as_bytes()), Ok(done(body.len(), n as u64)), "size {size}");
    }
}

#[test]
fn all_hex_digits_are_accepted() {
    let body = format!("abcdef\r\n{}\r\n0\r\n\r\n", "z".repeat(0xabcdef));
    assert_eq!(whole(body.as_bytes()), Ok(done(body.len(), 0xabcdef)));
    let body = format!("ABCDEF\r\n{}\r\n0\r\n\r\n", "z".repeat(0xabcdef));
    assert_eq!(whole(body.as_bytes()), Ok(done(body.len(), 0xabcdef)));
    let body = format!(
        "1234\r\n{}\r\n5678\r\n{}\r\n90\r\n{}\r\n0\r\n\r\n",
        "a".repeat(0x1234),
        "b".repeat(0x5678),
        "c".repeat(0x90)
    );
    assert_eq!(whole(body.as_bytes()), Ok(done(body.len(), 0x1234 + 0x5678 + 0x90)));
}

#[test]
fn extensions_are_skipped() {
    let body = b"5;a\r\nhello\r\n5;a=b;c=\"d e\"\r\nworld\r\n0;z=1\r\n\r\n";
    assert_eq!(whole(body), Ok(done(body.len(), 10)));
}

#[test]
fn whitespace_before_extension_is_accepted() {
    // RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name ... )
    let body = b"5 ;a\r\nhello\r\n5\t;b = c\r\nworld\r\n0 ; z\r\n\r\n";
    assert_eq!(whole(body), Ok(done(body.len(), 10)));
}

#[test]
fn trailers_are_skipped() {
    let body = b"3\r\nabc\r\n0\r\nX-Trailer: 1\r\nExpires: never\r\n\r\n";
    assert_eq!(whole(body), Ok(done(body.len(), 3)));
}

#[test]
fn data_containing_crlf_and_digits_is_opaque() {
    let body = b"8\r\n0\r\n\r\n\r\n\r\n0\r\n\r\n";
    assert_eq!(whole(body), Ok(done(body.len(), 8)));
}

#[test]
fn leading_zeros_in_size() {
    let body = b"0005\r\nhello\r\n000\r\n\r\n";
    assert_eq!(whole(body), Ok(done(body.len(), 5)));
}

#[test]
fn full_body_whole() {
    assert_eq!(whole(BODY), Ok(done(BODY.len(), BODY_DATA)));
}

#[test]
fn full_body_byte_by_byte() {
    assert_eq!(byte_by_byte(BODY), Ok(done(BODY.len(), BODY_DATA)));
}

#[test]
fn full_body_split_at_every_index() {
    for i in 0..=BODY.len() {
        let (a, b) = BODY.split_at(i);
        assert_eq!(feed_parts(&[a, b]), Ok(done(BODY.len(), BODY_DATA)), "split at {i}");
    }
}

#[test]
fn full_body_split_at_every_pair_of_indices() {
    for i in 0..=BODY.len() {
        for j in i..=BODY.len() {
            let parts = [&BODY[..i], &BODY[i..j], &BODY[j..]];
            assert_eq!(feed_parts(&parts), Ok(done(BODY.len(), BODY_DATA)), "split at {i},{j}");
        }
    }
}

#[test]
fn done_only_after_last_byte() {
    for i in 0..BODY.len() {
        let fed = whole(&BODY[..i]).unwrap();
        assert_eq!(fed.consumed, i);
        assert!(!fed.done, "done after {i} of {} bytes", BODY.len());
    }
}

#[test]
fn stops_right_after_body_end() {
    let body = b"5\r\nhello\r\n0\r\nT: v\r\n\r\n";
    let mut input = body.to_vec();
    input.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
    let mut d = ChunkedDecoder::default();
    let p = d.feed(&input).unwrap();
    assert_eq!((p.consumed, p.data_bytes, p.done), (body.len(), 5, true));
    // Further input is never consumed once done.
    let p = d.feed(b"more").unwrap();
    assert_eq!((p.consumed, p.data_bytes, p.done), (0, 0, true));
}

#[test]
fn stops_right_after_body_end_every_split() {
    let mut input = BODY.to_vec();
    input.extend_from_slice(b"NEXT");
    for i in 0..=input.len() {
        let mut d = ChunkedDecoder::default();
        let (a, b) = input.split_at(i);
        let mut consumed = 0;
        let mut data = 0;
        let mut finished = false;
        for part in [a, b] {
            let p = d.feed(part).unwrap();
            consumed += p.consumed;
            data += p.data_bytes;
            finished = p.done;
        }
        assert!(finished, "split at {i}");
        assert_eq!((consumed, data), (BODY.len(), BODY_DATA), "split at {i}");
    }
}

#[test]
fn large_chunk_fed_in_pieces() {
    let n = 1 << 20;
    let mut body = format!("{n:x}\r\n").into_bytes();
    body.extend(std::iter::repeat_n(b'q', n));
    body.extend_from_slice(b"\r\n0\r\n\r\n");
    let parts: Vec<&[u8]> = body.chunks(4093).collect();
    assert_eq!(feed_parts(&parts), Ok(done(body.len(), n as u64)));
}

#[test]
fn many_small_chunks() {
    let mut body = Vec::new();
    for i in 1..=300usize {
        body.extend_from_slice(format!("{:x}\r\n", i % 17 + 1).as_bytes());
        body.extend(std::iter::repeat_n(b'.', i % 17 + 1));
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let data: u64 = (1..=300u64).map(|i| i % 17 + 1).sum();
    assert_eq!(whole(&body), Ok(done(body.len(), data)));
    assert_eq!(byte_by_byte(&body), Ok(done(body.len(), data)));
}

#[test]
fn empty_feed_is_harmless() {
    let mut d = ChunkedDecoder::default();
    let p = d.feed(b"").unwrap();
    assert_eq!((p.consumed, p.data_bytes, p.done), (0, 0, false));
    let p = d.feed(b"2\r\nhi\r\n").unwrap();
    assert_eq!((p.consumed, p.data_bytes, p.done), (7, 2, false));
    let p = d.feed(b"").unwrap();
    assert_eq!((p.consumed, p.data_bytes, p.done), (0, 0, false));
    let p = d.feed(b"0\r\n\r\n").unwrap();
    assert_eq!((p.consumed, p.data_bytes, p.done), (5, 0, true));
}

/// RFC 9112 §2.2 lets a recipient accept a bare LF as a line terminator.
#[test]
fn bare_lf_line_endings_are_tolerated() {
    let body = b"5\nhello\n5;x\nworld\n0\nT: 1\n\n";
    assert_eq!(whole(body), Ok(done(body.len(), 10)));
}

// ---- malformed -----------------------------------------------------------

/// Feeds `input` whole, byte by byte and split at every index; every way must
/// fail with `want` before the input runs out.
fn assert_fails(input: &[u8], want: ChunkError) {
    assert_eq!(whole(input), Err(want), "whole: {:?}", String::from_utf8_lossy(input));
    assert_eq!(byte_by_byte(input), Err(want), "byte by byte: {:?}", String::from_utf8_lossy(input));
    for i in 0..=input.len() {
        let (a, b) = input.split_at(i);
        assert_eq!(feed_parts(&[a, b]), Err(want), "split at {i}: {:?}", String::from_utf8_lossy(input));
    }
}

#[test]
fn bad_chunk_size_zz() {
    assert_fails(b"zz\r\nhello\r\n0\r\n\r\n", ChunkError::BadSize);
}

#[test]
fn bad_chunk_size_after_valid_digit() {
    assert_fails(b"5z\r\nhello\r\n0\r\n\r\n", ChunkError::BadSize);
}

#[test]
fn bad_chunk_size_in_second_chunk() {
    assert_fails(b"5\r\nhello\r\ng\r\n", ChunkError::BadSize);
}

#[test]
fn bad_chunk_size_hex_prefix_and_sign() {
    assert_fails(b"0x5\r\nhello\r\n0\r\n\r\n", ChunkError::BadSize);
    assert_fails(b"-5\r\nhello\r\n0\r\n\r\n", ChunkError::BadSize);
    assert_fails(b"+5\r\nhello\r\n0\r\n\r\n", ChunkError::BadSize);
}

#[test]
fn empty_size_line() {
    assert_fails(b"\r\nhello\r\n0\r\n\r\n", ChunkError::BadSize);
    assert_fails(b"\n", ChunkError::BadSize);
}

#[test]
fn extension_without_size() {
    assert_fails(b";ext\r\nhello\r\n0\r\n\r\n", ChunkError::BadSize);
    assert_fails(b" 5\r\nhello\r\n0\r\n\r\n", ChunkError::BadSize);
}

#[test]
fn cr_in_size_line_not_followed_by_lf() {
    assert_fails(b"5\rhello\r\n0\r\n\r\n", ChunkError::BadSize);
    assert_fails(b"5;x\rhello\r\n0\r\n\r\n", ChunkError::BadSize);
}

#[test]
fn missing_crlf_after_chunk_data() {
    assert_fails(b"5\r\nhelloX\r\n0\r\n\r\n", ChunkError::BadDelimiter);
    // Data longer than the declared size.
    assert_fails(b"3\r\nhello\r\n0\r\n\r\n", ChunkError::BadDelimiter);
}

#[test]
fn cr_after_chunk_data_not_followed_by_lf() {
    assert_fails(b"5\r\nhello\rX0\r\n\r\n", ChunkError::BadDelimiter);
}

#[test]
fn too_long_chunk_size() {
    // 16 significant hex digits: more than any accepted body.
    assert_fails(b"1000000000000000\r\n", ChunkError::BadSize);
    // Would overflow u64 if accumulated naively.
    assert_fails(b"ffffffffffffffffffffffff\r\n", ChunkError::BadSize);
    assert_fails(&[b'9'; 40], ChunkError::BadSize);
}

#[test]
fn fifteen_hex_digits_are_accepted_as_a_size_line() {
    let mut d = ChunkedDecoder::default();
    let p = d.feed(b"fffffffffffffff\r\nabc").unwrap();
    assert_eq!((p.consumed, p.data_bytes, p.done), (20, 3, false));
}

#[test]
fn too_long_chunk_extension() {
    let mut body = b"5;".to_vec();
    body.extend(std::iter::repeat_n(b'x', 10_000));
    body.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
    assert_eq!(whole(&body), Err(ChunkError::BadSize));
    let parts: Vec<&[u8]> = body.chunks(7).collect();
    assert_eq!(feed_parts(&parts), Err(ChunkError::BadSize));
}

#[test]
fn moderately_long_chunk_extension_is_accepted() {
    let mut body = b"5;".to_vec();
    body.extend(std::iter::repeat_n(b'x', 1000));
    body.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
    assert_eq!(whole(&body), Ok(done(body.len(), 5)));
}

#[test]
fn endless_chunk_extension_fails_fast() {
    // A peer streaming an extension forever must be cut off at some bound.
    let mut d = ChunkedDecoder::default();
    d.feed(b"1;").unwrap();
    let junk = [b'e'; 1024];
    let mut failed = false;
    for _ in 0..1024 {
        match d.feed(&junk) {
            Ok(p) => assert_eq!(p.consumed, junk.len()),
            Err(e) => {
                assert_eq!(e, ChunkError::BadSize);
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "1 MiB of chunk extension accepted");
}

#[test]
fn bad_trailer_line_ending() {
    assert_fails(b"0\r\nX: 1\rY", ChunkError::BadTrailer);
}

#[test]
fn bad_final_crlf() {
    assert_fails(b"0\r\n\rX", ChunkError::BadTrailer);
}

#[test]
fn endless_trailer_fails_fast() {
    let mut d = ChunkedDecoder::default();
    d.feed(b"0\r\n").unwrap();
    let line = b"X-Trailer: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
    let mut failed = false;
    for _ in 0..100_000 {
        match d.feed(line) {
            Ok(p) => assert!(!p.done),
            Err(e) => {
                assert_eq!(e, ChunkError::BadTrailer);
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "endless trailer section accepted");
}

/// RFC 9112 §7.1.1: after the size, only BWS `;` extensions may follow.
/// `5 6` is not a valid chunk-size line, but it is read as size 5.
#[test]

fn junk_after_whitespace_in_size_line_is_rejected() {
    assert_eq!(whole(b"5 6\r\nhello\r\n0\r\n\r\n"), Err(ChunkError::BadSize));
    assert_eq!(whole(b"5 x\r\nhello\r\n0\r\n\r\n"), Err(ChunkError::BadSize));
}

// ---- through ResponseDecoder ---------------------------------------------

const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n";

fn response_bytes() -> Vec<u8> {
    [HEAD, BODY].concat()
}

fn expected() -> Response {
    Response { status: 200, head_bytes: HEAD.len() as u64, body_bytes: BODY_DATA, keep_alive: true }
}

/// Feeds `parts` to `d`, re-feeding unconsumed bytes, and returns every
/// response plus the total consumed.
fn decode_parts(d: &mut ResponseDecoder, parts: &[&[u8]]) -> Result<(Vec<Response>, usize), DecodeError> {
    let mut out = Vec::new();
    let mut total = 0;
    for part in parts {
        let mut rest = *part;
        loop {
            let (used, r) = d.decode(rest)?;
            assert!(used <= rest.len());
            total += used;
            rest = &rest[used..];
            match r {
                Some(r) => out.push(r),
                None => {
                    assert!(rest.is_empty(), "decoder left {} bytes without a response", rest.len());
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

fn decoder() -> ResponseDecoder {
    ResponseDecoder::new(8192, 1 << 20, false)
}

#[test]
fn response_chunked_whole() {
    let bytes = response_bytes();
    let mut d = decoder();
    let (used, r) = d.decode(&bytes).unwrap();
    assert_eq!(used, bytes.len());
    assert_eq!(r, Some(expected()));
    assert!(d.is_idle());
}

#[test]
fn response_chunked_byte_by_byte() {
    let bytes = response_bytes();
    let mut d = decoder();
    let parts: Vec<&[u8]> = bytes.chunks(1).collect();
    let (rs, used) = decode_parts(&mut d, &parts).unwrap();
    assert_eq!(rs, vec![expected()]);
    assert_eq!(used, bytes.len());
}

#[test]
fn response_chunked_split_at_every_index() {
    let bytes = response_bytes();
    for i in 0..=bytes.len() {
        let mut d = decoder();
        let (a, b) = bytes.split_at(i);
        let (rs, used) = decode_parts(&mut d, &[a, b]).unwrap();
        assert_eq!(rs, vec![expected()], "split at {i}");
        assert_eq!(used, bytes.len(), "split at {i}");
        assert!(d.is_idle());
    }
}

#[test]
fn response_chunked_split_at_every_pair_of_indices() {
    let bytes = response_bytes();
    for i in 0..=bytes.len() {
        for j in i..=bytes.len() {
            let mut d = decoder();
            let parts = [&bytes[..i], &bytes[i..j], &bytes[j..]];
            let (rs, used) = decode_parts(&mut d, &parts).unwrap();
            assert_eq!(rs, vec![expected()], "split at {i},{j}");
            assert_eq!(used, bytes.len(), "split at {i},{j}");
        }
    }
}

#[test]
fn response_chunked_then_pipelined_response() {
    let first = response_bytes();
    let second = b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnop";
    let bytes = [&first[..], &second[..]].concat();
    let mut d = decoder();
    let (used, r) = d.decode(&bytes).unwrap();
    assert_eq!(used, first.len());
    assert_eq!(r, Some(expected()));
    let (used2, r2) = d.decode(&bytes[used..]).unwrap();
    assert_eq!(used2, second.len());
    assert_eq!(
        r2,
        Some(Response { status: 404, head_bytes: (second.len() - 3) as u64, body_bytes: 3, keep_alive: true })
    );
    for i in 0..=bytes.len() {
        let mut d = decoder();
        let (rs, used) = decode_parts(&mut d, &[&bytes[..i], &bytes[i..]]).unwrap();
        assert_eq!(rs.len(), 2, "split at {i}");
        assert_eq!(rs[0], expected());
        assert_eq!(rs[1].body_bytes, 3);
        assert_eq!(used, bytes.len());
    }
}

#[test]
fn response_chunked_header_value_case_and_codings() {
    for te in ["chunked", "Chunked", "CHUNKED", "gzip, chunked", "gzip,chunked", " chunked "] {
        let bytes = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {te}\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
        let mut d = decoder();
        let (used, r) = d.decode(bytes.as_bytes()).unwrap();
        assert_eq!(used, bytes.len(), "TE {te:?}");
        let r = r.unwrap_or_else(|| panic!("TE {te:?}: incomplete"));
        assert_eq!((r.body_bytes, r.keep_alive), (3, true), "TE {te:?}");
    }
}

#[test]
fn response_transfer_encoding_in_two_fields() {
    let bytes =
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let mut d = decoder();
    let (used, r) = d.decode(bytes).unwrap();
    assert_eq!(used, bytes.len());
    assert_eq!(r.unwrap().body_bytes, 3);
}

/// RFC 9112 §6.3: Transfer-Encoding overrides Content-Length.
#[test]
fn response_chunked_wins_over_content_length() {
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let mut d = decoder();
    let (used, r) = d.decode(bytes).unwrap();
    assert_eq!(used, bytes.len());
    assert_eq!(r.unwrap().body_bytes, 3);
}

/// RFC 9112 §6.3: chunked not final in a response → read until close.
#[test]
fn response_chunked_not_final_reads_until_close() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let mut d = decoder();
    let (used, r) = d.decode(bytes).unwrap();
    assert_eq!(used, bytes.len());
    assert_eq!(r, None);
    let r = d.decode_eof().unwrap().unwrap();
    let head = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(r.body_bytes, (bytes.len() - head) as u64);
    assert!(!r.keep_alive);
}

/// RFC 9112 §6.3 item 4: Transfer-Encoding without chunked final means the
/// body runs until close, *even if* Content-Length is present (TE overrides CL).
#[test]

fn response_non_chunked_te_overrides_content_length() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabcdef";
    let mut d = decoder();
    let (used, r) = d.decode(bytes).unwrap();
    assert_eq!(used, bytes.len());
    assert_eq!(r, None, "the body must run until close, not stop at Content-Length");
    let r = d.decode_eof().unwrap().expect("close-delimited body");
    assert_eq!(r.body_bytes, 6);
    assert!(!r.keep_alive);
}

/// RFC 9110 §5.6.1.2: a recipient MUST parse and ignore a reasonable number
/// of empty list elements, so `chunked,` lists the single coding `chunked`
/// and the body is chunked (RFC 9112 §6.3 item 4), not close-delimited.
#[test]

fn response_transfer_encoding_with_empty_list_elements() {
    for te in ["chunked,", "chunked, ", "gzip, chunked,,"] {
        let bytes = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {te}\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
        let mut d = decoder();
        let (used, r) = d.decode(bytes.as_bytes()).unwrap();
        assert_eq!(used, bytes.len(), "TE {te:?}");
        let r = r.unwrap_or_else(|| panic!("TE {te:?}: chunked body not recognised"));
        assert_eq!((r.body_bytes, r.keep_alive), (3, true), "TE {te:?}");
    }
}

/// RFC 9112 §6.1: a client receiving an HTTP/1.0 message with
/// Transfer-Encoding MUST treat the framing as faulty and close the
/// connection after processing the message.
#[test]

fn response_http10_with_transfer_encoding_closes() {
    let bytes = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let mut d = decoder();
    match d.decode(bytes) {
        Err(_) => {}
        Ok((_, Some(r))) => assert!(!r.keep_alive, "connection must not be reused: {r:?}"),
        Ok((_, None)) => {
            if let Ok(Some(r)) = d.decode_eof() {
                assert!(!r.keep_alive, "connection must not be reused: {r:?}");
            }
        }
    }
}

#[test]
fn response_chunked_http10_without_keepalive() {
    let bytes = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let mut d = decoder();
    if let Ok((_, Some(r))) = d.decode(bytes) {
        assert!(!r.keep_alive);
    }
}

#[test]
fn response_chunked_over_max_body() {
    let mut d = ResponseDecoder::new(8192, 10, false);
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n5\r\nghijk\r\n0\r\n\r\n";
    assert_eq!(d.decode(bytes), Err(DecodeError::BodyTooLarge(10)));
    // The same, byte by byte: must fail, never complete.
    let mut d = ResponseDecoder::new(8192, 10, false);
    let parts: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode_parts(&mut d, &parts), Err(DecodeError::BodyTooLarge(10)));
}

#[test]
fn response_chunked_single_huge_chunk_over_max_body() {
    let mut d = ResponseDecoder::new(8192, 1000, false);
    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffff\r\n";
    assert_eq!(d.decode(head), Ok((head.len(), None)));
    let data = [b'x'; 600];
    assert_eq!(d.decode(&data), Ok((600, None)));
    assert_eq!(d.decode(&data), Err(DecodeError::BodyTooLarge(1000)));
}

#[test]
fn response_chunked_exactly_max_body() {
    let mut d = ResponseDecoder::new(8192, 11, false);
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n5\r\nghijk\r\n0\r\n\r\n";
    let (used, r) = d.decode(bytes).unwrap();
    assert_eq!(used, bytes.len());
    assert_eq!(r.unwrap().body_bytes, 11);
}

#[test]
fn response_bad_chunk_size() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::Chunked(ChunkError::BadSize)));
    for i in 0..=bytes.len() {
        let mut d = decoder();
        let r = decode_parts(&mut d, &[&bytes[..i], &bytes[i..]]);
        assert_eq!(r, Err(DecodeError::Chunked(ChunkError::BadSize)), "split at {i}");
    }
}

#[test]
fn response_missing_crlf_after_chunk_data() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::Chunked(ChunkError::BadDelimiter)));
    for i in 0..=bytes.len() {
        let mut d = decoder();
        let r = decode_parts(&mut d, &[&bytes[..i], &bytes[i..]]);
        assert_eq!(r, Err(DecodeError::Chunked(ChunkError::BadDelimiter)), "split at {i}");
    }
}

#[test]
fn response_too_long_chunk_size() {
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000000000005\r\nhello\r\n0\r\n\r\n";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::Chunked(ChunkError::BadSize)));
    let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n";
    assert_eq!(decoder().decode(bytes), Err(DecodeError::Chunked(ChunkError::BadSize)));
}

#[test]
fn response_chunked_truncated_then_eof() {
    let bytes = response_bytes();
    // Cut anywhere after the head: the body is incomplete.
    for cut in HEAD.len()..bytes.len() {
        let mut d = decoder();
        let (used, r) = d.decode(&bytes[..cut]).unwrap();
        assert_eq!((used, r), (cut, None));
        assert!(!d.is_idle());
        assert_eq!(d.decode_eof(), Err(DecodeError::Truncated), "cut at {cut}");
    }
}

#[test]
fn response_chunked_reset_mid_body() {
    let bytes = response_bytes();
    let mut d = decoder();
    d.decode(&bytes[..HEAD.len() + 20]).unwrap();
    assert!(!d.is_idle());
    d.reset();
    assert!(d.is_idle());
    assert_eq!(d.decode_eof(), Ok(None));
    let (used, r) = d.decode(&bytes).unwrap();
    assert_eq!((used, r), (bytes.len(), Some(expected())));
}
