//! Bytes over a socket, plain or TLS, behind one `Transport` (wrk's `sock`
//! table as an enum). Knows nothing of HTTP: it connects, handshakes, moves
//! bytes and reports readiness through `io::ErrorKind::WouldBlock`.

mod socket;
mod tls;

use std::io::{self, Read, Write};

use mio::net::TcpStream;
use rustls::ClientConnection;

pub use socket::{connect, connect_blocking, connect_finished, connect_udp, is_addr_not_available};
pub use tls::{client_config, Alpn, TlsSettings};

/// One live connection.
#[derive(Debug)]
pub enum Transport {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP; the rustls state is boxed to keep plain slots small.
    Tls(TcpStream, Box<ClientConnection>),
}

impl Transport {
    /// The socket, for (de)registration with the event loop.
    pub fn socket(&mut self) -> &mut TcpStream {
        match self {
            Self::Plain(s) | Self::Tls(s, _) => s,
        }
    }

    /// Advances the TLS handshake as far as the socket allows: `Ok` once it
    /// is complete (at once for plain TCP), `WouldBlock` while it waits.
    pub fn handshake(&mut self) -> io::Result<()> {
        let Self::Tls(sock, tls) = self else { return Ok(()) };
        while tls.is_handshaking() {
            if tls.wants_write() {
                match tls.write_tls(sock) {
                    Ok(_) => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            if tls.wants_read() {
                match tls.read_tls(sock) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(_) => {
                        tls.process_new_packets().map_err(io::Error::other)?;
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            return Err(io::ErrorKind::WouldBlock.into());
        }
        // TLS 1.3 may leave the client Finished in the buffer; `write` flushes it.
        flush_tls(sock, tls).map(|_| ())
    }

    /// Whether a completed TLS handshake agreed on `h2` by ALPN.
    pub fn alpn_h2(&self) -> bool {
        matches!(self, Self::Tls(_, tls) if tls.alpn_protocol() == Some(b"h2"))
    }

    /// Whether the completed TLS handshake resumed an earlier session.
    pub fn resumed(&self) -> bool {
        matches!(self, Self::Tls(_, tls) if tls.handshake_kind() == Some(rustls::HandshakeKind::Resumed))
    }

    /// The protocol version and cipher suite the completed TLS handshake negotiated.
    pub fn negotiated(&self) -> (Option<rustls::ProtocolVersion>, Option<rustls::CipherSuite>) {
        match self {
            Self::Tls(_, tls) => (tls.protocol_version(), tls.negotiated_cipher_suite().map(|s| s.suite())),
            Self::Plain(_) => (None, None),
        }
    }

    /// Writes as much of `buf` as the socket takes now. TLS accepts all of
    /// it into its record buffer and flushes what the socket takes.
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Plain(s) => s.write(buf),
            Self::Tls(sock, tls) => {
                let n = tls.writer().write(buf)?;
                flush_tls(sock, tls)?;
                Ok(n)
            }
        }
    }

    /// Writes out bytes buffered by TLS. `Ok(true)` when none remain.
    pub fn flush(&mut self) -> io::Result<bool> {
        match self {
            Self::Plain(_) => Ok(true),
            Self::Tls(sock, tls) => flush_tls(sock, tls),
        }
    }

    /// Reads plaintext into `buf`. `Ok(0)` is end of stream (a TLS peer
    /// that closes without close_notify counts as a plain close, as HTTP
    /// servers commonly do with `Connection: close`).
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Plain(s) => s.read(buf),
            Self::Tls(sock, tls) => loop {
                match tls.reader().read(buf) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                match tls.read_tls(sock) {
                    Ok(0) => return Ok(0),
                    Ok(_) => {
                        tls.process_new_packets().map_err(io::Error::other)?;
                    }
                    Err(e) => return Err(e),
                }
            },
        }
    }
}

fn flush_tls(sock: &mut TcpStream, tls: &mut ClientConnection) -> io::Result<bool> {
    while tls.wants_write() {
        match tls.write_tls(sock) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}
