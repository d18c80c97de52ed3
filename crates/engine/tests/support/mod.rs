//! A raw TCP fixture for engine tests: a loopback listener on an ephemeral
//! port that hands each accepted connection to a scripted handler on its own
//! thread. Handlers see exact bytes, so tests can assert what crest sends and
//! play any (mis)behaviour back. Everything stops when the fixture drops.
#![allow(dead_code)]

pub mod h2;
pub mod h3;
pub mod smb;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crest_engine::{RunConfig, RunReport};

/// Handler context: which connection this is, and the fixture's stop flag.
pub struct Conn {
    pub stream: TcpStream,
    pub index: usize,
    pub stop: Arc<AtomicBool>,
    pub log: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Conn {
    /// Reads one request head (through the blank line) plus `Content-Length`
    /// body; None when the client closed or the fixture stops.
    pub fn read_request(&mut self) -> Option<Vec<u8>> {
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        self.stream.set_read_timeout(Some(Duration::from_millis(50))).ok()?;
        while !buf.ends_with(b"\r\n\r\n") {
            match self.stream.read(&mut byte) {
                Ok(0) => return None,
                Ok(_) => buf.push(byte[0]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    if self.stop.load(Ordering::Relaxed) {
                        return None;
                    }
                }
                Err(_) => return None,
            }
        }
        let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
        if let Some(len) = head.lines().find_map(|l| l.strip_prefix("content-length:")) {
            let mut body = vec![0u8; len.trim().parse().ok()?];
            self.stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            self.stream.read_exact(&mut body).ok()?;
            buf.extend_from_slice(&body);
        }
        self.log.lock().unwrap().push(buf.clone());
        Some(buf)
    }

    /// Reads exactly `n` bytes; None when the client closed or the fixture stops.
    pub fn read_exact(&mut self, n: usize) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; n];
        let mut have = 0;
        self.stream.set_read_timeout(Some(Duration::from_millis(50))).ok()?;
        while have < n {
            match self.stream.read(&mut buf[have..]) {
                Ok(0) => return None,
                Ok(k) => have += k,
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    if self.stop.load(Ordering::Relaxed) {
                        return None;
                    }
                }
                Err(_) => return None,
            }
        }
        Some(buf)
    }

    /// Writes all of `bytes`; false when the client has gone.
    pub fn send(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok()
    }

    /// Sends `bytes` one at a time, one every `TRICKLE_EVERY`, until they end,
    /// the client goes, the fixture stops or `HANG_LIMIT` passes: a peer that
    /// keeps sending, so a timer restarted by every read would never fire.
    pub fn trickle(&mut self, bytes: impl IntoIterator<Item = u8>) {
        let _ = self.stream.set_nodelay(true);
        let started = Instant::now();
        for byte in bytes {
            if self.stop.load(Ordering::Relaxed) || started.elapsed() > HANG_LIMIT || !self.send(&[byte]) {
                return;
            }
            thread::sleep(TRICKLE_EVERY);
        }
    }

    /// Holds the connection open, sending nothing, until the client closes
    /// or the fixture stops.
    pub fn stall(&mut self) {
        let mut sink = [0u8; 4096];
        let _ = self.stream.set_read_timeout(Some(Duration::from_millis(50)));
        while !self.stop.load(Ordering::Relaxed) {
            match self.stream.read(&mut sink) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return,
            }
        }
    }
}

