//! The 64-byte SMB2 packet header ([MS-SMB2] 2.2.1) and the Direct TCP
//! transport header in front of it ([MS-SMB2] 2.1: a zero byte, then the
//! message length as 24-bit big-endian).
//!
//! Owns the header layout, command codes and header flags. Does not decide
//! MessageIds, credits or signing (that is [`crate::outbound`]).

use crate::error::ProtocolError;
use crate::wire::{put, zeros, Fields};

/// Bytes of the transport header in front of each message.
pub(crate) const TRANSPORT_LEN: usize = 4;
/// Bytes of the SMB2 header; request and reply bodies start here, and
/// buffer offsets in bodies count from the header's first byte.
pub(crate) const HEADER_LEN: usize = 64;
/// Where the 16-byte signature sits in the header.
pub(crate) const SIGNATURE_AT: usize = 48;
/// Where the flags sit in the header.
pub(crate) const FLAGS_AT: usize = 16;

const PROTOCOL_ID: [u8; 4] = [0xFE, b'S', b'M', b'B'];

/// Command codes ([MS-SMB2] 2.2.1.2).
pub(crate) mod command {
    pub const NEGOTIATE: u16 = 0x00;
    pub const SESSION_SETUP: u16 = 0x01;
    pub const LOGOFF: u16 = 0x02;
    pub const TREE_CONNECT: u16 = 0x03;
    pub const TREE_DISCONNECT: u16 = 0x04;
    pub const CREATE: u16 = 0x05;
    pub const CLOSE: u16 = 0x06;
    pub const FLUSH: u16 = 0x07;
    pub const READ: u16 = 0x08;
    pub const WRITE: u16 = 0x09;
    pub const LOCK: u16 = 0x0A;
    pub const QUERY_DIRECTORY: u16 = 0x0E;
    pub const QUERY_INFO: u16 = 0x10;
    pub const SET_INFO: u16 = 0x11;
}

/// Header flags.
pub(crate) const FLAG_RESPONSE: u32 = 0x1;
pub(crate) const FLAG_ASYNC: u32 = 0x2;
pub(crate) const FLAG_SIGNED: u32 = 0x8;

/// The MessageId of unsolicited server messages (oplock breaks).
pub(crate) const UNSOLICITED_MESSAGE_ID: u64 = u64::MAX;

/// What a reply's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub credit_charge: u16,
    pub status: u32,
    pub command: u16,
    /// CreditResponse: credits granted by this reply.
    pub credits: u16,
    pub flags: u32,
    pub next_command: u32,
    pub message_id: u64,
    pub tree_id: u32,
    pub session_id: u64,
}

impl Header {
    /// Parses the header at the start of `msg` (transport header removed).
    pub fn parse(msg: &[u8]) -> Result<Header, ProtocolError> {
        let f = Fields::new(msg, "SMB2 header");
        if f.slice(0, 4)? != PROTOCOL_ID {
            return Err(ProtocolError::NotSmb2);
        }
        let flags = f.u32(16)?;
        // An async header replaces Reserved+TreeId with an 8-byte AsyncId;
        // this client never needs the AsyncId (it only skips interim replies).
        let tree_id = if flags & FLAG_ASYNC == 0 { f.u32(36)? } else { 0 };
        Ok(Header {
            credit_charge: f.u16(6)?,
            status: f.u32(8)?,
            command: f.u16(12)?,
            credits: f.u16(14)?,
            flags,
            next_command: f.u32(20)?,
            message_id: f.u64(24)?,
            tree_id,
            session_id: f.u64(40)?,
        })
    }

    pub fn is_async(&self) -> bool {
        self.flags & FLAG_ASYNC != 0
    }
}

/// The fields of a request header that vary ([MS-SMB2] 2.2.1.2, sync form).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RequestHeader {
    pub command: u16,
    pub credit_charge: u16,
    pub credit_request: u16,
    pub message_id: u64,
    pub tree_id: u32,
    pub session_id: u64,
}

