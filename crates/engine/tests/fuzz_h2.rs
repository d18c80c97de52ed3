//! Fuzzing HTTP/2: the frame decoder and a whole client session on frames
//! built from random types, flags, stream ids and payloads (HPACK blocks
//! among them), mutated or replaced by arbitrary bytes, fed whole and cut
//! into random reads; the HPACK decoder on random blocks and against a model
//! of its dynamic table; the Huffman code both ways. Nothing may panic, and
//! however the bytes are cut the decoder and the session must produce the
//! same units, events, errors and output.

use std::collections::VecDeque;

use crate::fuzz_support::{config, parts, split, structured_input};
use crest_engine::protocol::h2::frame::{self, Frame, FrameDecoder, FrameError};
use crest_engine::protocol::h2::hpack::{self, Decoder, HpackError};
use crest_engine::protocol::h2::huffman;
use crest_engine::protocol::h2::{Event, Session, SessionError, SessionSettings};
use proptest::prelude::*;
use proptest::sample::Index;

/// Header fields a response block is made of: valid, invalid and in between.
const FIELDS: &[(&str, &str)] = &[
    (":status", "200"),
    (":status", "204"),
    (":status", "404"),
    (":status", "100"),
    (":status", "99"),
    (":status", "abc"),
    (":status", "65736"),
    ("content-length", "0"),
    ("content-length", "3"),
    ("content-length", "x"),
    ("content-length", "99999999999999999999"),
    ("server", "fuzz"),
    ("x-custom", "a value long enough to be Huffman-coded"),
];

/// Encoded pieces of header blocks: the fields above, a literal with indexing, an index
/// into the dynamic table, table size updates.
fn hpack_pieces() -> Vec<Vec<u8>> {
    let mut pieces: Vec<Vec<u8>> = FIELDS
        .iter()
        .map(|(n, v)| {
            let mut out = Vec::new();
            hpack::encode_field(&mut out, n.as_bytes(), v.as_bytes());
            out
        })
        .collect();
    let mut indexing = vec![0x40];
    hpack::encode_string(&mut indexing, b"x-indexed");
    hpack::encode_string(&mut indexing, b"value");
    pieces.extend([indexing, vec![0xbe], vec![0xbf], vec![0x20], vec![0x3f, 0xe1, 0x1f], vec![0x88]]);
    pieces
}

fn hpack_block() -> BoxedStrategy<Vec<u8>> {
    prop::collection::vec(prop::sample::select(hpack_pieces()), 0..5).prop_map(|p| p.concat()).boxed()
}

/// A payload of one of the shapes frames have.
fn payload() -> BoxedStrategy<Vec<u8>> {
    let settings = prop::collection::vec((0u16..8, prop_oneof![any::<u32>(), 0u32..70_000]), 0..4).prop_map(|params| {
        params.iter().flat_map(|(id, v)| [&id.to_be_bytes()[..], &v.to_be_bytes()[..]].concat()).collect::<Vec<u8>>()
    });
    prop_oneof![
        3 => prop::collection::vec(any::<u8>(), 0..40),
        3 => hpack_block(),
        2 => settings,
        2 => prop_oneof![any::<u32>(), 0u32..70_000].prop_map(|v| v.to_be_bytes().to_vec()),
        1 => any::<[u8; 8]>().prop_map(|v| v.to_vec()),
    ]
    .boxed()
}

/// One frame: a known type or any, the flags that matter or any, a stream crest opened or
/// any, and its payload's length or, now and then, another.
fn one_frame() -> BoxedStrategy<Vec<u8>> {
    let kind = prop_oneof![4 => prop::sample::select(vec![0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9]), 1 => any::<u8>()];
    let flags =
        prop_oneof![4 => prop::sample::select(vec![0u8, 1, 4, 5, 8, 9, 0x20, 0x24, 0x25, 0x2d]), 1 => any::<u8>()];
    let stream = prop_oneof![6 => prop::sample::select(vec![0u32, 1, 3, 5, 7, 9, 2]), 1 => any::<u32>()];
    let length = prop_oneof![9 => Just(None), 1 => (0usize..64).prop_map(Some)];
    (kind, flags, stream, payload(), length)
        .prop_map(|(kind, flags, stream, payload, length)| {
            let mut out = Vec::new();
            frame::write_head(&mut out, length.unwrap_or(payload.len()), kind, flags, stream);
            out.extend_from_slice(&payload);
            out
        })
        .boxed()
}

fn frames(max: usize) -> BoxedStrategy<Vec<u8>> {
    let structured = prop::collection::vec(one_frame(), 0..max).prop_map(|f| f.concat()).boxed();
    structured_input(structured, &[b"\x00\x00\x00", b"\x00\x00\x04\x04\x00\x00\x00\x00\x00", b"\x80\x00\x00\x00"], 300)
}

/// A decoded unit with owned bytes.
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
    out.push(unit);
}

