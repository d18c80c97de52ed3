//! Opening a connection, for either kind of slot: connect and register the
//! socket, finish the connect, start TLS and finish its handshake, recording
//! what the stats count at each step (addresses refused locally, connect
//! time, handshakes and what they negotiated). Knows nothing of HTTP; the
//! slot keeps its phase and decides what a failure costs.

use std::io;
use std::net::IpAddr;
use std::time::Instant;

use mio::{Interest, Token};

use super::ctx::Ctx;
use crate::connection::{self, Transport};
use crate::error::ErrorKind;

/// Why a connection could not be opened.
#[derive(Debug)]
pub(crate) enum DialError {
    /// The TCP connect (or registering its socket) failed.
    Connect(io::Error),
    /// The TLS handshake failed.
    Tls(io::Error),
    /// TLS could not start (no allocation on this path: the error is kept as rustls gave it).
    TlsStart(rustls::Error),
}

impl DialError {
    /// The error kind each request waiting on the connection fails with.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Connect(_) => ErrorKind::Connect,
            Self::Tls(_) | Self::TlsStart(_) => ErrorKind::Tls,
        }
    }
}

impl std::fmt::Display for DialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Connect(e) | Self::Tls(e) => e.fmt(f),
            Self::TlsStart(e) => e.fmt(f),
        }
    }
}

/// Where a connect stands after a writable event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Connected {
    /// Still in progress.
    Waiting,
    /// Connected, plain TCP: ready for requests.
    Ready,
    /// Connected; the TLS handshake has begun.
    Handshaking,
}

/// Starts connecting to `target`, its socket registered under `token`.
pub(crate) fn dial(ctx: &mut Ctx, target: usize, source: Option<IpAddr>, token: usize) -> Result<Transport, DialError> {
    let plan = &ctx.plan;
    let mut stream = match connection::connect(plan.targets[target].addr, source, plan.socket_rcvbuf_bytes) {
        Ok(stream) => stream,
        Err(e) => {
            if connection::is_addr_not_available(&e) {
                ctx.stats.addr_not_available += 1;
            }
            return Err(DialError::Connect(e));
        }
    };
    ctx.registry
        .register(&mut stream, Token(token), Interest::READABLE | Interest::WRITABLE)
        .map_err(DialError::Connect)?;
    Ok(Transport::Plain(stream))
}

/// After a writable event on a connecting `transport` begun at `started`:
/// records the connect and, for an https target, starts TLS.
pub(crate) fn connected(
    ctx: &mut Ctx,
    transport: &mut Option<Transport>,
    target: usize,
    started: Instant,
    now: Instant,
) -> Result<Connected, DialError> {
    let Some(Transport::Plain(stream)) = transport.as_ref() else { unreachable!("connecting without a socket") };
    match connection::connect_finished(stream) {
        Ok(true) => {}
        Ok(false) => return Ok(Connected::Waiting),
        Err(e) => return Err(DialError::Connect(e)),
    }
    ctx.stats.record_connect(now - started);
    ctx.nap.observe(now - started, now);
    let (Some(config), Some(name)) = (&ctx.tls, &ctx.plan.targets[target].tls_name) else {
        return Ok(Connected::Ready);
    };
    let tls = rustls::ClientConnection::new(config.clone(), name.clone()).map_err(DialError::TlsStart)?;
    let Some(Transport::Plain(stream)) = transport.take() else { unreachable!() };
    *transport = Some(Transport::Tls(stream, Box::new(tls)));
    Ok(Connected::Handshaking)
}

/// Advances the TLS handshake begun at `started`: `Ok(true)` once complete
/// (and recorded), `Ok(false)` while it waits for the socket.
pub(crate) fn handshake(
    ctx: &mut Ctx,
    transport: &mut Transport,
    started: Instant,
    now: Instant,
) -> Result<bool, DialError> {
    match transport.handshake() {
        Ok(()) => {
            ctx.stats.record_tls_handshake(now - started, transport.resumed(), transport.negotiated());
            ctx.nap.observe(now - started, now);
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(DialError::Tls(e)),
    }
}
