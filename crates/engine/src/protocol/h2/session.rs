//! One HTTP/2 client connection as a state machine on bytes (like nghttp2's
//! session or quinn-proto's connection): the caller feeds it what the
//! socket read (`receive`), writes out what it queued (`output`,
//! `consumed`), and opens streams on numbered lanes. The session keeps the
//! protocol's books: settings both ways, flow-control windows both ways,
//! the HPACK decoder, header blocks split over CONTINUATION, PING and
//! SETTINGS acknowledgements, GOAWAY. It reports per lane what became of
//! its stream (`Event`); it never touches a socket, a clock or the stats,
//! and allocates nothing after construction.
//!
//! Lanes: a connection carries at most `lanes` streams at once; lane `k`
//! only ever uses stream ids with `(id >> 1) % lanes == k`, so a frame's
//! lane is found by arithmetic. Ids skipped on the way are implicitly
//! closed (RFC 9113 §5.1.1), which the protocol allows.

use super::frame::{self, code, setting, Frame, FrameDecoder, FrameError};
use super::hpack::{self, HpackError};

/// What a session is configured with.
#[derive(Debug, Clone, Copy)]
pub struct SessionSettings {
    /// Most concurrent streams crest opens (lanes).
    pub lanes: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE crest advertises: what each stream may receive before a WINDOW_UPDATE.
    pub stream_window: u32,
    /// The connection's receive window.
    pub connection_window: u32,
    /// Longest header field accepted.
    pub max_field_bytes: usize,
}

/// A connection-level failure: the session queued a GOAWAY and the connection must close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionError {
    /// RFC 9113 error code.
    pub code: u32,
    /// What broke the rules.
    pub reason: &'static str,
    /// Whether the peer, not crest, ended the connection with this error (GOAWAY with an error code).
    pub by_peer: bool,
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.by_peer {
            write!(f, "server sent GOAWAY {}", code::name(self.code))
        } else {
            write!(f, "HTTP/2 {}: {}", code::name(self.code), self.reason)
        }
    }
}

impl std::error::Error for SessionError {}

impl From<FrameError> for SessionError {
    fn from(e: FrameError) -> Self {
        let reason = match e {
            FrameError::Size(r) | FrameError::Protocol(r) => r,
        };
        Self { code: e.code(), reason, by_peer: false }
    }
}

impl From<HpackError> for SessionError {
    fn from(e: HpackError) -> Self {
        let reason = match e {
            HpackError::Truncated => "header block truncated",
            HpackError::Overflow => "integer overflow in a header block",
            HpackError::Index(_) => "header index out of range",
            HpackError::SizeUpdate => "invalid dynamic table size update",
            HpackError::TooLong(_) => "header field too long",
            HpackError::Huffman(_) => "bad Huffman string",
        };
        Self { code: code::COMPRESSION_ERROR, reason, by_peer: false }
    }
}

fn protocol(reason: &'static str) -> SessionError {
    SessionError { code: code::PROTOCOL_ERROR, reason, by_peer: false }
}

fn flow(reason: &'static str) -> SessionError {
    SessionError { code: code::FLOW_CONTROL_ERROR, reason, by_peer: false }
}

/// What happened to a lane's stream, as `receive` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// The server's first SETTINGS arrived: streams may be opened.
    Ready,
    /// Body bytes of the lane's response.
    Body {
        /// Lane.
        lane: u32,
        /// The bytes.
        bytes: &'a [u8],
    },
    /// The lane's response is complete; the lane is free.
    Response {
        /// Lane.
        lane: u32,
        /// The response.
        response: Response,
    },
    /// The server reset the lane's stream; the lane is free.
    Reset {
        /// Lane.
        lane: u32,
        /// RST_STREAM's error code.
        code: u32,
    },
    /// The lane's response was malformed (no valid `:status`, a body
    /// longer or shorter than its content-length): crest reset the stream,
    /// the connection goes on. The lane is free.
    Malformed {
        /// Lane.
        lane: u32,
        /// What was wrong.
        reason: &'static str,
    },
    /// The server will not process the lane's stream (above a graceful
    /// GOAWAY's last stream id, or REFUSED_STREAM): it may be sent again elsewhere. The lane is free.
    Refused {
        /// Lane.
        lane: u32,
    },
    /// The server sent GOAWAY: no new streams on this connection.
    GoAway {
        /// Its error code (NO_ERROR: a graceful shutdown).
        code: u32,
    },
}

