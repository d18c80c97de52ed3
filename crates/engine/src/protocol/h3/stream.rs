//! The parsers of what a server sends on its streams, fed bytes split
//! anywhere. `ResponseStream`: one request stream's HEADERS (informational
//! ones skipped, trailers allowed), DATA handed out as it arrives, unknown
//! frames skipped. `PeerStream`: a unidirectional stream opened by the
//! server, by its type: the control stream's SETTINGS and GOAWAY, QPACK
//! streams read and dropped (crest's table is 0 bytes), others ignored.

use super::frame::{code, kind, setting, stream_type, Header};
use super::qpack::{Decoder, QpackError};
use super::varint;

/// A stream or connection error, with the HTTP/3 code to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{why} ({})", code::name(*.code))]
pub struct StreamError {
    /// The HTTP/3 (or QPACK) error code.
    pub code: u64,
    /// What was wrong, in words.
    pub why: &'static str,
}

impl StreamError {
    fn new(code: u64, why: &'static str) -> Self {
        Self { code, why }
    }
}

impl From<QpackError> for StreamError {
    fn from(_: QpackError) -> Self {
        Self::new(code::QPACK_DECOMPRESSION_FAILED, "the response's field section cannot be decoded")
    }
}

/// A complete response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Response {
    /// The final status code.
    pub status: u16,
    /// Bytes of the final HEADERS frames' field sections (QPACK-compressed).
    pub head_block_bytes: u64,
    /// The same fields as HTTP/1.1 text (`name: value\r\n` each).
    pub head_raw_bytes: u64,
    /// DATA payload bytes.
    pub body_bytes: u64,
    /// Every byte of the stream: frame headers, field sections, bodies, skipped frames.
    pub stream_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Payload {
    Headers,
    Data,
    Skip,
}

/// One request stream's response.
#[derive(Debug, Clone)]
pub struct ResponseStream {
    header: Header,
    /// The frame being read and its bytes left.
    payload: Option<(Payload, u64)>,
    /// A HEADERS payload collected whole; grown to the largest seen, then reused (a lane's
    /// first response allocates it: sizing it for the limit up front would cost every lane 64 KiB).
    block: Vec<u8>,
    max_block_bytes: usize,
    response: Response,
    /// The final HEADERS arrived; a later HEADERS frame is trailers.
    headed: bool,
    trailers: bool,
    content_length: Option<u64>,
    /// The request was HEAD: content-length announces a body that is not sent.
    head: bool,
}

impl ResponseStream {
    /// A parser that refuses field sections longer than `max_block_bytes`.
    pub fn new(max_block_bytes: usize) -> Self {
        Self {
            header: Header::default(),
            payload: None,
            block: Vec::new(),
            max_block_bytes,
            response: Response::default(),
            headed: false,
            trailers: false,
            content_length: None,
            head: false,
        }
    }

    /// Ready for the response to a new request (`head`: a HEAD request).
    pub fn start(&mut self, head: bool) {
        self.reset();
        self.head = head;
    }

    /// Ready for a new response.
    pub fn reset(&mut self) {
        self.header = Header::default();
        self.payload = None;
        self.block.clear();
        self.response = Response::default();
        self.headed = false;
        self.trailers = false;
        self.content_length = None;
        self.head = false;
    }

    /// Reads `input`, handing body bytes to `body` as they come.
    pub fn feed(
        &mut self,
        mut input: &[u8],
        decoder: &mut Decoder,
        body: &mut dyn FnMut(&[u8]),
    ) -> Result<(), StreamError> {
        self.response.stream_bytes += input.len() as u64;
        while !input.is_empty() {
            let Some((payload, left)) = self.payload else {
                let Some((t, len)) = self.header.read(&mut input) else {
                    return Ok(());
                };
                self.begin(t, len)?;
                if let Some((Payload::Headers, 0)) = self.payload {
                    self.end_headers(decoder)?;
                } else if let Some((_, 0)) = self.payload {
                    self.payload = None;
                }
                continue;
            };
            let take = (left.min(input.len() as u64)) as usize;
            let (now, rest) = input.split_at(take);
            input = rest;
            match payload {
                Payload::Headers => self.block.extend_from_slice(now),
                Payload::Data => {
                    self.response.body_bytes += take as u64;
                    body(now);
                }
                Payload::Skip => {}
            }
            let left = left - take as u64;
            self.payload = Some((payload, left));
            if left == 0 {
                if payload == Payload::Headers {
                    self.end_headers(decoder)?;
                }
                self.payload = None;
            }
        }
        Ok(())
    }

