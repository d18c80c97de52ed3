//! FastCGI 1.0 records on the wire: parsing them from bytes and encoding them
//! to bytes (the record header, `FCGI_BEGIN_REQUEST`'s body, name-value
//! pairs, `FCGI_END_REQUEST`, `FCGI_UNKNOWN_TYPE`).
//!
//! Sans-IO: bytes in, records out, and records in, bytes out. It never
//! touches a socket and knows nothing of requests or connections (that is
//! [`crate::connection`]); it borrows from the caller's buffer and only
//! allocates by appending to the caller's output `Vec`.

use crate::error::ProtocolError;

/// The only protocol version there is.
pub const VERSION_1: u8 = 1;
/// Bytes of a record header.
pub const HEADER_LEN: usize = 8;
/// Largest content of one record (its length is a `u16`).
pub const MAX_CONTENT_LEN: usize = u16::MAX as usize;
/// Largest content length that needs no padding: streams are cut into
/// records of this size, so big bodies go out without padding bytes.
pub const MAX_ALIGNED_CONTENT_LEN: usize = MAX_CONTENT_LEN & !7;

/// Record types (FastCGI spec §8).
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

/// The request id of management records (`FCGI_GET_VALUES` and friends).
pub const NULL_REQUEST_ID: u16 = 0;

/// Roles a `FCGI_BEGIN_REQUEST` may ask for.
pub const RESPONDER: u16 = 1;
pub const AUTHORIZER: u16 = 2;
pub const FILTER: u16 = 3;

/// `FCGI_BEGIN_REQUEST` flag: keep the connection open after this request.
pub const KEEP_CONN: u8 = 1;

/// `FCGI_END_REQUEST` protocol statuses.
pub const REQUEST_COMPLETE: u8 = 0;
pub const CANT_MPX_CONN: u8 = 1;
pub const OVERLOADED: u8 = 2;
pub const UNKNOWN_ROLE: u8 = 3;

/// Bytes of `FCGI_BEGIN_REQUEST`'s body.
pub const BEGIN_REQUEST_BODY_LEN: usize = 8;

/// One record, its content borrowed from the buffer it was parsed from
/// (padding already skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: u8,
    pub request_id: u16,
    pub content: &'a [u8],
}

/// The first whole record at the start of `buf` and how many bytes it takes
/// (header, content and padding); `None` while `buf` holds only part of one.
pub fn decode(buf: &[u8]) -> Result<Option<(Record<'_>, usize)>, ProtocolError> {
    let Some(header) = buf.first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    // The version is checked before the record is whole, so a peer speaking
    // something else (HTTP, say) is turned away at its first 8 bytes.
    if header[0] != VERSION_1 {
        return Err(ProtocolError::Version(header[0]));
    }
    let content_len = usize::from(u16::from_be_bytes([header[4], header[5]]));
    let total = HEADER_LEN + content_len + usize::from(header[6]);
    if buf.len() < total {
        return Ok(None);
    }
    let record = Record {
        kind: header[1],
        request_id: u16::from_be_bytes([header[2], header[3]]),
        content: &buf[HEADER_LEN..HEADER_LEN + content_len],
    };
    Ok(Some((record, total)))
}

/// What a `FCGI_BEGIN_REQUEST` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BeginRequest {
    pub role: u16,
    /// `FCGI_KEEP_CONN`: the server reuses the connection after this request;
    /// without it, the application closes the connection once it has answered.
    pub keep_conn: bool,
}

/// Parses `FCGI_BEGIN_REQUEST`'s 8-byte body.
pub fn decode_begin_request(content: &[u8]) -> Result<BeginRequest, ProtocolError> {
    match content {
        [role_hi, role_lo, flags, _, _, _, _, _] => {
            Ok(BeginRequest { role: u16::from_be_bytes([*role_hi, *role_lo]), keep_conn: flags & KEEP_CONN != 0 })
        }
        _ => Err(ProtocolError::BeginRequestLength(content.len())),
    }
}

/// The name-value pairs of a `FCGI_PARAMS` stream or a `FCGI_GET_VALUES`
/// body, in order; an item is an error once the bytes stop making sense,
/// and iteration ends after it.
pub fn decode_pairs(bytes: &[u8]) -> Pairs<'_> {
    Pairs { rest: bytes }
}

/// Iterator returned by [`decode_pairs`].
#[derive(Debug, Clone)]
pub struct Pairs<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Pairs<'a> {
    type Item = Result<(&'a [u8], &'a [u8]), ProtocolError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let pair = split_pair(self.rest);
        match pair {
            Ok((name, value, rest)) => {
                self.rest = rest;
                Some(Ok((name, value)))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// A pair's name and value, and the bytes after it.
type SplitPair<'a> = (&'a [u8], &'a [u8], &'a [u8]);

fn split_pair(bytes: &[u8]) -> Result<SplitPair<'_>, ProtocolError> {
    let (name_len, rest) = split_length(bytes)?;
    let (value_len, rest) = split_length(rest)?;
    if rest.len() < name_len.saturating_add(value_len) {
        return Err(ProtocolError::PairTruncated);
    }
    let (name, rest) = rest.split_at(name_len);
    let (value, rest) = rest.split_at(value_len);
    Ok((name, value, rest))
}

