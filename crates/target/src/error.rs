//! The error type returned by `Server::start`.
//!
//! Every message is a single line that names the problem and how to fix it,
//! because the CLI shows it to the user verbatim. Request-time failures are
//! not errors here: they become HTTP responses.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("no docroot given: pass an existing directory with --docroot")]
    NoDocroot,
    #[error("docroot {} does not exist: pass an existing directory with --docroot", .0.display())]
    DocrootMissing(PathBuf),
    #[error("docroot {} is not a directory: pass a directory with --docroot", .0.display())]
    DocrootNotDir(PathBuf),
    #[error("cgi dir {} is not an existing directory: pass one with --cgi-dir, or omit it to use docroot/cgi-bin", .0.display())]
    CgiDir(PathBuf),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("cannot listen on {addr}: the address is already in use; pick another port, or 0 for a free one")]
    AddrInUse { addr: SocketAddr },
    #[error("cannot listen on {addr}: permission denied; use a port of 1024 or above")]
    BindPermission { addr: SocketAddr },
    #[error("cannot listen on {addr}: the address is not on this machine; pass a local address with --host")]
    AddrNotAvailable { addr: SocketAddr },
    #[error("cannot listen on {addr}: {source}; check --host and --port")]
    Bind { addr: SocketAddr, source: io::Error },
    #[error("cannot set up TLS: {0}; this is a bug in crest-target, please report it")]
    Tls(String),
    #[error("cannot write TLS certificate files to {}: {source}; pass a writable directory with --tls-dir", .path.display())]
    TlsDir { path: PathBuf, source: io::Error },
    #[error("cannot open access log {}: {source}; pass a writable file path with --access-log", .path.display())]
    AccessLog { path: PathBuf, source: io::Error },
    #[error("cannot use specweb99 dir {}: {source}; pass a writable directory with --specweb99-dir", .path.display())]
    Specweb99Dir { path: PathBuf, source: io::Error },
    #[error("cannot start worker threads: {0}; lower --threads or free system resources")]
    Threads(io::Error),
}

impl ServeError {
    pub(crate) fn bind(addr: SocketAddr, source: io::Error) -> ServeError {
        match source.kind() {
            io::ErrorKind::AddrInUse => ServeError::AddrInUse { addr },
            io::ErrorKind::PermissionDenied => ServeError::BindPermission { addr },
            io::ErrorKind::AddrNotAvailable => ServeError::AddrNotAvailable { addr },
            _ => ServeError::Bind { addr, source },
        }
    }
}
