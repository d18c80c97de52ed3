//! QPACK (RFC 9204) with the static table only. crest's SETTINGS leave
//! QPACK_MAX_TABLE_CAPACITY at 0, so neither side may use a dynamic table:
//! requests are encoded once per template from the static table and
//! literals, and a response field section that refers to a dynamic table is
//! a decompression failure. Integers and Huffman strings are HPACK's.

use super::super::h2::hpack::{self, HpackError};
use super::super::h2::huffman::{self, HuffmanError};

/// RFC 9204 Appendix A: the static table, index 0 first.
pub const STATIC_TABLE: [(&str, &str); 99] = [
    (":authority", ""),
    (":path", "/"),
    ("age", "0"),
    ("content-disposition", ""),
    ("content-length", "0"),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("referer", ""),
    ("set-cookie", ""),
    (":method", "CONNECT"),
    (":method", "DELETE"),
    (":method", "GET"),
    (":method", "HEAD"),
    (":method", "OPTIONS"),
    (":method", "POST"),
    (":method", "PUT"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "103"),
    (":status", "200"),
    (":status", "304"),
    (":status", "404"),
    (":status", "503"),
    ("accept", "*/*"),
    ("accept", "application/dns-message"),
    ("accept-encoding", "gzip, deflate, br"),
    ("accept-ranges", "bytes"),
    ("access-control-allow-headers", "cache-control"),
    ("access-control-allow-headers", "content-type"),
    ("access-control-allow-origin", "*"),
    ("cache-control", "max-age=0"),
    ("cache-control", "max-age=2592000"),
    ("cache-control", "max-age=604800"),
    ("cache-control", "no-cache"),
    ("cache-control", "no-store"),
    ("cache-control", "public, max-age=31536000"),
    ("content-encoding", "br"),
    ("content-encoding", "gzip"),
    ("content-type", "application/dns-message"),
    ("content-type", "application/javascript"),
    ("content-type", "application/json"),
    ("content-type", "application/x-www-form-urlencoded"),
    ("content-type", "image/gif"),
    ("content-type", "image/jpeg"),
    ("content-type", "image/png"),
    ("content-type", "text/css"),
    ("content-type", "text/html; charset=utf-8"),
    ("content-type", "text/plain"),
    ("content-type", "text/plain;charset=utf-8"),
    ("range", "bytes=0-"),
    ("strict-transport-security", "max-age=31536000"),
    ("strict-transport-security", "max-age=31536000; includesubdomains"),
    ("strict-transport-security", "max-age=31536000; includesubdomains; preload"),
    ("vary", "accept-encoding"),
    ("vary", "origin"),
    ("x-content-type-options", "nosniff"),
    ("x-xss-protection", "1; mode=block"),
    (":status", "100"),
    (":status", "204"),
    (":status", "206"),
    (":status", "302"),
    (":status", "400"),
    (":status", "403"),
    (":status", "421"),
    (":status", "425"),
    (":status", "500"),
    ("accept-language", ""),
    ("access-control-allow-credentials", "FALSE"),
    ("access-control-allow-credentials", "TRUE"),
    ("access-control-allow-headers", "*"),
    ("access-control-allow-methods", "get"),
    ("access-control-allow-methods", "get, post, options"),
    ("access-control-allow-methods", "options"),
    ("access-control-expose-headers", "content-length"),
    ("access-control-request-headers", "content-type"),
    ("access-control-request-method", "get"),
    ("access-control-request-method", "post"),
    ("alt-svc", "clear"),
    ("authorization", ""),
    ("content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"),
    ("early-data", "1"),
    ("expect-ct", ""),
    ("forwarded", ""),
    ("if-range", ""),
    ("origin", ""),
    ("purpose", "prefetch"),
    ("server", ""),
    ("timing-allow-origin", "*"),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", ""),
    ("x-forwarded-for", ""),
    ("x-frame-options", "deny"),
    ("x-frame-options", "sameorigin"),
];

/// Why a field section cannot be decoded: QPACK_DECOMPRESSION_FAILED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QpackError {
    /// The section ends inside a field line.
    #[error("field section truncated")]
    Truncated,
    /// An integer too large to be meant.
    #[error("integer overflow in a field section")]
    Overflow,
    /// An index past the static table.
    #[error("static table index {0} out of range")]
    Index(usize),
    /// A reference to a dynamic table crest said it does not have.
    #[error("the field section refers to a dynamic table, whose capacity crest set to 0")]
    Dynamic,
    /// A name or value longer than the decoder's limit.
    #[error("field longer than {0} bytes")]
    TooLong(usize),
    /// A bad Huffman string.
    #[error("{0}")]
    Huffman(#[from] HuffmanError),
}

impl From<HpackError> for QpackError {
    fn from(e: HpackError) -> Self {
        match e {
            HpackError::Overflow => Self::Overflow,
            HpackError::Huffman(h) => Self::Huffman(h),
            HpackError::TooLong(n) => Self::TooLong(n),
            HpackError::Index(i) => Self::Index(i),
            HpackError::Truncated | HpackError::SizeUpdate => Self::Truncated,
        }
    }
}

/// A request's field section and its size as HTTP/1.1 text, encoded once per request template.
#[derive(Debug, Clone, Default)]
pub struct RequestSection {
    /// The encoded field section (what a HEADERS frame carries).
    pub block: Vec<u8>,
    /// Bytes the fields take as `name: value\r\n` lines, for the compression figure.
    pub raw_bytes: usize,
}