    /// A frame of type `t` and `len` payload bytes begins.
    fn begin(&mut self, t: u64, len: u64) -> Result<(), StreamError> {
        let payload = match t {
            kind::HEADERS => {
                if self.trailers {
                    return Err(StreamError::new(code::FRAME_UNEXPECTED, "a HEADERS frame after the trailers"));
                }
                if len > self.max_block_bytes as u64 {
                    return Err(StreamError::new(code::EXCESSIVE_LOAD, "a field section longer than crest takes"));
                }
                self.block.clear();
                Payload::Headers
            }
            kind::DATA => {
                if !self.headed || self.trailers {
                    return Err(StreamError::new(code::FRAME_UNEXPECTED, "a DATA frame outside the response body"));
                }
                Payload::Data
            }
            kind::CANCEL_PUSH | kind::SETTINGS | kind::GOAWAY | kind::MAX_PUSH_ID => {
                return Err(StreamError::new(code::FRAME_UNEXPECTED, "a control frame on a request stream"));
            }
            kind::PUSH_PROMISE => {
                return Err(StreamError::new(code::ID_ERROR, "a push promise, though crest allows no pushes"));
            }
            t if kind::H2_ONLY.contains(&t) => {
                return Err(StreamError::new(code::FRAME_UNEXPECTED, "an HTTP/2 frame type on an HTTP/3 stream"));
            }
            _ => Payload::Skip,
        };
        self.payload = Some((payload, len));
        Ok(())
    }

    fn end_headers(&mut self, decoder: &mut Decoder) -> Result<(), StreamError> {
        if self.headed {
            // Trailers: decoded for validity, not counted as the head.
            self.trailers = true;
            decoder.decode(&self.block, &mut |_, _| {})?;
            return Ok(());
        }
        let mut status: Option<u16> = None;
        let mut bad_status = false;
        let mut raw = 0u64;
        let mut content_length = None;
        decoder.decode(&self.block, &mut |name, value| {
            raw += (name.len() + value.len() + 4) as u64;
            if name == b":status" {
                let parsed = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u16>().ok());
                match parsed {
                    Some(s) if (100..=999).contains(&s) && value.len() == 3 && status.is_none() => status = Some(s),
                    _ => bad_status = true,
                }
            } else if name == b"content-length" {
                content_length = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u64>().ok());
            }
        })?;
        let Some(status) = status.filter(|_| !bad_status) else {
            return Err(StreamError::new(code::MESSAGE_ERROR, "a response without one valid :status"));
        };
        if status < 200 {
            // Informational: the final response follows.
            return Ok(());
        }
        self.headed = true;
        self.response.status = status;
        self.response.head_block_bytes += self.block.len() as u64;
        self.response.head_raw_bytes += raw;
        self.content_length = content_length;
        Ok(())
    }

    /// The stream ended (FIN): the response, or why it is not one.
    pub fn finish(&mut self) -> Result<Response, StreamError> {
        if self.payload.is_some() || self.header.partial() {
            return Err(StreamError::new(code::FRAME_ERROR, "the stream ended inside a frame"));
        }
        if !self.headed {
            return Err(StreamError::new(code::MESSAGE_ERROR, "the stream ended without a response"));
        }
        // RFC 9110 §8.6: a HEAD, 204 or 304 response's content-length is that of a body not sent.
        let bodiless = self.head || matches!(self.response.status, 204 | 304);
        if !bodiless && self.content_length.is_some_and(|n| n != self.response.body_bytes) {
            return Err(StreamError::new(code::MESSAGE_ERROR, "the body's length differs from its content-length"));
        }
        Ok(self.response)
    }

    /// What the response has so far.
    pub fn partial(&self) -> &Response {
        &self.response
    }
}

