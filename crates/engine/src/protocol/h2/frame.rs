//! HTTP/2 frames (RFC 9113 §4, §6) on bytes: `FrameDecoder` takes whatever
//! slices a connection yields and hands out one frame (or one piece of a
//! DATA payload) at a time; the `write_*` functions append frames to an
//! output buffer. DATA payloads are streamed, never buffered, since crest
//! only counts body bytes; other frames borrow the caller's slice when they
//! arrive whole and are copied into a buffer sized once per connection when
//! split. No socket, no clock, no allocation after construction.

/// The connection preface a client sends first (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Bytes of a frame header.
pub const HEAD_BYTES: usize = 9;
/// The smallest SETTINGS_MAX_FRAME_SIZE and the default (RFC 9113 §6.5.2).
pub const DEFAULT_MAX_FRAME_BYTES: u32 = 16_384;
/// Largest flow-control window (2^31 − 1).
pub const MAX_WINDOW: u32 = (1 << 31) - 1;
/// Initial window of every stream and of the connection until SETTINGS say otherwise.
pub const DEFAULT_WINDOW: u32 = 65_535;

/// Frame types.
pub mod kind {
    /// DATA.
    pub const DATA: u8 = 0x0;
    /// HEADERS.
    pub const HEADERS: u8 = 0x1;
    /// PRIORITY (ignored: crest sends no priorities).
    pub const PRIORITY: u8 = 0x2;
    /// RST_STREAM.
    pub const RST_STREAM: u8 = 0x3;
    /// SETTINGS.
    pub const SETTINGS: u8 = 0x4;
    /// PUSH_PROMISE (refused: crest disables push).
    pub const PUSH_PROMISE: u8 = 0x5;
    /// PING.
    pub const PING: u8 = 0x6;
    /// GOAWAY.
    pub const GOAWAY: u8 = 0x7;
    /// WINDOW_UPDATE.
    pub const WINDOW_UPDATE: u8 = 0x8;
    /// CONTINUATION.
    pub const CONTINUATION: u8 = 0x9;
}

/// Frame flags.
pub mod flag {
    /// END_STREAM (DATA, HEADERS).
    pub const END_STREAM: u8 = 0x1;
    /// ACK (SETTINGS, PING).
    pub const ACK: u8 = 0x1;
    /// END_HEADERS (HEADERS, CONTINUATION).
    pub const END_HEADERS: u8 = 0x4;
    /// PADDED (DATA, HEADERS).
    pub const PADDED: u8 = 0x8;
    /// PRIORITY (HEADERS).
    pub const PRIORITY: u8 = 0x20;
}

/// SETTINGS identifiers (RFC 9113 §6.5.2).
pub mod setting {
    /// SETTINGS_HEADER_TABLE_SIZE.
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    /// SETTINGS_ENABLE_PUSH.
    pub const ENABLE_PUSH: u16 = 0x2;
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    /// SETTINGS_MAX_FRAME_SIZE.
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    /// SETTINGS_MAX_HEADER_LIST_SIZE.
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// Error codes (RFC 9113 §7).
pub mod code {
    /// NO_ERROR.
    pub const NO_ERROR: u32 = 0x0;
    /// PROTOCOL_ERROR.
    pub const PROTOCOL_ERROR: u32 = 0x1;
    /// FLOW_CONTROL_ERROR.
    pub const FLOW_CONTROL_ERROR: u32 = 0x3;
    /// FRAME_SIZE_ERROR.
    pub const FRAME_SIZE_ERROR: u32 = 0x6;
    /// REFUSED_STREAM.
    pub const REFUSED_STREAM: u32 = 0x7;
    /// CANCEL.
    pub const CANCEL: u32 = 0x8;
    /// COMPRESSION_ERROR.
    pub const COMPRESSION_ERROR: u32 = 0x9;

    /// The code's name as RFC 9113 spells it.
    pub fn name(code: u32) -> &'static str {
        match code {
            0x0 => "NO_ERROR",
            0x1 => "PROTOCOL_ERROR",
            0x2 => "INTERNAL_ERROR",
            0x3 => "FLOW_CONTROL_ERROR",
            0x4 => "SETTINGS_TIMEOUT",
            0x5 => "STREAM_CLOSED",
            0x6 => "FRAME_SIZE_ERROR",
            0x7 => "REFUSED_STREAM",
            0x8 => "CANCEL",
            0x9 => "COMPRESSION_ERROR",
            0xa => "CONNECT_ERROR",
            0xb => "ENHANCE_YOUR_CALM",
            0xc => "INADEQUATE_SECURITY",
            0xd => "HTTP_1_1_REQUIRED",
            _ => "unknown error code",
        }
    }
}

