//! HPACK (RFC 7541) on bytes: the Huffman code against Appendix B's
//! values, integers (C.1), and the request and response examples of
//! Appendix C (C.3–C.6), decoded in sequence so the dynamic table (with
//! its evictions at 256 bytes) must stay in step.

use crate::support::hex;
use crest_engine::protocol::h2::hpack::{self, Decoder, HpackError};
use crest_engine::protocol::h2::huffman::{self, HuffmanError};

fn decode_all(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
    let mut out = Vec::new();
    d.decode(block, &mut |n, v| {
        out.push((String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap()));
    })?;
    Ok(out)
}

fn fields(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

#[test]
fn huffman_codes_are_appendix_b() {
    // A few codes read off RFC 7541 Appendix B: the canonical derivation must reproduce them.
    for (symbol, code, len) in [
        (0u16, 0x1ff8, 13),
        (b'0' as u16, 0x0, 5),
        (b' ' as u16, 0x14, 6),
        (b'a' as u16, 0x3, 5),
        (b':' as u16, 0x5c, 7),
        (b'X' as u16, 0xfc, 8),
        (b'\\' as u16, 0x7fff0, 19),
        (127, 0xffffffc, 28),
        (128, 0xfffe6, 20),
        (220, 0xffffffd, 28),
        (255, 0x3ffffee, 26),
        (256, 0x3fffffff, 30),
    ] {
        assert_eq!(huffman::code_of(symbol), (code, len), "symbol {symbol}");
    }
}

#[test]
fn huffman_round_trips_every_byte() {
    let all: Vec<u8> = (0..=255).collect();
    let mut coded = Vec::new();
    huffman::encode(&all, &mut coded);
    assert_eq!(coded.len(), huffman::encoded_len(&all));
    let mut back = Vec::new();
    huffman::decode(&coded, &mut back).unwrap();
    assert_eq!(back, all);
    for b in 0..=255u8 {
        let mut c = Vec::new();
        huffman::encode(&[b, b'a', b], &mut c);
        let mut d = Vec::new();
        huffman::decode(&c, &mut d).unwrap();
        assert_eq!(d, [b, b'a', b]);
    }
}

#[test]
fn huffman_matches_c4_and_refuses_bad_padding() {
    let mut out = Vec::new();
    huffman::encode(b"www.example.com", &mut out);
    assert_eq!(out, hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff"));
    let mut d = Vec::new();
    huffman::decode(&hex("6402"), &mut d).unwrap();
    assert_eq!(d, b"302");
    // '0' (00000) then three 1s of padding; with the padding cleared it is bad.
    let mut d = Vec::new();
    huffman::decode(&[0x07], &mut d).unwrap();
    assert_eq!(d, b"0");
    assert_eq!(huffman::decode(&[0x00], &mut Vec::new()), Err(HuffmanError::Padding));
    // A whole byte of padding is too much; 30 ones are EOS itself.
    assert_eq!(huffman::decode(&[0x07, 0xff], &mut Vec::new()), Err(HuffmanError::Padding));
    assert_eq!(huffman::decode(&[0xff, 0xff, 0xff, 0xff], &mut Vec::new()), Err(HuffmanError::Eos));
}

#[test]
fn integers_c1() {
    for (value, prefix, bytes) in [(10usize, 5u32, "0a"), (1337, 5, "1f9a0a"), (42, 8, "2a")] {
        let mut out = Vec::new();
        hpack::encode_int(&mut out, 0, prefix, value);
        assert_eq!(out, hex(bytes));
        let mut pos = 0;
        assert_eq!(hpack::decode_int(&out, &mut pos, prefix).unwrap(), value);
        assert_eq!(pos, out.len());
    }
    assert_eq!(hpack::decode_int(&hex("1f9a"), &mut 0, 5), Err(HpackError::Truncated));
    assert_eq!(hpack::decode_int(&hex("1fffffffffff01"), &mut 0, 5), Err(HpackError::Overflow));
}

const REQ1: &[(&str, &str)] =
    &[(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")];
const REQ2: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "http"),
    (":path", "/"),
    (":authority", "www.example.com"),
    ("cache-control", "no-cache"),
];
const REQ3: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "https"),
    (":path", "/index.html"),
    (":authority", "www.example.com"),
    ("custom-key", "custom-value"),
];

#[test]
fn requests_c3_and_c4() {
    let c3 = [
        "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        "8286 84be 5808 6e6f 2d63 6163 6865",
        "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
    ];
    let c4 = [
        "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
        "8286 84be 5886 a8eb 1064 9cbf",
        "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
    ];
    for blocks in [c3, c4] {
        let mut d = Decoder::new(4096, 8192);
        for (block, expected) in blocks.iter().zip([REQ1, REQ2, REQ3]) {
            assert_eq!(decode_all(&mut d, &hex(block)).unwrap(), fields(expected));
        }
    }
}