/// Decodes `bytes_parts` in order as the session does: each until the decoder returns (0, None).
fn decode_frames(bytes_parts: &[&[u8]]) -> (Vec<Unit>, Result<bool, FrameError>) {
    let mut d = FrameDecoder::new(frame::DEFAULT_MAX_FRAME_BYTES);
    let mut out = Vec::new();
    for part in bytes_parts {
        let mut rest = *part;
        loop {
            match d.decode(rest) {
                Err(e) => return (out, Err(e)),
                Ok((used, f)) => {
                    assert!(used <= rest.len(), "used {used} of {} bytes", rest.len());
                    rest = &rest[used..];
                    match f {
                        Some(f) => own(f, &mut out),
                        None if used == 0 => break,
                        None => {}
                    }
                }
            }
        }
        assert!(rest.is_empty(), "{} bytes left over", rest.len());
    }
    out.retain(|u| !matches!(u, Unit::Data(_, d) if d.is_empty()));
    (out, Ok(d.at_boundary()))
}

/// A session event with owned bytes; a lane's body pieces joined.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Ready,
    Body(u32, Vec<u8>),
    Other(String),
}

/// A client session with `lanes` streams open after the server's `settings`, fed `rounds`
/// of bytes (cut as `cut` says; between rounds it opens what it can); what it reported,
/// how it ended and what it wrote.
fn run_session(
    lanes: u32,
    settings: &[u8],
    rounds: &[Vec<Vec<u8>>],
    windows: (u32, u32),
) -> (Vec<Seen>, Result<(), SessionError>, Vec<u8>) {
    let mut s = Session::new(
        SessionSettings { lanes, stream_window: windows.0, connection_window: windows.1, max_field_bytes: 256 },
        1024,
    );
    let mut seen: Vec<Seen> = Vec::new();
    let mut on = |e: Event<'_>| match e {
        Event::Ready => seen.push(Seen::Ready),
        Event::Body { lane, bytes } => match seen.last_mut() {
            Some(Seen::Body(l, b)) if *l == lane => b.extend_from_slice(bytes),
            _ => seen.push(Seen::Body(lane, bytes.to_vec())),
        },
        other => seen.push(Seen::Other(format!("{other:?}"))),
    };
    let mut result = s.receive(settings, &mut on);
    'rounds: for round in rounds {
        if result.is_err() {
            break;
        }
        for lane in 0..lanes {
            if s.can_open(lane) {
                let body: &[u8] = if lane % 2 == 1 { b"a request body" } else { b"" };
                s.open(lane, b"\x82\x86\x84", body);
            }
        }
        for part in round {
            result = s.receive(part, &mut on);
            if result.is_err() {
                break 'rounds;
            }
        }
    }
    // What the engine does next must not panic either.
    let output = s.output().to_vec();
    s.send_bodies(&|_| Some(&b"a request body"[..]));
    for lane in 0..lanes {
        s.cancel(lane);
    }
    s.close();
    s.reset();
    (seen, result, output)
}

/// A header field: name, value.
type Field = (Vec<u8>, Vec<u8>);

/// A dynamic table kept as RFC 7541 §4 says, to check the decoder's against.
#[derive(Debug, Default)]
struct Model {
    entries: VecDeque<Field>,
    max: usize,
}

impl Model {
    fn size(&self) -> usize {
        self.entries.iter().map(|(n, v)| n.len() + v.len() + 32).sum()
    }

    fn evict_to(&mut self, limit: usize) {
        while self.size() > limit {
            self.entries.pop_back();
        }
    }

    fn insert(&mut self, name: Vec<u8>, value: Vec<u8>) {
        let size = name.len() + value.len() + 32;
        if size > self.max {
            self.entries.clear();
            return;
        }
        self.evict_to(self.max - size);
        self.entries.push_front((name, value));
    }
}

/// One block of a table-model run.
#[derive(Debug, Clone)]
enum TableOp {
    /// A literal with incremental indexing: a new name, or the name of the entry at the index.
    Insert { name: Vec<u8>, value: Vec<u8>, name_from: Option<Index> },
    /// An indexed field: the entry at the index (or one past the table's end: an error).
    Refer(Index),
    /// A dynamic table size update to this share of the advertised size.
    Resize(u8),
}

fn table_op() -> impl Strategy<Value = TableOp> {
    let bytes = |n: usize| prop::collection::vec(prop_oneof![any::<u8>(), b'a'..=b'z'], 0..n);
    prop_oneof![
        4 => (bytes(24), bytes(60), prop::option::of(any::<Index>()))
            .prop_map(|(name, value, name_from)| TableOp::Insert { name, value, name_from }),
        4 => any::<Index>().prop_map(TableOp::Refer),
        1 => any::<u8>().prop_map(TableOp::Resize),
    ]
}

const TABLE_BYTES: usize = 256;