/// A connection error found while framing: the connection cannot go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A frame longer than the SETTINGS_MAX_FRAME_SIZE crest advertised, or of the wrong length for its type.
    #[error("frame size error: {0}")]
    Size(&'static str),
    /// A frame that breaks RFC 9113's rules.
    #[error("protocol error: {0}")]
    Protocol(&'static str),
}

impl FrameError {
    /// The GOAWAY code this error is reported with.
    pub fn code(self) -> u32 {
        match self {
            Self::Size(_) => code::FRAME_SIZE_ERROR,
            Self::Protocol(_) => code::PROTOCOL_ERROR,
        }
    }
}

/// One decoded unit: a whole frame, or a piece of a DATA payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// Body bytes of a DATA frame on `stream` (padding removed); a frame may come in several pieces.
    Data {
        /// Stream id.
        stream: u32,
        /// The piece.
        bytes: &'a [u8],
    },
    /// The end of a DATA frame: `flow_bytes` (its whole payload, padding included) counts against the windows.
    DataEnd {
        /// Stream id.
        stream: u32,
        /// END_STREAM was set.
        end_stream: bool,
        /// Payload bytes, padding included.
        flow_bytes: u32,
    },
    /// A HEADERS frame's header block fragment (padding and priority removed).
    Headers {
        /// Stream id.
        stream: u32,
        /// END_STREAM was set.
        end_stream: bool,
        /// END_HEADERS was set: the block is complete.
        end_headers: bool,
        /// The fragment.
        block: &'a [u8],
    },
    /// A CONTINUATION frame's fragment.
    Continuation {
        /// Stream id.
        stream: u32,
        /// END_HEADERS was set.
        end_headers: bool,
        /// The fragment.
        block: &'a [u8],
    },
    /// RST_STREAM.
    RstStream {
        /// Stream id.
        stream: u32,
        /// Error code.
        code: u32,
    },
    /// SETTINGS; `params` holds whole 6-byte (id, value) entries (see `settings`).
    Settings {
        /// ACK flag.
        ack: bool,
        /// The entries.
        params: &'a [u8],
    },
    /// PING.
    Ping {
        /// ACK flag.
        ack: bool,
        /// Opaque data.
        opaque: [u8; 8],
    },
    /// GOAWAY.
    GoAway {
        /// The last stream the server processes (or may process).
        last_stream: u32,
        /// Error code.
        code: u32,
    },
    /// WINDOW_UPDATE.
    WindowUpdate {
        /// Stream id (0: the connection).
        stream: u32,
        /// Window increment, 1 … 2^31 − 1.
        increment: u32,
    },
    /// PRIORITY or a frame type crest does not know (RFC 9113 §4.1: ignored).
    Ignored,
}

/// The (id, value) pairs of a SETTINGS frame's payload.
pub fn settings(params: &[u8]) -> impl Iterator<Item = (u16, u32)> + '_ {
    params.chunks_exact(6).map(|p| (u16::from_be_bytes([p[0], p[1]]), u32::from_be_bytes([p[2], p[3], p[4], p[5]])))
}

#[derive(Debug, Clone, Copy)]
struct Head {
    len: u32,
    kind: u8,
    flags: u8,
    stream: u32,
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// Collecting the 9-byte header (`have` of them so far).
    Head { have: usize },
    /// DATA's pad-length byte is next.
    DataPad { head: Head },
    /// Streaming DATA: `data` body bytes, then `pad` padding bytes.
    Data { head: Head, data: u32, pad: u32 },
    /// Collecting a non-DATA payload of `head.len` bytes into the buffer.
    Payload { head: Head },
}

/// Frames a connection's incoming bytes; one per connection.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    state: State,
    head: [u8; HEAD_BYTES],
    /// A split non-DATA payload; capacity is the max frame size, reserved once.
    buf: Vec<u8>,
    max_frame_bytes: u32,
}

