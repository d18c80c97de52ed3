//! HTTP/2 targets that misbehave or push the client's protocol books:
//! scripted servers (support/h2.rs) on the raw fixture. Each test asserts
//! what the report counts and what the client put on the wire; time bounds
//! only catch hangs, as in hostile.rs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::h2::{new_log, ok_block, serve, H2Conn, Log, Seen};
use crate::support::{
    assert_ended_by_deadline, config, run, Conn, Fixture, HANG_LIMIT, TRICKLE_DURATION_S, TRICKLE_EVERY,
    TRICKLE_TIMEOUT_S,
};
use crest_engine::protocol::h2::frame::{self, code, flag, kind, setting};
use crest_engine::protocol::h2::hpack;
use crest_engine::{HttpVersion, RunConfig, RunReport};

/// Limit used to catch a hang: well above any run here.
const HANG: Duration = Duration::from_secs(10);

/// An h2c run of one second; `timeout_s` is short, for the tests where requests time out (a test whose
/// requests fail otherwise sets one no exchange waits for, so a busy host cannot turn its failure into a timeout).
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
        assert!(s.of_kind(kind::SETTINGS).any(|f| f.has(flag::ACK)), "the server's SETTINGS were not acknowledged");
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
        h.respond_to_all(2);
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
fn the_servers_stream_limit_is_kept() {
    let log = new_log();
    let l = log.clone();
    let most_waiting = Arc::new(AtomicUsize::new(0));
    let m = most_waiting.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[(setting::MAX_CONCURRENT_STREAMS, 1)]) else { return };
        while let Some(id) = h.next_request() {
            // A second stream opened alongside would have come in the same write.
            m.fetch_max(h.read_buffered(), Ordering::Relaxed);
            if !h.respond(id, 2) {
                return;
            }
        }
    });
    let (report, wall) = run(h2_requests(&fx, 1, 4, 40));
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 40);
    assert_eq!(report.h2.expect("HTTP/2 figures").streams_in_use_max, 1);
    assert_eq!(most_waiting.load(Ordering::Relaxed), 0);
    assert!(wall < HANG);
}

#[test]
fn refused_stream_is_sent_again() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        // The first stream is refused (REFUSED_STREAM: not processed), the rest answered.
        let Some(first) = h.next_request() else { return };
        if !h.write(|out| frame::write_rst_stream(out, first, code::REFUSED_STREAM)) {
            return;
        }
        h.respond_to_all(2);
    });
    let (report, wall) = run(h2_requests(&fx, 1, 2, 20));
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 20);
    let h2 = report.h2.expect("HTTP/2 figures");
    assert_eq!((h2.refused, h2.resets, h2.streams_opened), (1, 0, 21), "{h2:?}");
    assert_eq!(seen(&log).iter().map(|s| s.streams().len()).sum::<usize>(), 21);
    assert!(wall < HANG);
}

#[test]
fn a_late_response_after_the_clients_cancel_is_ignored() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        let mut n = 0;
        while let Some(id) = h.next_request() {
            n += 1;
            if n % 2 == 0 {
                // Held until the client gives up on it, then answered all the same.
                loop {
                    match h.read_frame() {
                        None => return,
                        Some(f) if f.kind == kind::RST_STREAM && f.stream == id => break,
                        Some(_) => {}
                    }
                }
                let block = ok_block(2);
                if !h.write(|out| {
                    frame::write_headers(out, id, &block, false, 16_384);
                    frame::write_data(out, id, b"ok", true);
                }) {
                    return;
                }
            } else if !h.respond(id, 2) {
                return;
            }
        }
    });
    let (report, wall) = run(RunConfig { timeout_s: 0.2, ..h2_run(&fx, 1, 1) });
    drop(fx);
    only_errors_of(&report, "timeout");
    assert!(report.requests > 0);
    // The connection outlives its cancelled streams.
    assert_eq!(report.connections_opened, 1);
    let seen = seen(&log);
    let cancels: Vec<u32> = seen.iter().flat_map(|s| s.of_kind(kind::RST_STREAM)).map(|f| f.u32_at(0)).collect();
    assert!(!cancels.is_empty() && cancels.iter().all(|&c| c == code::CANCEL), "RST_STREAM codes {cancels:?}");
    assert!(wall < HANG);
}

#[test]
fn informational_heads_continuations_and_trailers_make_one_response() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        // 103 Early Hints, then a head of ~3 KB in 1000-byte fragments, the body, and trailers.
        let early: &[u8] = &[0x08, 0x03, b'1', b'0', b'3'];
        let mut head = ok_block(2);
        hpack::encode_field(&mut head, b"x-filler", "y".repeat(3000).as_bytes());
        let mut trailers = Vec::new();
        hpack::encode_field(&mut trailers, b"x-trailer", b"t");
        while let Some(id) = h.next_request() {
            if !h.write(|out| {
                frame::write_headers(out, id, early, false, 16_384);
                frame::write_headers(out, id, &head, false, 1000);
                frame::write_data(out, id, b"ok", false);
                frame::write_headers(out, id, &trailers, true, 16_384);
            }) {
                return;
            }
        }
    });
    let (report, wall) = run(h2_requests(&fx, 1, 2, 20));
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 20);
    assert_eq!(report.body_bytes, 40);
    assert_eq!(report.status.get("200"), Some(&20));
    assert!(wall < HANG);
}

