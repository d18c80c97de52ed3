//! Where crest-fcgi listens: a unix socket it creates (`--socket PATH`), a
//! TCP address (`--listen IP:PORT`), or the listening socket a web server
//! handed it as fd 0 (`FCGI_LISTENSOCK_FILENO`: lighttpd's mod_fastcgi
//! `bin-path`, h2o's `fastcgi.spawn`).
//!
//! Owns opening the listener and removing the socket file it created; it
//! must not accept connections (that is [`crate::server`]'s). Blocking std
//! sockets only: the runtime takes them over later.

use std::fs;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use socket2::{Domain, SockAddr, Socket, Type};

/// Connections the kernel queues before they are accepted (capped by
/// `net.core.somaxconn`). Web servers open FastCGI connections in bursts
/// (nginx without `fastcgi_keep_conn` opens one per request), and a full
/// queue is a 502 for the client, not a wait.
const BACKLOG: i32 = 4096;

/// Mode of a socket file crest-fcgi creates: a server running as another
/// user (www-data) must be able to connect.
const SOCKET_MODE: u32 = 0o666;

/// Where to listen, as the command line said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Socket(PathBuf),
    Tcp(SocketAddr),
    /// The listening socket on fd 0, put there by the server that started us.
    Inherited,
}

/// Why crest-fcgi cannot listen; every message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("cannot listen on unix socket {path} ({source}): check the directory exists and is writable")]
    Unix { path: PathBuf, source: io::Error },
    #[error("{path} is in use by a running server: stop it or give another --socket path")]
    InUse { path: PathBuf },
    #[error("{path} exists and is not a socket: give another --socket path")]
    NotASocket { path: PathBuf },
    #[error("cannot listen on {addr} ({source}): is the port free?")]
    Tcp { addr: SocketAddr, source: io::Error },
    #[error("no --socket PATH or --listen IP:PORT given, and fd 0 is not a listening socket: give one, e.g. --socket /tmp/crest-fcgi.sock")]
    NoListener,
}

/// An open listener.
#[derive(Debug)]
pub enum Listener {
    /// `file` is the socket file crest-fcgi created, removed when dropped;
    /// `None` for an inherited socket, whose file belongs to the server.
    Unix {
        listener: UnixListener,
        file: Option<SocketFile>,
    },
    Tcp(TcpListener),
}

/// A socket file this process created: removed when dropped, so a clean
/// exit leaves nothing behind.
#[derive(Debug)]
pub struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Opens the listener for `address`.
pub fn open(address: &Address) -> Result<Listener, ListenError> {
    match address {
        Address::Socket(path) => unix(path),
        Address::Tcp(addr) => tcp(*addr),
        Address::Inherited => inherited(),
    }
}

fn unix(path: &Path) -> Result<Listener, ListenError> {
    let fail = |source| ListenError::Unix { path: path.to_owned(), source };
    remove_stale(path)?;
    let socket = Socket::new(Domain::UNIX, Type::STREAM, None).map_err(fail)?;
    socket.bind(&SockAddr::unix(path).map_err(fail)?).map_err(fail)?;
    // From here on the file is ours: removed again if anything below fails.
    let file = SocketFile(path.to_owned());
    fs::set_permissions(path, fs::Permissions::from_mode(SOCKET_MODE)).map_err(fail)?;
    socket.listen(BACKLOG).map_err(fail)?;
    Ok(Listener::Unix { listener: UnixListener::from(OwnedFd::from(socket)), file: Some(file) })
}

/// A socket file nothing listens on (left by a process that died) is
/// removed; a live one, or anything that is not a socket, is left alone.
fn remove_stale(path: &Path) -> Result<(), ListenError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(ListenError::Unix { path: path.to_owned(), source }),
    };
    if !meta.file_type().is_socket() {
        return Err(ListenError::NotASocket { path: path.to_owned() });
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(ListenError::InUse { path: path.to_owned() }),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            fs::remove_file(path).map_err(|source| ListenError::Unix { path: path.to_owned(), source })
        }
        Err(source) => Err(ListenError::Unix { path: path.to_owned(), source }),
    }
}

fn tcp(addr: SocketAddr) -> Result<Listener, ListenError> {
    let fail = |source| ListenError::Tcp { addr, source };
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None).map_err(fail)?;
    // A restart must not wait for the last run's TIME_WAIT connections.
    socket.set_reuse_address(true).map_err(fail)?;
    socket.bind(&addr.into()).map_err(fail)?;
    socket.listen(BACKLOG).map_err(fail)?;
    Ok(Listener::Tcp(TcpListener::from(OwnedFd::from(socket))))
}

/// The listening socket on fd 0, if that is what fd 0 is.
fn inherited() -> Result<Listener, ListenError> {
    // A duplicate, so fd 0 itself is never closed or taken over twice.
    // SAFETY: fcntl is sound on any integer; it fails (EBADF) when fd 0 is
    // not open.
    let fd = unsafe { libc::fcntl(libc::STDIN_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Err(ListenError::NoListener);
    }
    // SAFETY: fd was just created by F_DUPFD_CLOEXEC and nothing else owns it.
    let socket = Socket::from(unsafe { OwnedFd::from_raw_fd(fd) });
    // A file, a terminal or /dev/null fails these with ENOTSOCK.
    let listening = socket.is_listener().unwrap_or(false) && socket.r#type().is_ok_and(|t| t == Type::STREAM);
    if !listening {
        return Err(ListenError::NoListener);
    }
    match socket.domain() {
        Ok(Domain::UNIX) => Ok(Listener::Unix { listener: UnixListener::from(OwnedFd::from(socket)), file: None }),
        Ok(Domain::IPV4 | Domain::IPV6) => Ok(Listener::Tcp(TcpListener::from(OwnedFd::from(socket)))),
        _ => Err(ListenError::NoListener),
    }
}