impl FrameDecoder {
    /// A decoder that refuses frames longer than `max_frame_bytes` (what the client advertised).
    pub fn new(max_frame_bytes: u32) -> Self {
        Self {
            state: State::Head { have: 0 },
            head: [0; HEAD_BYTES],
            buf: Vec::with_capacity(max_frame_bytes as usize),
            max_frame_bytes,
        }
    }

    /// Forgets any partial frame (a new connection).
    pub fn reset(&mut self) {
        self.state = State::Head { have: 0 };
        self.buf.clear();
    }

    /// Whether no frame is partly read.
    pub fn at_boundary(&self) -> bool {
        matches!(self.state, State::Head { have: 0 })
    }

    /// Consumes a prefix of `input`: returns how many bytes were used and
    /// the unit they completed, if any. Call again with the rest until it
    /// returns `(0, None)`: more input is then needed (a DATA frame's end
    /// may come from a call with no input left).
    pub fn decode<'a>(&'a mut self, input: &'a [u8]) -> Result<(usize, Option<Frame<'a>>), FrameError> {
        match self.state {
            State::Head { have } => {
                if have == 0 && input.len() >= HEAD_BYTES {
                    let head = parse_head(input[..HEAD_BYTES].try_into().expect("9 bytes"));
                    let rest = &input[HEAD_BYTES..];
                    // The common case: a whole non-DATA frame in the slice, parsed in place.
                    if head.kind != kind::DATA && rest.len() >= head.len as usize {
                        self.check(head)?;
                        let frame = parse_payload(head, &rest[..head.len as usize])?;
                        return Ok((HEAD_BYTES + head.len as usize, Some(frame)));
                    }
                    let frame = self.begin(head)?;
                    return Ok((HEAD_BYTES, frame));
                }
                let take = (HEAD_BYTES - have).min(input.len());
                self.head[have..have + take].copy_from_slice(&input[..take]);
                if have + take < HEAD_BYTES {
                    self.state = State::Head { have: have + take };
                    return Ok((take, None));
                }
                let head = parse_head(&self.head);
                let frame = self.begin(head)?;
                Ok((take, frame))
            }
            State::DataPad { head } => {
                let Some(&pad) = input.first() else { return Ok((0, None)) };
                let pad = u32::from(pad);
                if pad >= head.len {
                    return Err(FrameError::Protocol("padding longer than the DATA payload"));
                }
                self.state = State::Data { head, data: head.len - 1 - pad, pad };
                Ok((1, self.data_end_if_empty(head)))
            }
            State::Data { head, data, pad } => {
                if data > 0 {
                    if input.is_empty() {
                        return Ok((0, None));
                    }
                    let take = (data as usize).min(input.len());
                    // The frame's end, when this piece completes it, comes from the next call.
                    self.state = State::Data { head, data: data - take as u32, pad };
                    return Ok((take, Some(Frame::Data { stream: head.stream, bytes: &input[..take] })));
                }
                let take = (pad as usize).min(input.len());
                self.state = State::Data { head, data: 0, pad: pad - take as u32 };
                Ok((take, self.data_end_if_empty(head)))
            }
            State::Payload { head } => {
                let need = head.len as usize - self.buf.len();
                let take = need.min(input.len());
                self.buf.extend_from_slice(&input[..take]);
                if take < need {
                    return Ok((take, None));
                }
                self.state = State::Head { have: 0 };
                let frame = parse_payload(head, &self.buf)?;
                Ok((take, Some(frame)))
            }
        }
    }

    /// After a frame header: checks it and sets up reading its payload.
    fn begin(&mut self, head: Head) -> Result<Option<Frame<'static>>, FrameError> {
        self.check(head)?;
        if head.kind == kind::DATA {
            if head.stream == 0 {
                return Err(FrameError::Protocol("DATA on stream 0"));
            }
            if head.flags & flag::PADDED != 0 {
                if head.len == 0 {
                    return Err(FrameError::Protocol("padded DATA without a pad length"));
                }
                self.state = State::DataPad { head };
                return Ok(None);
            }
            self.state = State::Data { head, data: head.len, pad: 0 };
            return Ok(self.data_end_if_empty(head));
        }
        self.buf.clear();
        if head.len == 0 {
            self.state = State::Head { have: 0 };
            return parse_payload(head, &[]).map(|f| Some(f.into_static()));
        }
        self.state = State::Payload { head };
        Ok(None)
    }

    /// The DataEnd unit once a DATA frame's payload is all read.
    fn data_end_if_empty(&mut self, head: Head) -> Option<Frame<'static>> {
        match self.state {
            State::Data { data: 0, pad: 0, .. } => {
                self.state = State::Head { have: 0 };
                Some(Frame::DataEnd {
                    stream: head.stream,
                    end_stream: head.flags & flag::END_STREAM != 0,
                    flow_bytes: head.len,
                })
            }
            _ => None,
        }
    }

    fn check(&self, head: Head) -> Result<(), FrameError> {
        if head.len > self.max_frame_bytes {
            return Err(FrameError::Size("frame longer than SETTINGS_MAX_FRAME_SIZE"));
        }
        Ok(())
    }
}

