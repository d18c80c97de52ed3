//! HTTP/2 targets that misbehave or push the client's protocol books:
//! scripted servers (support/h2.rs) on the raw fixture. Each test asserts
//! what the report counts and what the client put on the wire; time bounds
//! only catch hangs, as in hostile.rs.

use std::time::Duration;

use crate::support::h2::{new_log, serve, H2Conn, Log, Seen};
use crate::support::{config, run, Conn, Fixture};
use crest_engine::protocol::h2::frame::{self, code, flag, kind, setting};
use crest_engine::{HttpVersion, RunConfig, RunReport};

/// Limit used to catch a hang: well above any run here.
const HANG: Duration = Duration::from_secs(10);

/// An h2c run of one second; `timeout_s` is short, for the tests where requests fail.
fn h2_run(fx: &Fixture, connections: u32, streams: u32) -> RunConfig {
    RunConfig {
        http_version: HttpVersion::Http2,
        connections,
        streams,
        duration_s: Some(1.0),
        timeout_s: 0.3,
        ..config(fx.url("/"))
    }
}

/// An h2c run of exactly `requests`, with a timeout no healthy exchange reaches.
fn h2_requests(fx: &Fixture, connections: u32, streams: u32, requests: u64) -> RunConfig {
    RunConfig { duration_s: None, max_requests: Some(requests), timeout_s: 5.0, ..h2_run(fx, connections, streams) }
}

fn errors(report: &RunReport, kind: &str) -> u64 {
    report.errors.get(kind).copied().unwrap_or(0)
}

fn no_errors(report: &RunReport) {
    assert!(report.errors.values().all(|&n| n == 0), "errors {:?} notes {:?}", report.errors, report.error_notes);
}

fn only_errors_of(report: &RunReport, kind: &str) {
    assert!(errors(report, kind) > 0, "no {kind} errors: {:?} notes {:?}", report.errors, report.error_notes);
    for (k, n) in &report.errors {
        if *k != kind {
            assert_eq!(*n, 0, "unexpected {k} errors: {:?} notes {:?}", report.errors, report.error_notes);
        }
    }
}

/// What the server saw, once every connection's handler has finished (the fixture must be dropped).
fn seen(log: &Log) -> Vec<Seen> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn streams_share_connections_with_odd_increasing_ids() {
    let log = new_log();
    let fx = Fixture::start(serve(&log, 2));
    let (report, wall) = run(h2_requests(&fx, 2, 4, 400));
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 400);
    assert_eq!(report.body_bytes, 800);
    let h2 = report.h2.expect("HTTP/2 figures");
    assert_eq!(h2.streams_opened, 400);
    assert!((2..=4).contains(&h2.streams_in_use_max), "{h2:?}");
    let seen = seen(&log);
    assert_eq!(seen.len() as u64, report.connections_opened);
    assert_eq!(seen.len(), 2);
    let mut total = 0;
    for s in &seen {
        assert!(s.preface, "connection {} did not begin with the preface", s.index);
        let ids = s.streams();
        assert!(ids.iter().all(|id| id % 2 == 1), "even stream id: {ids:?}");
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "stream ids not increasing: {ids:?}");
        total += ids.len();
    }
    assert_eq!(total, 400);
    assert!(wall < HANG);
}

#[test]
fn request_bodies_wait_for_a_tiny_server_window() {
    const BODY: usize = 100;
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[(setting::INITIAL_WINDOW_SIZE, 10)]) else { return };
        // Windows given back as each DATA frame is read.
        h.update_windows = true;
        while let Some(id) = h.next_request() {
            if !h.respond(id, 2) {
                return;
            }
        }
    });
    let config = RunConfig { method: "POST".into(), body: Some("b".repeat(BODY)), ..h2_requests(&fx, 1, 2, 40) };
    let (report, wall) = run(config);
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 40);
    let mut streams = 0;
    for s in seen(&log) {
        for id in s.streams() {
            let data: Vec<usize> = s.of_kind(kind::DATA).filter(|f| f.stream == id).map(|f| f.payload.len()).collect();
            assert_eq!(data.iter().sum::<usize>(), BODY, "stream {id}: DATA frames {data:?}");
            assert!(data.iter().all(|&n| n <= 10), "stream {id} overran its window of 10: {data:?}");
            streams += 1;
        }
    }
    assert_eq!(streams, 40);
    assert!(wall < HANG);
}

