//! The server side of HTTP/2 for engine tests, on the raw TCP fixture: reads
//! the client's preface and whole frames with its own few lines of framing
//! (so a test does not lean on the decoder it checks), answers SETTINGS and
//! keeps the client's flow-control windows, and writes frames with the
//! engine's `frame::write_*`. Each connection's frames are logged for the
//! test to assert on once the fixture has stopped.
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crest_engine::protocol::h2::frame::{self, flag, kind, setting};

use super::Conn;

/// One frame as the client sent it.
#[derive(Debug, Clone)]
pub struct RawFrame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl RawFrame {
    /// The big-endian u32 at `at` of the payload (31 bits where the RFC reserves the top one).
    pub fn u32_at(&self, at: usize) -> u32 {
        u32::from_be_bytes(self.payload[at..at + 4].try_into().unwrap())
    }

    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// What the server saw on one connection.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// The fixture's connection index.
    pub index: usize,
    /// The client began with the HTTP/2 preface.
    pub preface: bool,
    /// Every frame the client sent, in order.
    pub frames: Vec<RawFrame>,
}

impl Seen {
    pub fn of_kind(&self, k: u8) -> impl Iterator<Item = &RawFrame> {
        self.frames.iter().filter(move |f| f.kind == k)
    }

    /// Stream ids of the client's HEADERS, in order.
    pub fn streams(&self) -> Vec<u32> {
        self.of_kind(kind::HEADERS).map(|f| f.stream).collect()
    }

    /// (last stream, error code) of each GOAWAY the client sent.
    pub fn goaways(&self) -> Vec<(u32, u32)> {
        self.of_kind(kind::GOAWAY).map(|f| (f.u32_at(0) & frame::MAX_WINDOW, f.u32_at(4))).collect()
    }

    /// The request header block of `stream`: its HEADERS and CONTINUATION payloads joined.
    pub fn block(&self, stream: u32) -> Vec<u8> {
        self.frames
            .iter()
            .filter(|f| f.stream == stream && (f.kind == kind::HEADERS || f.kind == kind::CONTINUATION))
            .flat_map(|f| f.payload.iter().copied())
            .collect()
    }

    /// The client's (non-ACK) SETTINGS entries.
    pub fn settings(&self) -> Vec<(u16, u32)> {
        self.of_kind(kind::SETTINGS).filter(|f| !f.has(flag::ACK)).flat_map(|f| frame::settings(&f.payload)).collect()
    }
}

/// Every connection's `Seen`, pushed when its `H2Conn` drops.
pub type Log = Arc<Mutex<Vec<Seen>>>;

pub fn new_log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

/// `:status 200` (static index 8) and `content-length: <len>` as a literal
/// without indexing on static name 28: the response head of every answer.
pub fn ok_block(body_bytes: usize) -> Vec<u8> {
    let digits = body_bytes.to_string();
    let mut block = vec![0x88, 0x0f, 0x0d, digits.len() as u8];
    block.extend_from_slice(digits.as_bytes());
    block
}

/// One server connection speaking HTTP/2.
pub struct H2Conn {
    pub conn: Conn,
    inbuf: Vec<u8>,
    pub seen: Seen,
    log: Log,
    /// Requests complete (END_STREAM seen) and not yet taken.
    ready: VecDeque<u32>,
    /// What the client lets the server send: on the connection, per stream, and its SETTINGS_INITIAL_WINDOW_SIZE.
    conn_window: i64,
    stream_windows: HashMap<u32, i64>,
    initial_window: i64,
    /// Give the client back what its DATA used, at once (a server that reads bodies).
    pub update_windows: bool,
    /// A request header block continued in CONTINUATION frames: its stream, and whether it ends the stream.
    open_block: Option<(u32, bool)>,
    out: Vec<u8>,
}

