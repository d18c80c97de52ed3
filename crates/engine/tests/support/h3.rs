//! The server side of HTTP/3 for engine tests: quinn-proto's QUIC server on
//! a blocking UDP socket in a thread of its own, with a few lines of HTTP/3
//! (a control stream with SETTINGS, requests read to their end, responses
//! written with the engine's frame and QPACK encoders) and a scripted
//! misbehaviour. It counts what it did for the test to assert on.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use quinn_proto::crypto::rustls::QuicServerConfig;
use quinn_proto::{
    ConnectionHandle, DatagramEvent, Dir, Endpoint, EndpointConfig, Event, ServerConfig, StreamEvent, StreamId, VarInt,
};

use crest_engine::protocol::h3::frame::{self, code, kind};
use crest_engine::protocol::h3::qpack;

/// How the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// 200 with the body.
    Answer,
    /// RST_STREAM's QUIC twin, RESET_STREAM with H3_INTERNAL_ERROR, instead of a response.
    Reset,
    /// A DATA frame before any HEADERS: a malformed response.
    DataFirst,
    /// Answers this many requests per connection, then sends GOAWAY and
    /// rejects the rest (H3_REQUEST_REJECTED).
    GoAwayAfter(u32),
    /// Opens its control stream with GOAWAY instead of SETTINGS, and answers nothing.
    NoSettings,
    /// Answers with a HEADERS frame whose bytes come one every `every`, never all of them.
    TrickleHead { every: Duration },
    /// Answers with a whole head saying 1 MiB, then a DATA frame of one byte every `every`.
    TrickleBody { every: Duration },
}

/// What the server did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Log {
    pub connections: u32,
    pub requests: u32,
    /// Bytes of request streams read (HEADERS and DATA frames).
    pub request_bytes: u64,
    pub answered: u32,
    pub resets: u32,
    pub goaways: u32,
    pub rejected: u32,
}

pub struct H3Server {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Log>>,
}

impl H3Server {
    pub fn start(script: Script, body: Vec<u8>) -> Self {
        Self::start_with(script, body, || {})
    }

    /// As `start`, with `on_thread` run first on the server's own thread (the
    /// allocation test marks it there, so what the server allocates is not
    /// counted as the client's).
    pub fn start_with(script: Script, body: Vec<u8>, on_thread: fn()) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_read_timeout(Some(Duration::from_millis(2))).unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            on_thread();
            serve(socket, script, body, flag)
        });
        Self { addr, stop, thread: Some(thread) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// Stops the server and returns what it did.
    pub fn stop(mut self) -> Log {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A UDP port where no QUIC server answers: a socket that reads every
/// datagram and answers each with `reply` (bytes no QUIC endpoint could
/// take), or with nothing. Unlike a closed port, it draws no ICMP answer.
pub struct UdpPeer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl UdpPeer {
    pub fn start(reply: Option<&'static [u8]>) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 65_536];
            while !flag.load(Ordering::Relaxed) {
                if let (Ok((_, from)), Some(reply)) = (socket.recv_from(&mut buf), reply) {
                    let _ = socket.send_to(reply, from);
                }
            }
        });
        Self { addr, stop, thread: Some(thread) }
    }

    pub fn url(&self) -> String {
        format!("https://{}/", self.addr)
    }
}

impl Drop for UdpPeer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn server_config() -> ServerConfig {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = certified.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::from(certified.signing_key);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    tls.max_early_data_size = 0;
    ServerConfig::with_crypto(Arc::new(QuicServerConfig::try_from(tls).unwrap()))
}

/// One connection's HTTP/3 state.
struct Peer {
    conn: quinn_proto::Connection,
    control: Option<StreamId>,
    /// Bytes still to write per stream, and whether to finish it after.
    pending: HashMap<StreamId, Vec<u8>>,
    answered: u32,
    /// GOAWAY sent: streams from this id on are rejected.
    goaway_from: Option<u64>,
    /// Streams being trickled: what each sends, and how much of it went.
    trickles: Vec<Trickle>,
}

/// A response sent a piece every time the script says: the next `unit` bytes of
/// `bytes` (a whole number of units long), from `at`, over and over.
struct Trickle {
    id: StreamId,
    bytes: Vec<u8>,
    unit: usize,
    at: usize,
}

