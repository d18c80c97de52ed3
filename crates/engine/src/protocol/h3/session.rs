//! One HTTP/3 client connection: quinn-proto's QUIC connection (itself a
//! state machine driven by datagrams and `now`) with crest's HTTP/3 on top:
//! the control stream, one request stream per busy lane, the server's
//! unidirectional streams, GOAWAY. The slot hands it the datagrams it reads
//! and the times it wakes, sends the datagrams it yields, and hears back
//! through `Event`s about lanes. It never touches a socket or reads a clock.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{
    ClientConfig, Connection, ConnectionError, ConnectionHandle, DatagramEvent, Dir, Endpoint, EndpointConfig,
    IdleTimeout, ReadError, StreamEvent, StreamId, TransportConfig, VarInt,
};

use super::frame::{self, code};
use super::qpack::Decoder;
use super::stream::{PeerEvent, PeerStream, Response, ResponseStream, StreamError};

/// What a connection is built with.
#[derive(Debug, Clone, Copy)]
pub struct SessionSettings {
    /// Lanes (concurrent requests) per connection.
    pub lanes: u32,
    /// The longest field section taken, and the longest field.
    pub max_field_bytes: usize,
    /// QUIC receive window per stream.
    pub stream_window: u64,
    /// QUIC receive window per connection.
    pub connection_window: u64,
}

/// The size of every datagram crest sends: an Ethernet path's UDP payload
/// (loopback and crest's namespaces carry it); MTU discovery is off.
pub const DATAGRAM_BYTES: usize = 1452;

/// What a worker's sessions hand quinn-proto, which takes datagrams and
/// request bytes as buffers it owns and keeps (a datagram's stream data until
/// read, a request until acknowledged), without an allocation for each.
/// Datagrams are copied into `rx` and split off it; once quinn-proto has
/// dropped every slice, the next datagram that finds it full takes it back
/// from the start. Each request is a `Bytes` made once per worker and shared
/// by every stream that sends it (a clone counts a reference; nothing is
/// copied). One per worker, not per connection, and not shared between
/// workers (whose reference counts would then contend).
pub struct Buffers {
    rx: BytesMut,
    requests: Vec<Option<Bytes>>,
}

impl Buffers {
    /// A worker's, for a plan of `requests` request entries (each made when first sent); `rx` holds
    /// some 45 datagrams before it is taken back.
    pub fn new(requests: usize) -> Self {
        Self { rx: BytesMut::with_capacity(64 << 10), requests: vec![None; requests] }
    }

    /// Entry `index`'s request (`encoded`, its frames) as the worker's shared `Bytes`.
    pub fn request(&mut self, index: usize, encoded: &[u8]) -> Bytes {
        self.requests[index].get_or_insert_with(|| Bytes::copy_from_slice(encoded)).clone()
    }
}

/// Empty, without allocating: what `std::mem::take` leaves while a read lends the worker's out.
impl Default for Buffers {
    fn default() -> Self {
        Self { rx: BytesMut::new(), requests: Vec::new() }
    }
}

/// The most datagrams handed out in one batch (one `sendmsg` with GSO): ten
/// cover a window's worth of a request body at once while the buffer they
/// need stays 14 KiB per connection.
pub const MAX_BATCH: usize = 10;

/// The QUIC client configuration of a run (made once per worker): TLS 1.3
/// with ALPN h3 from `tls`, windows from `settings`, packets of
/// `DATAGRAM_BYTES`.
pub fn client_config(tls: Arc<rustls::ClientConfig>, settings: &SessionSettings) -> Result<ClientConfig, String> {
    let quic = QuicClientConfig::try_from(tls).map_err(|e| format!("TLS cannot carry QUIC: {e}"))?;
    let mut transport = TransportConfig::default();
    let window = |v: u64| VarInt::from_u64(v).map_err(|_| format!("window {v} is too large"));
    transport
        .max_concurrent_bidi_streams(VarInt::from_u32(0))
        .max_concurrent_uni_streams(VarInt::from_u32(16))
        .stream_receive_window(window(settings.stream_window)?)
        .receive_window(window(settings.connection_window)?)
        .send_window(8 << 20)
        .initial_mtu(DATAGRAM_BYTES as u16)
        .mtu_discovery_config(None)
        .max_idle_timeout(Some(IdleTimeout::try_from(Duration::from_secs(30)).expect("30 s fits")));
    let mut config = ClientConfig::new(Arc::new(quic));
    config.transport_config(Arc::new(transport));
    Ok(config)
}