impl H2Conn {
    /// Reads the client's preface (None if the client or the fixture went away first).
    pub fn accept(conn: Conn, log: &Log) -> Option<Self> {
        conn.stream.set_read_timeout(Some(Duration::from_millis(50))).ok()?;
        // Frames go out in several small writes: no Nagle wait for the client's delayed ACK.
        conn.stream.set_nodelay(true).ok()?;
        let mut c = Self {
            seen: Seen { index: conn.index, ..Seen::default() },
            conn,
            inbuf: Vec::new(),
            log: log.clone(),
            ready: VecDeque::new(),
            conn_window: i64::from(frame::DEFAULT_WINDOW),
            stream_windows: HashMap::new(),
            initial_window: i64::from(frame::DEFAULT_WINDOW),
            update_windows: false,
            open_block: None,
            out: Vec::new(),
        };
        if !c.fill(frame::PREFACE.len()) {
            return None;
        }
        let preface: Vec<u8> = c.inbuf.drain(..frame::PREFACE.len()).collect();
        c.seen.preface = preface == frame::PREFACE;
        Some(c)
    }

    /// `accept`, then the server's SETTINGS.
    pub fn accept_with(conn: Conn, log: &Log, settings: &[(u16, u32)]) -> Option<Self> {
        let mut c = Self::accept(conn, log)?;
        c.write(|out| frame::write_settings(out, settings)).then_some(c)
    }