impl Frame<'_> {
    /// Only frames without borrowed bytes come out of a zero-length payload.
    fn into_static(self) -> Frame<'static> {
        match self {
            Frame::Headers { stream, end_stream, end_headers, .. } => {
                Frame::Headers { stream, end_stream, end_headers, block: &[] }
            }
            Frame::Continuation { stream, end_headers, .. } => Frame::Continuation { stream, end_headers, block: &[] },
            Frame::Settings { ack, .. } => Frame::Settings { ack, params: &[] },
            Frame::Data { stream, .. } => Frame::Data { stream, bytes: &[] },
            Frame::DataEnd { stream, end_stream, flow_bytes } => Frame::DataEnd { stream, end_stream, flow_bytes },
            Frame::RstStream { stream, code } => Frame::RstStream { stream, code },
            Frame::Ping { ack, opaque } => Frame::Ping { ack, opaque },
            Frame::GoAway { last_stream, code } => Frame::GoAway { last_stream, code },
            Frame::WindowUpdate { stream, increment } => Frame::WindowUpdate { stream, increment },
            Frame::Ignored => Frame::Ignored,
        }
    }
}

fn parse_head(b: &[u8; HEAD_BYTES]) -> Head {
    Head {
        len: u32::from_be_bytes([0, b[0], b[1], b[2]]),
        kind: b[3],
        flags: b[4],
        stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & MAX_WINDOW,
    }
}

fn u32_at(p: &[u8]) -> u32 {
    u32::from_be_bytes([p[0], p[1], p[2], p[3]])
}

/// Parses a whole non-DATA payload.
fn parse_payload(head: Head, p: &[u8]) -> Result<Frame<'_>, FrameError> {
    let Head { len, kind, flags, stream } = head;
    let on_stream = |what: &'static str| if stream == 0 { Err(FrameError::Protocol(what)) } else { Ok(()) };
    let on_connection = |what: &'static str| if stream != 0 { Err(FrameError::Protocol(what)) } else { Ok(()) };
    Ok(match kind {
        kind::HEADERS => {
            on_stream("HEADERS on stream 0")?;
            let mut block = p;
            let mut pad = 0usize;
            if flags & flag::PADDED != 0 {
                let (&n, rest) =
                    block.split_first().ok_or(FrameError::Protocol("padded HEADERS without a pad length"))?;
                pad = usize::from(n);
                block = rest;
            }
            if flags & flag::PRIORITY != 0 {
                if block.len() < 5 {
                    return Err(FrameError::Size("HEADERS too short for its priority fields"));
                }
                block = &block[5..];
            }
            if pad > block.len() {
                return Err(FrameError::Protocol("padding longer than the HEADERS payload"));
            }
            Frame::Headers {
                stream,
                end_stream: flags & flag::END_STREAM != 0,
                end_headers: flags & flag::END_HEADERS != 0,
                block: &block[..block.len() - pad],
            }
        }
        kind::CONTINUATION => {
            on_stream("CONTINUATION on stream 0")?;
            Frame::Continuation { stream, end_headers: flags & flag::END_HEADERS != 0, block: p }
        }
        kind::RST_STREAM => {
            on_stream("RST_STREAM on stream 0")?;
            if len != 4 {
                return Err(FrameError::Size("RST_STREAM not 4 bytes long"));
            }
            Frame::RstStream { stream, code: u32_at(p) }
        }
        kind::SETTINGS => {
            on_connection("SETTINGS on a stream")?;
            let ack = flags & flag::ACK != 0;
            if ack && len != 0 {
                return Err(FrameError::Size("SETTINGS ACK with a payload"));
            }
            if len % 6 != 0 {
                return Err(FrameError::Size("SETTINGS length not a multiple of 6"));
            }
            Frame::Settings { ack, params: p }
        }
        kind::PING => {
            on_connection("PING on a stream")?;
            if len != 8 {
                return Err(FrameError::Size("PING not 8 bytes long"));
            }
            Frame::Ping { ack: flags & flag::ACK != 0, opaque: p.try_into().expect("8 bytes") }
        }
        kind::GOAWAY => {
            on_connection("GOAWAY on a stream")?;
            if len < 8 {
                return Err(FrameError::Size("GOAWAY shorter than 8 bytes"));
            }
            Frame::GoAway { last_stream: u32_at(p) & MAX_WINDOW, code: u32_at(&p[4..]) }
        }
        kind::WINDOW_UPDATE => {
            if len != 4 {
                return Err(FrameError::Size("WINDOW_UPDATE not 4 bytes long"));
            }
            let increment = u32_at(p) & MAX_WINDOW;
            if increment == 0 {
                return Err(FrameError::Protocol("WINDOW_UPDATE with an increment of 0"));
            }
            Frame::WindowUpdate { stream, increment }
        }
        kind::PUSH_PROMISE => return Err(FrameError::Protocol("PUSH_PROMISE after SETTINGS_ENABLE_PUSH = 0")),
        kind::PRIORITY => {
            on_stream("PRIORITY on stream 0")?;
            if len != 5 {
                return Err(FrameError::Size("PRIORITY not 5 bytes long"));
            }
            Frame::Ignored
        }
        _ => Frame::Ignored,
    })
}

