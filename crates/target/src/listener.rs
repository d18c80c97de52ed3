//! Worker threads' network side: binding listening sockets, the per-thread
//! runtime with its accept loops, and serving one connection (plain or TLS)
//! with hyper until it ends or the server stops. Each connection speaks
//! HTTP/1.x or HTTP/2, whichever the client opens with (h2 by ALPN over TLS,
//! h2c by prior knowledge in cleartext).
//!
//! Knows nothing about routes or files: requests go to `handler::Handler`.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use socket2::{Domain, Protocol, Socket, Type};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_rustls::TlsAcceptor;

use crate::conn_info::ConnInfo;
use crate::error::ServeError;
use crate::handler::{Handler, Site};

/// Also the keep-alive idle limit: hyper starts this timer whenever it waits
/// for a request head, so idle or half-open connections are closed.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long in-flight requests may finish after `stop()`.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(1000);
/// Per-connection read buffer cap; bigger request heads get 431.
const MAX_BUF: usize = 64 * 1024;
const BACKLOG: i32 = 4096;

/// A bound listening socket; each worker gets a duplicate of the fd, so all
/// workers accept from one queue and whichever is free takes the connection.
pub(crate) struct Endpoint {
    pub listener: std::net::TcpListener,
    pub addr: SocketAddr,
    pub tls: Option<TlsAcceptor>,
}

impl Endpoint {
    pub(crate) fn bind(addr: SocketAddr, tls: Option<TlsAcceptor>) -> Result<Endpoint, ServeError> {
        let err = |e| ServeError::bind(addr, e);
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(err)?;
        // SO_REUSEADDR (not SO_REUSEPORT): restarts are not blocked by
        // TIME_WAIT, but a port another server listens on is still refused.
        socket.set_reuse_address(true).map_err(err)?;
        socket.set_nonblocking(true).map_err(err)?;
        socket.bind(&addr.into()).map_err(err)?;
        socket.listen(BACKLOG).map_err(err)?;
        let listener: std::net::TcpListener = socket.into();
        let addr = listener.local_addr().map_err(err)?;
        Ok(Endpoint { listener, addr, tls })
    }

    pub(crate) fn try_clone(&self) -> io::Result<Endpoint> {
        Ok(Endpoint { listener: self.listener.try_clone()?, addr: self.addr, tls: self.tls.clone() })
    }
}

/// Body of a worker thread: runs a current-thread runtime until shutdown.
/// Reports on `ready` once it is accepting (or why it cannot).
pub(crate) fn run_worker(
    endpoints: Vec<Endpoint>,
    site: Arc<Site>,
    mut shutdown: watch::Receiver<bool>,
    ready: std::sync::mpsc::Sender<io::Result<()>>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    rt.block_on(async move {
        let http = Arc::new(http_builder());
        // Every connection holds a sender; `recv` yields `None` once all are
        // gone, which is how we know the drain is complete.
        let (drain_tx, mut drain_rx) = mpsc::channel::<()>(1);
        let mut listeners = Vec::with_capacity(endpoints.len());
        for ep in endpoints {
            match TcpListener::from_std(ep.listener) {
                Ok(l) => listeners.push((l, ep.addr, ep.tls)),
                Err(e) => {
                    let _ = ready.send(Err(e));
                    return;
                }
            }
        }
        let _ = ready.send(Ok(()));
        for (listener, addr, tls) in listeners {
            let accept = Acceptor {
                addr,
                tls,
                site: site.clone(),
                http: http.clone(),
                shutdown: shutdown.clone(),
                drain: drain_tx.clone(),
            };
            tokio::spawn(accept.run(listener));
        }
        drop(drain_tx);
        let _ = shutdown.wait_for(|&stop| stop).await;
        let _ = tokio::time::timeout(DRAIN_TIMEOUT, drain_rx.recv()).await;
    });
    // Whatever did not drain in time (slow CGI, stuck client) is dropped
    // here, which closes its socket and kills its CGI child.
    rt.shutdown_timeout(Duration::from_millis(100));
}

/// Most concurrent HTTP/2 streams per connection: above h2load's and crest's usual 100.
const MAX_H2_STREAMS: u32 = 256;

fn http_builder() -> auto::Builder<TokioExecutor> {
    let mut b = auto::Builder::new(TokioExecutor::new());
    b.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true)
        .max_buf_size(MAX_BUF)
        // Pipelined requests are answered with one write instead of one each.
        .pipeline_flush(true);
    b.http2().timer(TokioTimer::new()).max_concurrent_streams(MAX_H2_STREAMS);
    b
}

struct Acceptor {
    addr: SocketAddr,
    tls: Option<TlsAcceptor>,
    site: Arc<Site>,
    http: Arc<auto::Builder<TokioExecutor>>,
    shutdown: watch::Receiver<bool>,
    drain: mpsc::Sender<()>,
}

impl Acceptor {
    async fn run(mut self, listener: TcpListener) {
        loop {
            let accepted = tokio::select! {
                biased;
                _ = self.shutdown.changed() => return,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, peer)) => self.spawn_connection(stream, peer),
                Err(e) if is_resource_exhaustion(&e) => {
                    // Out of fds or memory: back off instead of spinning;
                    // closing connections will free resources.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                // Per-connection failures (e.g. reset before accept).
                Err(_) => {}
            }
        }
    }

    fn spawn_connection(&self, stream: TcpStream, peer: SocketAddr) {
        // Responses are written in one go; Nagle would only add latency.
        let _ = stream.set_nodelay(true);
        let local = if self.addr.ip().is_unspecified() { stream.local_addr().unwrap_or(self.addr) } else { self.addr };
        let conn = ConnInfo { peer, local, tls: self.tls.is_some() };
        let handler = Handler { site: self.site.clone(), conn };
        let http = self.http.clone();
        let shutdown = self.shutdown.clone();
        let drain = self.drain.clone();
        match self.tls.clone() {
            None => {
                tokio::spawn(async move {
                    serve(stream, handler, &http, shutdown).await;
                    drop(drain);
                });
            }
            Some(acceptor) => {
                tokio::spawn(async move {
                    let handshake = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream));
                    if let Ok(Ok(stream)) = handshake.await {
                        serve(stream, handler, &http, shutdown).await;
                    }
                    drop(drain);
                });
            }
        }
    }
}

/// Serves HTTP/1.x or HTTP/2 on one connection. On shutdown, idle
/// connections close at once and requests in flight may finish.
async fn serve<S>(stream: S, handler: Handler, http: &auto::Builder<TokioExecutor>, mut shutdown: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let conn = http.serve_connection(TokioIo::new(stream), handler);
    tokio::pin!(conn);
    tokio::select! {
        biased;
        _ = conn.as_mut() => return,
        _ = shutdown.changed() => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

fn is_resource_exhaustion(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM))
}
