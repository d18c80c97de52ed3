//! Cuts the byte stream from the server into SMB2 messages, whatever the
//! split of the reads.
//!
//! Owns the reassembly buffer and one shortcut: the data of a successful READ
//! reply is counted and dropped as it streams past, never buffered. A message
//! that arrives whole in one input slice is handed out in place, not copied.
//! Knows the header layout only as far as that shortcut needs; it does not
//! interpret replies.

use crate::error::ProtocolError;
use crate::header::{command, transport_len, FLAG_ASYNC, HEADER_LEN, TRANSPORT_LEN};
use crate::status;

/// Bytes of a READ reply up to its data: header plus the 16-byte fixed body.
pub(crate) const READ_HEAD_LEN: usize = HEADER_LEN + 16;

/// One message from the server, header first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Message<'a> {
    Whole(&'a [u8]),
    /// The first [`READ_HEAD_LEN`] bytes of a successful READ reply; the rest
    /// of the message (the file data) is skipped.
    ReadHead(&'a [u8]),
}

impl<'a> Message<'a> {
    pub fn bytes(self) -> &'a [u8] {
        match self {
            Message::Whole(b) | Message::ReadHead(b) => b,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Collecting the 4-byte transport header into `buf`.
    Length,
    /// Collecting a `len`-byte message into `buf`.
    Body { len: usize },
    /// Skipping the rest of a READ reply.
    Discard { left: usize },
}

#[derive(Debug, Clone)]
pub(crate) struct Inbound {
    buf: Vec<u8>,
    state: State,
    /// `buf` holds a message already handed out; clear it before reuse.
    handed_out: bool,
}

impl Inbound {
    pub fn new() -> Inbound {
        Inbound { buf: Vec::with_capacity(4096), state: State::Length, handed_out: false }
    }

    /// The next complete message, taking bytes from the front of `input`;
    /// `None` once `input` is used up without completing one.
    pub fn next<'m, 's: 'm, 'i: 'm>(&'s mut self, input: &mut &'i [u8]) -> Result<Option<Message<'m>>, ProtocolError> {
        if std::mem::take(&mut self.handed_out) {
            self.buf.clear();
        }
        loop {
            match self.state {
                State::Discard { left } => {
                    let n = left.min(input.len());
                    *input = &input[n..];
                    if n < left {
                        self.state = State::Discard { left: left - n };
                        return Ok(None);
                    }
                    self.state = State::Length;
                }
                State::Length => {
                    if !self.fill(input, TRANSPORT_LEN) {
                        return Ok(None);
                    }
                    let head = [self.buf[0], self.buf[1], self.buf[2], self.buf[3]];
                    self.buf.clear();
                    self.state = State::Body { len: transport_len(head)? };
                }
                State::Body { len } => {
                    if self.buf.is_empty() && input.len() >= len {
                        // The common case: the whole message is in this read.
                        let (message, rest) = input.split_at(len);
                        *input = rest;
                        self.state = State::Length;
                        return Ok(Some(Message::Whole(message)));
                    }
                    if !self.fill(input, len.min(READ_HEAD_LEN)) {
                        return Ok(None);
                    }
                    if len > READ_HEAD_LEN && is_read_success(&self.buf) {
                        self.state = State::Discard { left: len - READ_HEAD_LEN };
                        self.handed_out = true;
                        return Ok(Some(Message::ReadHead(&self.buf)));
                    }
                    if !self.fill(input, len) {
                        return Ok(None);
                    }
                    self.state = State::Length;
                    self.handed_out = true;
                    return Ok(Some(Message::Whole(&self.buf)));
                }
            }
        }
    }

    /// Moves bytes from `input` into `buf` until it holds `want`; true once it does.
    fn fill(&mut self, input: &mut &[u8], want: usize) -> bool {
        let n = want.saturating_sub(self.buf.len()).min(input.len());
        self.buf.extend_from_slice(&input[..n]);
        *input = &input[n..];
        self.buf.len() >= want
    }
}

/// A sync, successful, uncompounded READ reply: its data can be skipped.
fn is_read_success(head: &[u8]) -> bool {
    let u16_at = |at: usize| u16::from_le_bytes([head[at], head[at + 1]]);
    let u32_at = |at: usize| u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    head.len() >= READ_HEAD_LEN
        && u16_at(12) == command::READ
        && u32_at(8) == status::OK
        && u32_at(16) & FLAG_ASYNC == 0
        && u32_at(20) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    fn read_reply(data_len: usize) -> Vec<u8> {
        let mut m = vec![0u8; READ_HEAD_LEN];
        m[..4].copy_from_slice(b"\xFESMB");
        m[12] = command::READ as u8;
        m[16] = 1;
        m[HEADER_LEN + 4..HEADER_LEN + 8].copy_from_slice(&(data_len as u32).to_le_bytes());
        m.extend((0..data_len).map(|i| i as u8));
        m
    }

    /// Feeds `stream` in pieces cut at `cuts`; collects what comes out.
    fn collect(stream: &[u8], cuts: &[usize]) -> Vec<(bool, Vec<u8>)> {
        let mut inbound = Inbound::new();
        let mut out = Vec::new();
        let mut from = 0;
        for &to in cuts.iter().chain([stream.len()].iter()) {
            let mut input = &stream[from..to];
            while let Some(m) = inbound.next(&mut input).unwrap() {
                out.push((matches!(m, Message::ReadHead(_)), m.bytes().to_vec()));
            }
            assert!(input.is_empty());
            from = to;
        }
        out
    }

    #[test]
    fn any_split_gives_the_same_messages() {
        let a = vec![0xFE, b'S', b'M', b'B', 1, 2, 3];
        let b = vec![0xFE, b'S', b'M', b'B', 9];
        let mut stream = frame(&a);
        stream.extend(frame(&b));
        let whole = collect(&stream, &[]);
        assert_eq!(whole, vec![(false, a), (false, b)]);
        for i in 0..=stream.len() {
            assert_eq!(collect(&stream, &[i]), whole, "split at {i}");
        }
        let bytewise: Vec<usize> = (1..stream.len()).collect();
        assert_eq!(collect(&stream, &bytewise), whole);
    }

    #[test]
    fn read_data_is_skipped_when_buffering_and_passed_through_when_whole() {
        let reply = read_reply(1000);
        let mut stream = frame(&reply);
        stream.extend(frame(b"\xFESMBnext"));
        // Arriving whole: handed out in place, data included.
        assert_eq!(collect(&stream, &[]), vec![(false, reply.clone()), (false, b"\xFESMBnext".to_vec())]);
        // Arriving in pieces: only the head is kept.
        for i in 1..stream.len() {
            let got = collect(&stream, &[i]);
            assert_eq!(got[1], (false, b"\xFESMBnext".to_vec()), "split at {i}");
            if got[0].0 {
                assert_eq!(got[0].1, reply[..READ_HEAD_LEN]);
            } else {
                assert_eq!(got[0].1, reply, "split at {i}");
            }
        }
    }

    #[test]
    fn a_failed_read_reply_is_buffered_whole() {
        let mut reply = read_reply(200);
        reply[8..12].copy_from_slice(&status::END_OF_FILE.to_le_bytes());
        let stream = frame(&reply);
        assert_eq!(collect(&stream, &[5]), vec![(false, reply)]);
    }

    #[test]
    fn a_non_zero_first_byte_is_a_framing_error() {
        let mut inbound = Inbound::new();
        let mut input: &[u8] = &[0x85, 0, 0, 0];
        assert_eq!(inbound.next(&mut input), Err(ProtocolError::Framing(0x85)));
    }
}