impl RequestHeader {
    /// Appends the header; the signature stays zero (signing patches it).
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PROTOCOL_ID);
        put!(out, HEADER_LEN as u16, self.credit_charge, 0u32 /* ChannelSequence/Reserved */);
        put!(out, self.command, self.credit_request, 0u32 /* Flags */, 0u32 /* NextCommand */);
        put!(out, self.message_id, 0u32 /* Reserved (ProcessId) */, self.tree_id, self.session_id);
        zeros(out, 16);
    }
}

/// Appends a transport header with a zero length, to be patched by
/// [`patch_transport`] once the message is complete.
pub(crate) fn begin_transport(out: &mut Vec<u8>) -> usize {
    let at = out.len();
    zeros(out, TRANSPORT_LEN);
    at
}

/// Writes the length of the message that follows the transport header at `at`.
pub(crate) fn patch_transport(out: &mut [u8], at: usize) {
    let len = out.len() - at - TRANSPORT_LEN;
    assert!(len < 1 << 24, "invariant: requests stay under 16 MiB (reads and writes are capped at 8 MiB)");
    out[at..at + TRANSPORT_LEN].copy_from_slice(&(len as u32).to_be_bytes());
}

/// The length announced by a transport header.
pub(crate) fn transport_len(head: [u8; 4]) -> Result<usize, ProtocolError> {
    if head[0] != 0 {
        return Err(ProtocolError::Framing(head[0]));
    }
    Ok(u32::from_be_bytes(head) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_header_field_by_field() {
        let mut out = Vec::new();
        let h = RequestHeader {
            command: command::WRITE,
            credit_charge: 2,
            credit_request: 64,
            message_id: 0x0102_0304_0506_0708,
            tree_id: 0xAABB_CCDD,
            session_id: 0x1122_3344_5566_7788,
        };
        h.write(&mut out);
        assert_eq!(out.len(), HEADER_LEN);
        assert_eq!(&out[0..4], b"\xFESMB");
        assert_eq!(out[4..6], [64, 0]); // StructureSize
        assert_eq!(out[6..8], [2, 0]); // CreditCharge
        assert_eq!(out[8..12], [0; 4]); // ChannelSequence
        assert_eq!(out[12..14], [9, 0]); // Command
        assert_eq!(out[14..16], [64, 0]); // CreditRequest
        assert_eq!(out[16..24], [0; 8]); // Flags, NextCommand
        assert_eq!(out[24..32], 0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(out[32..36], [0; 4]); // ProcessId
        assert_eq!(out[36..40], 0xAABB_CCDDu32.to_le_bytes());
        assert_eq!(out[40..48], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(out[48..64], [0; 16]);
    }

    #[test]
    fn parse_sync_and_async_reply_headers() {
        let mut msg = Vec::new();
        RequestHeader { command: 5, credit_charge: 1, credit_request: 3, message_id: 9, tree_id: 7, session_id: 11 }
            .write(&mut msg);
        msg[8..12].copy_from_slice(&0xC000_0034u32.to_le_bytes());
        msg[16] = FLAG_RESPONSE as u8;
        let h = Header::parse(&msg).unwrap();
        assert_eq!(
            (h.command, h.credits, h.status, h.message_id, h.tree_id, h.session_id),
            (5, 3, 0xC000_0034, 9, 7, 11)
        );
        assert!(!h.is_async());
        msg[16] |= FLAG_ASYNC as u8;
        let h = Header::parse(&msg).unwrap();
        assert!(h.is_async());
        assert_eq!(h.tree_id, 0);
        msg[0] = 0xFF;
        assert_eq!(Header::parse(&msg), Err(ProtocolError::NotSmb2));
        assert!(Header::parse(&msg[..63]).is_err());
    }

    #[test]
    fn transport_header_is_24_bit_big_endian() {
        let mut out = vec![9];
        let at = begin_transport(&mut out);
        out.extend_from_slice(&[0; 0x1_0203]);
        patch_transport(&mut out, at);
        assert_eq!(out[1..5], [0, 1, 2, 3]);
        assert_eq!(transport_len([0, 1, 2, 3]), Ok(0x1_0203));
        assert_eq!(transport_len([0x85, 0, 0, 0]), Err(ProtocolError::Framing(0x85)));
    }
}
