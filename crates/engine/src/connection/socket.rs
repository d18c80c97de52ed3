//! Non-blocking TCP connects with the socket options a load generator needs:
//! no Nagle, an optional SO_RCVBUF (left to the kernel unless asked: setting
//! it switches off the kernel's receive-window auto-tuning), and an optional local address that
//! widens the ephemeral port space (each 127.0.0.x has its own ports).

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use mio::net::{TcpStream, UdpSocket};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

/// Starts connecting to `addr`; completion shows as writability.
pub fn connect(addr: SocketAddr, source: Option<IpAddr>, rcvbuf_bytes: Option<u32>) -> io::Result<TcpStream> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM.nonblocking(), Some(Protocol::TCP))?;
    socket.set_tcp_nodelay(true)?;
    if let Some(bytes) = rcvbuf_bytes {
        socket.set_recv_buffer_size(bytes as usize)?;
    }
    if let Some(ip) = source {
        // Without this, bind() picks the port before the destination is
        // known and the usable port space shrinks to one per local address.
        bind_address_no_port(&socket)?;
        socket.bind(&SockAddr::from(SocketAddr::new(ip, 0)))?;
    }
    match socket.connect(&SockAddr::from(addr)) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(socket.into()))
}

/// A blocking connect within `timeout`, from `source` when given (a client
/// subnet's line): for protocols that set a session up before the event
/// loop takes the socket (SMB).
pub fn connect_blocking(
    addr: SocketAddr,
    source: Option<IpAddr>,
    timeout: Duration,
) -> io::Result<std::net::TcpStream> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_tcp_nodelay(true)?;
    if let Some(ip) = source {
        bind_address_no_port(&socket)?;
        socket.bind(&SockAddr::from(SocketAddr::new(ip, 0)))?;
    }
    socket.connect_timeout(&SockAddr::from(addr), timeout)?;
    Ok(socket.into())
}

/// A UDP socket connected to `addr` (QUIC): from `source` when given, with a
/// receive buffer of `rcvbuf_bytes` when given. A connected socket gets the
/// ICMP errors of its destination, so a port nobody serves fails at once.
pub fn connect_udp(addr: SocketAddr, source: Option<IpAddr>, rcvbuf_bytes: Option<u32>) -> io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM.nonblocking(), Some(Protocol::UDP))?;
    if let Some(bytes) = rcvbuf_bytes {
        socket.set_recv_buffer_size(bytes as usize)?;
    }
    let local = match (source, addr) {
        (Some(ip), _) => SocketAddr::new(ip, 0),
        (None, SocketAddr::V4(_)) => SocketAddr::from(([0, 0, 0, 0], 0)),
        (None, SocketAddr::V6(_)) => SocketAddr::from(([0u16; 8], 0)),
    };
    socket.bind(&SockAddr::from(local))?;
    socket.connect(&SockAddr::from(addr))?;
    Ok(UdpSocket::from_std(socket.into()))
}

/// After a writable event on a connecting socket: `Ok(true)` when connected,
/// `Ok(false)` when still in progress, `Err` when the connect failed.
pub fn connect_finished(stream: &TcpStream) -> io::Result<bool> {
    if let Some(e) = stream.take_error()? {
        return Err(e);
    }
    match stream.peer_addr() {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
        Err(e) => Err(e),
    }
}

/// EADDRNOTAVAIL on connect: no local port left toward this destination.
pub fn is_addr_not_available(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EADDRNOTAVAIL)
}

fn bind_address_no_port(socket: &Socket) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: a valid fd, a valid pointer to an int and its exact size.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            std::ptr::from_ref(&on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