const DATE1: &str = "Mon, 21 Oct 2013 20:13:21 GMT";
const DATE2: &str = "Mon, 21 Oct 2013 20:13:22 GMT";
const LOCATION: &str = "https://www.example.com";
const COOKIE: &str = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";

fn responses() -> [Vec<(String, String)>; 3] {
    [
        fields(&[(":status", "302"), ("cache-control", "private"), ("date", DATE1), ("location", LOCATION)]),
        fields(&[(":status", "307"), ("cache-control", "private"), ("date", DATE1), ("location", LOCATION)]),
        fields(&[
            (":status", "200"),
            ("cache-control", "private"),
            ("date", DATE2),
            ("location", LOCATION),
            ("content-encoding", "gzip"),
            ("set-cookie", COOKIE),
        ]),
    ]
}

#[test]
fn responses_c5_and_c6_with_eviction() {
    let c5 = [
        "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 \
         3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        "4803 3330 37c1 c0bf",
        "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 \
         7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 \
         6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
    ];
    let c6 = [
        "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad \
         1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        "4883 640e ffc1 c0bf",
        "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 \
         e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
    ];
    for blocks in [c5, c6] {
        // The examples' table holds 256 bytes: the second and third responses evict.
        let mut d = Decoder::new(256, 8192);
        for (block, expected) in blocks.iter().zip(responses()) {
            assert_eq!(decode_all(&mut d, &hex(block)).unwrap(), expected);
        }
    }
}

#[test]
fn refuses_bad_blocks() {
    let mut d = Decoder::new(4096, 8192);
    assert_eq!(decode_all(&mut d, &hex("be")), Err(HpackError::Index(62)));
    assert_eq!(decode_all(&mut d, &hex("80")), Err(HpackError::Index(0)));
    assert_eq!(decode_all(&mut d, &hex("4003 6162")), Err(HpackError::Truncated));
    // A size update above the advertised table, and one after a field.
    assert_eq!(decode_all(&mut d, &hex("3fe21f")), Err(HpackError::SizeUpdate));
    assert_eq!(decode_all(&mut d, &hex("88 20")), Err(HpackError::SizeUpdate));
    let mut small = Decoder::new(4096, 4);
    assert_eq!(decode_all(&mut small, &hex("0005 6162 6364 6501 61")), Err(HpackError::TooLong(4)));
}

#[test]
fn a_size_update_evicts_and_a_too_large_entry_empties_the_table() {
    let mut d = Decoder::new(256, 8192);
    decode_all(&mut d, &hex("400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65")).unwrap();
    assert_eq!(decode_all(&mut d, &hex("be")).unwrap(), fields(&[("custom-key", "custom-value")]));
    // Size 0 then back to 256: the entry is gone.
    assert_eq!(decode_all(&mut d, &hex("20 3f e1 01 88")).unwrap(), fields(&[(":status", "200")]));
    assert_eq!(decode_all(&mut d, &hex("be")), Err(HpackError::Index(62)));
}

#[test]
fn request_blocks_decode_back_to_their_fields() {
    let headers =
        vec![("User-Agent".to_string(), "crest".to_string()), ("Connection".to_string(), "close".to_string())];
    let head = |index_path| hpack::RequestHead {
        method: "GET",
        scheme: "https",
        authority: "127.0.0.1:8443",
        path: "/1k.html",
        headers: &headers,
        content_length: None,
        user_agent: "ignored",
        index_path,
    };
    let want = fields(&[
        (":method", "GET"),
        (":scheme", "https"),
        (":authority", "127.0.0.1:8443"),
        (":path", "/1k.html"),
        ("user-agent", "crest"),
    ]);
    for index_path in [false, true] {
        let blocks = hpack::encode_request(&head(index_path));
        assert_eq!(blocks.raw_bytes, want.iter().map(|(n, v)| n.len() + v.len() + 4).sum::<usize>());
        // Without a table; then one priming block and indexed ones after it, on one connection's decoder.
        assert_eq!(decode_all(&mut Decoder::new(4096, 8192), &blocks.plain).unwrap(), want);
        let mut d = Decoder::new(4096, 8192);
        assert_eq!(decode_all(&mut d, &blocks.priming).unwrap(), want);
        for _ in 0..3 {
            assert_eq!(decode_all(&mut d, &blocks.indexed).unwrap(), want);
        }
        assert!(blocks.plain.len() < blocks.raw_bytes);
        // :method, :scheme and each shared field one byte; the path a literal unless indexed too.
        let expected = if index_path { 5 } else { 4 + 1 + 1 + huffman::encoded_len(b"/1k.html") };
        assert_eq!(blocks.indexed.len(), expected, "{index_path}");
        let shared = "127.0.0.1:8443".len() + ":authority".len() + "user-agent".len() + "crest".len() + 64;
        let path = if index_path { ":path".len() + "/1k.html".len() + 32 } else { 0 };
        assert_eq!(blocks.table_bytes, shared + path);
    }
}