fn serve(socket: UdpSocket, script: Script, body: Vec<u8>, stop: Arc<AtomicBool>) -> Log {
    let mut log = Log::default();
    let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), Some(Arc::new(server_config())), false, None);
    let mut peers: HashMap<ConnectionHandle, Peer> = HashMap::new();
    let mut buf = vec![0u8; 65_536];
    let mut out = Vec::with_capacity(65_536);
    let mut section = vec![0, 0];
    qpack::encode_field(&mut section, b":status", b"200");
    qpack::encode_field(&mut section, b"content-length", body.len().to_string().as_bytes());
    let response = frame::request(&section, &body); // HEADERS then DATA: the same two frames
    let mut next_drip = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = socket.recv_from(&mut buf) {
            let now = Instant::now();
            match endpoint.handle(now, from, None, None, BytesMut::from(&buf[..n]), &mut out) {
                Some(DatagramEvent::NewConnection(incoming)) => {
                    out.clear();
                    if let Ok((handle, conn)) = endpoint.accept(incoming, now, &mut out, None) {
                        log.connections += 1;
                        let peer = Peer {
                            conn,
                            control: None,
                            pending: HashMap::new(),
                            answered: 0,
                            goaway_from: None,
                            trickles: Vec::new(),
                        };
                        peers.insert(handle, peer);
                    }
                }
                Some(DatagramEvent::ConnectionEvent(handle, event)) => {
                    if let Some(p) = peers.get_mut(&handle) {
                        p.conn.handle_event(event);
                    }
                }
                Some(DatagramEvent::Response(t)) => {
                    let _ = socket.send_to(&out[..t.size], t.destination);
                }
                None => {}
            }
            out.clear();
        }
        let now = Instant::now();
        let drip = now >= next_drip;
        if let (true, Script::TrickleHead { every } | Script::TrickleBody { every }) = (drip, script) {
            next_drip = now + every;
        }
        for (&handle, p) in peers.iter_mut() {
            if p.conn.poll_timeout().is_some_and(|at| at <= now) {
                p.conn.handle_timeout(now);
            }
            while let Some(event) = p.conn.poll_endpoint_events() {
                if let Some(back) = endpoint.handle_event(handle, event) {
                    p.conn.handle_event(back);
                }
            }
            while let Some(event) = p.conn.poll() {
                match event {
                    Event::Connected => {
                        let id = p.conn.streams().open(Dir::Uni).unwrap();
                        p.control = Some(id);
                        let control = if script == Script::NoSettings {
                            let mut bytes = vec![0x00];
                            frame::encode_header(&mut bytes, kind::GOAWAY, 1);
                            bytes.push(0);
                            bytes
                        } else {
                            frame::control_stream(65_536)
                        };
                        p.pending.insert(id, control);
                    }
                    Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) => {
                        while let Some(id) = p.conn.streams().accept(Dir::Bi) {
                            read_request(p, id, script, &response, &mut log);
                        }
                    }
                    Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                        while let Some(id) = p.conn.streams().accept(Dir::Uni) {
                            drain(p, id);
                        }
                    }
                    Event::Stream(StreamEvent::Readable { id }) => {
                        if id.dir() == Dir::Bi {
                            read_request(p, id, script, &response, &mut log);
                        } else {
                            drain(p, id);
                        }
                    }
                    _ => {}
                }
            }
            if drip {
                trickle(p);
            }
            write_pending(p);
            out.clear();
            while let Some(t) = p.conn.poll_transmit(now, 1, &mut out) {
                let _ = socket.send_to(&out[..t.size], t.destination);
                out.clear();
            }
        }
        peers.retain(|_, p| !p.conn.is_drained());
    }
    log
}

/// Reads what a client-opened unidirectional stream carries and drops it.
fn drain(p: &mut Peer, id: StreamId) {
    let mut recv = p.conn.recv_stream(id);
    let Ok(mut chunks) = recv.read(true) else { return };
    while let Ok(Some(_)) = chunks.next(usize::MAX) {}
    let _ = chunks.finalize();
}