proptest! {
    #![proptest_config(config("fuzz_h2", 256))]

    #[test]
    fn frames_decode_alike_however_the_bytes_are_cut(bytes in frames(10), cut in split()) {
        let (whole, whole_end) = decode_frames(&[&bytes[..]]);
        let (cut_units, cut_end) = decode_frames(&parts(&bytes, &cut));
        prop_assert_eq!(&whole_end, &cut_end);
        if whole_end.is_ok() {
            prop_assert_eq!(whole, cut_units);
        }
    }

    #[test]
    fn a_session_reports_alike_however_the_bytes_are_cut(
        lanes in 1u32..4,
        server_settings in prop::collection::vec((0u16..8, prop_oneof![any::<u32>(), 0u32..70_000]), 0..3),
        round_one in frames(10),
        round_two in frames(6),
        cut in split(),
        small_windows in any::<bool>(),
    ) {
        let mut settings = Vec::new();
        frame::write_settings(&mut settings, &server_settings);
        let windows = if small_windows { (16, 100) } else { (frame::DEFAULT_WINDOW, 1 << 20) };
        let whole = run_session(lanes, &settings, &[vec![round_one.clone()], vec![round_two.clone()]], windows);
        let rounds: [Vec<Vec<u8>>; 2] = [
            parts(&round_one, &cut).into_iter().map(<[u8]>::to_vec).collect(),
            parts(&round_two, &cut).into_iter().map(<[u8]>::to_vec).collect(),
        ];
        let cut = run_session(lanes, &settings, &rounds, windows);
        prop_assert_eq!(whole, cut);
    }

    #[test]
    fn header_blocks_never_panic_the_decoder(
        blocks in prop::collection::vec(structured_input(hpack_block(), &[b"\x40", b"\xff\xff\xff\xff\x0f", b"\x87"], 64), 1..6),
        table in prop::sample::select(vec![0usize, 64, 4096]),
    ) {
        let mut d = Decoder::new(table, 128);
        for block in &blocks {
            let mut fields = 0usize;
            // Any error will do: what matters is that there is no panic.
            let _ = d.decode(block, &mut |n, v| {
                assert!(n.len() <= 256 && v.len() <= 256, "a field past the limit");
                fields += 1;
            });
            prop_assert!(fields <= block.len(), "more fields than bytes");
        }
    }

    #[test]
    fn the_dynamic_table_is_the_rfcs(ops in prop::collection::vec(table_op(), 1..60)) {
        let mut d = Decoder::new(TABLE_BYTES, 128);
        let mut model = Model { max: TABLE_BYTES, ..Model::default() };
        for op in ops {
            let mut block = Vec::new();
            let want: Result<Option<Field>, HpackError> = match op {
                TableOp::Insert { name, value, name_from } => {
                    let name = match name_from.filter(|_| !model.entries.is_empty()) {
                        Some(i) => {
                            let k = i.index(model.entries.len());
                            hpack::encode_int(&mut block, 0x40, 6, 62 + k);
                            model.entries[k].0.clone()
                        }
                        None => {
                            block.push(0x40);
                            hpack::encode_string(&mut block, &name);
                            name
                        }
                    };
                    hpack::encode_string(&mut block, &value);
                    model.insert(name.clone(), value.clone());
                    Ok(Some((name, value)))
                }
                TableOp::Refer(i) => {
                    let k = i.index(model.entries.len() + 1);
                    hpack::encode_int(&mut block, 0x80, 7, 62 + k);
                    match model.entries.get(k) {
                        Some(entry) => Ok(Some(entry.clone())),
                        None => Err(HpackError::Index(62 + k)),
                    }
                }
                TableOp::Resize(share) => {
                    let size = TABLE_BYTES * usize::from(share) / 255;
                    hpack::encode_int(&mut block, 0x20, 5, size);
                    model.max = size;
                    model.evict_to(size);
                    Ok(None)
                }
            };
            let mut got = None;
            let result = d.decode(&block, &mut |n, v| got = Some((n.to_vec(), v.to_vec())));
            prop_assert_eq!(result.map(|()| got), want);
        }
    }

    #[test]
    fn huffman_decoding_inverts_encoding(text in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut coded = Vec::new();
        huffman::encode(&text, &mut coded);
        prop_assert_eq!(coded.len(), huffman::encoded_len(&text));
        let mut back = Vec::new();
        huffman::decode(&coded, &mut back).unwrap();
        prop_assert_eq!(back, text);
    }

    #[test]
    fn a_huffman_string_that_decodes_has_one_encoding(coded in prop::collection::vec(any::<u8>(), 0..64)) {
        // The code is canonical and padding is EOS's prefix: what decodes re-encodes to itself.
        let mut text = Vec::new();
        if huffman::decode(&coded, &mut text).is_ok() {
            let mut again = Vec::new();
            huffman::encode(&text, &mut again);
            prop_assert_eq!(again, coded);
        }
    }
}