/// A scripted loopback server.
pub struct Fixture {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    pub accepted: Arc<AtomicUsize>,
    pub log: Arc<Mutex<Vec<Vec<u8>>>>,
    pub peers: Arc<Mutex<Vec<SocketAddr>>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Fixture {
    /// Starts listening; `handler` runs once per accepted connection.
    pub fn start(handler: impl Fn(Conn) + Send + Sync + 'static) -> Self {
        let listener = listen_loopback();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let peers = Arc::new(Mutex::new(Vec::new()));
        let handler = Arc::new(handler);
        let (s, a, l, p) = (stop.clone(), accepted.clone(), log.clone(), peers.clone());
        let thread = thread::spawn(move || {
            let mut workers = Vec::new();
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, peer)) => {
                        stream.set_nonblocking(false).unwrap();
                        p.lock().unwrap().push(peer);
                        let index = a.fetch_add(1, Ordering::Relaxed);
                        let conn = Conn { stream, index, stop: s.clone(), log: l.clone() };
                        let h = handler.clone();
                        workers.push(thread::spawn(move || h(conn)));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
            for w in workers {
                let _ = w.join();
            }
        });
        Self { addr, stop, accepted, log, peers, thread: Some(thread) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

/// A non-blocking loopback listener with room for 1,024 pending connections:
/// std's 128 overflows when a test's hundreds of connections (re)connect at
/// once, and the overflowing SYNs wait a second to be sent again, stalling
/// those connections for most of a short run.
fn listen_loopback() -> TcpListener {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a TCP socket");
    socket.set_reuse_address(true).unwrap();
    socket.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into()).expect("bind loopback");
    socket.listen(1024).expect("listen");
    socket.set_nonblocking(true).unwrap();
    socket.into()
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A handler that answers every request on a connection with `response`.
pub fn respond_always(response: &'static [u8]) -> impl Fn(Conn) + Send + Sync + 'static {
    move |mut conn: Conn| {
        while conn.read_request().is_some() {
            if !conn.send(response) {
                return;
            }
        }
    }
}

pub const OK_2: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// How often a trickling peer sends its next byte (or frame): five times in
/// `TRICKLE_TIMEOUT_S`, so a timer that each read restarted would never fire.
pub const TRICKLE_EVERY: Duration = Duration::from_millis(100);
/// The timeout of a run against a trickling peer, and the run's length.
pub const TRICKLE_TIMEOUT_S: f64 = 0.5;
pub const TRICKLE_DURATION_S: f64 = 1.0;
/// How long a scripted peer goes on at most: it catches a hang, it measures nothing.
pub const HANG_LIMIT: Duration = Duration::from_secs(10);

/// A run of `TRICKLE_DURATION_S` against a trickling peer ended as one
/// deadline per exchange says: every request failed as a `timeout` whose
/// note names `awaited` (the timeout's own message), none before its timeout
/// (so at most ⌈duration ÷ timeout⌉ per lane of the run's `lanes`), and the
/// run ended within its duration plus the timeout plus 1 s of wall time.
pub fn assert_ended_by_deadline(report: &RunReport, wall: Duration, lanes: u64, awaited: &str) {
    let timeouts = report.errors.get("timeout").copied().unwrap_or(0);
    let all: u64 = report.errors.values().sum();
    assert!(timeouts > 0 && all == timeouts, "errors {:?} notes {:?}", report.errors, report.error_notes);
    assert_eq!(report.requests, 0);
    let most = lanes * (TRICKLE_DURATION_S / TRICKLE_TIMEOUT_S).ceil() as u64;
    assert!(timeouts <= most, "{timeouts} timeouts: one came before its timeout (at most {most})");
    let note = format!("no {awaited} within {:?}", Duration::from_secs_f64(TRICKLE_TIMEOUT_S));
    assert!(report.error_notes.iter().all(|n| n.contains(&note)), "{:?}, not {note:?}", report.error_notes);
    let bound = Duration::from_secs_f64(TRICKLE_DURATION_S + TRICKLE_TIMEOUT_S + 1.0);
    assert!(wall < bound, "the run took {wall:?}, more than its duration + timeout + 1 s");
}

/// Runs `config` to the end, returning the report and the wall time taken.
pub fn run(config: RunConfig) -> (RunReport, Duration) {
    let started = Instant::now();
    let report = crest_engine::start(&config).expect("valid config").join().expect("run completes");
    (report, started.elapsed())
}

/// A config for `url` with everything else at its default.
pub fn config(url: String) -> RunConfig {
    RunConfig { url, ..RunConfig::default() }
}

/// Bytes from hex digits (whitespace ignored), as the RFCs print their examples.
pub fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// The built-in target serving a docroot of `files` (path, size in bytes) with its access log on:
/// the server, the directory holding both (removed when dropped) and the log's path.
pub fn logging_target(files: &[(&str, usize)]) -> (crest_target::Server, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let docroot = dir.path().join("www");
    std::fs::create_dir(&docroot).unwrap();
    for (path, size) in files {
        std::fs::write(docroot.join(path.trim_start_matches('/')), vec![b'x'; *size]).unwrap();
    }
    let log = dir.path().join("served.log");
    let server = crest_target::Server::start(crest_target::ServeConfig {
        docroot,
        threads: 2,
        access_log: Some(log.clone()),
        ..crest_target::ServeConfig::default()
    })
    .unwrap();
    (server, dir, log)
}

/// The built-in target's access log, after it stopped: (arrival µs since the Unix epoch, path,
/// status) per request, in arrival order.
pub fn arrivals(log: &Path) -> Vec<(u64, String, u16)> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut out: Vec<(u64, String, u16)> = text
        .lines()
        .map(|l| {
            let time = &l[l.find('[').unwrap() + 1..l.find(']').unwrap()];
            let (s, us) = time.split_once('.').unwrap();
            let at = s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap();
            let request: Vec<&str> = l.split('"').nth(1).unwrap().split(' ').collect();
            let status = l.rsplit('"').next().unwrap().split_whitespace().next().unwrap().parse().unwrap();
            (at, request[1].to_string(), status)
        })
        .collect();
    out.sort_by_key(|a| a.0);
    out
}
