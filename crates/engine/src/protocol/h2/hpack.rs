//! HPACK (RFC 7541) for a client: `encode_request` writes a request's header
//! block once per request template (static-table names, Huffman-coded
//! literals, never indexed, so a block is valid on any connection at any
//! time and is sent as it is); `Decoder` reads responses' header blocks,
//! keeping the server's dynamic table in buffers sized once per connection,
//! and hands each field to a callback as borrowed bytes: nothing is
//! allocated per response. Why not a crate: the HPACK crates on crates.io
//! decode into owned `Vec`s per field (one allocation per Huffman string at
//! least), which would break the engine's no-allocation hot path.

use super::huffman::{self, HuffmanError};

/// RFC 7541 Appendix A.
#[rustfmt::skip]
pub const STATIC_TABLE: [(&str, &str); 61] = [
    (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"),
    (":scheme", "http"), (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"),
    (":status", "304"), (":status", "400"), (":status", "404"), (":status", "500"), ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""), ("accept", ""),
    ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""),
    ("cache-control", ""), ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""),
    ("content-length", ""), ("content-location", ""), ("content-range", ""), ("content-type", ""),
    ("cookie", ""), ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""),
    ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
    ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""), ("max-forwards", ""),
    ("proxy-authenticate", ""), ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""),
    ("retry-after", ""), ("server", ""), ("set-cookie", ""), ("strict-transport-security", ""),
    ("transfer-encoding", ""), ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
];

/// The default SETTINGS_HEADER_TABLE_SIZE, which crest keeps.
pub const DEFAULT_TABLE_BYTES: usize = 4096;
/// Per-entry overhead counted against the table size (RFC 7541 §4.1).
const ENTRY_OVERHEAD: usize = 32;

/// Why a header block cannot be decoded: a COMPRESSION_ERROR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HpackError {
    /// The block ends inside a field.
    #[error("header block truncated")]
    Truncated,
    /// An integer too large to be meant.
    #[error("integer overflow in a header block")]
    Overflow,
    /// An index into neither table.
    #[error("header index {0} out of range")]
    Index(usize),
    /// A table size update above the advertised maximum, or after the first field.
    #[error("invalid dynamic table size update")]
    SizeUpdate,
    /// A field longer than the decoder's limit.
    #[error("header field longer than {0} bytes")]
    TooLong(usize),
    /// A bad Huffman string.
    #[error("{0}")]
    Huffman(#[from] HuffmanError),
}

/// Appends an HPACK integer with an `n`-bit prefix whose high bits are `first`.
pub fn encode_int(out: &mut Vec<u8>, first: u8, n: u32, mut value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

/// Reads an HPACK integer with an `n`-bit prefix at `*pos`.
pub fn decode_int(block: &[u8], pos: &mut usize, n: u32) -> Result<usize, HpackError> {
    let max = (1usize << n) - 1;
    let first = *block.get(*pos).ok_or(HpackError::Truncated)?;
    *pos += 1;
    let mut value = usize::from(first) & max;
    if value < max {
        return Ok(value);
    }
    let mut shift = 0;
    loop {
        let b = *block.get(*pos).ok_or(HpackError::Truncated)?;
        *pos += 1;
        if shift > 28 {
            return Err(HpackError::Overflow);
        }
        value += usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
}

/// Appends a string literal, Huffman-coded when that is shorter.
pub fn encode_string(out: &mut Vec<u8>, s: &[u8]) {
    let coded = huffman::encoded_len(s);
    if coded < s.len() {
        encode_int(out, 0x80, 7, coded);
        huffman::encode(s, out);
    } else {
        encode_int(out, 0, 7, s.len());
        out.extend_from_slice(s);
    }
}

/// Appends one field without indexing: the static table's entry when it
/// matches whole, else its name's index and a literal value, else both literal.
pub fn encode_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    if let Some(i) = STATIC_TABLE.iter().position(|(n, v)| n.as_bytes() == name && v.as_bytes() == value) {
        encode_int(out, 0x80, 7, i + 1);
        return;
    }
    match STATIC_TABLE.iter().position(|(n, _)| n.as_bytes() == name) {
        Some(i) => encode_int(out, 0x00, 4, i + 1),
        None => {
            out.push(0x00);
            encode_string(out, name);
        }
    }
    encode_string(out, value);
}

/// A request's fields.
#[derive(Debug, Clone, Copy)]
pub struct RequestHead<'a> {
    /// Method.
    pub method: &'a str,
    /// `http` or `https`.
    pub scheme: &'a str,
    /// Host (and port) as the Host header would say.
    pub authority: &'a str,
    /// Path and query.
    pub path: &'a str,
    /// Extra fields (names are lower-cased here; connection-specific ones are dropped).
    pub headers: &'a [(String, String)],
    /// Content length of the body, when there is one.
    pub content_length: Option<usize>,
    /// `user-agent`, unless `headers` has one.
    pub user_agent: &'a str,
    /// Every request of the run has this path (one URL): index it too.
    pub index_path: bool,
}