#[test]
fn a_request_head_larger_than_a_frame_goes_out_in_continuations() {
    let big = "y".repeat(40_000);
    let log = new_log();
    let fx = Fixture::start(serve(&log, 2));
    let config = RunConfig { headers: vec![("X-Big".into(), big.clone())], ..h2_requests(&fx, 1, 2, 10) };
    let (report, wall) = run(config);
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 10);
    let seen = seen(&log);
    let s = &seen[0];
    for f in s.frames.iter().filter(|f| f.kind == kind::HEADERS || f.kind == kind::CONTINUATION) {
        assert!(f.payload.len() <= 16_384, "a {}-byte header frame", f.payload.len());
    }
    assert!(s.of_kind(kind::CONTINUATION).count() >= 10);
    for id in s.streams() {
        let mut fields = Vec::new();
        hpack::Decoder::new(4096, 1 << 20)
            .decode(&s.block(id), &mut |n, v| fields.push((n.to_vec(), v.to_vec())))
            .expect("a valid request block");
        assert!(fields.contains(&(b"x-big".to_vec(), big.clone().into_bytes())), "stream {id}: no x-big field");
    }
    assert!(wall < HANG);
}

#[test]
fn large_request_bodies_share_the_connection_window() {
    const BODY: usize = 40_000;
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        h.update_windows = true;
        h.respond_to_all(2);
    });
    // Four bodies of 40,000 bytes against a connection window of 65,535.
    let config = RunConfig { method: "POST".into(), body: Some("b".repeat(BODY)), ..h2_requests(&fx, 1, 4, 20) };
    let (report, wall) = run(config);
    drop(fx);
    no_errors(&report);
    assert_eq!(report.requests, 20);
    let seen = seen(&log);
    let data: Vec<usize> = seen.iter().flat_map(|s| s.of_kind(kind::DATA)).map(|f| f.payload.len()).collect();
    assert!(data.iter().all(|&n| n <= 16_384), "DATA frames over the default SETTINGS_MAX_FRAME_SIZE: {data:?}");
    assert_eq!(data.iter().sum::<usize>(), 20 * BODY);
    assert!(wall < HANG);
}

#[test]
fn a_body_longer_than_its_content_length_is_a_parse_error() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        let mut n = 0;
        while let Some(id) = h.next_request() {
            n += 1;
            let ok = if n % 2 == 0 {
                let block = ok_block(2);
                h.write(|out| {
                    frame::write_headers(out, id, &block, false, 16_384);
                    frame::write_data(out, id, b"three", true);
                })
            } else {
                h.respond(id, 2)
            };
            if !ok {
                return;
            }
        }
    });
    // Four streams at once: a malformed response resets its own stream only (RFC 9113 §8.1.1).
    let (report, wall) = run(RunConfig { timeout_s: 5.0, ..h2_run(&fx, 1, 4) });
    drop(fx);
    only_errors_of(&report, "parse");
    assert!(report.requests > 0);
    assert_eq!(report.connections_opened, 1, "the connection survives a malformed response");
    assert!(report.error_notes.iter().any(|n| n.contains("content-length")), "{:?}", report.error_notes);
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
    // A timeout no exchange waits for: the error comes at once, and a short one would race a busy host.
    let (report, wall) = run(RunConfig { timeout_s: 5.0, ..h2_run(&fx, 2, 2) });
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
fn a_frame_inside_a_header_block_is_a_parse_error() {
    malformed(
        false,
        |out, id| {
            frame::write_head(out, 1, kind::HEADERS, 0, id);
            out.push(0x88);
            frame::write_ping(out, false, [0; 8]);
        },
        code::PROTOCOL_ERROR,
        "inside a header block",
    );
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

/// A trickling server's connection: `start(h, stream, n)` answers each
/// request as it arrives (`n` requests came before it), then `drip(h, streams)` runs once every `TRICKLE_EVERY` with
/// the requests answered so far and its count of drips before, until the
/// client goes, the fixture stops or `HANG_LIMIT` passes.
fn trickling(
    start: fn(&mut H2Conn, u32, usize) -> bool,
    drip: fn(&mut H2Conn, &[u32], usize) -> bool,
) -> impl Fn(Conn) + Send + Sync + 'static {
    let log = new_log();
    move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &log, &[]) else { return };
        let (began, mut streams, mut next_drip, mut tick) = (Instant::now(), Vec::new(), Instant::now(), 0);
        while began.elapsed() < HANG_LIMIT && h.poll() {
            while let Some(id) = h.take_request() {
                if !start(&mut h, id, streams.len()) {
                    return;
                }
                streams.push(id);
            }
            if !streams.is_empty() && Instant::now() >= next_drip {
                next_drip = Instant::now() + TRICKLE_EVERY;
                if !drip(&mut h, &streams, tick) {
                    return;
                }
                tick += 1;
            }
        }
    }
}