/// One complete response on a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Response {
    /// `:status`.
    pub status: u16,
    /// Header block bytes received (compressed, all HEADERS/CONTINUATION payloads of the response).
    pub head_block_bytes: u64,
    /// The same fields as HTTP/1.1 text would carry them (`name: value\r\n` each).
    pub head_raw_bytes: u64,
    /// DATA payload bytes (padding excluded).
    pub body_bytes: u64,
    /// DATA payload bytes including padding (what flow control counts).
    pub flow_bytes: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Lane {
    /// Stream id; 0 when the lane is free.
    id: u32,
    send_window: i64,
    /// Bytes received since the stream's last WINDOW_UPDATE.
    unacked: u32,
    /// A final (non-1xx) response head arrived.
    headed: bool,
    content_length: Option<u64>,
    response: Response,
    /// Request body bytes still to send (flow control held them back).
    body_left: usize,
    body_sent: usize,
}

/// The state of a header block being received (HEADERS, then CONTINUATION until END_HEADERS).
#[derive(Debug, Clone, Copy)]
struct OpenBlock {
    stream: u32,
    end_stream: bool,
}

/// One HTTP/2 client connection.
#[derive(Debug, Clone)]
pub struct Session {
    settings: SessionSettings,
    frames: FrameDecoder,
    hpack: hpack::Decoder,
    out: Vec<u8>,
    lanes: Vec<Lane>,
    /// Streams open now.
    open: u32,
    /// The highest stream id used.
    last_id: u32,
    peer_ready: bool,
    peer_max_streams: u32,
    peer_initial_window: u32,
    peer_max_frame: u32,
    /// The dynamic table size crest's encoder uses: the default, or less once the server's
    /// SETTINGS_HEADER_TABLE_SIZE lowered it (never raised again on a connection).
    peer_table_bytes: u32,
    /// A smaller table size the next header block must announce first (RFC 7541 §4.2, §6.3).
    table_update: Option<u32>,
    /// That header block with its update in front (used only then; kept for the next time).
    updated_block: Vec<u8>,
    send_window: i64,
    /// Bytes received on the connection since its last WINDOW_UPDATE.
    unacked: u32,
    goaway: bool,
    /// A split header block's fragments.
    block: Vec<u8>,
    open_block: Option<OpenBlock>,
    /// Lanes with body bytes held back by flow control.
    bodies_waiting: u32,
}

impl Session {
    /// A session for a new connection; its preface and SETTINGS are queued at once.
    pub fn new(settings: SessionSettings, max_header_bytes: usize) -> Self {
        let lanes = settings.lanes.max(1);
        let mut session = Self {
            settings,
            frames: FrameDecoder::new(frame::DEFAULT_MAX_FRAME_BYTES),
            hpack: hpack::Decoder::new(hpack::DEFAULT_TABLE_BYTES, settings.max_field_bytes),
            out: Vec::with_capacity(64 * 1024),
            lanes: vec![Lane::default(); lanes as usize],
            open: 0,
            last_id: 0,
            peer_ready: false,
            peer_max_streams: u32::MAX,
            peer_initial_window: frame::DEFAULT_WINDOW,
            peer_max_frame: frame::DEFAULT_MAX_FRAME_BYTES,
            peer_table_bytes: hpack::DEFAULT_TABLE_BYTES as u32,
            table_update: None,
            updated_block: Vec::new(),
            send_window: i64::from(frame::DEFAULT_WINDOW),
            unacked: 0,
            goaway: false,
            block: Vec::with_capacity(max_header_bytes),
            open_block: None,
            bodies_waiting: 0,
        };
        session.start();
        session
    }

    /// Forgets the connection and queues a new preface (the same session, a new connection).
    pub fn reset(&mut self) {
        self.frames.reset();
        self.hpack.reset();
        self.out.clear();
        self.lanes.iter_mut().for_each(|l| *l = Lane::default());
        self.open = 0;
        self.last_id = 0;
        self.peer_ready = false;
        self.peer_max_streams = u32::MAX;
        self.peer_initial_window = frame::DEFAULT_WINDOW;
        self.peer_max_frame = frame::DEFAULT_MAX_FRAME_BYTES;
        self.peer_table_bytes = hpack::DEFAULT_TABLE_BYTES as u32;
        self.table_update = None;
        self.send_window = i64::from(frame::DEFAULT_WINDOW);
        self.unacked = 0;
        self.goaway = false;
        self.block.clear();
        self.open_block = None;
        self.bodies_waiting = 0;
        self.start();
    }