/// A request's header block three ways, all encoded once per request
/// template: `priming` adds the fields every request of the run shares
/// (authority, user-agent, extra headers, and the path when the run has one
/// URL) to the server's dynamic table, `indexed` then names them by index, as
/// h2load's nghttp2 does after its first request; `plain` uses no table, for
/// a server whose table is too small. A connection sends one `priming` block
/// first and `indexed` ones after it.
#[derive(Debug, Clone, Default)]
pub struct RequestBlocks {
    /// No dynamic table.
    pub plain: Vec<u8>,
    /// Inserts the shared fields (literal with incremental indexing).
    pub priming: Vec<u8>,
    /// Names the shared fields by their dynamic-table index.
    pub indexed: Vec<u8>,
    /// Bytes the fields take as HTTP/1.1 text (`name: value\r\n` each), for the compression figure.
    pub raw_bytes: usize,
    /// Dynamic-table bytes the shared fields take (RFC 7541 §4.1); 0 when nothing is indexed.
    pub table_bytes: usize,
}

/// A request's fields in the order they are sent, each as (name, value,
/// shared by every request of the run): the pseudo-fields, `user-agent`
/// unless given, the extra headers lower-cased without the connection-specific
/// ones (RFC 9113 §8.2.2, RFC 9114 §4.2; Host is `:authority`), and
/// `content-length` when there is a body. HTTP/3's QPACK encodes the same list.
pub fn request_fields(head: &RequestHead<'_>) -> Vec<(String, String, bool)> {
    let mut fields: Vec<(String, String, bool)> = vec![
        (":method".into(), head.method.into(), false),
        (":scheme".into(), head.scheme.into(), false),
        (":authority".into(), head.authority.into(), true),
        (":path".into(), head.path.into(), head.index_path),
    ];
    if !head.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("user-agent")) {
        fields.push(("user-agent".into(), head.user_agent.into(), true));
    }
    for (name, value) in head.headers {
        let name = name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade" | "host"
        ) {
            continue;
        }
        fields.push((name, value.clone(), true));
    }
    if let Some(n) = head.content_length {
        if !head.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-length")) {
            fields.push(("content-length".into(), n.to_string(), true));
        }
    }
    fields
}

/// Encodes a request's header blocks (see `RequestBlocks`).
pub fn encode_request(head: &RequestHead<'_>) -> RequestBlocks {
    let fields = request_fields(head);
    let mut blocks = RequestBlocks::default();
    let static_match = |name: &str, value: &str| STATIC_TABLE.iter().any(|(n, v)| *n == name && *v == value);
    // The fields that go into the table: shared, and not already whole in the static table.
    let inserted: Vec<usize> =
        (0..fields.len()).filter(|&i| fields[i].2 && !static_match(&fields[i].0, &fields[i].1)).collect();
    let table_bytes: usize = inserted.iter().map(|&i| fields[i].0.len() + fields[i].1.len() + ENTRY_OVERHEAD).sum();
    let index_them = !inserted.is_empty() && table_bytes <= DEFAULT_TABLE_BYTES;
    for (i, (name, value, _)) in fields.iter().enumerate() {
        blocks.raw_bytes += name.len() + value.len() + 4;
        encode_field(&mut blocks.plain, name.as_bytes(), value.as_bytes());
        match inserted.iter().position(|&j| j == i).filter(|_| index_them) {
            None => {
                encode_field(&mut blocks.priming, name.as_bytes(), value.as_bytes());
                encode_field(&mut blocks.indexed, name.as_bytes(), value.as_bytes());
            }
            Some(k) => {
                encode_indexing(&mut blocks.priming, name.as_bytes(), value.as_bytes());
                // The newest entry is 62; earlier ones count up from it.
                encode_int(&mut blocks.indexed, 0x80, 7, 62 + (inserted.len() - 1 - k));
            }
        }
    }
    if index_them {
        blocks.table_bytes = table_bytes;
    } else {
        blocks.priming.clone_from(&blocks.plain);
        blocks.indexed.clone_from(&blocks.plain);
    }
    blocks
}

