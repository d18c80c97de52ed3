//! The end of a run: without a drain an exchange still in flight at the end
//! is dropped uncounted (as wrk does); with one it may finish, counts when the
//! window reaches past the end, and nothing new is sent after the end.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::{config, run, Conn, Fixture};
use crest_engine::RunConfig;

/// Each response comes this long after its request: the last one is always in flight at the end.
const DELAY: Duration = Duration::from_millis(300);

fn slow_target(served: Arc<AtomicU64>) -> Fixture {
    Fixture::start(move |mut conn: Conn| {
        while conn.read_request().is_some() {
            std::thread::sleep(DELAY);
            conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            served.fetch_add(1, Ordering::SeqCst);
        }
    })
}

fn one_connection(fx: &Fixture) -> RunConfig {
    // 1.0 s at 0.3 s per exchange: three complete, the fourth is in flight at the end.
    RunConfig { duration_s: Some(1.0), connections: 1, threads: 1, timeout_s: 5.0, ..config(fx.url("/")) }
}

#[test]
fn without_drain_the_exchange_in_flight_is_dropped() {
    let served = Arc::new(AtomicU64::new(0));
    let fx = slow_target(served.clone());
    let (report, _) = run(one_connection(&fx));
    assert_eq!(report.requests, 3);
    assert!(report.duration_s <= 1.0 + 1e-6);
}

#[test]
fn with_drain_the_exchange_in_flight_finishes_and_counts() {
    let served = Arc::new(AtomicU64::new(0));
    let fx = slow_target(served.clone());
    let cfg = RunConfig { drain_s: 60.0, window_s: Some([0.0, 61.0]), ..one_connection(&fx) };
    let (report, wall) = run(cfg);
    assert_eq!(report.requests, 4, "{:?}", report.errors);
    assert_eq!(report.errors.values().sum::<u64>(), 0);
    // The drain ends when the last exchange does, not at its 60 s limit (a
    // hang bound, not a speed check); the rate is over the seconds before the
    // end, when requests were sent.
    assert!(wall < Duration::from_secs(30), "{wall:?}");
    assert!((report.window_s - 1.0).abs() < 1e-6, "{}", report.window_s);
    std::thread::sleep(DELAY * 2);
    assert_eq!(served.load(Ordering::SeqCst), 4, "a request was sent after the end");
}

#[test]
fn drain_outside_its_range_is_rejected() {
    let fx = Fixture::start(|_conn: Conn| {});
    let err = crest_engine::start(&RunConfig { drain_s: -1.0, ..one_connection(&fx) }).err().expect("rejected");
    assert!(err.to_string().contains("drain"), "{err}");
}
