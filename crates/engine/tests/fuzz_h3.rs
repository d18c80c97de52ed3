//! Fuzzing HTTP/3's parsers: QUIC varints both ways, frame headers, QPACK
//! field sections (random, mutated and round-tripped), and the parsers of a
//! response stream and of the server's control stream on frames built from
//! random types and payloads, mutated or replaced by arbitrary bytes, fed
//! whole and cut into random reads. Nothing may panic, and however the bytes
//! are cut the parsers must end alike.

use crate::fuzz_support::{config, parts, split, structured_input};
use crest_engine::protocol::h3::frame::Header;
use crest_engine::protocol::h3::qpack::{self, Decoder, STATIC_TABLE};
use crest_engine::protocol::h3::stream::{PeerEvent, PeerStream, Response, ResponseStream, StreamError};
use crest_engine::protocol::h3::varint;
use proptest::prelude::*;

/// Fields a response section is made of: valid, invalid and in between.
const FIELDS: &[(&str, &str)] = &[
    (":status", "200"),
    (":status", "204"),
    (":status", "304"),
    (":status", "103"),
    (":status", "099"),
    (":status", "+20"),
    (":status", "2000"),
    ("content-length", "0"),
    ("content-length", "3"),
    ("content-length", "x"),
    ("server", "fuzz"),
    ("x-custom", "a value long enough to be Huffman-coded"),
];

fn section() -> BoxedStrategy<Vec<u8>> {
    let pieces: Vec<Vec<u8>> = FIELDS
        .iter()
        .map(|(n, v)| {
            let mut out = Vec::new();
            qpack::encode_field(&mut out, n.as_bytes(), v.as_bytes());
            out
        })
        .chain([vec![0x80], vec![0x40], vec![0x10], vec![0xff, 0xff, 0xff, 0xff, 0x0f]])
        .collect();
    let prefix = prop_oneof![8 => Just(vec![0u8, 0]), 1 => any::<[u8; 2]>().prop_map(|p| p.to_vec())];
    (prefix, prop::collection::vec(prop::sample::select(pieces), 0..5))
        .prop_map(|(p, f)| [p, f.concat()].concat())
        .boxed()
}

fn varint_bytes(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint::encode(&mut out, v.min(varint::MAX));
    out
}

/// One frame: a known type or any, a payload of one of the shapes frames have, and its
/// length or, now and then, another.
fn one_frame() -> BoxedStrategy<Vec<u8>> {
    let kind = prop_oneof![
        6 => prop::sample::select(vec![0u64, 1, 3, 4, 5, 7, 0xd, 2, 6, 0x21]),
        1 => any::<u64>().prop_map(|t| t & varint::MAX),
    ];
    let settings = prop::collection::vec((0u64..10, any::<u32>()), 0..3).prop_map(|pairs| {
        pairs.iter().flat_map(|&(id, v)| [varint_bytes(id), varint_bytes(u64::from(v))].concat()).collect::<Vec<u8>>()
    });
    let payload = prop_oneof![
        3 => section(),
        3 => prop::collection::vec(any::<u8>(), 0..24),
        1 => settings,
        1 => any::<u32>().prop_map(|v| varint_bytes(u64::from(v))),
    ];
    let length = prop_oneof![9 => Just(None), 1 => (0u64..40).prop_map(Some)];
    (kind, payload, length)
        .prop_map(|(kind, payload, length)| {
            let mut out = varint_bytes(kind);
            out.extend(varint_bytes(length.unwrap_or(payload.len() as u64)));
            out.extend_from_slice(&payload);
            out
        })
        .boxed()
}

fn frames(first: Vec<Vec<u8>>) -> BoxedStrategy<Vec<u8>> {
    let structured = (prop::sample::select(first), prop::collection::vec(one_frame(), 0..8))
        .prop_map(|(first, frames)| [first, frames.concat()].concat())
        .boxed();
    structured_input(structured, &[b"\x01", b"\x00", b"\x40", b"\xc0"], 200)
}

/// A response stream fed `bytes_parts`: how it ended and the body it handed out.
fn response(bytes_parts: &[&[u8]], head: bool) -> (Result<Response, StreamError>, Vec<u8>) {
    let mut s = ResponseStream::new(256);
    s.start(head);
    let mut d = Decoder::new(128);
    let mut body = Vec::new();
    for part in bytes_parts {
        if let Err(e) = s.feed(part, &mut d, &mut |b| body.extend_from_slice(b)) {
            return (Err(e), body);
        }
    }
    (s.finish(), body)
}