/// A run of `TRICKLE_DURATION_S` over one connection of two streams, with a `TRICKLE_TIMEOUT_S` timeout.
fn trickle_run(fx: &Fixture) -> RunConfig {
    RunConfig { duration_s: Some(TRICKLE_DURATION_S), timeout_s: TRICKLE_TIMEOUT_S, ..h2_run(fx, 1, 2) }
}

#[test]
fn a_header_block_trickled_in_continuations_times_out_at_the_deadline() {
    // The first response's HEADERS carry one byte of its block, then each
    // CONTINUATION one more, forever: a header block in progress holds the
    // whole connection (no other frame may come between), so every request
    // on it waits for this head.
    fn start(h: &mut H2Conn, stream: u32, before: usize) -> bool {
        if before > 0 {
            return true;
        }
        h.write(|out| {
            frame::write_head(out, 1, kind::HEADERS, 0, stream);
            out.push(ok_block(2)[0]);
        })
    }
    fn drip(h: &mut H2Conn, streams: &[u32], tick: usize) -> bool {
        // The rest of :status 200, then a literal header (new name, not indexed) whose value never ends.
        const BLOCK: &[u8] = b"\x0f\x0d\x012\x00\x06x-drip\x7f\xff\x7f";
        let Some(&first) = streams.first() else { return true };
        h.write(|out| {
            frame::write_head(out, 1, kind::CONTINUATION, 0, first);
            out.push(BLOCK.get(tick).copied().unwrap_or(b'z'));
        })
    }
    let fx = Fixture::start(trickling(start, drip));
    let (report, wall) = run(RunConfig { connections: 1, ..trickle_run(&fx) });
    assert_ended_by_deadline(&report, wall, 2, "complete response");
}

#[test]
fn data_trickled_a_byte_a_frame_times_out_at_the_deadline() {
    // Each response's head says 1 MiB, then DATA brings one byte per frame to every stream still open.
    fn start(h: &mut H2Conn, stream: u32, _: usize) -> bool {
        h.write(|out| frame::write_headers(out, stream, &ok_block(1 << 20), false, 16_384))
    }
    fn drip(h: &mut H2Conn, streams: &[u32], _: usize) -> bool {
        let open: Vec<u32> = streams.iter().copied().filter(|&id| h.is_open(id)).collect();
        h.write(|out| open.iter().for_each(|&id| frame::write_data(out, id, b"z", false)))
    }
    let fx = Fixture::start(trickling(start, drip));
    let (report, wall) = run(trickle_run(&fx));
    assert_ended_by_deadline(&report, wall, 2, "complete response");
}

#[test]
fn a_server_table_made_smaller_is_announced_and_never_filled() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[(setting::HEADER_TABLE_SIZE, 0)]) else { return };
        h.respond_to_all(2);
    });
    let (report, wall) = run(h2_requests(&fx, 1, 2, 20));
    drop(fx);
    no_errors(&report);
    assert!(wall < HANG);
    let seen = seen(&log);
    let blocks: Vec<Vec<u8>> = seen[0].streams().iter().map(|&id| seen[0].block(id)).collect();
    assert_eq!(blocks.len(), 20);
    // The first block begins with a dynamic table size update to 0 (001 00000), the others do not.
    assert_eq!(blocks[0][0], 0x20, "{:02x?}", blocks[0]);
    assert!(blocks[1..].iter().all(|b| b[0] != 0x20 && *b == blocks[0][1..]), "{blocks:02x?}");
    // Every block decodes without a dynamic table: nothing was inserted, nothing refers to an entry.
    let mut decoder = hpack::Decoder::new(0, 4096);
    for b in &blocks {
        let mut fields = 0;
        decoder.decode(b, &mut |_, _| fields += 1).expect("decodes with a table of 0");
        assert!(fields >= 4);
    }
}

#[test]
fn data_beyond_crests_stream_window_is_a_flow_control_error() {
    let log = new_log();
    let l = log.clone();
    let fx = Fixture::start(move |conn: Conn| {
        let Some(mut h) = H2Conn::accept_with(conn, &l, &[]) else { return };
        let Some(id) = h.next_request() else { return };
        // crest's stream window is 100 bytes: 500 in one go ignores it.
        let sent = h.write(|out| {
            frame::write_headers(out, id, &ok_block(500), false, 16_384);
            frame::write_data(out, id, &[b'x'; 500], true);
        });
        if sent {
            h.drain();
        }
    });
    let (report, wall) = run(RunConfig { h2_stream_window_bytes: 100, timeout_s: 5.0, ..h2_run(&fx, 1, 1) });
    drop(fx);
    only_errors_of(&report, "parse");
    assert_eq!(report.requests, 0);
    assert!(report.error_notes.iter().any(|n| n.contains("stream window")), "{:?}", report.error_notes);
    assert!(wall < HANG);
    let goaways: Vec<(u32, u32)> = seen(&log).iter().flat_map(Seen::goaways).collect();
    assert!(goaways.iter().any(|&(_, c)| c == code::FLOW_CONTROL_ERROR), "{goaways:?}");
}