#[test]
fn a_small_client_window_is_reopened_by_window_updates() {
    const BODY: usize = 5000;
    let log = new_log();
    // The server sends no more DATA than the client's windows allow and waits for WINDOW_UPDATEs.
    let fx = Fixture::start(serve(&log, BODY));
    let config = RunConfig { h2_stream_window_bytes: 1000, ..h2_requests(&fx, 1, 2, 20) };
    let (report, wall) = run(config);
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 20);
    assert_eq!(report.body_bytes, 20 * BODY as u64);
    let seen = seen(&log);
    for s in &seen {
        assert!(s.settings().contains(&(setting::INITIAL_WINDOW_SIZE, 1000)), "{:?}", s.settings());
    }
    let stream_updates = seen.iter().flat_map(|s| s.of_kind(kind::WINDOW_UPDATE)).filter(|f| f.stream != 0).count();
    // Each 5000-byte body needs at least four stream WINDOW_UPDATEs through a 1000-byte window.
    assert!(stream_updates >= 20 * 4, "{stream_updates} stream WINDOW_UPDATEs");
    assert!(wall < HANG);
}

#[test]
fn goaway_finishes_served_streams_and_resends_refused_ones() {
    const K: usize = 5;
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        for _ in 0..K - 1 {
            let Some(id) = h.next_request() else { return };
            if !h.respond(id, 2) {
                return;
            }
        }
        let Some(last) = h.next_request() else { return };
        // A stream above `last` is in flight too (four lanes): GOAWAY refuses it.
        if h.next_request().is_none() {
            return;
        }
        if !h.write(|out| frame::write_goaway(out, last, code::NO_ERROR)) {
            return;
        }
        // Streams up to `last` are still answered after the GOAWAY.
        if h.respond(last, 2) {
            h.drain();
        }
    });
    let config = RunConfig { timeout_s: 5.0, ..h2_run(&fx, 1, 4) };
    let (report, wall) = run(config);
    drop(fx);
    no_errors(&report);
    assert!(report.requests > 0);
    assert!(report.connections_opened > 1, "{} connections", report.connections_opened);
    let h2 = report.h2.expect("HTTP/2 figures");
    assert!(h2.goaways > 0 && h2.refused > 0, "{h2:?}");
    // Every connection but the run's last got its GOAWAY after K answers.
    assert!(report.requests >= K as u64 * (report.connections_opened - 1), "{} requests", report.requests);
    assert!(wall < HANG);
}

#[test]
fn rst_stream_is_a_reset_error_and_the_rest_succeed() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        let mut n = 0;
        while let Some(id) = h.next_request() {
            n += 1;
            let ok = if n % 3 == 0 { h.write(|out| frame::write_rst_stream(out, id, 2)) } else { h.respond(id, 2) };
            if !ok {
                return;
            }
        }
    });
    let (report, wall) = run(RunConfig { timeout_s: 5.0, ..h2_run(&fx, 2, 4) });
    drop(fx);
    only_errors_of(&report, "reset");
    assert!(report.requests > 0);
    let h2 = report.h2.expect("HTTP/2 figures");
    assert_eq!(h2.resets, errors(&report, "reset"));
    assert!(report.error_notes.iter().any(|n| n.contains("INTERNAL_ERROR")), "{:?}", report.error_notes);
    // Every connection stays up: a reset ends a stream, not the connection.
    assert_eq!(report.connections_opened, 2);
    assert!(wall < HANG);
}

/// A server that sends `bad` (after a request unless `at_start`); the run
/// counts parse errors only, ends on time, and the client says `goaway_code`.
fn malformed(at_start: bool, bad: fn(&mut Vec<u8>, u32), goaway_code: u32, note: &str) {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let h = if at_start { H2Conn::accept(conn, &l) } else { H2Conn::accept_with(conn, &l, &[]) };
        let Some(mut h) = h else { return };
        let stream = if at_start {
            0
        } else {
            let Some(id) = h.next_request() else { return };
            id
        };
        if h.write(|out| bad(out, stream)) {
            h.drain();
        }
    });
    let (report, wall) = run(h2_run(&fx, 2, 2));
    drop(fx);
    only_errors_of(&report, "parse");
    assert_eq!(report.requests, 0);
    assert!(report.error_notes.iter().any(|n| n.contains(note)), "{:?}", report.error_notes);
    assert!(report.duration_s <= 1.0 + 1e-9);
    assert!(wall < HANG);
    let goaways: Vec<(u32, u32)> = seen(&log).iter().flat_map(Seen::goaways).collect();
    assert!(goaways.iter().any(|&(_, c)| c == goaway_code), "no GOAWAY {}: {goaways:?}", code::name(goaway_code));
    assert!(goaways.iter().all(|&(_, c)| c == goaway_code || c == code::NO_ERROR), "{goaways:?}");
}

