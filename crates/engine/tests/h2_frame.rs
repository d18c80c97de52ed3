//! HTTP/2 frames (RFC 9113 §6) on raw bytes: every frame type crest reads,
//! whole, split at every byte boundary and byte by byte, must decode to the
//! same units (DATA pieces joined); malformed frames are connection errors.

use crest_engine::protocol::h2::frame::Frame;
use crest_engine::protocol::h2::frame::{self, code, flag, kind, FrameDecoder, FrameError};

/// A decoded unit with owned bytes; DATA pieces of a frame are joined.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Unit {
    Data(u32, Vec<u8>),
    DataEnd(u32, bool, u32),
    Headers(u32, bool, bool, Vec<u8>),
    Continuation(u32, bool, Vec<u8>),
    Rst(u32, u32),
    Settings(bool, Vec<(u16, u32)>),
    Ping(bool, [u8; 8]),
    GoAway(u32, u32),
    Window(u32, u32),
    Ignored,
}

fn own(f: Frame<'_>, out: &mut Vec<Unit>) {
    let unit = match f {
        Frame::Data { stream, bytes } => {
            if let Some(Unit::Data(s, data)) = out.last_mut() {
                if *s == stream {
                    data.extend_from_slice(bytes);
                    return;
                }
            }
            Unit::Data(stream, bytes.to_vec())
        }
        Frame::DataEnd { stream, end_stream, flow_bytes } => Unit::DataEnd(stream, end_stream, flow_bytes),
        Frame::Headers { stream, end_stream, end_headers, block } => {
            Unit::Headers(stream, end_stream, end_headers, block.to_vec())
        }
        Frame::Continuation { stream, end_headers, block } => Unit::Continuation(stream, end_headers, block.to_vec()),
        Frame::RstStream { stream, code } => Unit::Rst(stream, code),
        Frame::Settings { ack, params } => Unit::Settings(ack, frame::settings(params).collect()),
        Frame::Ping { ack, opaque } => Unit::Ping(ack, opaque),
        Frame::GoAway { last_stream, code } => Unit::GoAway(last_stream, code),
        Frame::WindowUpdate { stream, increment } => Unit::Window(stream, increment),
        Frame::Ignored => Unit::Ignored,
    };
    // Empty DATA pieces carry nothing.
    if unit != Unit::Data(0, Vec::new()) {
        out.push(unit);
    }
}

/// Feeds `parts` as the engine does: each until the decoder returns (0, None).
fn feed(parts: &[&[u8]]) -> Result<Vec<Unit>, FrameError> {
    let mut d = FrameDecoder::new(frame::DEFAULT_MAX_FRAME_BYTES);
    let mut out = Vec::new();
    for part in parts {
        let mut rest = *part;
        loop {
            let (used, f) = d.decode(rest)?;
            assert!(used <= rest.len());
            rest = &rest[used..];
            match f {
                Some(f) => own(f, &mut out),
                None if used == 0 => break,
                None => {}
            }
        }
        assert!(rest.is_empty(), "input left over");
    }
    assert!(d.at_boundary(), "a frame was left partly read");
    out.retain(|u| !matches!(u, Unit::Data(_, d) if d.is_empty()));
    Ok(out)
}

/// Decodes `bytes` whole, split at every index, and byte by byte: all alike.
fn decode_every_way(bytes: &[u8]) -> Vec<Unit> {
    let whole = feed(&[bytes]).unwrap();
    for i in 0..=bytes.len() {
        assert_eq!(feed(&[&bytes[..i], &bytes[i..]]).unwrap(), whole, "split at {i}");
    }
    let single: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(feed(&single).unwrap(), whole, "byte by byte");
    whole
}