fn control(bytes_parts: &[&[u8]]) -> (Vec<PeerEvent>, Result<bool, StreamError>) {
    let mut s = PeerStream::default();
    let mut events = Vec::new();
    for part in bytes_parts {
        if let Err(e) = s.feed(part, &mut |e| events.push(e)) {
            return (events, Err(e));
        }
    }
    (events, Ok(s.is_control()))
}

/// Frame headers read from `bytes_parts`, as many as are whole.
fn headers(bytes_parts: &[&[u8]]) -> (Vec<(u64, u64)>, bool) {
    let mut h = Header::default();
    let mut out = Vec::new();
    for part in bytes_parts {
        let mut rest = *part;
        while let Some(got) = h.read(&mut rest) {
            out.push(got);
            if rest.is_empty() {
                break;
            }
        }
        assert!(rest.is_empty(), "{} bytes left over", rest.len());
    }
    (out, h.partial())
}

fn field_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..60),
        prop::collection::vec(b'a'..=b'z', 0..60),
        prop::sample::select(STATIC_TABLE.iter().map(|(n, _)| n.as_bytes().to_vec()).collect::<Vec<_>>()),
    ]
}

proptest! {
    #![proptest_config(config("fuzz_h3", 256))]

    #[test]
    fn varints_round_trip(v in prop_oneof![0u64..64, 0u64..16_384, 0u64..(1 << 30), 0..=varint::MAX]) {
        let bytes = varint_bytes(v);
        prop_assert_eq!(bytes.len(), varint::len_of(bytes[0]));
        let mut pos = 0;
        prop_assert_eq!(varint::decode(&bytes, &mut pos), Some(v));
        prop_assert_eq!(pos, bytes.len());
    }

    #[test]
    fn any_bytes_read_as_a_varint_or_as_too_short(bytes in prop::collection::vec(any::<u8>(), 0..10)) {
        let mut pos = 0;
        match varint::decode(&bytes, &mut pos) {
            Some(v) => {
                prop_assert!(v <= varint::MAX);
                prop_assert_eq!(pos, varint::len_of(bytes[0]));
            }
            None => {
                prop_assert_eq!(pos, 0);
                prop_assert!(bytes.is_empty() || bytes.len() < varint::len_of(bytes[0]));
            }
        }
    }

    #[test]
    fn frame_headers_read_alike_however_the_bytes_are_cut(bytes in prop::collection::vec(any::<u8>(), 0..64), cut in split()) {
        prop_assert_eq!(headers(&[&bytes[..]]), headers(&parts(&bytes, &cut)));
    }

    #[test]
    fn field_sections_never_panic_the_decoder(block in structured_input(section(), &[b"\x00\x00", b"\x5f\x1d", b"\x2f"], 64)) {
        let mut d = Decoder::new(128);
        let mut fields = 0usize;
        let _ = d.decode(&block, &mut |n, v| {
            assert!(n.len() <= 128 && v.len() <= 128, "a field past the limit");
            fields += 1;
        });
        prop_assert!(fields <= block.len());
    }

    #[test]
    fn field_sections_round_trip(fields in prop::collection::vec((field_text(), field_text()), 0..8)) {
        let mut block = vec![0, 0];
        for (n, v) in &fields {
            qpack::encode_field(&mut block, n, v);
        }
        let mut back = Vec::new();
        Decoder::new(128).decode(&block, &mut |n, v| back.push((n.to_vec(), v.to_vec()))).unwrap();
        prop_assert_eq!(back, fields);
    }

    #[test]
    fn a_response_stream_ends_alike_however_the_bytes_are_cut(
        bytes in frames(vec![Vec::new(), b"\x01\x02\x00\x00".to_vec(), b"\x01\x03\x00\x00\xd9".to_vec()]),
        cut in split(),
        head in any::<bool>(),
    ) {
        prop_assert_eq!(response(&[&bytes[..]], head), response(&parts(&bytes, &cut), head));
    }

    #[test]
    fn a_control_stream_ends_alike_however_the_bytes_are_cut(
        bytes in frames(vec![vec![0x00], vec![0x00, 0x04, 0x00], vec![0x02], vec![0x01], vec![0x40, 0x00], vec![0x21]]),
        cut in split(),
    ) {
        prop_assert_eq!(control(&[&bytes[..]]), control(&parts(&bytes, &cut)));
    }
}