#[test]
fn frame_longer_than_max_frame_size_is_a_parse_error() {
    // Only the header: the client refuses the frame on its length.
    malformed(false, |out, id| frame::write_head(out, 20_000, kind::DATA, 0, id), code::FRAME_SIZE_ERROR, "FRAME_SIZE");
}

#[test]
fn settings_of_five_bytes_is_a_parse_error() {
    malformed(
        true,
        |out, _| {
            frame::write_head(out, 5, kind::SETTINGS, 0, 0);
            out.extend_from_slice(&[0, 4, 0, 0, 1]);
        },
        code::FRAME_SIZE_ERROR,
        "multiple of 6",
    );
}

#[test]
fn bad_hpack_index_is_a_parse_error() {
    // 0xbe: index 62, the first dynamic entry, of an empty table.
    malformed(
        false,
        |out, id| frame::write_headers(out, id, &[0xbe], true, 16_384),
        code::COMPRESSION_ERROR,
        "COMPRESSION_ERROR",
    );
}

#[test]
fn data_on_stream_zero_is_a_parse_error() {
    malformed(false, |out, _| frame::write_data(out, 0, b"xx", true), code::PROTOCOL_ERROR, "DATA on stream 0");
}

#[test]
fn goaway_with_an_error_code_fails_requests_in_flight_as_resets() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        // Two streams in flight, then the server gives up on all of them.
        if h.next_request().is_none() || h.next_request().is_none() {
            return;
        }
        if h.write(|out| frame::write_goaway(out, 0, 0xb)) {
            h.drain();
        }
    });
    let (report, wall) = run(RunConfig { timeout_s: 5.0, ..h2_run(&fx, 2, 4) });
    drop(fx);
    only_errors_of(&report, "reset");
    assert_eq!(report.requests, 0);
    let h2 = report.h2.expect("HTTP/2 figures");
    assert!(h2.goaways > 0, "{h2:?}");
    assert!(report.error_notes.iter().any(|n| n.contains("ENHANCE_YOUR_CALM")), "{:?}", report.error_notes);
    // Failed, not sent again: none of them is a refused stream.
    assert_eq!(h2.refused, 0, "{h2:?}");
    // The client does not send the server's complaint back.
    let goaways: Vec<(u32, u32)> = seen(&log).iter().flat_map(Seen::goaways).collect();
    assert!(goaways.iter().all(|&(_, c)| c == code::NO_ERROR), "client GOAWAYs {goaways:?}");
    assert!(wall < HANG);
}

#[test]
fn ping_is_answered_with_its_opaque_bytes() {
    const FIRST: [u8; 8] = *b"crest-h2";
    const LATER: [u8; 8] = [0, 1, 2, 3, 252, 253, 254, 255];
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        if !h.write(|out| frame::write_ping(out, false, FIRST)) {
            return;
        }
        let mut n = 0;
        while let Some(id) = h.next_request() {
            n += 1;
            if !h.respond(id, 2) || (n == 1 && !h.write(|out| frame::write_ping(out, false, LATER))) {
                return;
            }
        }
    });
    let (report, wall) = run(h2_requests(&fx, 1, 2, 20));
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 20);
    let seen = seen(&log);
    let acks: Vec<&[u8]> =
        seen.iter().flat_map(|s| s.of_kind(kind::PING)).filter(|f| f.has(flag::ACK)).map(|f| &f.payload[..]).collect();
    assert_eq!(acks, [&FIRST[..], &LATER[..]]);
    assert!(wall < HANG);
}

#[test]
fn server_that_never_sends_settings_times_out() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        if let Some(mut h) = H2Conn::accept(conn, &l) {
            h.drain();
        }
    });
    let (report, wall) = run(h2_run(&fx, 2, 2));
    drop(fx);
    only_errors_of(&report, "timeout");
    assert_eq!(report.requests, 0);
    assert!(report.duration_s <= 1.0 + 1e-9);
    assert!(wall < HANG);
    // No stream is opened before the server's SETTINGS.
    for s in seen(&log) {
        assert!(s.preface);
        assert!(s.streams().is_empty(), "HEADERS sent on {:?}", s.streams());
    }
}