/// What a server's unidirectional stream said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerEvent {
    /// The server's SETTINGS arrived (the first frame on its control stream).
    Settings,
    /// GOAWAY: requests on streams with this id or above are not processed.
    GoAway(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PeerKind {
    /// The type is not read yet.
    Unknown,
    Control,
    /// Read and dropped.
    Ignored,
}

/// A unidirectional stream the server opened.
#[derive(Debug, Clone)]
pub struct PeerStream {
    kind: PeerKind,
    /// The stream type's bytes, until whole.
    type_bytes: [u8; 8],
    type_len: usize,
    header: Header,
    payload: Option<(u64, u64)>,
    /// The SETTINGS or GOAWAY payload being read (small; capped).
    held: Vec<u8>,
    settings: bool,
}

/// The largest control frame payload crest reads (SETTINGS and GOAWAY are a few bytes).
const MAX_CONTROL_FRAME: u64 = 4096;

impl Default for PeerStream {
    fn default() -> Self {
        Self {
            kind: PeerKind::Unknown,
            type_bytes: [0; 8],
            type_len: 0,
            header: Header::default(),
            payload: None,
            held: Vec::with_capacity(64),
            settings: false,
        }
    }
}

impl PeerStream {
    /// Whether this is the server's control stream (closing it is a connection error).
    pub fn is_control(&self) -> bool {
        self.kind == PeerKind::Control
    }

    /// Reads `input`; a connection error ends the connection.
    pub fn feed(&mut self, mut input: &[u8], event: &mut dyn FnMut(PeerEvent)) -> Result<(), StreamError> {
        if self.kind == PeerKind::Unknown {
            while !input.is_empty() {
                self.type_bytes[self.type_len] = input[0];
                self.type_len += 1;
                input = &input[1..];
                if self.type_len == varint::len_of(self.type_bytes[0]) {
                    break;
                }
            }
            let mut pos = 0;
            let Some(t) = varint::decode(&self.type_bytes[..self.type_len], &mut pos) else {
                return Ok(());
            };
            self.kind = match t {
                stream_type::CONTROL => PeerKind::Control,
                stream_type::PUSH => {
                    return Err(StreamError::new(code::ID_ERROR, "a push stream, though crest allows no pushes"));
                }
                // QPACK streams (crest's table is 0 bytes) and unknown or reserved types.
                _ => PeerKind::Ignored,
            };
        }
        if self.kind == PeerKind::Ignored {
            return Ok(());
        }
        while !input.is_empty() {
            let Some((t, left)) = self.payload else {
                let Some((t, len)) = self.header.read(&mut input) else {
                    return Ok(());
                };
                self.begin(t, len)?;
                self.payload = Some((t, len));
                if len == 0 {
                    self.end_frame(t, event)?;
                }
                continue;
            };
            let take = left.min(input.len() as u64) as usize;
            if matches!(t, kind::SETTINGS | kind::GOAWAY) {
                self.held.extend_from_slice(&input[..take]);
            }
            input = &input[take..];
            let left = left - take as u64;
            self.payload = Some((t, left));
            if left == 0 {
                self.end_frame(t, event)?;
            }
        }
        Ok(())
    }

    fn begin(&mut self, t: u64, len: u64) -> Result<(), StreamError> {
        if !self.settings && t != kind::SETTINGS {
            return Err(StreamError::new(code::MISSING_SETTINGS, "the control stream did not begin with SETTINGS"));
        }
        match t {
            kind::SETTINGS if self.settings => Err(StreamError::new(code::FRAME_UNEXPECTED, "a second SETTINGS frame")),
            kind::SETTINGS | kind::GOAWAY if len > MAX_CONTROL_FRAME => {
                Err(StreamError::new(code::EXCESSIVE_LOAD, "a control frame longer than crest takes"))
            }
            kind::DATA | kind::HEADERS | kind::PUSH_PROMISE => {
                Err(StreamError::new(code::FRAME_UNEXPECTED, "a request frame on the control stream"))
            }
            t if kind::H2_ONLY.contains(&t) => {
                Err(StreamError::new(code::FRAME_UNEXPECTED, "an HTTP/2 frame type on the control stream"))
            }
            _ => {
                self.held.clear();
                Ok(())
            }
        }
    }

    fn end_frame(&mut self, t: u64, event: &mut dyn FnMut(PeerEvent)) -> Result<(), StreamError> {
        self.payload = None;
        let mut pos = 0;
        match t {
            kind::SETTINGS => {
                while pos < self.held.len() {
                    let id = varint::decode(&self.held, &mut pos);
                    let value = varint::decode(&self.held, &mut pos);
                    let (Some(id), Some(_)) = (id, value) else {
                        return Err(StreamError::new(code::FRAME_ERROR, "a SETTINGS frame cut inside a setting"));
                    };
                    if setting::H2_ONLY.contains(&id) {
                        return Err(StreamError::new(code::SETTINGS_ERROR, "an HTTP/2 setting in HTTP/3 SETTINGS"));
                    }
                }
                self.settings = true;
                event(PeerEvent::Settings);
            }
            kind::GOAWAY => {
                let id = varint::decode(&self.held, &mut pos);
                match id {
                    Some(id) if pos == self.held.len() => event(PeerEvent::GoAway(id)),
                    _ => return Err(StreamError::new(code::FRAME_ERROR, "a malformed GOAWAY frame")),
                }
            }
            _ => {}
        }
        Ok(())
    }
}
