//! HTTP/3 runs against a scripted QUIC server (support/h3.rs): answers
//! counted exactly, a small receive window, large request bodies, RESET_STREAM counted as `reset`,
//! a malformed response as `parse`, GOAWAY with rejected requests sent again
//! on a new connection, and nobody listening. Time bounds only catch hangs.

use std::time::Duration;

use crate::support::h3::{H3Server, Script, UdpPeer};
use crate::support::{assert_ended_by_deadline, config, run, TRICKLE_DURATION_S, TRICKLE_EVERY, TRICKLE_TIMEOUT_S};
use crest_engine::{HttpVersion, RunConfig, RunReport};

const HANG: Duration = Duration::from_secs(15);

fn h3_requests(url: String, connections: u32, streams: u32, requests: u64) -> RunConfig {
    RunConfig {
        http_version: HttpVersion::Http3,
        connections,
        streams,
        max_requests: Some(requests),
        duration_s: None,
        timeout_s: 5.0,
        insecure: true,
        ..config(url)
    }
}

fn errors(report: &RunReport, kind: &str) -> u64 {
    report.errors.get(kind).copied().unwrap_or(0)
}

fn no_errors(report: &RunReport) {
    assert!(report.errors.values().all(|&n| n == 0), "errors {:?} notes {:?}", report.errors, report.error_notes);
}

#[test]
fn h3_requests_are_answered_and_counted() {
    let server = H3Server::start(Script::Answer, vec![b'x'; 1000]);
    let (report, took) = run(RunConfig { requests: Vec::new(), ..h3_requests(server.url("/1k"), 2, 4, 200) });
    let log = server.stop();
    no_errors(&report);
    assert!(took < HANG);
    assert_eq!(report.requests, 200);
    assert_eq!(report.status.get("200"), Some(&200));
    assert_eq!(log.answered, 200, "every request reached the server once");
    assert_eq!(log.connections, 2);
    assert_eq!(report.connections_opened, 2);
    assert_eq!(report.tls_handshakes, 2);
    let h3 = report.h2.expect("stream figures");
    assert_eq!(h3.streams_opened, 200);
    assert!(h3.streams_in_use_max >= 2 && h3.streams_in_use_max <= 4);
    assert!(h3.request_header_block_bytes < h3.request_header_raw_bytes, "QPACK compresses");
    assert_eq!(report.body_bytes, 200 * 1000);
}

#[test]
fn a_small_receive_window_still_delivers_every_body() {
    let server = H3Server::start(Script::Answer, vec![b'y'; 20_000]);
    let (report, _) = run(RunConfig {
        h2_stream_window_bytes: 1200,
        h2_connection_window_bytes: 4000,
        ..h3_requests(server.url("/20k"), 1, 2, 20)
    });
    let log = server.stop();
    no_errors(&report);
    assert_eq!(report.requests, 20);
    assert_eq!(report.body_bytes, 20 * 20_000);
    assert_eq!(log.answered, 20);
}

#[test]
fn large_request_bodies_arrive_whole() {
    // 60 KB per request: crest hands them to the kernel in batches of datagrams (GSO) where it can.
    let body = "z".repeat(60_000);
    let server = H3Server::start(Script::Answer, vec![b'x'; 100]);
    let (report, took) = run(RunConfig {
        method: "POST".into(),
        body: Some(body.clone()),
        ..h3_requests(server.url("/upload"), 2, 3, 30)
    });
    let log = server.stop();
    no_errors(&report);
    assert!(took < HANG);
    assert_eq!((report.requests, log.answered), (30, 30));
    // Each request stream carries its body once, plus a HEADERS frame and two frame headers.
    let bodies = 30 * body.len() as u64;
    assert!(log.request_bytes >= bodies && log.request_bytes < bodies + 30 * 200, "{} bytes", log.request_bytes);
}

#[test]
fn resets_are_counted_as_reset_errors() {
    let server = H3Server::start(Script::Reset, Vec::new());
    let (report, took) = run(h3_requests(server.url("/"), 1, 4, 40));
    let log = server.stop();
    assert!(took < HANG);
    assert_eq!(errors(&report, "reset"), 40, "notes {:?}", report.error_notes);
    assert_eq!(report.errors.values().sum::<u64>(), 40);
    assert_eq!(report.h2.expect("stream figures").resets, 40);
    assert_eq!(log.resets, 40);
}