    fn start(&mut self) {
        self.out.extend_from_slice(frame::PREFACE);
        frame::write_settings(
            &mut self.out,
            &[
                (setting::ENABLE_PUSH, 0),
                (setting::MAX_CONCURRENT_STREAMS, 0),
                (setting::INITIAL_WINDOW_SIZE, self.settings.stream_window),
            ],
        );
        if self.settings.connection_window > frame::DEFAULT_WINDOW {
            frame::write_window_update(&mut self.out, 0, self.settings.connection_window - frame::DEFAULT_WINDOW);
        }
    }

    /// Bytes waiting to be written.
    pub fn output(&self) -> &[u8] {
        &self.out
    }

    /// `n` bytes of `output()` were written.
    pub fn consumed(&mut self, n: usize) {
        self.out.drain(..n);
    }

    /// Streams open now.
    pub fn open_streams(&self) -> u32 {
        self.open
    }

    /// Whether the server's SETTINGS arrived.
    pub fn ready(&self) -> bool {
        self.peer_ready
    }

    /// The dynamic table crest's encoder may fill in the server's HPACK decoder: the default,
    /// or the smallest SETTINGS_HEADER_TABLE_SIZE the server has sent on this connection.
    pub fn peer_table_bytes(&self) -> usize {
        self.peer_table_bytes as usize
    }

    /// Whether the server sent GOAWAY (no new streams here).
    pub fn going_away(&self) -> bool {
        self.goaway
    }

    /// Whether `lane` may open a stream now: the server is ready, under its
    /// stream limit, not going away, the lane free and ids left.
    pub fn can_open(&self, lane: u32) -> bool {
        self.peer_ready
            && !self.goaway
            && self.open < self.peer_max_streams
            && self.lanes[lane as usize].id == 0
            && self.next_id(lane).is_some()
    }

    /// Whether the connection's stream ids are used up (it should be replaced).
    pub fn exhausted(&self) -> bool {
        self.next_id(0).is_none()
    }

    fn next_id(&self, lane: u32) -> Option<u32> {
        let n = self.settings.lanes.max(1);
        // The smallest odd id above last_id whose (id >> 1) % n is `lane`.
        let base = (self.last_id >> 1) + 1;
        let k = base + (lane + n - base % n) % n;
        let id = k.checked_mul(2)?.checked_add(1)?;
        (id <= frame::MAX_WINDOW).then_some(id)
    }

    /// Opens a stream on `lane` with a request `block` and `body` (which the
    /// caller passes again to `send_bodies` while flow control holds part of it back).
    /// Returns the stream id.
    pub fn open(&mut self, lane: u32, block: &[u8], body: &[u8]) -> u32 {
        debug_assert!(self.can_open(lane));
        let id = self.next_id(lane).expect("invariant: can_open checked the id space");
        self.last_id = id;
        self.open += 1;
        let l = &mut self.lanes[lane as usize];
        *l = Lane { id, send_window: i64::from(self.peer_initial_window), ..Lane::default() };
        match self.table_update.take() {
            None => frame::write_headers(&mut self.out, id, block, body.is_empty(), self.peer_max_frame as usize),
            Some(size) => {
                // The server lowered its table: this block first says so (a dynamic table size update).
                self.updated_block.clear();
                hpack::encode_int(&mut self.updated_block, 0x20, 5, size as usize);
                self.updated_block.extend_from_slice(block);
                let fin = body.is_empty();
                frame::write_headers(&mut self.out, id, &self.updated_block, fin, self.peer_max_frame as usize);
            }
        }
        if !body.is_empty() {
            self.lanes[lane as usize].body_left = body.len();
            self.bodies_waiting += 1;
            self.send_body(lane, body);
        }
        id
    }

    /// Lanes whose request bodies wait for window: call `send_bodies` after `receive`.
    pub fn bodies_waiting(&self) -> bool {
        self.bodies_waiting > 0
    }

