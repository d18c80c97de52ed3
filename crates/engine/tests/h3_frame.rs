//! HTTP/3 on bytes: QUIC varints (RFC 9000 §A.1's examples), QPACK with the
//! static table (RFC 9204 §B.1's example, the request encoder, and the
//! references to a dynamic table crest does not allow), and the parsers of a
//! response stream and of the server's control stream, each fed its bytes
//! split at every boundary and one byte at a time.

use crate::support::hex;
use crest_engine::protocol::h2::hpack::RequestHead;
use crest_engine::protocol::h3::frame::{self, code, kind};
use crest_engine::protocol::h3::qpack::{self, Decoder, QpackError, STATIC_TABLE};
use crest_engine::protocol::h3::stream::{PeerEvent, PeerStream, Response, ResponseStream, StreamError};
use crest_engine::protocol::h3::varint;

fn decode_all(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, QpackError> {
    let mut out = Vec::new();
    d.decode(block, &mut |n, v| {
        out.push((String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap()));
    })?;
    Ok(out)
}

/// Every way to cut `bytes` in two, and one byte at a time.
fn splits(bytes: &[u8]) -> Vec<Vec<&[u8]>> {
    let mut all: Vec<Vec<&[u8]>> = (0..=bytes.len()).map(|i| vec![&bytes[..i], &bytes[i..]]).collect();
    all.push(bytes.chunks(1).collect());
    all
}

fn frame(kind: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_header(&mut out, kind, payload.len());
    out.extend_from_slice(payload);
    out
}

fn section(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = vec![0, 0];
    for (n, v) in fields {
        qpack::encode_field(&mut out, n.as_bytes(), v.as_bytes());
    }
    out
}

#[test]
fn varints_are_rfc_9000_a1() {
    for (bytes, value) in
        [("c2197c5eff14e88c", 151_288_809_941_952_652u64), ("9d7f3e7d", 494_878_333), ("7bbd", 15_293), ("25", 37)]
    {
        let bytes = hex(bytes);
        let mut pos = 0;
        assert_eq!(varint::decode(&bytes, &mut pos), Some(value));
        assert_eq!(pos, bytes.len());
        let mut out = Vec::new();
        varint::encode(&mut out, value);
        assert_eq!(out, bytes, "{value} in its shortest form");
        // Cut short, nothing is read.
        let mut pos = 0;
        assert_eq!(varint::decode(&bytes[..bytes.len() - 1], &mut pos), None);
        assert_eq!(pos, 0);
    }
    // A longer form of the same value is still that value (§A.1: 0x4025 is 37).
    let mut pos = 0;
    assert_eq!(varint::decode(&hex("4025"), &mut pos), Some(37));
}

#[test]
fn static_table_is_rfc_9204_appendix_a() {
    assert_eq!(STATIC_TABLE.len(), 99);
    for (i, entry) in [
        (0, (":authority", "")),
        (1, (":path", "/")),
        (17, (":method", "GET")),
        (23, (":scheme", "https")),
        (25, (":status", "200")),
        (31, ("accept-encoding", "gzip, deflate, br")),
        (52, ("content-type", "text/html; charset=utf-8")),
        (63, (":status", "100")),
        (72, ("accept-language", "")),
        (95, ("user-agent", "")),
        (98, ("x-frame-options", "sameorigin")),
    ] {
        assert_eq!(STATIC_TABLE[i], entry, "index {i}");
    }
}

#[test]
fn qpack_decodes_rfc_9204_b1() {
    // B.1: a literal field line with a static name reference (index 1, :path).
    let block = hex("0000 510b 2f69 6e64 6578 2e68 746d 6c");
    let mut d = Decoder::new(1024);
    assert_eq!(decode_all(&mut d, &block).unwrap(), vec![(":path".to_string(), "/index.html".to_string())]);
}

#[test]
fn qpack_request_round_trips() {
    let headers = vec![
        ("Accept".to_string(), "*/*".to_string()),
        ("X-Crest-Test".to_string(), "a value that Huffman shortens".to_string()),
        ("Connection".to_string(), "close".to_string()), // connection-specific: dropped
        ("Host".to_string(), "ignored.example".to_string()), // is :authority
    ];
    let head = RequestHead {
        method: "POST",
        scheme: "https",
        authority: "127.0.0.1:8443",
        path: "/cgi-bin/x?y=1",
        headers: &headers,
        content_length: Some(5),
        user_agent: "crest/test",
        index_path: true,
    };
    let request = qpack::encode_request(&head);
    let mut d = Decoder::new(1024);
    let fields = decode_all(&mut d, &request.block).unwrap();
    let expect = [
        (":method", "POST"),
        (":scheme", "https"),
        (":authority", "127.0.0.1:8443"),
        (":path", "/cgi-bin/x?y=1"),
        ("user-agent", "crest/test"),
        ("accept", "*/*"),
        ("x-crest-test", "a value that Huffman shortens"),
        ("content-length", "5"),
    ];
    let expect: Vec<(String, String)> = expect.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    assert_eq!(fields, expect);
    assert_eq!(request.raw_bytes, expect.iter().map(|(n, v)| n.len() + v.len() + 4).sum::<usize>());
    // Whole static entries are one byte each (:method POST is 20, :scheme https 23, accept */* 29).
    assert_eq!(&request.block[..3], &[0, 0, 0xc0 | 20]);
    assert!(request.block.len() < request.raw_bytes);
    // The request frames: HEADERS with the section, then DATA with the body.
    let frames = frame::request(&request.block, b"hello");
    let mut expect = frame(kind::HEADERS, &request.block);
    expect.extend(frame(kind::DATA, b"hello"));
    assert_eq!(frames, expect);
    assert_eq!(frame::request(&request.block, b""), frame(kind::HEADERS, &request.block));
}

#[test]
fn qpack_refuses_what_needs_a_dynamic_table() {
    let mut d = Decoder::new(1024);
    for (why, block) in [
        ("required insert count", vec![0x01, 0x00, 0xc0 | 17]),
        ("indexed dynamic", vec![0x00, 0x00, 0x80]),
        ("name reference dynamic", vec![0x00, 0x00, 0x40, 0x01, b'x']),
        ("post-base indexed", vec![0x00, 0x00, 0x10]),
        ("post-base name reference", vec![0x00, 0x00, 0x00, 0x01, b'x']),
    ] {
        assert_eq!(decode_all(&mut d, &block), Err(QpackError::Dynamic), "{why}");
    }
    assert_eq!(decode_all(&mut d, &[0x00, 0x00, 0xc0 | 0x3f, 99 - 0x3f]), Err(QpackError::Index(99)));
    assert_eq!(decode_all(&mut d, &[0x00, 0x00, 0x51, 0x05, b'a']), Err(QpackError::Truncated));
    assert_eq!(decode_all(&mut d, &[0x00]), Err(QpackError::Truncated));
    let mut small = Decoder::new(4);
    assert_eq!(decode_all(&mut small, &section(&[("server", "longer")])), Err(QpackError::TooLong(4)));
}

/// Feeds `parts` into a fresh parser; the response (or error) and the body.
fn parse(parts: &[&[u8]], max: usize) -> (Result<Response, StreamError>, Vec<u8>) {
    let mut s = ResponseStream::new(max);
    let mut d = Decoder::new(max);
    let mut body = Vec::new();
    for part in parts {
        if let Err(e) = s.feed(part, &mut d, &mut |b| body.extend_from_slice(b)) {
            return (Err(e), body);
        }
    }
    (s.finish(), body)
}

#[test]
fn a_response_parses_at_every_split() {
    let head = section(&[(":status", "200"), ("content-length", "11"), ("server", "test")]);
    let mut bytes = frame(kind::HEADERS, &section(&[(":status", "103"), ("link", "</a.css>")]));
    bytes.extend(frame(kind::HEADERS, &head));
    bytes.extend(frame(kind::DATA, b"hello"));
    bytes.extend(frame(0x21, b"reserved frame types are skipped"));
    bytes.extend(frame(kind::DATA, b""));
    bytes.extend(frame(kind::DATA, b" world"));
    bytes.extend(frame(kind::HEADERS, &section(&[("x-trailer", "1")])));
    for parts in splits(&bytes) {
        let (response, body) = parse(&parts, 1024);
        let response = response.unwrap();
        assert_eq!(body, b"hello world");
        assert_eq!(response.status, 200);
        assert_eq!(response.body_bytes, 11);
        assert_eq!(response.head_block_bytes, head.len() as u64, "the final head only");
        assert_eq!(response.head_raw_bytes, (":status200contentlength11servertest".len() + 1 + 3 * 4) as u64);
        assert_eq!(response.stream_bytes, bytes.len() as u64);
    }
}

#[test]
fn broken_responses_are_stream_errors() {
    let ok = frame(kind::HEADERS, &section(&[(":status", "200")]));
    let cases: Vec<(&str, Vec<u8>, u64)> = vec![
        ("DATA first", frame(kind::DATA, b"x"), code::FRAME_UNEXPECTED),
        ("SETTINGS on a request stream", [ok.clone(), frame(kind::SETTINGS, b"")].concat(), code::FRAME_UNEXPECTED),
        ("GOAWAY on a request stream", [ok.clone(), frame(kind::GOAWAY, &[0])].concat(), code::FRAME_UNEXPECTED),
        ("a push promise", [ok.clone(), frame(kind::PUSH_PROMISE, &[0, 0, 0])].concat(), code::ID_ERROR),
        ("an HTTP/2 frame type", [ok.clone(), frame(0x08, &[0; 4])].concat(), code::FRAME_UNEXPECTED),
        ("no :status", frame(kind::HEADERS, &section(&[("server", "x")])), code::MESSAGE_ERROR),
        ("a bad :status", frame(kind::HEADERS, &section(&[(":status", "20x")])), code::MESSAGE_ERROR),
        ("two :status", frame(kind::HEADERS, &section(&[(":status", "200"), (":status", "204")])), code::MESSAGE_ERROR),
        ("no response", Vec::new(), code::MESSAGE_ERROR),
        ("only informational", frame(kind::HEADERS, &section(&[(":status", "100")])), code::MESSAGE_ERROR),
        ("ends inside a frame", [ok.clone(), frame(kind::DATA, b"abc")[..3].to_vec()].concat(), code::FRAME_ERROR),
        ("ends inside a frame header", [ok.clone(), vec![0x00]].concat(), code::FRAME_ERROR),
        (
            "a body longer than content-length",
            [frame(kind::HEADERS, &section(&[(":status", "200"), ("content-length", "2")])), frame(kind::DATA, b"abc")]
                .concat(),
            code::MESSAGE_ERROR,
        ),
        ("a dynamic table reference", frame(kind::HEADERS, &[0x00, 0x00, 0x80]), code::QPACK_DECOMPRESSION_FAILED),
        ("HEADERS after trailers", [ok.clone(), ok.clone(), ok.clone()].concat(), code::FRAME_UNEXPECTED),
        ("a field section too long", frame(kind::HEADERS, &[0; 300]), code::EXCESSIVE_LOAD),
    ];
    for (why, bytes, want) in cases {
        for parts in splits(&bytes) {
            let (result, _) = parse(&parts, 256);
            assert_eq!(result.map_err(|e| e.code), Err(want), "{why}");
        }
    }
}

#[test]
fn bodiless_responses_keep_their_content_length() {
    let announced = |status: &str| frame(kind::HEADERS, &section(&[(":status", status), ("content-length", "1024")]));
    let mut d = Decoder::new(256);
    for (status, head) in [("200", true), ("204", false), ("304", false)] {
        let mut s = ResponseStream::new(256);
        s.start(head);
        s.feed(&announced(status), &mut d, &mut |_| {}).unwrap();
        assert_eq!(s.finish().unwrap().body_bytes, 0, "{status} head={head}");
    }
    let mut s = ResponseStream::new(256);
    s.start(false);
    s.feed(&announced("200"), &mut d, &mut |_| {}).unwrap();
    assert_eq!(s.finish().map_err(|e| e.code), Err(code::MESSAGE_ERROR), "a GET's body must match");
}

fn control(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![0x00];
    for f in frames {
        out.extend_from_slice(f);
    }
    out
}

fn peer(parts: &[&[u8]]) -> Result<Vec<PeerEvent>, StreamError> {
    let mut s = PeerStream::default();
    let mut events = Vec::new();
    for part in parts {
        s.feed(part, &mut |e| events.push(e))?;
    }
    Ok(events)
}

#[test]
fn the_servers_control_stream_parses_at_every_split() {
    let mut settings = Vec::new();
    for (id, value) in [(0x06u64, 16_384u64), (0x01, 0), (0x21, 7)] {
        varint::encode(&mut settings, id);
        varint::encode(&mut settings, value);
    }
    let bytes = control(&[frame(kind::SETTINGS, &settings), frame(0x21, b"grease"), frame(kind::GOAWAY, &hex("4008"))]);
    for parts in splits(&bytes) {
        assert_eq!(peer(&parts).unwrap(), vec![PeerEvent::Settings, PeerEvent::GoAway(8)]);
    }
    // crest's own control stream is what this parser takes.
    assert_eq!(peer(&[&frame::control_stream(65_536)]).unwrap(), vec![PeerEvent::Settings]);
}

#[test]
fn control_stream_errors_and_ignored_streams() {
    let settings = frame(kind::SETTINGS, &[]);
    let cases: Vec<(&str, Vec<u8>, u64)> = vec![
        ("GOAWAY before SETTINGS", control(&[frame(kind::GOAWAY, &[0])]), code::MISSING_SETTINGS),
        ("two SETTINGS", control(&[settings.clone(), settings.clone()]), code::FRAME_UNEXPECTED),
        ("an HTTP/2 setting", control(&[frame(kind::SETTINGS, &[0x04, 0x01])]), code::SETTINGS_ERROR),
        ("a cut setting", control(&[frame(kind::SETTINGS, &[0x06])]), code::FRAME_ERROR),
        ("DATA", control(&[settings.clone(), frame(kind::DATA, b"x")]), code::FRAME_UNEXPECTED),
        ("a malformed GOAWAY", control(&[settings.clone(), frame(kind::GOAWAY, &[0, 0])]), code::FRAME_ERROR),
        ("a push stream", vec![0x01, 0x00], code::ID_ERROR),
    ];
    for (why, bytes, want) in cases {
        for parts in splits(&bytes) {
            assert_eq!(peer(&parts).map_err(|e| e.code), Err(want), "{why}");
        }
    }
    // QPACK encoder and decoder streams, and unknown types, are read and dropped.
    for stream_type in [0x02u8, 0x03, 0x21] {
        assert_eq!(peer(&[&[stream_type, 0x3f, 0xe1, 0x00, 0xff]]).unwrap(), vec![]);
    }
}
