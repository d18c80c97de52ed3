//! What crest puts on the wire, byte for byte, and how it uses connections.

use crate::support::{config, respond_always, run, Fixture, OK_2};
use crest_engine::{HttpVersion, RunConfig};

const UA: &str = concat!("User-Agent: crest/", env!("CARGO_PKG_VERSION"), "\r\n");

#[test]
fn sends_exact_http11_request() {
    let fx = Fixture::start(respond_always(OK_2));
    let (report, _) = run(RunConfig {
        max_requests: Some(1),
        connections: 1,
        headers: vec![("X-Test".into(), "1".into())],
        ..config(fx.url("/a/b?c=d"))
    });
    assert_eq!(report.requests, 1);
    let expected = format!("GET /a/b?c=d HTTP/1.1\r\nHost: {}\r\n{UA}X-Test: 1\r\n\r\n", fx.addr);
    assert_eq!(String::from_utf8_lossy(&fx.log.lock().unwrap()[0]), expected);
}

#[test]
fn http10_without_keepalive_opens_a_connection_per_request() {
    let fx = Fixture::start(|mut conn| {
        if conn.read_request().is_some() {
            conn.send(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let (report, _) = run(RunConfig {
        max_requests: Some(20),
        connections: 2,
        http_version: HttpVersion::Http10,
        keepalive: false,
        ..config(fx.url("/x"))
    });
    assert_eq!(report.requests, 20);
    assert_eq!(report.connections_opened, 20);
    assert_eq!(fx.accepted.load(std::sync::atomic::Ordering::Relaxed), 20);
    let expected = format!("GET /x HTTP/1.0\r\nHost: {}\r\n{UA}\r\n", fx.addr);
    assert!(fx.log.lock().unwrap().iter().all(|r| r == expected.as_bytes()));
}

#[test]
fn http11_close_sends_connection_close() {
    let fx = Fixture::start(|mut conn| {
        if conn.read_request().is_some() {
            conn.send(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let (report, _) = run(RunConfig { max_requests: Some(5), connections: 1, keepalive: false, ..config(fx.url("/")) });
    assert_eq!(report.requests, 5);
    assert_eq!(report.connections_opened, 5);
    assert!(String::from_utf8_lossy(&fx.log.lock().unwrap()[0]).contains("\r\nConnection: close\r\n"));
}

#[test]
fn keepalive_reuses_each_connection() {
    let fx = Fixture::start(respond_always(OK_2));
    let (report, _) = run(RunConfig { max_requests: Some(300), connections: 3, threads: 3, ..config(fx.url("/")) });
    assert_eq!(report.requests, 300);
    assert_eq!(report.connections_opened, 3);
    assert_eq!(report.status.get("200"), Some(&300));
    assert_eq!(report.bytes, 300 * OK_2.len() as u64);
    assert_eq!(report.body_bytes, 600);
    assert_eq!(report.timeline.iter().map(|b| b.requests).sum::<u64>(), 300);
}

#[test]
fn post_body_and_custom_method() {
    let fx = Fixture::start(respond_always(OK_2));
    let (report, _) = run(RunConfig {
        max_requests: Some(1),
        connections: 1,
        method: "POST".into(),
        body: Some("a=1".into()),
        ..config(fx.url("/form"))
    });
    assert_eq!(report.requests, 1);
    let expected = format!("POST /form HTTP/1.1\r\nHost: {}\r\n{UA}Content-Length: 3\r\n\r\na=1", fx.addr);
    assert_eq!(String::from_utf8_lossy(&fx.log.lock().unwrap()[0]), expected);
}

#[test]
fn pipelined_requests_are_written_before_reading() {
    // The handler reads four requests before answering any: only a
    // pipelining client gets responses at all.
    let fx = Fixture::start(|mut conn| loop {
        for _ in 0..4 {
            if conn.read_request().is_none() {
                return;
            }
        }
        if !conn.send(&OK_2.repeat(4)) {
            return;
        }
    });
    let (report, _) = run(RunConfig { max_requests: Some(40), connections: 1, pipeline: 4, ..config(fx.url("/")) });
    assert_eq!(report.requests, 40);
    assert_eq!(report.connections_opened, 1);
}

#[test]
fn request_count_is_exact_across_threads() {
    let fx = Fixture::start(respond_always(OK_2));
    let (report, _) = run(RunConfig { max_requests: Some(101), connections: 7, threads: 3, ..config(fx.url("/")) });
    assert_eq!(report.requests, 101);
    assert_eq!(fx.log.lock().unwrap().len(), 101);
}

#[test]
fn head_responses_have_no_body() {
    let fx = Fixture::start(respond_always(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"));
    let (report, _) =
        run(RunConfig { max_requests: Some(10), connections: 1, method: "HEAD".into(), ..config(fx.url("/")) });
    assert_eq!(report.requests, 10);
    assert_eq!(report.body_bytes, 0);
}

#[test]
fn source_addresses_are_used_round_robin() {
    let fx = Fixture::start(respond_always(OK_2));
    let (report, _) = run(RunConfig {
        max_requests: Some(4),
        connections: 2,
        source_addrs: vec!["127.0.0.2".into(), "127.0.0.3".into()],
        ..config(fx.url("/"))
    });
    assert_eq!(report.requests, 4);
    let mut ips: Vec<String> = fx.peers.lock().unwrap().iter().map(|p| p.ip().to_string()).collect();
    ips.sort();
    assert_eq!(ips, ["127.0.0.2", "127.0.0.3"]);
}

#[test]
fn open_loop_paces_requests_and_marks_the_report() {
    let fx = Fixture::start(respond_always(OK_2));
    let (report, _) =
        run(RunConfig { duration_s: Some(1.0), rate_rps: Some(200.0), connections: 4, ..config(fx.url("/")) });
    assert!(report.open_loop);
    assert_eq!(report.rate_rps, Some(200.0));
    // 200/s for 1 s: the schedule allows at most 200 sends (plus one per connection at the edge).
    assert!(report.requests >= 100 && report.requests <= 204, "requests = {}", report.requests);
}

#[test]
fn close_delimited_bodies_end_at_the_peer_close() {
    // HTTP/1.0 without Content-Length: the body runs until the server closes.
    for split in [false, true] {
        let fx = Fixture::start(move |mut conn| {
            if conn.read_request().is_some() {
                conn.send(b"HTTP/1.0 200 OK\r\n\r\nhello");
                if split {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    conn.send(b" world");
                }
            }
        });
        let (report, _) =
            run(RunConfig { max_requests: Some(10), connections: 2, timeout_s: 5.0, ..config(fx.url("/")) });
        assert_eq!(report.requests, 10, "{:?}", report.error_notes);
        assert_eq!(report.body_bytes, if split { 110 } else { 50 });
    }
}