    /// Sends what flow control now allows of each waiting lane's body.
    pub fn send_bodies<'b>(&mut self, body_of: &dyn Fn(u32) -> Option<&'b [u8]>) {
        if self.bodies_waiting == 0 {
            return;
        }
        for lane in 0..self.lanes.len() as u32 {
            if self.lanes[lane as usize].id != 0 && self.lanes[lane as usize].body_left > 0 {
                if let Some(body) = body_of(lane) {
                    self.send_body(lane, body);
                }
            }
        }
    }

    fn send_body(&mut self, lane: u32, body: &[u8]) {
        let l = &mut self.lanes[lane as usize];
        while l.body_left > 0 {
            let allowed = l.send_window.min(self.send_window).min(i64::from(self.peer_max_frame));
            if allowed <= 0 {
                return;
            }
            let n = (allowed as usize).min(l.body_left);
            let chunk = &body[l.body_sent..l.body_sent + n];
            l.body_sent += n;
            l.body_left -= n;
            l.send_window -= n as i64;
            self.send_window -= n as i64;
            frame::write_data(&mut self.out, l.id, chunk, l.body_left == 0);
        }
        self.bodies_waiting -= 1;
    }

    /// Gives up on `lane`'s stream (a timeout): RST_STREAM(CANCEL), lane free.
    pub fn cancel(&mut self, lane: u32) {
        let id = self.lanes[lane as usize].id;
        if id != 0 {
            frame::write_rst_stream(&mut self.out, id, code::CANCEL);
            self.free(lane);
        }
    }

    /// Queues a GOAWAY(NO_ERROR): crest is done with the connection.
    pub fn close(&mut self) {
        frame::write_goaway(&mut self.out, 0, code::NO_ERROR);
        self.goaway = true;
    }

    fn free(&mut self, lane: u32) {
        let l = &mut self.lanes[lane as usize];
        if l.id != 0 {
            if l.body_left > 0 {
                self.bodies_waiting -= 1;
            }
            *l = Lane::default();
            self.open -= 1;
        }
    }

    fn lane_of(&self, stream: u32) -> Option<u32> {
        let lane = (stream >> 1) % self.settings.lanes.max(1);
        (self.lanes[lane as usize].id == stream && stream != 0).then_some(lane)
    }

    /// Takes all the bytes the socket read (a partial frame is kept for the
    /// next call) and reports each event through `on`. On an error a GOAWAY
    /// is queued and the connection must be closed after writing it.
    pub fn receive(&mut self, input: &[u8], on: &mut dyn FnMut(Event<'_>)) -> Result<(), SessionError> {
        // Split borrows: a frame borrows the decoder while handling it needs the rest of the session,
        // so the decoder is taken out for the call (an empty one holds its place; nothing is allocated).
        let mut frames = std::mem::replace(&mut self.frames, FrameDecoder::new(0));
        let result = self.receive_with(&mut frames, input, on);
        self.frames = frames;
        if let Err(e) = result {
            // After the server's own GOAWAY crest has nothing to complain of.
            let code = if e.by_peer { code::NO_ERROR } else { e.code };
            frame::write_goaway(&mut self.out, 0, code);
            self.goaway = true;
        }
        result
    }

    fn receive_with(
        &mut self,
        frames: &mut FrameDecoder,
        mut input: &[u8],
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), SessionError> {
        loop {
            let (used, frame) = frames.decode(input)?;
            match frame {
                Some(frame) => self.handle(frame, on)?,
                None if used == 0 => return Ok(()),
                None => {}
            }
            input = &input[used..];
        }
    }

    fn handle(&mut self, f: Frame<'_>, on: &mut dyn FnMut(Event<'_>)) -> Result<(), SessionError> {
        if let Some(open) = self.open_block {
            if !matches!(f, Frame::Continuation { stream, .. } if stream == open.stream) {
                return Err(protocol("a frame other than CONTINUATION inside a header block"));
            }
        }
        match f {
            Frame::Data { stream, bytes } => {
                if let Some(lane) = self.lane_of(stream) {
                    let l = &mut self.lanes[lane as usize];
                    l.response.body_bytes += bytes.len() as u64;
                    on(Event::Body { lane, bytes });
                }
            }
            Frame::DataEnd { stream, end_stream, flow_bytes } => {
                self.unacked = self.unacked.saturating_add(flow_bytes);
                // crest gives back exactly what it received, so the server may have `window - unacked` in
                // flight; more is a connection error (RFC 9113 §6.9.1). The connection's window never
                // starts below the protocol's 65,535.
                if self.unacked > self.settings.connection_window.max(frame::DEFAULT_WINDOW) {
                    return Err(flow("DATA beyond crest's connection window"));
                }
                if self.unacked >= self.settings.connection_window / 2 {
                    frame::write_window_update(&mut self.out, 0, self.unacked);
                    self.unacked = 0;
                }
                if stream > self.last_id {
                    return Err(protocol("DATA on a stream crest did not open"));
                }
                if let Some(lane) = self.lane_of(stream) {
                    let l = &mut self.lanes[lane as usize];
                    if !l.headed {
                        return Err(protocol("DATA before the response's HEADERS"));
                    }
                    l.response.flow_bytes += u64::from(flow_bytes);
                    if l.unacked.saturating_add(flow_bytes) > self.settings.stream_window {
                        return Err(flow("DATA beyond crest's stream window"));
                    }
                    if end_stream {
                        self.finish(lane, on)?;
                    } else {
                        l.unacked += flow_bytes;
                        if l.unacked >= self.settings.stream_window / 2 {
                            frame::write_window_update(&mut self.out, stream, l.unacked);
                            l.unacked = 0;
                        }
                    }
                }
            }
            Frame::Headers { stream, end_stream, end_headers, block } => {
                if stream > self.last_id || stream % 2 == 0 {
                    return Err(protocol("HEADERS on a stream crest did not open"));
                }
                if let Some(lane) = self.lane_of(stream) {
                    self.lanes[lane as usize].response.head_block_bytes += block.len() as u64;
                }
                if end_headers {
                    self.headers(stream, end_stream, block, on)?;
                } else {
                    self.block.clear();
                    self.push_fragment(block)?;
                    self.open_block = Some(OpenBlock { stream, end_stream });
                }
            }
            Frame::Continuation { stream, end_headers, block } => {
                let Some(open) = self.open_block else {
                    return Err(protocol("CONTINUATION outside a header block"));
                };
                if let Some(lane) = self.lane_of(stream) {
                    self.lanes[lane as usize].response.head_block_bytes += block.len() as u64;
                }
                self.push_fragment(block)?;
                if end_headers {
                    self.open_block = None;
                    let whole = std::mem::take(&mut self.block);
                    let result = self.headers(open.stream, open.end_stream, &whole, on);
                    self.block = whole;
                    self.block.clear();
                    result?;
                }
            }
            Frame::RstStream { stream, code } => {
                if stream > self.last_id {
                    return Err(protocol("RST_STREAM on an idle stream"));
                }
                if let Some(lane) = self.lane_of(stream) {
                    self.free(lane);
                    if code == frame::code::REFUSED_STREAM {
                        on(Event::Refused { lane });
                    } else {
                        on(Event::Reset { lane, code });
                    }
                }
            }
            Frame::Settings { ack, params } => {
                if !ack {
                    self.apply_settings(params)?;
                    frame::write_settings_ack(&mut self.out);
                    if !self.peer_ready {
                        self.peer_ready = true;
                        on(Event::Ready);
                    }
                }
            }
            Frame::Ping { ack, opaque } => {
                if !ack {
                    frame::write_ping(&mut self.out, true, opaque);
                }
            }
            Frame::GoAway { last_stream, code } => {
                self.goaway = true;
                for lane in 0..self.lanes.len() as u32 {
                    let id = self.lanes[lane as usize].id;
                    // With an error code the connection fails with all its streams: none is sent again.
                    if id != 0 && id > last_stream && code == code::NO_ERROR {
                        self.free(lane);
                        on(Event::Refused { lane });
                    }
                }
                on(Event::GoAway { code });
                if code != code::NO_ERROR {
                    return Err(SessionError { code, reason: "GOAWAY", by_peer: true });
                }
            }
            Frame::WindowUpdate { stream, increment } => {
                if stream == 0 {
                    self.send_window += i64::from(increment);
                    if self.send_window > i64::from(frame::MAX_WINDOW) {
                        return Err(SessionError {
                            code: code::FLOW_CONTROL_ERROR,
                            reason: "connection window above 2^31-1",
                            by_peer: false,
                        });
                    }
                } else if let Some(lane) = self.lane_of(stream) {
                    self.lanes[lane as usize].send_window += i64::from(increment);
                }
            }
            Frame::Ignored => {}
        }
        Ok(())
    }

    fn push_fragment(&mut self, block: &[u8]) -> Result<(), SessionError> {
        if self.block.len() + block.len() > self.block.capacity() {
            return Err(SessionError {
                code: code::PROTOCOL_ERROR,
                reason: "response header block larger than the header limit",
                by_peer: false,
            });
        }
        self.block.extend_from_slice(block);
        Ok(())
    }

    /// A complete header block on `stream`.
    fn headers(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), SessionError> {
        let mut status: Option<u16> = None;
        let mut content_length: Option<u64> = None;
        let mut raw = 0u64;
        let mut bad = false;
        self.hpack.decode(block, &mut |name, value| {
            raw += (name.len() + value.len() + 4) as u64;
            match name {
                b":status" => status = parse_u64(value).and_then(|s| u16::try_from(s).ok()),
                b"content-length" => {
                    content_length = parse_u64(value);
                    bad |= content_length.is_none();
                }
                _ => {}
            }
        })?;
        // The block kept the table in step; a stream crest gave up on ends here.
        let Some(lane) = self.lane_of(stream) else { return Ok(()) };
        let l = &mut self.lanes[lane as usize];
        l.response.head_raw_bytes += raw;
        if !l.headed {
            let Some(status) = status.filter(|s| (100..600).contains(s)) else {
                self.stream_error(lane, "response HEADERS without a valid :status", on);
                return Ok(());
            };
            if bad {
                self.stream_error(lane, "invalid content-length", on);
                return Ok(());
            }
            if (100..200).contains(&status) {
                // Informational: the final response follows.
                return Ok(());
            }
            l.headed = true;
            l.response.status = status;
            l.content_length = content_length;
        }
        if end_stream {
            self.finish(lane, on)?;
        }
        Ok(())
    }

    fn finish(&mut self, lane: u32, on: &mut dyn FnMut(Event<'_>)) -> Result<(), SessionError> {
        let l = self.lanes[lane as usize];
        if !l.headed {
            self.stream_error(lane, "stream ended without a response", on);
            return Ok(());
        }
        if l.content_length.is_some_and(|n| n != l.response.body_bytes) {
            self.stream_error(lane, "body length differs from content-length", on);
            return Ok(());
        }
        self.free(lane);
        on(Event::Response { lane, response: l.response });
        Ok(())
    }

    /// A malformed response (RFC 9113 §8.1.1) ends its stream only: RST_STREAM(PROTOCOL_ERROR).
    fn stream_error(&mut self, lane: u32, reason: &'static str, on: &mut dyn FnMut(Event<'_>)) {
        let id = self.lanes[lane as usize].id;
        frame::write_rst_stream(&mut self.out, id, code::PROTOCOL_ERROR);
        self.free(lane);
        on(Event::Malformed { lane, reason });
    }

    fn apply_settings(&mut self, params: &[u8]) -> Result<(), SessionError> {
        for (id, value) in frame::settings(params) {
            match id {
                setting::MAX_CONCURRENT_STREAMS => self.peer_max_streams = value,
                setting::INITIAL_WINDOW_SIZE => {
                    if value > frame::MAX_WINDOW {
                        return Err(SessionError {
                            code: code::FLOW_CONTROL_ERROR,
                            reason: "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1",
                            by_peer: false,
                        });
                    }
                    let delta = i64::from(value) - i64::from(self.peer_initial_window);
                    self.peer_initial_window = value;
                    for l in self.lanes.iter_mut().filter(|l| l.id != 0) {
                        l.send_window += delta;
                    }
                }
                setting::MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME_BYTES..=(1 << 24) - 1).contains(&value) {
                        return Err(protocol("SETTINGS_MAX_FRAME_SIZE out of range"));
                    }
                    self.peer_max_frame = value;
                }
                setting::HEADER_TABLE_SIZE if value < self.peer_table_bytes => {
                    self.peer_table_bytes = value;
                    self.table_update = Some(value);
                }
                setting::ENABLE_PUSH if value > 1 => return Err(protocol("SETTINGS_ENABLE_PUSH not 0 or 1")),
                _ => {}
            }
        }
        Ok(())
    }
}

fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0')))
}