/// Encodes a request's fields (the same list HTTP/2 sends) with the static table and literals.
pub fn encode_request(head: &hpack::RequestHead<'_>) -> RequestSection {
    // Required Insert Count 0, Delta Base 0: no dynamic table.
    let mut out = RequestSection { block: vec![0x00, 0x00], raw_bytes: 0 };
    for (name, value, _) in hpack::request_fields(head) {
        out.raw_bytes += name.len() + value.len() + 4;
        encode_field(&mut out.block, name.as_bytes(), value.as_bytes());
    }
    out
}

/// Appends one field line: the static entry when it matches whole, else its
/// name's index and a literal value, else both literal (RFC 9204 §4.5).
pub fn encode_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    if let Some(i) = STATIC_TABLE.iter().position(|(n, v)| n.as_bytes() == name && v.as_bytes() == value) {
        // Indexed field line, static (T = 1).
        hpack::encode_int(out, 0xc0, 6, i);
        return;
    }
    match STATIC_TABLE.iter().position(|(n, _)| n.as_bytes() == name) {
        // Literal with name reference, static (T = 1), N = 0.
        Some(i) => hpack::encode_int(out, 0x50, 4, i),
        None => {
            // Literal with literal name: a 3-bit length prefix and its own H bit.
            let coded = huffman::encoded_len(name);
            if coded < name.len() {
                hpack::encode_int(out, 0x28, 3, coded);
                huffman::encode(name, out);
            } else {
                hpack::encode_int(out, 0x20, 3, name.len());
                out.extend_from_slice(name);
            }
        }
    }
    hpack::encode_string(out, value);
}

/// Decodes response field sections. Its buffers grow to the longest
/// Huffman-coded field seen and are reused, so decoding allocates only
/// until the longest field has come once.
#[derive(Debug, Clone)]
pub struct Decoder {
    name: Vec<u8>,
    value: Vec<u8>,
    max_field_bytes: usize,
}

impl Decoder {
    /// A decoder that refuses names or values longer than `max_field_bytes`.
    pub fn new(max_field_bytes: usize) -> Self {
        Self { name: Vec::new(), value: Vec::new(), max_field_bytes }
    }

    /// Decodes `block`, calling `field` with each (name, value).
    pub fn decode(&mut self, block: &[u8], field: &mut dyn FnMut(&[u8], &[u8])) -> Result<(), QpackError> {
        let mut pos = 0;
        // The prefix: Required Insert Count, then the sign bit and Delta Base.
        if hpack::decode_int(block, &mut pos, 8)? != 0 {
            return Err(QpackError::Dynamic);
        }
        hpack::decode_int(block, &mut pos, 7)?;
        while pos < block.len() {
            let first = block[pos];
            if first & 0x80 != 0 {
                // Indexed field line.
                if first & 0x40 == 0 {
                    return Err(QpackError::Dynamic);
                }
                let (name, value) = static_entry(hpack::decode_int(block, &mut pos, 6)?)?;
                field(name.as_bytes(), value.as_bytes());
            } else if first & 0x40 != 0 {
                // Literal with name reference.
                if first & 0x10 == 0 {
                    return Err(QpackError::Dynamic);
                }
                let (name, _) = static_entry(hpack::decode_int(block, &mut pos, 4)?)?;
                let value = read_string(block, &mut pos, 7, &mut self.value, self.max_field_bytes)?;
                field(name.as_bytes(), value);
            } else if first & 0x20 != 0 {
                // Literal with literal name: the H bit sits above a 3-bit length.
                let Self { name, value, max_field_bytes } = self;
                let name = read_string(block, &mut pos, 3, name, *max_field_bytes)?;
                let value = read_string(block, &mut pos, 7, value, *max_field_bytes)?;
                field(name, value);
            } else {
                // Post-base forms name dynamic entries only.
                return Err(QpackError::Dynamic);
            }
        }
        Ok(())
    }
}

fn static_entry(index: usize) -> Result<(&'static str, &'static str), QpackError> {
    STATIC_TABLE.get(index).copied().ok_or(QpackError::Index(index))
}

/// Reads a string whose Huffman flag is the bit above its `n`-bit length
/// prefix; Huffman text is decoded into `scratch`, plain text is borrowed.
fn read_string<'a>(
    block: &'a [u8],
    pos: &mut usize,
    n: u32,
    scratch: &'a mut Vec<u8>,
    max: usize,
) -> Result<&'a [u8], QpackError> {
    let huffman_coded = block.get(*pos).ok_or(QpackError::Truncated)? & (1 << n) != 0;
    let len = hpack::decode_int(block, pos, n)?;
    let end = pos.checked_add(len).filter(|&e| e <= block.len()).ok_or(QpackError::Truncated)?;
    let raw = &block[*pos..end];
    *pos = end;
    if !huffman_coded {
        if raw.len() > max {
            return Err(QpackError::TooLong(max));
        }
        return Ok(raw);
    }
    if raw.len() > max {
        return Err(QpackError::TooLong(max));
    }
    scratch.clear();
    // A Huffman string decodes to at most 8/5 of its length: one allocation at most.
    scratch.reserve(raw.len() * 8 / 5 + 1);
    huffman::decode(raw, scratch)?;
    if scratch.len() > max {
        return Err(QpackError::TooLong(max));
    }
    Ok(scratch)
}