/// A pair length: one byte below 128, else four bytes with the top bit set.
fn split_length(bytes: &[u8]) -> Result<(usize, &[u8]), ProtocolError> {
    match bytes {
        [b, rest @ ..] if b & 0x80 == 0 => Ok((usize::from(*b), rest)),
        [b0, b1, b2, b3, rest @ ..] => {
            let len = u32::from_be_bytes([b0 & 0x7F, *b1, *b2, *b3]);
            // u32 fits usize on every target crest builds for (64-bit Linux).
            Ok((len as usize, rest))
        }
        _ => Err(ProtocolError::PairTruncated),
    }
}

/// Appends one name-value pair, each length in one byte when it is below
/// 128 and in four otherwise.
pub fn encode_pair(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    encode_length(out, name.len());
    encode_length(out, value.len());
    out.extend_from_slice(name);
    out.extend_from_slice(value);
}

fn encode_length(out: &mut Vec<u8>, len: usize) {
    match u8::try_from(len) {
        Ok(b) if b < 0x80 => out.push(b),
        _ => {
            let len = u32::try_from(len)
                .ok()
                .filter(|&n| n <= 0x7FFF_FFFF)
                .expect("invariant: pairs crest encodes are far below 2 GiB");
            out.extend_from_slice(&(len | 0x8000_0000).to_be_bytes());
        }
    }
}

/// Padding that brings `content_len` to a multiple of 8, as the spec
/// recommends so records stay aligned in the receiver's buffer.
pub fn padding_len(content_len: usize) -> usize {
    content_len.wrapping_neg() & 7
}

/// Appends a record header for `content_len` bytes of content followed by
/// `padding_len` bytes of padding (both written by the caller).
pub fn encode_header(out: &mut Vec<u8>, kind: u8, request_id: u16, content_len: usize, padding_len: usize) {
    let content_len = u16::try_from(content_len).expect("invariant: callers cut content at MAX_CONTENT_LEN");
    let padding_len = u8::try_from(padding_len).expect("invariant: padding is below 8");
    let [id_hi, id_lo] = request_id.to_be_bytes();
    let [len_hi, len_lo] = content_len.to_be_bytes();
    out.extend_from_slice(&[VERSION_1, kind, id_hi, id_lo, len_hi, len_lo, padding_len, 0]);
}

/// Appends one record carrying `content` (at most [`MAX_CONTENT_LEN`]
/// bytes), padded to a multiple of 8.
pub fn encode_record(out: &mut Vec<u8>, kind: u8, request_id: u16, content: &[u8]) {
    let padding = padding_len(content.len());
    encode_header(out, kind, request_id, content.len(), padding);
    out.extend_from_slice(content);
    out.resize(out.len() + padding, 0);
}

/// Appends `data` to the stream `kind` (`FCGI_STDOUT`, …) of a request, cut
/// into as many records as it takes. Empty data appends nothing: the empty
/// record that ends a stream is written by whoever ends it.
pub fn encode_stream(out: &mut Vec<u8>, kind: u8, request_id: u16, data: &[u8]) {
    for chunk in data.chunks(MAX_ALIGNED_CONTENT_LEN) {
        encode_record(out, kind, request_id, chunk);
    }
}

/// Appends `FCGI_END_REQUEST` for `request_id`.
pub fn encode_end_request(out: &mut Vec<u8>, request_id: u16, app_status: u32, protocol_status: u8) {
    let [a, b, c, d] = app_status.to_be_bytes();
    encode_record(out, END_REQUEST, request_id, &[a, b, c, d, protocol_status, 0, 0, 0]);
}

/// Appends `FCGI_UNKNOWN_TYPE`: the answer to a record type this
/// application does not know.
pub fn encode_unknown_type(out: &mut Vec<u8>, unknown: u8) {
    encode_record(out, UNKNOWN_TYPE, NULL_REQUEST_ID, &[unknown, 0, 0, 0, 0, 0, 0, 0]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_brings_content_to_a_multiple_of_eight() {
        let pads: Vec<usize> = (0..10).map(padding_len).collect();
        assert_eq!(pads, [0, 7, 6, 5, 4, 3, 2, 1, 0, 7]);
        assert_eq!(padding_len(MAX_ALIGNED_CONTENT_LEN), 0);
    }

    #[test]
    fn lengths_switch_to_four_bytes_at_128() {
        let mut out = Vec::new();
        encode_length(&mut out, 127);
        encode_length(&mut out, 128);
        assert_eq!(out, [127, 0x80, 0, 0, 128]);
    }
}
