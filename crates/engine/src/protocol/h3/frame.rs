//! HTTP/3 frames and stream types (RFC 9114 §6.2, §7): the codes, the
//! requests and the control stream crest sends (built once per run or per
//! connection), and `Header`, which reads a frame's type and length from
//! bytes that may arrive split anywhere.

use super::varint;

/// Frame types.
pub mod kind {
    #![allow(missing_docs)] // each constant is the RFC's name for its value
    pub const DATA: u64 = 0x00;
    pub const HEADERS: u64 = 0x01;
    pub const CANCEL_PUSH: u64 = 0x03;
    pub const SETTINGS: u64 = 0x04;
    pub const PUSH_PROMISE: u64 = 0x05;
    pub const GOAWAY: u64 = 0x07;
    pub const MAX_PUSH_ID: u64 = 0x0d;
    /// HTTP/2 frame types that HTTP/3 reserves: receiving one is a connection error.
    pub const H2_ONLY: [u64; 4] = [0x02, 0x06, 0x08, 0x09];
}

/// Unidirectional stream types.
pub mod stream_type {
    #![allow(missing_docs)] // each constant is the RFC's name for its value
    pub const CONTROL: u64 = 0x00;
    pub const PUSH: u64 = 0x01;
    pub const QPACK_ENCODER: u64 = 0x02;
    pub const QPACK_DECODER: u64 = 0x03;
}

/// Settings identifiers.
pub mod setting {
    #![allow(missing_docs)] // each constant is the RFC's name for its value
    pub const QPACK_MAX_TABLE_CAPACITY: u64 = 0x01;
    pub const MAX_FIELD_SECTION_SIZE: u64 = 0x06;
    pub const QPACK_BLOCKED_STREAMS: u64 = 0x07;
    /// HTTP/2's settings, which HTTP/3 forbids (RFC 9114 §7.2.4.1).
    pub const H2_ONLY: [u64; 4] = [0x02, 0x03, 0x04, 0x05];
}

/// Error codes (RFC 9114 §8.1, RFC 9204 §6).
pub mod code {
    #![allow(missing_docs)] // each constant is the RFC's name for its value
    pub const NO_ERROR: u64 = 0x100;
    pub const GENERAL_PROTOCOL_ERROR: u64 = 0x101;
    pub const INTERNAL_ERROR: u64 = 0x102;
    pub const STREAM_CREATION_ERROR: u64 = 0x103;
    pub const CLOSED_CRITICAL_STREAM: u64 = 0x104;
    pub const FRAME_UNEXPECTED: u64 = 0x105;
    pub const FRAME_ERROR: u64 = 0x106;
    pub const EXCESSIVE_LOAD: u64 = 0x107;
    pub const ID_ERROR: u64 = 0x108;
    pub const SETTINGS_ERROR: u64 = 0x109;
    pub const MISSING_SETTINGS: u64 = 0x10a;
    pub const REQUEST_REJECTED: u64 = 0x10b;
    pub const REQUEST_CANCELLED: u64 = 0x10c;
    pub const REQUEST_INCOMPLETE: u64 = 0x10d;
    pub const MESSAGE_ERROR: u64 = 0x10e;
    pub const CONNECT_ERROR: u64 = 0x10f;
    pub const VERSION_FALLBACK: u64 = 0x110;
    pub const QPACK_DECOMPRESSION_FAILED: u64 = 0x200;
    pub const QPACK_ENCODER_STREAM_ERROR: u64 = 0x201;
    pub const QPACK_DECODER_STREAM_ERROR: u64 = 0x202;

    /// The code's name, for error messages.
    pub fn name(code: u64) -> &'static str {
        const NAMES: [&str; 17] = [
            "H3_NO_ERROR",
            "H3_GENERAL_PROTOCOL_ERROR",
            "H3_INTERNAL_ERROR",
            "H3_STREAM_CREATION_ERROR",
            "H3_CLOSED_CRITICAL_STREAM",
            "H3_FRAME_UNEXPECTED",
            "H3_FRAME_ERROR",
            "H3_EXCESSIVE_LOAD",
            "H3_ID_ERROR",
            "H3_SETTINGS_ERROR",
            "H3_MISSING_SETTINGS",
            "H3_REQUEST_REJECTED",
            "H3_REQUEST_CANCELLED",
            "H3_REQUEST_INCOMPLETE",
            "H3_MESSAGE_ERROR",
            "H3_CONNECT_ERROR",
            "H3_VERSION_FALLBACK",
        ];
        match code {
            NO_ERROR..=VERSION_FALLBACK => NAMES[(code - NO_ERROR) as usize],
            QPACK_DECOMPRESSION_FAILED => "QPACK_DECOMPRESSION_FAILED",
            QPACK_ENCODER_STREAM_ERROR => "QPACK_ENCODER_STREAM_ERROR",
            QPACK_DECODER_STREAM_ERROR => "QPACK_DECODER_STREAM_ERROR",
            _ => "an unknown error code",
        }
    }
}

/// Appends a frame's type and length.
pub fn encode_header(out: &mut Vec<u8>, kind: u64, len: usize) {
    varint::encode(out, kind);
    varint::encode(out, len as u64);
}

/// The client's control stream as it opens: its type and a SETTINGS frame
/// saying the largest field section crest takes. The QPACK table capacity
/// and blocked streams are left at their default, 0: the server may not use
/// a dynamic table, so crest opens no QPACK streams (RFC 9204 §4.2).
pub fn control_stream(max_field_section_bytes: u64) -> Vec<u8> {
    let mut settings = Vec::new();
    varint::encode(&mut settings, setting::MAX_FIELD_SECTION_SIZE);
    varint::encode(&mut settings, max_field_section_bytes.min(varint::MAX));
    let mut out = Vec::with_capacity(settings.len() + 3);
    varint::encode(&mut out, stream_type::CONTROL);
    encode_header(&mut out, kind::SETTINGS, settings.len());
    out.extend_from_slice(&settings);
    out
}

/// A request as it goes on its stream: a HEADERS frame holding the encoded
/// field section, and a DATA frame with the body if there is one.
pub fn request(field_section: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field_section.len() + body.len() + 16);
    encode_header(&mut out, kind::HEADERS, field_section.len());
    out.extend_from_slice(field_section);
    if !body.is_empty() {
        encode_header(&mut out, kind::DATA, body.len());
        out.extend_from_slice(body);
    }
    out
}

/// A frame's type and length, read from bytes that may arrive split
/// anywhere: at most 16 bytes are held between calls.
#[derive(Debug, Clone, Default)]
pub struct Header {
    held: [u8; 16],
    len: usize,
}

impl Header {
    /// Takes bytes from the front of `input` until the header is whole;
    /// returns (type, payload length) then, `None` when `input` ran out first.
    pub fn read(&mut self, input: &mut &[u8]) -> Option<(u64, u64)> {
        while !input.is_empty() {
            // How many bytes the header takes, once its first bytes are known.
            let need = if self.len == 0 {
                1
            } else {
                let t = varint::len_of(self.held[0]);
                if self.len < t + 1 {
                    t + 1
                } else {
                    t + varint::len_of(self.held[t])
                }
            };
            if self.len < need {
                self.held[self.len] = input[0];
                self.len += 1;
                *input = &input[1..];
                continue;
            }
            break;
        }
        let mut pos = 0;
        let kind = varint::decode(&self.held[..self.len], &mut pos)?;
        let len = varint::decode(&self.held[..self.len], &mut pos)?;
        self.len = 0;
        Some((kind, len))
    }

    /// Whether part of a header is held.
    pub fn partial(&self) -> bool {
        self.len > 0
    }
}