/// What the session reports about lanes and the connection (`lane` is the
/// lane's index, the other fields what it got).
#[allow(missing_docs)]
#[derive(Debug)]
pub enum Event<'a> {
    /// The handshake finished: requests may be sent.
    Connected,
    /// Body bytes of lane's response.
    Body { lane: u32, bytes: &'a [u8] },
    /// Lane's response is complete.
    Response { lane: u32, response: Response },
    /// The server reset lane's stream with this code.
    Reset { lane: u32, code: u64 },
    /// Lane's response broke the protocol; its stream was given up.
    Malformed { lane: u32, reason: StreamError },
    /// The server will not process lane's request (GOAWAY, or H3_REQUEST_REJECTED): send it again.
    Refused { lane: u32 },
    /// The server is going away.
    GoAway,
}

/// Why the connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionEnd {
    /// The peer closed it, or it timed out; `false`: crest or quinn-proto closed it because the
    /// server broke HTTP/3 or QUIC (or crest closed it cleanly).
    pub by_peer: bool,
    /// The TLS handshake failed.
    pub tls: bool,
    /// Closed with H3_NO_ERROR or QUIC's NO_ERROR: a clean end, not a failure in itself.
    pub clean: bool,
    /// What ended it, in words.
    pub why: String,
}

struct Lane {
    stream: Option<StreamId>,
    /// The request being sent, and its bytes written so far (a request is written whole unless flow
    /// control stops it).
    request: Bytes,
    written: usize,
    parser: ResponseStream,
}

struct Link {
    handle: ConnectionHandle,
    conn: Connection,
    endpoint: Endpoint,
}

/// One connection's HTTP/3 state over QUIC.
pub struct Session {
    link: Option<Link>,
    lanes: Vec<Lane>,
    decoder: Decoder,
    control: Option<StreamId>,
    control_bytes: Vec<u8>,
    control_written: usize,
    peers: Vec<(StreamId, PeerStream)>,
    connected: bool,
    going_away: bool,
    end: Option<ConnectionEnd>,
    open: usize,
    /// Datagrams not yet sent: `pending` says their length in `out` and the stride.
    out: Vec<u8>,
    pending: Option<(usize, usize)>,
    /// A request was not written whole (flow control): `send_rest` has work.
    held_back: bool,
    /// The time of the input being handled (a datagram's or a timer's), for a close it causes.
    now: Option<Instant>,
}

impl Session {
    /// A session with no connection yet; its buffers are sized here, once.
    pub fn new(settings: SessionSettings) -> Self {
        let lanes = (0..settings.lanes)
            .map(|_| Lane {
                stream: None,
                request: Bytes::new(),
                written: 0,
                parser: ResponseStream::new(settings.max_field_bytes),
            })
            .collect();
        Self {
            link: None,
            lanes,
            decoder: Decoder::new(settings.max_field_bytes),
            control: None,
            control_bytes: frame::control_stream(settings.max_field_bytes as u64),
            control_written: 0,
            peers: Vec::with_capacity(4),
            connected: false,
            going_away: false,
            end: None,
            open: 0,
            // Room for a whole batch, so quinn-proto never grows it. Only the pages
            // a batch touches become resident: an ACK alone touches one.
            out: Vec::with_capacity(MAX_BATCH * DATAGRAM_BYTES),
            pending: None,
            held_back: false,
            now: None,
        }
    }

    /// Starts a new connection (dropping any old one without a word).
    pub fn connect(
        &mut self,
        now: Instant,
        config: &ClientConfig,
        remote: SocketAddr,
        server_name: &str,
    ) -> Result<(), String> {
        self.reset();
        // An endpoint per connection: a dropped connection leaves nothing behind in it.
        let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
        let (handle, conn) =
            endpoint.connect(now, config.clone(), remote, server_name).map_err(|e| format!("cannot open QUIC: {e}"))?;
        self.link = Some(Link { handle, conn, endpoint });
        Ok(())
    }

    /// Forgets the connection.
    pub fn reset(&mut self) {
        self.link = None;
        for lane in &mut self.lanes {
            lane.stream = None;
            lane.written = 0;
            lane.parser.reset();
        }
        self.control = None;
        self.control_written = 0;
        self.peers.clear();
        self.connected = false;
        self.going_away = false;
        self.end = None;
        self.open = 0;
        self.pending = None;
    }