fn raw(len: usize, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::write_head(&mut out, len, kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

#[test]
fn every_frame_type_decodes_alike_however_split() {
    let mut bytes = Vec::new();
    frame::write_settings(
        &mut bytes,
        &[(frame::setting::MAX_CONCURRENT_STREAMS, 128), (frame::setting::INITIAL_WINDOW_SIZE, 1 << 20)],
    );
    frame::write_settings_ack(&mut bytes);
    frame::write_headers(&mut bytes, 1, b"\x88\x0f\x0d\x021k", false, 16_384);
    frame::write_data(&mut bytes, 1, b"hello", false);
    frame::write_data(&mut bytes, 1, b"", true);
    // A header block in a HEADERS and two CONTINUATIONs.
    frame::write_headers(&mut bytes, 3, b"abcdefgh", true, 3);
    frame::write_ping(&mut bytes, false, *b"12345678");
    frame::write_ping(&mut bytes, true, *b"abcdefgh");
    frame::write_window_update(&mut bytes, 0, 1_000_000);
    frame::write_window_update(&mut bytes, 5, 7);
    frame::write_rst_stream(&mut bytes, 5, code::CANCEL);
    // PRIORITY and an unknown type are ignored; GOAWAY carries debug data crest skips.
    bytes.extend(raw(5, kind::PRIORITY, 0, 7, &[0, 0, 0, 1, 16]));
    bytes.extend(raw(3, 0xfa, 0, 0, b"xyz"));
    bytes.extend(raw(11, kind::GOAWAY, 0, 0, &[0, 0, 0, 9, 0, 0, 0, 0, b'b', b'y', b'e']));
    let units = decode_every_way(&bytes);
    assert_eq!(
        units,
        vec![
            Unit::Settings(false, vec![(3, 128), (4, 1 << 20)]),
            Unit::Settings(true, vec![]),
            Unit::Headers(1, false, true, b"\x88\x0f\x0d\x021k".to_vec()),
            Unit::Data(1, b"hello".to_vec()),
            Unit::DataEnd(1, false, 5),
            Unit::DataEnd(1, true, 0),
            Unit::Headers(3, true, false, b"abc".to_vec()),
            Unit::Continuation(3, false, b"def".to_vec()),
            Unit::Continuation(3, true, b"gh".to_vec()),
            Unit::Ping(false, *b"12345678"),
            Unit::Ping(true, *b"abcdefgh"),
            Unit::Window(0, 1_000_000),
            Unit::Window(5, 7),
            Unit::Rst(5, code::CANCEL),
            Unit::Ignored,
            Unit::Ignored,
            Unit::GoAway(9, 0),
        ]
    );
}

#[test]
fn padding_and_priority_are_stripped() {
    let mut bytes = Vec::new();
    // DATA: pad length 3, "abc", 3 bytes of padding: 7 bytes count for flow control.
    bytes.extend(raw(7, kind::DATA, flag::PADDED | flag::END_STREAM, 1, b"\x03abc\0\0\0"));
    // HEADERS: pad length 2, priority (5 bytes), block "xy", padding.
    bytes.extend(raw(
        10,
        kind::HEADERS,
        flag::PADDED | flag::PRIORITY | flag::END_HEADERS,
        3,
        b"\x02\0\0\0\x01\x10xy\0\0",
    ));
    assert_eq!(
        decode_every_way(&bytes),
        vec![Unit::Data(1, b"abc".to_vec()), Unit::DataEnd(1, true, 7), Unit::Headers(3, false, true, b"xy".to_vec()),]
    );
}

#[test]
fn a_large_data_frame_streams_without_buffering() {
    let body: Vec<u8> = (0..16_384u32).map(|i| (i % 251) as u8).collect();
    let mut bytes = Vec::new();
    frame::write_data(&mut bytes, 1, &body, true);
    let units = feed(&[&bytes[..100], &bytes[100..9000], &bytes[9000..]]).unwrap();
    assert_eq!(units, vec![Unit::Data(1, body.clone()), Unit::DataEnd(1, true, 16_384)]);
}

fn error_of(bytes: &[u8]) -> FrameError {
    // However the bytes are split, the same error.
    let whole = feed(&[bytes]).unwrap_err();
    for i in 0..=bytes.len() {
        assert_eq!(feed(&[&bytes[..i], &bytes[i..]]).unwrap_err(), whole, "split at {i}");
    }
    whole
}

#[test]
fn malformed_frames_are_connection_errors() {
    let too_long = raw(16_385, kind::DATA, 0, 1, &[0; 16_385]);
    assert!(matches!(error_of(&too_long), FrameError::Size(_)));
    assert!(matches!(error_of(&raw(16_385, kind::HEADERS, 0, 1, &[0; 16_385])), FrameError::Size(_)));
    assert!(matches!(error_of(&raw(5, kind::SETTINGS, 0, 0, &[0; 5])), FrameError::Size(_)));
    assert!(matches!(error_of(&raw(6, kind::SETTINGS, flag::ACK, 0, &[0; 6])), FrameError::Size(_)));
    assert!(matches!(error_of(&raw(6, kind::SETTINGS, 0, 1, &[0; 6])), FrameError::Protocol(_)));
    assert!(matches!(error_of(&raw(7, kind::PING, 0, 0, &[0; 7])), FrameError::Size(_)));
    assert!(matches!(error_of(&raw(8, kind::PING, 0, 3, &[0; 8])), FrameError::Protocol(_)));
    assert!(matches!(error_of(&raw(3, kind::RST_STREAM, 0, 1, &[0; 3])), FrameError::Size(_)));
    assert!(matches!(error_of(&raw(4, kind::RST_STREAM, 0, 0, &[0; 4])), FrameError::Protocol(_)));
    assert!(matches!(error_of(&raw(4, kind::WINDOW_UPDATE, 0, 0, &[0; 4])), FrameError::Protocol(_)));
    assert!(matches!(error_of(&raw(7, kind::GOAWAY, 0, 0, &[0; 7])), FrameError::Size(_)));
    assert!(matches!(error_of(&raw(2, kind::DATA, 0, 0, b"ab")), FrameError::Protocol(_)));
    assert!(matches!(error_of(&raw(2, kind::DATA, flag::PADDED, 1, b"\x05a")), FrameError::Protocol(_)));
    assert!(matches!(error_of(&raw(2, kind::HEADERS, flag::PADDED, 1, b"\x05a")), FrameError::Protocol(_)));
    assert!(matches!(error_of(&raw(4, kind::PUSH_PROMISE, 0, 1, &[0, 0, 0, 2])), FrameError::Protocol(_)));
    assert_eq!(FrameError::Size("x").code(), code::FRAME_SIZE_ERROR);
}

#[test]
fn headers_split_into_continuations_by_the_peers_frame_size() {
    let block: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
    let mut bytes = Vec::new();
    frame::write_headers(&mut bytes, 1, &block, true, 16_384);
    let units = decode_every_way(&bytes[..0]);
    assert!(units.is_empty());
    let units = feed(&[&bytes]).unwrap();
    let mut joined = Vec::new();
    for u in &units {
        match u {
            Unit::Headers(1, true, false, b) | Unit::Continuation(1, false, b) | Unit::Continuation(1, true, b) => {
                joined.extend_from_slice(b)
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(joined, block);
    assert_eq!(units.len(), 3);
    assert!(matches!(units.last(), Some(Unit::Continuation(1, true, _))));
}