/// Reads request stream `id`; once its end arrived, answers as scripted.
fn read_request(p: &mut Peer, id: StreamId, script: Script, response: &[u8], log: &mut Log) {
    let mut recv = p.conn.recv_stream(id);
    let Ok(mut chunks) = recv.read(true) else { return };
    let mut ended = false;
    loop {
        match chunks.next(usize::MAX) {
            Ok(Some(chunk)) => log.request_bytes += chunk.bytes.len() as u64,
            Ok(None) => {
                ended = true;
                break;
            }
            Err(_) => break,
        }
    }
    let _ = chunks.finalize();
    if !ended {
        return;
    }
    log.requests += 1;
    let h3 = |c: u64| VarInt::from_u64(c).unwrap();
    if p.goaway_from.is_some_and(|from| u64::from(id) >= from) {
        log.rejected += 1;
        let _ = p.conn.send_stream(id).reset(h3(code::REQUEST_REJECTED));
        return;
    }
    match script {
        Script::Answer => {
            log.answered += 1;
            p.pending.insert(id, response.to_vec());
        }
        Script::Reset => {
            log.resets += 1;
            let _ = p.conn.send_stream(id).reset(h3(code::INTERNAL_ERROR));
        }
        Script::NoSettings => {}
        Script::TrickleHead { .. } => {
            // A field section far longer than the run lets through, its frame written a byte at a time.
            let mut section = vec![0, 0];
            qpack::encode_field(&mut section, b":status", b"200");
            qpack::encode_field(&mut section, b"x-trickle", &[b'z'; 4000]);
            let mut bytes = Vec::new();
            frame::encode_header(&mut bytes, kind::HEADERS, section.len());
            bytes.extend_from_slice(&section);
            p.trickles.push(Trickle { id, bytes, unit: 1, at: 0 });
        }
        Script::TrickleBody { .. } => {
            let mut section = vec![0, 0];
            qpack::encode_field(&mut section, b":status", b"200");
            qpack::encode_field(&mut section, b"content-length", (1u32 << 20).to_string().as_bytes());
            p.pending.insert(id, frame::request(&section, &[]));
            let mut bytes = Vec::new();
            frame::encode_header(&mut bytes, kind::DATA, 1);
            bytes.push(b'z');
            let unit = bytes.len();
            p.trickles.push(Trickle { id, bytes, unit, at: 0 });
        }
        Script::DataFirst => {
            let mut bytes = Vec::new();
            frame::encode_header(&mut bytes, kind::DATA, 2);
            bytes.extend_from_slice(b"no");
            p.pending.insert(id, bytes);
        }
        Script::GoAwayAfter(n) => {
            log.answered += 1;
            p.answered += 1;
            p.pending.insert(id, response.to_vec());
            if p.answered == n {
                // Streams after this one are not processed.
                let from = u64::from(id) + 4;
                p.goaway_from = Some(from);
                log.goaways += 1;
                let mut goaway = Vec::new();
                let mut payload = Vec::new();
                crest_engine::protocol::h3::varint::encode(&mut payload, from);
                frame::encode_header(&mut goaway, kind::GOAWAY, payload.len());
                goaway.extend_from_slice(&payload);
                let control = p.control.unwrap();
                p.pending.entry(control).or_default().extend_from_slice(&goaway);
            }
        }
    }
}

/// Writes each trickled stream's next piece; a stream the client stopped or
/// reset (its request timed out) is trickled no more.
fn trickle(p: &mut Peer) {
    let Peer { conn, pending, trickles, .. } = p;
    trickles.retain_mut(|t| {
        if pending.contains_key(&t.id) {
            return true; // its head is still being written
        }
        // The rest of the current piece (all of it, unless flow control cut the last write short).
        let piece = &t.bytes[t.at..t.at + t.unit - t.at % t.unit];
        match conn.send_stream(t.id).write(piece) {
            Ok(n) => {
                t.at = (t.at + n) % t.bytes.len();
                true
            }
            Err(quinn_proto::WriteError::Blocked) => true,
            Err(_) => false,
        }
    });
}

/// Writes what flow control lets through; request streams are finished once
/// written whole, unless they are being trickled.
fn write_pending(p: &mut Peer) {
    let control = p.control;
    let trickled: Vec<StreamId> = p.trickles.iter().map(|t| t.id).collect();
    p.pending.retain(|&id, bytes| {
        let mut send = p.conn.send_stream(id);
        match send.write(bytes) {
            Ok(n) => {
                bytes.drain(..n);
            }
            // Flow control: the rest goes when the client grants more.
            Err(quinn_proto::WriteError::Blocked) => return true,
            Err(_) => return false,
        }
        if !bytes.is_empty() {
            return true;
        }
        if Some(id) != control && !trickled.contains(&id) {
            let _ = send.finish();
        }
        false
    });
}