    /// Until `inbuf` holds `n` bytes; false on EOF, a socket error, or the fixture stopping.
    fn fill(&mut self, n: usize) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        while self.inbuf.len() < n {
            match self.conn.stream.read(&mut chunk) {
                Ok(0) => return false,
                Ok(k) => self.inbuf.extend_from_slice(&chunk[..k]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    if self.conn.stop.load(Ordering::Relaxed) {
                        return false;
                    }
                }
                Err(_) => return false,
            }
        }
        true
    }

    /// Writes the frames `f` appends; false when the client has gone.
    pub fn write(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> bool {
        self.out.clear();
        f(&mut self.out);
        let out = std::mem::take(&mut self.out);
        let ok = self.conn.send(&out);
        self.out = out;
        ok
    }

    /// Reads the next frame and keeps the protocol's books: SETTINGS are
    /// applied and acknowledged, windows tracked, finished requests queued.
    pub fn read_frame(&mut self) -> Option<RawFrame> {
        if !self.fill(frame::HEAD_BYTES) {
            return None;
        }
        let h = &self.inbuf;
        let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
        if !self.fill(frame::HEAD_BYTES + len) {
            return None;
        }
        let h = &self.inbuf;
        let f = RawFrame {
            kind: h[3],
            flags: h[4],
            stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & frame::MAX_WINDOW,
            payload: h[frame::HEAD_BYTES..frame::HEAD_BYTES + len].to_vec(),
        };
        self.inbuf.drain(..frame::HEAD_BYTES + len);
        self.seen.frames.push(f.clone());
        match f.kind {
            kind::SETTINGS if !f.has(flag::ACK) => {
                for (id, value) in frame::settings(&f.payload) {
                    if id == setting::INITIAL_WINDOW_SIZE {
                        let delta = i64::from(value) - self.initial_window;
                        self.initial_window = i64::from(value);
                        self.stream_windows.values_mut().for_each(|w| *w += delta);
                    }
                }
                self.write(frame::write_settings_ack);
            }
            kind::WINDOW_UPDATE => {
                let increment = i64::from(f.u32_at(0) & frame::MAX_WINDOW);
                if f.stream == 0 {
                    self.conn_window += increment;
                } else if let Some(w) = self.stream_windows.get_mut(&f.stream) {
                    *w += increment;
                }
            }
            kind::HEADERS => {
                self.stream_windows.insert(f.stream, self.initial_window);
                if !f.has(flag::END_HEADERS) {
                    self.open_block = Some((f.stream, f.has(flag::END_STREAM)));
                } else if f.has(flag::END_STREAM) {
                    self.ready.push_back(f.stream);
                }
            }
            kind::CONTINUATION if f.has(flag::END_HEADERS) => {
                if let Some((stream, true)) = self.open_block.take() {
                    self.ready.push_back(stream);
                }
            }
            kind::DATA => {
                let used = f.payload.len() as u32;
                if self.update_windows && used > 0 {
                    self.write(|out| {
                        frame::write_window_update(out, f.stream, used);
                        frame::write_window_update(out, 0, used);
                    });
                }
                if f.has(flag::END_STREAM) {
                    self.ready.push_back(f.stream);
                }
            }
            kind::RST_STREAM => {
                self.ready.retain(|&s| s != f.stream);
                self.stream_windows.remove(&f.stream);
            }
            _ => {}
        }
        Some(f)
    }

    /// Handles the frames already read whole, without waiting for more;
    /// returns how many complete requests are then waiting.
    pub fn read_buffered(&mut self) -> usize {
        while self.inbuf.len() >= frame::HEAD_BYTES {
            let len = u32::from_be_bytes([0, self.inbuf[0], self.inbuf[1], self.inbuf[2]]) as usize;
            if self.inbuf.len() < frame::HEAD_BYTES + len || self.read_frame().is_none() {
                break;
            }
        }
        self.ready.len()
    }

    /// Reads what the client sent within the socket's read timeout (50 ms),
    /// without waiting for a whole frame, and handles the frames read whole;
    /// false when the client has gone or the fixture stops. A server that
    /// also sends on its own schedule (a trickle) reads with this.
    pub fn poll(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        match self.conn.stream.read(&mut chunk) {
            Ok(0) => return false,
            Ok(k) => self.inbuf.extend_from_slice(&chunk[..k]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return false,
        }
        self.read_buffered();
        !self.conn.stop.load(Ordering::Relaxed)
    }

    /// The stream id of a complete request already read, if any (`poll` reads them).
    pub fn take_request(&mut self) -> Option<u32> {
        self.ready.pop_front()
    }

    /// Whether `stream` was opened by the client and not reset since.
    pub fn is_open(&self, stream: u32) -> bool {
        self.stream_windows.contains_key(&stream)
    }

    /// The stream id of the next complete request.
    pub fn next_request(&mut self) -> Option<u32> {
        loop {
            if let Some(id) = self.ready.pop_front() {
                return Some(id);
            }
            self.read_frame()?;
        }
    }

    /// Answers `stream` with 200 and `body_bytes` of body, in DATA frames the
    /// client's windows allow (reading its WINDOW_UPDATEs while they are shut);
    /// false when the client has gone, true too if it reset the stream meanwhile.
    pub fn respond(&mut self, stream: u32, body_bytes: usize) -> bool {
        let block = ok_block(body_bytes);
        if !self.write(|out| frame::write_headers(out, stream, &block, body_bytes == 0, 16_384)) {
            return false;
        }
        let mut left = body_bytes;
        while left > 0 {
            // A stream the client reset is not answered further.
            let Some(&stream_window) = self.stream_windows.get(&stream) else { return true };
            let allowed = stream_window.min(self.conn_window).min(i64::from(frame::DEFAULT_MAX_FRAME_BYTES));
            if allowed <= 0 {
                // Shut: wait for the client's WINDOW_UPDATE (or its RST_STREAM).
                if self.read_frame().is_none() {
                    return false;
                }
                continue;
            }
            let n = (allowed as usize).min(left);
            left -= n;
            *self.stream_windows.get_mut(&stream).unwrap() -= n as i64;
            self.conn_window -= n as i64;
            let chunk = vec![b'x'; n];
            if !self.write(|out| frame::write_data(out, stream, &chunk, left == 0)) {
                return false;
            }
        }
        true
    }

    /// Answers every request with `body_bytes` until the client closes, a write fails or the fixture stops.
    pub fn respond_to_all(&mut self, body_bytes: usize) {
        while let Some(id) = self.next_request() {
            if !self.respond(id, body_bytes) {
                return;
            }
        }
    }

    /// Reads (and logs) whatever the client still sends until it closes or the fixture stops.
    pub fn drain(&mut self) {
        while self.read_frame().is_some() {}
    }
}

impl Drop for H2Conn {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(std::mem::take(&mut self.seen));
    }
}

/// A well-behaved handler: SETTINGS, then every request answered with `body_bytes`.
pub fn serve(log: &Log, body_bytes: usize) -> impl Fn(Conn) + Send + Sync + 'static {
    let log = log.clone();
    move |conn: Conn| {
        if let Some(mut h) = H2Conn::accept_with(conn, &log, &[]) {
            h.respond_to_all(body_bytes);
        }
    }
}