#[test]
fn a_malformed_response_is_a_parse_error_of_its_stream() {
    let server = H3Server::start(Script::DataFirst, Vec::new());
    let (report, took) = run(h3_requests(server.url("/"), 1, 2, 20));
    let log = server.stop();
    assert!(took < HANG);
    assert_eq!(errors(&report, "parse"), 20, "errors {:?} notes {:?}", report.errors, report.error_notes);
    assert_eq!(report.errors.values().sum::<u64>(), 20);
    assert!(report.error_notes.iter().any(|n| n.contains("H3_FRAME_UNEXPECTED")), "{:?}", report.error_notes);
    // Stream errors: the connection carried on.
    assert_eq!(log.connections, 1);
}

#[test]
fn goaway_sends_rejected_requests_again_on_a_new_connection() {
    let server = H3Server::start(Script::GoAwayAfter(10), vec![b'z'; 100]);
    let (report, took) = run(h3_requests(server.url("/"), 1, 4, 60));
    let log = server.stop();
    assert!(took < HANG);
    no_errors(&report);
    assert_eq!(report.requests, 60);
    assert_eq!(log.answered, 60, "each request answered once");
    assert!(log.connections >= 6, "a new connection after each GOAWAY: {log:?}");
    let h3 = report.h2.expect("stream figures");
    assert_eq!(u64::from(log.goaways), h3.goaways);
    assert_eq!(u64::from(log.rejected), h3.refused, "{log:?}");
}

/// A run of 0.5 s with a 0.3 s timeout over two connections of two streams, against `url`.
fn short_run(url: String) -> RunConfig {
    RunConfig { max_requests: None, duration_s: Some(0.5), timeout_s: 0.3, ..h3_requests(url, 2, 2, 0) }
}

/// Every error of `report` is of `kind`, there is one at least, and nothing succeeded.
fn only_errors_of(report: &RunReport, kind: &str) {
    let all: u64 = report.errors.values().sum();
    assert!(all > 0 && errors(report, kind) == all, "errors {:?} notes {:?}", report.errors, report.error_notes);
    assert_eq!(report.requests, 0);
}

// A QUIC handshake that nothing answered is a connect error, as the ICMP port
// unreachable that usually answers it is (exchange::Awaited): the kernel may
// rate-limit or a firewall drop that ICMP, and a worker that ran late reads
// it after the timeout, so "nobody listening" would otherwise be counted as
// connect errors or timeouts by the race between the timeout and the ICMP
// answer. A handshake the server answered but did not finish is a timeout.

#[test]
fn nobody_listening_is_a_connect_error_and_the_run_ends_on_time() {
    // A UDP port with nothing on it: the kernel answers with ICMP port unreachable, or (rate-limited) not at all.
    let port = std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (report, took) = run(short_run(format!("https://127.0.0.1:{port}/")));
    assert!(took < HANG);
    only_errors_of(&report, "connect");
    assert!(report.duration_s <= 0.5 + 1e-9);
}

#[test]
fn a_handshake_nothing_answers_is_a_connect_error_at_the_timeout() {
    // A socket on the port that never answers: no ICMP comes back either.
    let peer = UdpPeer::start(None);
    let (report, took) = run(short_run(peer.url()));
    assert!(took < HANG);
    only_errors_of(&report, "connect");
    assert!(report.error_notes[0].contains("no answer to the QUIC handshake within 300ms"), "{:?}", report.error_notes);
}

#[test]
fn a_handshake_answered_but_never_finished_is_a_timeout() {
    // Something answers every datagram, but not with QUIC: the client drops what it gets and waits on.
    let peer = UdpPeer::start(Some(b"not QUIC"));
    let (report, took) = run(short_run(peer.url()));
    assert!(took < HANG);
    only_errors_of(&report, "timeout");
    assert!(report.error_notes[0].contains("no QUIC handshake within 300ms"), "{:?}", report.error_notes);
}

