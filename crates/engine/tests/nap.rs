//! Naps: under load (many responses in flight, each slow enough) a worker
//! naps instead of blocking on its sockets, and the run counts the same; at
//! light load, or with `nap` off, it always blocks.

use std::time::Duration;

use crate::support::{config, respond_always, run, Conn, Fixture, OK_2};
use crest_engine::RunConfig;

/// 256 connections with 50 ms responses: about five responses due per nap of
/// 1/50 of 50 ms, enough for the worker to nap rather than block.
fn slow_target() -> Fixture {
    Fixture::start(|mut conn: Conn| {
        while conn.read_request().is_some() {
            std::thread::sleep(Duration::from_millis(50));
            if !conn.send(OK_2) {
                return;
            }
        }
    })
}

fn loaded(fx: &Fixture, nap: bool) -> RunConfig {
    RunConfig { duration_s: Some(1.5), connections: 256, threads: 1, timeout_s: 5.0, nap, ..config(fx.url("/")) }
}

#[test]
fn under_load_the_worker_naps_and_counts_the_same() {
    let fx = slow_target();
    let (report, _) = run(loaded(&fx, true));
    assert!(report.naps > 0, "no naps at 256 × 50 ms");
    assert_eq!(report.errors.values().sum::<u64>(), 0, "{:?}", report.errors);
    // Every connection kept its exchanges going: about 30 each in 1.5 s.
    assert!(report.requests >= 256 * 10, "{} requests", report.requests);
    assert!(report.latency_us.p50 >= 50_000, "a response read before it was sent: {:?}", report.latency_us);
    assert_eq!(report.clients.len(), 256);
    assert!(report.clients.iter().all(|c| c.requests > 0));
}

#[test]
fn with_nap_off_the_worker_always_blocks() {
    let fx = slow_target();
    let (report, _) = run(loaded(&fx, false));
    assert_eq!(report.naps, 0);
    assert_eq!(report.errors.values().sum::<u64>(), 0, "{:?}", report.errors);
    assert!(report.requests >= 256 * 10, "{} requests", report.requests);
}

#[test]
fn at_light_load_the_worker_blocks() {
    // Two connections to a fast target: far fewer than two responses due per nap.
    let fx = Fixture::start(respond_always(OK_2));
    let (report, _) = run(RunConfig { duration_s: Some(0.5), connections: 2, threads: 1, ..config(fx.url("/")) });
    assert!(report.requests > 0);
    assert_eq!(report.naps, 0);
}

#[test]
fn connects_count_as_timings_so_a_run_that_reconnects_blocks() {
    // The same load with a new connection per request (the server closes after each response): as
    // many connects (tens of µs) as responses bound the nap below what pays, so the worker blocks.
    // Each connection waits its own 30–69 ms (50 on average), so that reconnects come spread out:
    // in lockstep, 256 connects begun in one burst read as long as the worker takes to begin them
    // all, which on a slow machine (a debug build, a busy CI host) is a good part of the margin.
    let fx = Fixture::start(|mut conn: Conn| {
        if conn.read_request().is_some() {
            std::thread::sleep(Duration::from_millis(30 + (conn.index as u64 * 37) % 40));
            conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    let (report, _) = run(RunConfig { duration_s: Some(1.0), keepalive: false, ..loaded(&fx, true) });
    assert_eq!(report.errors.values().sum::<u64>(), 0, "{:?}", report.errors);
    assert!(report.requests >= 256, "{} requests", report.requests);
    assert!(report.connections_opened >= report.requests);
    assert_eq!(report.naps, 0);
}