/// Appends a frame header.
pub fn write_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let len = u32::try_from(len).expect("frame length fits 24 bits").to_be_bytes();
    out.extend_from_slice(&[len[1], len[2], len[3], kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a SETTINGS frame with `params`.
pub fn write_settings(out: &mut Vec<u8>, params: &[(u16, u32)]) {
    write_head(out, params.len() * 6, kind::SETTINGS, 0, 0);
    for (id, value) in params {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends a SETTINGS acknowledgement.
pub fn write_settings_ack(out: &mut Vec<u8>) {
    write_head(out, 0, kind::SETTINGS, flag::ACK, 0);
}

/// Appends a PING (or its ACK).
pub fn write_ping(out: &mut Vec<u8>, ack: bool, opaque: [u8; 8]) {
    write_head(out, 8, kind::PING, if ack { flag::ACK } else { 0 }, 0);
    out.extend_from_slice(&opaque);
}

/// Appends a WINDOW_UPDATE.
pub fn write_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    write_head(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// Appends an RST_STREAM.
pub fn write_rst_stream(out: &mut Vec<u8>, stream: u32, error: u32) {
    write_head(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&error.to_be_bytes());
}

/// Appends a GOAWAY.
pub fn write_goaway(out: &mut Vec<u8>, last_stream: u32, error: u32) {
    write_head(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&error.to_be_bytes());
}

/// Appends a header block as HEADERS plus CONTINUATION frames of at most `max_frame_bytes` each.
pub fn write_headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max_frame_bytes: usize) {
    let mut chunks = block.chunks(max_frame_bytes.max(1));
    let first = chunks.next().unwrap_or(&[]);
    let last = first.len() == block.len();
    let mut flags = if end_stream { flag::END_STREAM } else { 0 };
    if last {
        flags |= flag::END_HEADERS;
    }
    write_head(out, first.len(), kind::HEADERS, flags, stream);
    out.extend_from_slice(first);
    let mut sent = first.len();
    for chunk in chunks {
        sent += chunk.len();
        let flags = if sent == block.len() { flag::END_HEADERS } else { 0 };
        write_head(out, chunk.len(), kind::CONTINUATION, flags, stream);
        out.extend_from_slice(chunk);
    }
}

/// Appends one DATA frame (`data` must fit the peer's max frame size).
pub fn write_data(out: &mut Vec<u8>, stream: u32, data: &[u8], end_stream: bool) {
    write_head(out, data.len(), kind::DATA, if end_stream { flag::END_STREAM } else { 0 }, stream);
    out.extend_from_slice(data);
}