/// Appends one field as a literal with incremental indexing (RFC 7541 §6.2.1).
fn encode_indexing(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    match STATIC_TABLE.iter().position(|(n, _)| n.as_bytes() == name) {
        Some(i) => encode_int(out, 0x40, 6, i + 1),
        None => {
            out.push(0x40);
            encode_string(out, name);
        }
    }
    encode_string(out, value);
}

/// One entry of the dynamic table: where its name and value lie in `Dynamic::bytes`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: usize,
    name_len: usize,
    value_len: usize,
}

/// The server's dynamic table as this connection's decoder sees it: entry
/// bytes appended to one buffer (compacted when the end is reached, never
/// grown), entries newest last.
#[derive(Debug, Clone)]
struct Dynamic {
    bytes: Vec<u8>,
    /// Offset of the oldest live byte.
    head: usize,
    entries: std::collections::VecDeque<Entry>,
    size: usize,
    max_size: usize,
}

impl Dynamic {
    fn new(max_size: usize) -> Self {
        Self {
            // Twice the table: compaction moves at most one table's worth, at most every table's worth added.
            bytes: Vec::with_capacity(2 * max_size),
            head: 0,
            entries: std::collections::VecDeque::with_capacity(max_size / ENTRY_OVERHEAD + 1),
            size: 0,
            max_size,
        }
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.head = 0;
        self.entries.clear();
        self.size = 0;
    }

    fn get(&self, index: usize) -> Option<(&[u8], &[u8])> {
        let e = self.entries.get(self.entries.len().checked_sub(index + 1)?)?;
        let name = &self.bytes[e.start..e.start + e.name_len];
        let value = &self.bytes[e.start + e.name_len..e.start + e.name_len + e.value_len];
        Some((name, value))
    }

    fn evict_to(&mut self, limit: usize) {
        while self.size > limit {
            let e = self.entries.pop_front().expect("invariant: a non-zero size has entries");
            self.size -= e.name_len + e.value_len + ENTRY_OVERHEAD;
            self.head = self.entries.front().map_or(self.bytes.len(), |f| f.start);
        }
        if self.entries.is_empty() {
            self.bytes.clear();
            self.head = 0;
        }
    }

    fn set_max(&mut self, max: usize) {
        self.max_size = max;
        self.evict_to(max);
    }

    /// Adds (name, value) found at `src[name] ++ src[value]` of a scratch buffer.
    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if size > self.max_size {
            self.evict_to(0); // RFC 7541 §4.4: an entry larger than the table empties it
            return;
        }
        self.evict_to(self.max_size - size);
        if self.bytes.len() + name.len() + value.len() > self.bytes.capacity() {
            // Compact: live entries move to the front (at most max_size bytes).
            self.bytes.drain(..self.head);
            for e in &mut self.entries {
                e.start -= self.head;
            }
            self.head = 0;
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
        if self.entries.is_empty() {
            self.head = start;
        }
        self.entries.push_back(Entry { start, name_len: name.len(), value_len: value.len() });
        self.size += size;
    }
}

/// Decodes a connection's response header blocks.
#[derive(Debug, Clone)]
pub struct Decoder {
    table: Dynamic,
    /// Huffman-decoded name and value of the field at hand.
    scratch: Vec<u8>,
    max_field_bytes: usize,
    /// The table size the client advertised (the ceiling of size updates).
    settings_max: usize,
}

