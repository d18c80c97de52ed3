//! The two receive buffers: `read_buffer_bytes` bounds every read the engine
//! makes (WebBench's "receive buffer"), and the socket's SO_RCVBUF is left to
//! the kernel unless `socket_rcvbuf_bytes` asks for one.

use std::net::{SocketAddr, TcpListener};

use crate::support::{config, run, Conn, Fixture};
use crest_engine::config::DEFAULT_READ_BUFFER_BYTES;
use crest_engine::plan::Plan;
use crest_engine::{connection, RunConfig};
use socket2::{Domain, SockRef, Socket, Type};

const BODY_BYTES: usize = 1 << 20;

/// Answers every request with a 1 MiB body in one write, so the socket holds
/// far more than any read buffer asks for.
fn big_body_target() -> Fixture {
    Fixture::start(|mut conn: Conn| {
        let mut response = format!("HTTP/1.1 200 OK\r\nContent-Length: {BODY_BYTES}\r\n\r\n").into_bytes();
        response.resize(response.len() + BODY_BYTES, b'x');
        while conn.read_request().is_some() {
            if !conn.send(&response) {
                return;
            }
        }
    })
}

#[test]
fn no_read_exceeds_the_read_buffer() {
    let fx = big_body_target();
    for read_buffer in [4096, 1000] {
        let cfg = RunConfig {
            connections: 1,
            max_requests: Some(3),
            read_buffer_bytes: read_buffer,
            ..config(fx.url("/big"))
        };
        let (report, _) = run(cfg);
        assert_eq!(report.requests, 3, "{:?}", report.errors);
        assert_eq!(report.body_bytes, 3 * BODY_BYTES as u64);
        let stats = &report.stats;
        assert!(stats.largest_read_bytes > 0 && stats.largest_read_bytes <= u64::from(read_buffer), "{stats:?}");
        assert!(stats.reads >= report.bytes.div_ceil(u64::from(read_buffer)), "{} reads", stats.reads);
    }
    let (report, _) = run(RunConfig { connections: 1, max_requests: Some(3), ..config(fx.url("/big")) });
    assert_eq!(report.requests, 3);
    assert!(report.stats.largest_read_bytes <= u64::from(DEFAULT_READ_BUFFER_BYTES));
}

#[test]
fn read_buffer_outside_its_range_is_rejected() {
    for bad in [0, 16 << 20 | 1] {
        let cfg = RunConfig { read_buffer_bytes: bad, max_requests: Some(1), ..config("http://127.0.0.1:1/".into()) };
        let err = crest_engine::start(&cfg).err().expect("rejected");
        assert!(err.to_string().contains("read_buffer_bytes"), "{err}");
    }
    let cfg = RunConfig { socket_rcvbuf_bytes: Some(0), max_requests: Some(1), ..config("http://127.0.0.1:1/".into()) };
    let err = crest_engine::start(&cfg).err().expect("rejected");
    assert!(err.to_string().contains("socket_rcvbuf_bytes"), "{err}");
}

/// SO_RCVBUF of an established connection the engine opened with `rcvbuf`.
fn rcvbuf_of_connection(rcvbuf: Option<u32>) -> usize {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let cfg = RunConfig { socket_rcvbuf_bytes: rcvbuf, max_requests: Some(1), ..config(format!("http://{addr}/")) };
    let plan = Plan::new(&cfg).unwrap();
    let stream = connection::connect(plan.targets[0].addr, None, plan.socket_rcvbuf_bytes).unwrap();
    // The client side is established before the server's accept returns.
    let _accepted = listener.accept().unwrap();
    assert!(connection::connect_finished(&stream).unwrap());
    SockRef::from(&stream).recv_buffer_size().unwrap()
}

#[test]
fn socket_rcvbuf_is_left_to_the_kernel_unless_asked() {
    let kernel_default = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap().recv_buffer_size().unwrap();
    assert_eq!(RunConfig::default().socket_rcvbuf_bytes, None);
    assert_eq!(rcvbuf_of_connection(None), kernel_default);
    // Linux doubles the value asked for, to leave room for its bookkeeping.
    assert_eq!(rcvbuf_of_connection(Some(4096)), 2 * 4096);
}
