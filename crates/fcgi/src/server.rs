//! The I/O loop: accept connections and run each as a task on the tokio
//! runtime, moving bytes between its socket and its [`Connection`].
//!
//! Event-driven on purpose: a web server keeps FastCGI connections open
//! between requests (Apache's mod_proxy_fcgi keeps a pool per worker, nginx
//! with `fastcgi_keep_conn`), so idle connections must cost a task and a few
//! hundred bytes, never a thread. An idle connection holds no buffers: it
//! waits for readiness with empty ones.
//!
//! Owns sockets, buffers and errors of I/O; the protocol is
//! [`crate::connection`]'s and the content [`crate::reply`]'s.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};

use crate::connection::{Connection, Limits, Progress};
use crate::error::ProtocolError;
use crate::listen::{Listener, SocketFile};
use crate::reply::{Reply, Site};

/// Bytes asked of the kernel per read: a whole request from nginx (params
/// and the empty stdin record) is usually under 1 KiB.
const READ_CHUNK: usize = 16 * 1024;

/// Pause after an accept that failed for lack of descriptors or memory, so
/// the loop does not spin while connections close and free some.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Output capacity kept between requests; a connection that just sent a
/// large crest-bytes body gives the rest back.
const KEEP_OUT_BYTES: usize = 8 * 1024;

/// Serves connections from `listener` until `shutdown` completes. Must run
/// inside a tokio runtime with I/O and time enabled.
pub async fn run(
    listener: Listener,
    limits: Limits,
    site: Arc<Site>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    // The socket file goes when this returns, not before.
    let (listener, _socket_file) = Accept::new(listener)?;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => return Ok(()),
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok(stream) => {
                tokio::spawn(serve(stream, limits, site.clone()));
            }
            Err(e) if is_out_of_resources(&e) => {
                eprintln!("crest-fcgi: cannot accept a connection ({e}); retrying");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
            Err(e) if is_peer_error(&e) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Out of descriptors or memory: worth retrying once connections close.
fn is_out_of_resources(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM))
}

/// An error of the one connection being accepted, not of the listener:
/// accept(2) on Linux reports these (the peer gave up, the network failed
/// under it) and says to retry.
fn is_peer_error(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::ECONNABORTED
                | libc::EINTR
                | libc::EPERM
                | libc::EPROTO
                | libc::ENOPROTOOPT
                | libc::ENETDOWN
                | libc::ENONET
                | libc::EHOSTDOWN
                | libc::EHOSTUNREACH
                | libc::ENETUNREACH
                | libc::EOPNOTSUPP
        )
    )
}

enum Accept {
    Unix(UnixListener),
    Tcp(TcpListener),
}

impl Accept {
    fn new(listener: Listener) -> io::Result<(Accept, Option<SocketFile>)> {
        Ok(match listener {
            Listener::Unix { listener, file } => {
                listener.set_nonblocking(true)?;
                (Accept::Unix(UnixListener::from_std(listener)?), file)
            }
            Listener::Tcp(listener) => {
                listener.set_nonblocking(true)?;
                (Accept::Tcp(TcpListener::from_std(listener)?), None)
            }
        })
    }

    async fn accept(&self) -> io::Result<Stream> {
        match self {
            Accept::Unix(l) => Ok(Stream::Unix(l.accept().await?.0)),
            Accept::Tcp(l) => {
                let (stream, _) = l.accept().await?;
                // Records are small and each response goes out in one write:
                // Nagle would only hold back the last segment. A connection
                // that cannot take the option fails on its own I/O instead.
                let _ = stream.set_nodelay(true);
                Ok(Stream::Tcp(stream))
            }
        }
    }
}

enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    /// Waits until the socket is readable, then reads what is there into
    /// `buf`'s spare capacity (reserving [`READ_CHUNK`] only now, so an idle
    /// connection holds no buffer). `Ok(0)` is end of stream.
    async fn read_into(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        loop {
            match self {
                Stream::Unix(s) => s.readable().await?,
                Stream::Tcp(s) => s.readable().await?,
            }
            buf.reserve(READ_CHUNK);
            let read = match self {
                Stream::Unix(s) => s.try_read_buf(buf),
                Stream::Tcp(s) => s.try_read_buf(buf),
            };
            match read {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                done => return done,
            }
        }
    }

    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.write_all(bytes).await,
            Stream::Tcp(s) => s.write_all(bytes).await,
        }
    }
}

/// Why a connection ended early.
enum Failure {
    Io(io::Error),
    Protocol(ProtocolError),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

async fn serve(mut stream: Stream, limits: Limits, site: Arc<Site>) {
    match converse(&mut stream, limits, &site).await {
        Ok(()) => {}
        Err(Failure::Protocol(e)) => eprintln!("crest-fcgi: closing a connection: {e}"),
        // The server closing or resetting its end is how connections end
        // under load (nginx drops a request whose client went away).
        Err(Failure::Io(e))
            if matches!(
                e.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
            ) => {}
        Err(Failure::Io(e)) => eprintln!("crest-fcgi: connection failed: {e}"),
    }
}

/// One connection from accept to close: read records, answer requests,
/// until the server closes or a request without `FCGI_KEEP_CONN` is done.
async fn converse(stream: &mut Stream, limits: Limits, site: &Site) -> Result<(), Failure> {
    let mut conn = Connection::new(limits);
    let mut input = Vec::new();
    let mut out = Vec::new();
    loop {
        let (used, progress) = conn.receive(&input, &mut out).map_err(Failure::Protocol)?;
        input.drain(..used);
        match progress {
            Progress::NeedMore => {
                if !out.is_empty() {
                    stream.write_all(&out).await?;
                    out.clear();
                }
                if input.is_empty() {
                    // Idle between requests: give the buffers back.
                    input = Vec::new();
                    if out.capacity() > KEEP_OUT_BYTES {
                        out = Vec::new();
                    }
                }
                if stream.read_into(&mut input).await? == 0 {
                    return Ok(());
                }
            }
            Progress::Ready(request) => {
                let mut reply = Reply::answer(&request, site);
                while reply.write_next(request.id, &mut out) {
                    stream.write_all(&out).await?;
                    out.clear();
                }
                let keep_conn = conn.finish(&mut out);
                stream.write_all(&out).await?;
                out.clear();
                if !keep_conn {
                    return Ok(());
                }
            }
            Progress::Close => {
                stream.write_all(&out).await?;
                return Ok(());
            }
        }
    }
}