    /// The connection is up and takes requests.
    pub fn ready(&self) -> bool {
        self.connected && self.end.is_none() && !self.going_away
    }

    /// Why the connection ended, once it has.
    pub fn ended(&self) -> Option<&ConnectionEnd> {
        self.end.as_ref()
    }

    /// The server sent GOAWAY: no new streams on this connection.
    pub fn going_away(&self) -> bool {
        self.going_away
    }

    /// Request streams open.
    pub fn open_streams(&self) -> usize {
        self.open
    }

    /// When `handle_timeout` is next due.
    pub fn timeout(&mut self) -> Option<Instant> {
        self.link.as_mut().and_then(|l| l.conn.poll_timeout())
    }

    /// A datagram from the server (copied into `buffers`).
    pub fn receive(
        &mut self,
        now: Instant,
        from: SocketAddr,
        datagram: &[u8],
        buffers: &mut Buffers,
        on: &mut dyn FnMut(Event<'_>),
    ) {
        let Some(link) = self.link.as_mut() else { return };
        let mut response = Vec::new();
        let data = slice_of(&mut buffers.rx, datagram);
        if let Some(DatagramEvent::ConnectionEvent(handle, event)) =
            link.endpoint.handle(now, from, None, None, data, &mut response)
        {
            if handle == link.handle {
                link.conn.handle_event(event);
            }
        }
        self.now = Some(now);
        self.process(on);
    }

    /// Time passed: QUIC's timers (loss detection, idle, acks) fire.
    pub fn handle_timeout(&mut self, now: Instant, on: &mut dyn FnMut(Event<'_>)) {
        let Some(link) = self.link.as_mut() else { return };
        if link.conn.poll_timeout().is_some_and(|at| at <= now) {
            link.conn.handle_timeout(now);
        }
        self.now = Some(now);
        self.process(on);
    }

    /// The next datagrams to send, up to `max` (at most `MAX_BATCH`) of one
    /// size back to back (the last may be shorter), and that size: what one
    /// `sendmsg` with GSO sends. Call `sent` once they went.
    pub fn next_datagrams(&mut self, now: Instant, max: usize) -> Option<(&[u8], usize)> {
        if self.pending.is_none() {
            let link = self.link.as_mut()?;
            self.out.clear();
            let transmit = link.conn.poll_transmit(now, max.clamp(1, MAX_BATCH), &mut self.out)?;
            self.pending = Some((transmit.size, transmit.segment_size.unwrap_or(transmit.size)));
        }
        self.pending.map(|(n, stride)| (&self.out[..n], stride))
    }

    /// The datagrams `next_datagrams` gave went out.
    pub fn sent(&mut self) {
        self.pending = None;
    }

    /// Whether lane `k` may begin a request now.
    pub fn can_open(&self, k: u32) -> bool {
        self.ready() && self.lanes[k as usize].stream.is_none()
    }

    /// Opens a stream for lane `k` and sends `request` (HEADERS, DATA; from
    /// `Buffers::request`) on it (`head`: a HEAD request); `false` when the
    /// server's stream limit allows no more for now.
    pub fn open(&mut self, k: u32, request: Bytes, head: bool) -> bool {
        let Some(link) = self.link.as_mut() else { return false };
        let Some(id) = link.conn.streams().open(Dir::Bi) else { return false };
        let lane = &mut self.lanes[k as usize];
        lane.stream = Some(id);
        lane.request = request;
        lane.written = 0;
        lane.parser.start(head);
        self.open += 1;
        self.held_back |= !write_request(&mut link.conn, id, lane);
        true
    }

    /// Continues requests that flow control held back.
    pub fn send_rest(&mut self) {
        if !self.held_back {
            return;
        }
        let Some(link) = self.link.as_mut() else { return };
        self.held_back = false;
        for lane in &mut self.lanes {
            if let Some(id) = lane.stream {
                if lane.written < lane.request.len() {
                    self.held_back |= !write_request(&mut link.conn, id, lane);
                }
            }
        }
    }

    /// Gives up lane `k`'s stream (its request timed out).
    pub fn cancel(&mut self, k: u32) {
        let Some(link) = self.link.as_mut() else { return };
        if let Some(id) = self.lanes[k as usize].stream.take() {
            abandon(&mut link.conn, id, code::REQUEST_CANCELLED);
            self.open -= 1;
        }
    }

    /// Closes the connection cleanly (H3_NO_ERROR); the close goes out with the next datagram.
    pub fn close(&mut self, now: Instant) {
        if let Some(link) = self.link.as_mut() {
            link.conn.close(now, VarInt::from_u64(code::NO_ERROR).expect("fits"), bytes::Bytes::new());
        }
    }

    /// Hands out what the connection has to say after any input.
    fn process(&mut self, on: &mut dyn FnMut(Event<'_>)) {
        let Some(link) = self.link.as_mut() else { return };
        while let Some(event) = link.conn.poll_endpoint_events() {
            if let Some(back) = link.endpoint.handle_event(link.handle, event) {
                link.conn.handle_event(back);
            }
        }
        while let Some(event) = self.link.as_mut().and_then(|l| l.conn.poll()) {
            match event {
                quinn_proto::Event::Connected => {
                    self.connected = true;
                    self.open_control();
                    on(Event::Connected);
                }
                quinn_proto::Event::ConnectionLost { reason } => {
                    self.end = Some(end_of(&reason));
                }
                quinn_proto::Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => self.accept_peers(on),
                quinn_proto::Event::Stream(StreamEvent::Readable { id }) => self.read(id, on),
                quinn_proto::Event::Stream(StreamEvent::Writable { id }) => {
                    if Some(id) == self.control {
                        self.write_control();
                    } else {
                        self.held_back = true;
                    }
                }
                _ => {}
            }
            if self.end.is_some() {
                return;
            }
        }
    }

    fn open_control(&mut self) {
        let Some(link) = self.link.as_mut() else { return };
        self.control = link.conn.streams().open(Dir::Uni);
        self.write_control();
    }

    fn write_control(&mut self) {
        let (Some(link), Some(id)) = (self.link.as_mut(), self.control) else { return };
        if let Ok(n) = link.conn.send_stream(id).write(&self.control_bytes[self.control_written..]) {
            self.control_written += n;
        }
    }

    fn accept_peers(&mut self, on: &mut dyn FnMut(Event<'_>)) {
        while let Some(id) = self.link.as_mut().and_then(|l| l.conn.streams().accept(Dir::Uni)) {
            self.peers.push((id, PeerStream::default()));
            self.read(id, on);
        }
    }

    /// Reads what arrived on stream `id`.
    fn read(&mut self, id: StreamId, on: &mut dyn FnMut(Event<'_>)) {
        if let Some(k) = self.lanes.iter().position(|l| l.stream == Some(id)) {
            self.read_lane(k, id, on);
        } else if let Some(p) = self.peers.iter().position(|(s, _)| *s == id) {
            self.read_peer(p, id, on);
        }
    }

    fn read_lane(&mut self, k: usize, id: StreamId, on: &mut dyn FnMut(Event<'_>)) {
        let Some(link) = self.link.as_mut() else { return };
        let lane = &mut self.lanes[k];
        let lane_no = k as u32;
        let mut recv = link.conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else { return };
        let outcome = loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    let fed = lane.parser.feed(&chunk.bytes, &mut self.decoder, &mut |bytes| {
                        on(Event::Body { lane: lane_no, bytes });
                    });
                    if let Err(e) = fed {
                        break Some(Outcome::Malformed(e));
                    }
                }
                Ok(None) => break Some(lane.parser.finish().map_or_else(Outcome::Malformed, Outcome::Done)),
                Err(ReadError::Blocked) => break None,
                Err(ReadError::Reset(code)) => break Some(Outcome::Reset(code.into_inner())),
            }
        };
        let _ = chunks.finalize();
        let Some(outcome) = outcome else { return };
        lane.stream = None;
        self.open -= 1;
        match outcome {
            Outcome::Done(response) => on(Event::Response { lane: lane_no, response }),
            Outcome::Malformed(reason) => {
                abandon(&mut link.conn, id, reason.code);
                on(Event::Malformed { lane: lane_no, reason });
            }
            Outcome::Reset(code::REQUEST_REJECTED) => {
                abandon(&mut link.conn, id, code::REQUEST_CANCELLED);
                on(Event::Refused { lane: lane_no });
            }
            Outcome::Reset(code) => {
                abandon(&mut link.conn, id, code::REQUEST_CANCELLED);
                on(Event::Reset { lane: lane_no, code });
            }
        }
    }

    fn read_peer(&mut self, p: usize, id: StreamId, on: &mut dyn FnMut(Event<'_>)) {
        let Some(link) = self.link.as_mut() else { return };
        let peer = &mut self.peers[p].1;
        let mut recv = link.conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else { return };
        let mut goaway = None;
        let mut failure = None;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    let fed = peer.feed(&chunk.bytes, &mut |event| {
                        if let PeerEvent::GoAway(last) = event {
                            goaway = Some(last);
                        }
                    });
                    if let Err(e) = fed {
                        failure = Some(e);
                        break;
                    }
                }
                Ok(None) | Err(ReadError::Reset(_)) => {
                    if peer.is_control() {
                        failure = Some(StreamError {
                            code: code::CLOSED_CRITICAL_STREAM,
                            why: "the server closed its control stream",
                        });
                    }
                    break;
                }
                Err(ReadError::Blocked) => break,
            }
        }
        let _ = chunks.finalize();
        if let Some(e) = failure {
            self.fail(e);
            return;
        }
        if let Some(last) = goaway {
            self.go_away(last, on);
        }
    }

    /// GOAWAY: streams from `last` up will not be processed; they are sent again elsewhere.
    fn go_away(&mut self, last: u64, on: &mut dyn FnMut(Event<'_>)) {
        let first = !self.going_away;
        self.going_away = true;
        if first {
            on(Event::GoAway);
        }
        let Some(link) = self.link.as_mut() else { return };
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            if let Some(id) = lane.stream.filter(|id| u64::from(*id) >= last) {
                abandon(&mut link.conn, id, code::REQUEST_CANCELLED);
                lane.stream = None;
                self.open -= 1;
                on(Event::Refused { lane: k as u32 });
            }
        }
    }

    /// A connection error of crest's finding: close with its code.
    fn fail(&mut self, e: StreamError) {
        if let Some(link) = self.link.as_mut() {
            let reason = bytes::Bytes::from_static(e.why.as_bytes());
            let now = self.now.expect("invariant: set by the input being handled");
            link.conn.close(now, VarInt::from_u64(e.code).expect("fits"), reason);
        }
        self.end = Some(ConnectionEnd { by_peer: false, tls: false, clean: false, why: e.to_string() });
    }
}

/// `bytes` copied into `ring` and split off as a buffer of their own. The
/// ring's allocation is taken back once no earlier slice of it is alive;
/// only while one still is, when it is full, does it allocate.
fn slice_of(ring: &mut BytesMut, bytes: &[u8]) -> BytesMut {
    ring.reserve(bytes.len());
    ring.extend_from_slice(bytes);
    ring.split()
}

/// Writes what is left of lane's request on its stream, finishing it once
/// whole; `false` when flow control held part of it back.
fn write_request(conn: &mut Connection, id: StreamId, lane: &mut Lane) -> bool {
    let mut send = conn.send_stream(id);
    // A slice of the shared request: a reference counted, not a copy.
    let mut rest = [lane.request.slice(lane.written..)];
    if let Ok(written) = send.write_chunks(&mut rest) {
        lane.written += written.bytes;
        if lane.written == lane.request.len() {
            let _ = send.finish();
            return true;
        }
    }
    false
}

/// How a request stream ended.
enum Outcome {
    Done(Response),
    Malformed(StreamError),
    Reset(u64),
}

/// Gives up a request stream both ways.
fn abandon(conn: &mut Connection, id: StreamId, code: u64) {
    let code = VarInt::from_u64(code).expect("HTTP/3 codes fit");
    let _ = conn.recv_stream(id).stop(code);
    let _ = conn.send_stream(id).reset(code);
}

fn end_of(reason: &ConnectionError) -> ConnectionEnd {
    let (by_peer, tls, clean) = match reason {
        ConnectionError::ApplicationClosed(close) => (true, false, close.error_code.into_inner() == code::NO_ERROR),
        ConnectionError::ConnectionClosed(close) => {
            let code = u64::from(close.error_code);
            // QUIC's CRYPTO_ERROR range (0x100–0x1ff) carries TLS alerts.
            (true, (0x100..0x200).contains(&code), code == 0)
        }
        ConnectionError::TransportError(e) => (false, (0x100..0x200).contains(&u64::from(e.code)), false),
        ConnectionError::LocallyClosed => (false, false, true),
        _ => (true, false, false),
    };
    ConnectionEnd { by_peer, tls, clean, why: reason.to_string() }
}