impl Decoder {
    /// A decoder whose table holds `table_bytes` (the SETTINGS_HEADER_TABLE_SIZE advertised) and
    /// that refuses fields longer than `max_field_bytes`.
    pub fn new(table_bytes: usize, max_field_bytes: usize) -> Self {
        Self {
            table: Dynamic::new(table_bytes),
            // A Huffman string decodes to at most 8/5 of its length; name and value together.
            scratch: Vec::with_capacity(2 * max_field_bytes * 8 / 5 + 16),
            max_field_bytes,
            settings_max: table_bytes,
        }
    }

    /// Forgets the table (a new connection).
    pub fn reset(&mut self) {
        self.table.clear();
        self.table.max_size = self.settings_max;
    }

    /// Decodes a whole header block, calling `field(name, value)` for each field in order.
    pub fn decode(&mut self, block: &[u8], field: &mut dyn FnMut(&[u8], &[u8])) -> Result<(), HpackError> {
        let mut pos = 0;
        let mut fields_seen = false;
        while pos < block.len() {
            let b = block[pos];
            if b & 0x80 != 0 {
                let index = decode_int(block, &mut pos, 7)?;
                let (name, value) = self.lookup(index)?;
                field(name, value);
            } else if b & 0xe0 == 0x20 {
                // A size update comes only before the first field (RFC 7541 §4.2).
                let size = decode_int(block, &mut pos, 5)?;
                if fields_seen || size > self.settings_max {
                    return Err(HpackError::SizeUpdate);
                }
                self.table.set_max(size);
                continue;
            } else {
                let (indexing, n) = if b & 0xc0 == 0x40 { (true, 6) } else { (false, 4) };
                let index = decode_int(block, &mut pos, n)?;
                self.scratch.clear();
                let name_len = if index == 0 { self.read_string(block, &mut pos)? } else { self.push_name(index)? };
                let value_len = self.read_string(block, &mut pos)?;
                let (name, value) = self.scratch.split_at(name_len);
                let value = &value[..value_len];
                field(name, value);
                if indexing {
                    let (name, value) = self.scratch.split_at(name_len);
                    self.table.insert(name, &value[..value_len]);
                }
            }
            fields_seen = true;
        }
        Ok(())
    }

    fn lookup(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        match index {
            0 => Err(HpackError::Index(0)),
            1..=61 => {
                let (n, v) = STATIC_TABLE[index - 1];
                Ok((n.as_bytes(), v.as_bytes()))
            }
            _ => self.table.get(index - 62).ok_or(HpackError::Index(index)),
        }
    }

    /// Copies the name of table entry `index` onto the scratch buffer (the
    /// value is read next to it, and the entry may be evicted by this very
    /// field); returns its length.
    fn push_name(&mut self, index: usize) -> Result<usize, HpackError> {
        let before = self.scratch.len();
        match index {
            1..=61 => self.scratch.extend_from_slice(STATIC_TABLE[index - 1].0.as_bytes()),
            _ => {
                let (name, _) = self.table.get(index - 62).ok_or(HpackError::Index(index))?;
                self.scratch.extend_from_slice(name);
            }
        }
        Ok(self.scratch.len() - before)
    }

    /// Reads a string literal at `*pos` onto the scratch buffer; returns its decoded length.
    fn read_string(&mut self, block: &[u8], pos: &mut usize) -> Result<usize, HpackError> {
        let huffman = block.get(*pos).ok_or(HpackError::Truncated)? & 0x80 != 0;
        let len = decode_int(block, pos, 7)?;
        if len > self.max_field_bytes {
            return Err(HpackError::TooLong(self.max_field_bytes));
        }
        let end = pos.checked_add(len).filter(|&e| e <= block.len()).ok_or(HpackError::Truncated)?;
        let raw = &block[*pos..end];
        *pos = end;
        let before = self.scratch.len();
        if huffman {
            huffman::decode(raw, &mut self.scratch)?;
        } else {
            self.scratch.extend_from_slice(raw);
        }
        Ok(self.scratch.len() - before)
    }
}
