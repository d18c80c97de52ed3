//! Test helpers: the private smbd, and a blocking driver that runs a
//! [`Session`] over a `TcpStream` (what the engine does with mio, minus the
//! event loop), optionally recording the bytes the server sent.
#![allow(dead_code)]

pub mod alloc;
pub mod smbd;

use crest_smb2::{Credentials, Event, Session};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A stalled server fails the test instead of hanging it.
const IO_TIMEOUT: Duration = Duration::from_secs(15);

pub fn credentials(user: &str, password: &str) -> Credentials {
    Credentials { user: user.into(), password: password.into(), domain: String::new() }
}

pub struct Conn {
    pub session: Session,
    sock: TcpStream,
    buf: Vec<u8>,
    /// Bytes received since the last [`Conn::take_received`].
    received: Vec<u8>,
    /// Time spent inside the session's own code (starting operations,
    /// `receive`, `poll_event`), socket calls excluded; its allocations are
    /// counted by [`alloc`].
    pub in_session: Duration,
}

impl Conn {
    /// Connects and runs the handshake; returns its event.
    pub fn open(port: u16, share: &str, credentials: Credentials) -> (Conn, Event) {
        let sock = TcpStream::connect(("127.0.0.1", port)).expect("connect to smbd");
        sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        sock.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        sock.set_nodelay(true).unwrap();
        let mut conn = Conn {
            session: Session::new("127.0.0.1", share, credentials),
            sock,
            buf: vec![0; 256 * 1024],
            received: Vec::new(),
            in_session: Duration::ZERO,
        };
        let event = conn.wait();
        (conn, event)
    }

    /// Writes what the session has queued, then reads until it reports an event.
    pub fn wait(&mut self) -> Event {
        loop {
            let t = Instant::now();
            let event = alloc::measure(|| self.session.poll_event());
            self.in_session += t.elapsed();
            if let Some(e) = event {
                return e;
            }
            while !self.session.output().is_empty() {
                let n = retry(|| self.sock.write(self.session.output())).expect("write to smbd");
                self.session.consume_output(n);
            }
            let n = retry(|| self.sock.read(&mut self.buf)).expect("read from smbd (timed out?)");
            assert!(n > 0, "smbd closed the connection");
            self.received.extend_from_slice(&self.buf[..n]);
            let t = Instant::now();
            let (session, input) = (&mut self.session, &self.buf[..n]);
            alloc::measure(|| session.receive(input)).expect("protocol error");
            self.in_session += t.elapsed();
        }
    }

    /// Runs `start` (which starts one operation) and waits for its event.
    pub fn run(&mut self, start: impl FnOnce(&mut Session)) -> Event {
        assert!(self.session.is_ready());
        let t = Instant::now();
        alloc::measure(|| start(&mut self.session));
        self.in_session += t.elapsed();
        self.wait()
    }

    pub fn take_received(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.received)
    }
}

/// `io` again while a signal interrupts it (EINTR: a signal for another thread of the test binary, or a
/// child's, can land in this one's read).
fn retry(mut io: impl FnMut() -> std::io::Result<usize>) -> std::io::Result<usize> {
    loop {
        match io() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            done => return done,
        }
    }
}