/// A run of `TRICKLE_DURATION_S` with a `TRICKLE_TIMEOUT_S` timeout over one connection of two streams.
fn trickle_run(url: String) -> RunConfig {
    RunConfig {
        max_requests: None,
        duration_s: Some(TRICKLE_DURATION_S),
        timeout_s: TRICKLE_TIMEOUT_S,
        ..h3_requests(url, 1, 2, 0)
    }
}

#[test]
fn a_head_trickled_a_byte_at_a_time_times_out_at_the_deadline() {
    let server = H3Server::start(Script::TrickleHead { every: TRICKLE_EVERY }, Vec::new());
    let (report, wall) = run(trickle_run(server.url("/")));
    let log = server.stop();
    assert_ended_by_deadline(&report, wall, 2, "complete response");
    assert!(log.requests > 0);
}

#[test]
fn a_body_trickled_a_byte_a_frame_times_out_at_the_deadline() {
    let server = H3Server::start(Script::TrickleBody { every: TRICKLE_EVERY }, Vec::new());
    let (report, wall) = run(trickle_run(server.url("/")));
    let log = server.stop();
    assert_ended_by_deadline(&report, wall, 2, "complete response");
    assert!(log.requests > 0);
}

/// The built-in target with HTTP/3 on its TLS port's UDP twin, serving `1k.html`.
fn h3_target() -> (crest_target::Server, tempfile::TempDir) {
    let docroot = tempfile::tempdir().unwrap();
    std::fs::write(docroot.path().join("1k.html"), vec![b'x'; 1024]).unwrap();
    let server = crest_target::Server::start(crest_target::ServeConfig {
        docroot: docroot.path().into(),
        tls: true,
        http3: true,
        threads: 1,
        ..crest_target::ServeConfig::default()
    })
    .expect("target starts");
    (server, docroot)
}

#[test]
fn the_built_in_target_serves_gets_heads_and_posts_over_h3() {
    let (server, _dir) = h3_target();
    let base = server.urls()[0].clone();
    assert!(base.starts_with("https://"));
    let get = RunConfig {
        requests: vec![crest_engine::config::RequestEntry {
            expect_body_bytes: Some(1024),
            expect_body_prefix: Some("xxxx".into()),
            ..crest_engine::config::RequestEntry::to(format!("{base}1k.html"))
        }],
        ..h3_requests(String::new(), 2, 4, 100)
    };
    let (report, _) = run(get);
    no_errors(&report);
    assert_eq!(report.requests, 100);
    let n = &report.tls_negotiated;
    assert_eq!((n.len(), n[0].protocol.as_str(), n[0].cipher.as_str()), (1, "TLSv1.3", "not reported (QUIC)"));
    // HEAD: content-length says 1024, no body comes; not a length mismatch.
    let (head, _) = run(RunConfig { method: "HEAD".into(), ..h3_requests(format!("{base}1k.html"), 1, 2, 20) });
    no_errors(&head);
    assert_eq!((head.requests, head.body_bytes), (20, 0));
    // A POST's body reaches the handler (the dynamic page answers POST with its 1 KB page).
    let post = RunConfig {
        method: "POST".into(),
        body: Some("a=1&b=2".into()),
        ..h3_requests(format!("{base}dyn/env"), 1, 2, 20)
    };
    let (post, _) = run(post);
    no_errors(&post);
    assert_eq!((post.requests, post.body_bytes), (20, 20 * 1024));
}

#[test]
fn a_control_stream_without_settings_ends_the_connection_as_a_parse_error() {
    let server = H3Server::start(Script::NoSettings, Vec::new());
    // A timeout no exchange waits for: the error comes once the handshake is done, and a short one would
    // race a busy host's handshake.
    let (report, took) = run(RunConfig {
        max_requests: None,
        duration_s: Some(0.5),
        timeout_s: 5.0,
        ..h3_requests(server.url("/"), 1, 2, 0)
    });
    let log = server.stop();
    assert!(took < HANG);
    assert!(errors(&report, "parse") > 0, "errors {:?} notes {:?}", report.errors, report.error_notes);
    assert!(report.error_notes.iter().any(|n| n.contains("H3_MISSING_SETTINGS")), "{:?}", report.error_notes);
    assert_eq!(report.requests, 0);
    assert!(log.connections >= 2, "a new connection after each failure: {log:?}");
}
