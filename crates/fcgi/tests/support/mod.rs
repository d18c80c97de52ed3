//! FastCGI records built and read by hand, byte by byte from the spec, so
//! the tests do not check crest-fcgi's codec against itself.
#![allow(dead_code)]

pub const BEGIN_REQUEST: u8 = 1;
pub const ABORT_REQUEST: u8 = 2;
pub const END_REQUEST: u8 = 3;
pub const PARAMS: u8 = 4;
pub const STDIN: u8 = 5;
pub const STDOUT: u8 = 6;
pub const STDERR: u8 = 7;
pub const DATA: u8 = 8;
pub const GET_VALUES: u8 = 9;
pub const GET_VALUES_RESULT: u8 = 10;
pub const UNKNOWN_TYPE: u8 = 11;

pub const RESPONDER: u16 = 1;
pub const AUTHORIZER: u16 = 2;
pub const KEEP_CONN: u8 = 1;

pub const REQUEST_COMPLETE: u8 = 0;
pub const CANT_MPX_CONN: u8 = 1;
pub const UNKNOWN_ROLE: u8 = 3;

/// One record with `padding` bytes of padding (filled with 0xEE, which a
/// reader must skip unread).
pub fn record(kind: u8, id: u16, content: &[u8], padding: u8) -> Vec<u8> {
    let len = u16::try_from(content.len()).expect("test records fit a u16");
    let mut out = vec![1, kind, (id >> 8) as u8, id as u8, (len >> 8) as u8, len as u8, padding, 0];
    out.extend_from_slice(content);
    out.extend(std::iter::repeat_n(0xEE, usize::from(padding)));
    out
}

pub fn begin(id: u16, role: u16, flags: u8) -> Vec<u8> {
    record(BEGIN_REQUEST, id, &[(role >> 8) as u8, role as u8, flags, 0, 0, 0, 0, 0], 0)
}

/// A name or value length: one byte below 128 (unless `long`), else four
/// with the top bit set.
pub fn length(len: usize, long: bool) -> Vec<u8> {
    if len < 128 && !long {
        vec![len as u8]
    } else {
        let n = u32::try_from(len).expect("test lengths fit 31 bits") | 0x8000_0000;
        n.to_be_bytes().to_vec()
    }
}

pub fn pair(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = length(name.len(), false);
    out.extend(length(value.len(), false));
    out.extend_from_slice(name);
    out.extend_from_slice(value);
    out
}

pub fn pairs(list: &[(&str, &str)]) -> Vec<u8> {
    list.iter().flat_map(|(n, v)| pair(n.as_bytes(), v.as_bytes())).collect()
}

/// A stream (`PARAMS`, `STDIN`) of `data` in records of at most `max`
/// bytes, then the empty record that ends it.
pub fn stream(kind: u8, id: u16, data: &[u8], max: usize) -> Vec<u8> {
    let mut out: Vec<u8> = data.chunks(max).flat_map(|c| record(kind, id, c, 0)).collect();
    out.extend(record(kind, id, &[], 0));
    out
}

/// A whole responder request: begin, params, stdin.
pub fn request(id: u16, keep_conn: bool, params: &[(&str, &str)], stdin: &[u8]) -> Vec<u8> {
    let mut out = begin(id, RESPONDER, if keep_conn { KEEP_CONN } else { 0 });
    out.extend(stream(PARAMS, id, &pairs(params), 65535));
    out.extend(stream(STDIN, id, stdin, 65535));
    out
}

/// A record read back: (type, request id, content).
pub type Parsed = (u8, u16, Vec<u8>);

/// Splits bytes into records; panics on a partial one.
pub fn parse_records(mut bytes: &[u8]) -> Vec<Parsed> {
    let mut records = Vec::new();
    while !bytes.is_empty() {
        let (record, len) = parse_one(bytes).expect("whole records");
        records.push(record);
        bytes = &bytes[len..];
    }
    records
}

/// The first record of `bytes` and its length with padding, if whole.
pub fn parse_one(bytes: &[u8]) -> Option<(Parsed, usize)> {
    if bytes.len() < 8 {
        return None;
    }
    assert_eq!(bytes[0], 1, "version");
    let len = usize::from(u16::from_be_bytes([bytes[4], bytes[5]]));
    let total = 8 + len + usize::from(bytes[6]);
    if bytes.len() < total {
        return None;
    }
    let id = u16::from_be_bytes([bytes[2], bytes[3]]);
    Some(((bytes[1], id, bytes[8..8 + len].to_vec()), total))
}

/// (app status, protocol status) of an `END_REQUEST` body.
pub fn end_status(content: &[u8]) -> (u32, u8) {
    assert_eq!(content.len(), 8, "END_REQUEST body");
    (u32::from_be_bytes([content[0], content[1], content[2], content[3]]), content[4])
}

/// Name-value pairs read back (both length forms).
pub fn parse_pairs(mut bytes: &[u8]) -> Vec<(String, String)> {
    let read_len = |bytes: &mut &[u8]| -> usize {
        if bytes[0] & 0x80 == 0 {
            let n = usize::from(bytes[0]);
            *bytes = &bytes[1..];
            n
        } else {
            let n = u32::from_be_bytes([bytes[0] & 0x7F, bytes[1], bytes[2], bytes[3]]) as usize;
            *bytes = &bytes[4..];
            n
        }
    };
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let n = read_len(&mut bytes);
        let v = read_len(&mut bytes);
        let name = String::from_utf8(bytes[..n].to_vec()).expect("utf-8 name");
        let value = String::from_utf8(bytes[n..n + v].to_vec()).expect("utf-8 value");
        bytes = &bytes[n + v..];
        out.push((name, value));
    }
    out
}

/// One request's answer as the server sees it.
#[derive(Debug, Default)]
pub struct Answer {
    pub stdout: Vec<u8>,
    pub stdout_ended: bool,
    /// (app status, protocol status) once `END_REQUEST` came.
    pub end: Option<(u32, u8)>,
}

impl Answer {
    /// Folds in one record of this request; panics on anything unexpected.
    pub fn add(&mut self, (kind, _, content): &Parsed) {
        assert!(self.end.is_none(), "record after END_REQUEST");
        match *kind {
            STDOUT if content.is_empty() => self.stdout_ended = true,
            STDOUT => {
                assert!(!self.stdout_ended, "STDOUT after its end");
                self.stdout.extend_from_slice(content);
            }
            END_REQUEST => self.end = Some(end_status(content)),
            other => panic!("unexpected record type {other}"),
        }
    }

    /// The CGI head (without the blank line) and the body.
    pub fn head_and_body(&self) -> (String, &[u8]) {
        let at = self.stdout.windows(4).position(|w| w == b"\r\n\r\n").expect("a CGI head");
        let head = String::from_utf8(self.stdout[..at].to_vec()).expect("ASCII head");
        (head, &self.stdout[at + 4..])
    }
}
