//! The pacing arithmetic (no clock involved) and exact merging of stats.

use std::time::Duration;

use crest_engine::schedule::{scaled, Schedule, MAX_SCALED};
use crest_engine::stats::{Completion, Stats};
use crest_engine::ErrorKind;

#[test]
fn open_loop_spreads_connections_evenly_over_the_rate() {
    let s = Schedule::open_loop(1000.0, 4);
    assert!(s.is_open_loop());
    let mut sends: Vec<Duration> = Vec::new();
    for c in 0..4 {
        let mut t = s.first_send(c);
        for _ in 0..250 {
            sends.push(t);
            t = s.next_send(t, t + Duration::from_secs(5)); // a slow response does not move the schedule
        }
    }
    sends.sort();
    assert_eq!(sends.len(), 1000);
    for pair in sends.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap.abs_diff(Duration::from_millis(1)) < Duration::from_micros(2), "gap {gap:?}");
    }
    assert!(sends[999] < Duration::from_secs(1));
}

#[test]
fn closed_loop_follows_responses_plus_think_time() {
    let s = Schedule::closed_loop(Duration::from_millis(250));
    assert!(!s.is_open_loop());
    assert_eq!(s.first_send(7), Duration::ZERO);
    assert_eq!(s.next_send(Duration::from_secs(1), Duration::from_secs(3)), Duration::from_millis(3250));
}

#[test]
fn a_timed_replay_counts_from_logged_times_scaled_by_its_speed() {
    let s = Schedule::timed(10.0);
    assert!(s.is_open_loop(), "latency counts from the logged time");
    assert_eq!(s.first_send(3), Duration::ZERO, "every connection takes its first request at once");
    // The next logged request says when it is due: the schedule only frees the connection.
    assert_eq!(s.next_send(Duration::from_secs(1), Duration::from_secs(3)), Duration::from_secs(3));
    assert_eq!(scaled(1_234_567, 1.0), Duration::from_micros(1_234_567), "exact at the logged pace");
    assert_eq!(scaled(1_000_000, 10.0), Duration::from_millis(100));
    assert_eq!(scaled(1_000, 0.5), Duration::from_millis(2));
    assert_eq!(scaled(u64::MAX, 1e-9), MAX_SCALED, "a slow replay of a long log stops at a year, never overflows");
}

#[test]
fn merged_stats_equal_stats_recorded_in_one_place() {
    let new = || Stats::new(None, 3, 4, None);
    let (mut one, mut a, mut b) = (new(), new(), new());
    for i in 0..1000u64 {
        let c = Completion {
            at: Duration::from_millis(i * 3),
            status: if i % 10 == 0 { 404 } else { 200 },
            bytes: 150,
            body_bytes: 100,
            latency: Duration::from_micros(50 + i * 37 % 5000),
            class: (i % 3) as usize,
            client: (i % 4) as usize,
        };
        one.record_response(&c);
        one.record_bytes(c.at, 150);
        let part = if i % 3 == 0 { &mut a } else { &mut b };
        part.record_response(&c);
        part.record_bytes(c.at, 150);
    }
    one.record_error(Duration::from_secs(2), ErrorKind::Timeout, 1, 2, Some(&"slow"));
    b.record_error(Duration::from_secs(2), ErrorKind::Timeout, 1, 2, Some(&"slow"));
    a.merge(&b);
    assert_eq!(a.latency_us, one.latency_us);
    assert_eq!(
        (a.requests, a.responses, a.bytes, a.body_bytes),
        (one.requests, one.responses, one.bytes, one.body_bytes)
    );
    assert_eq!(a.errors, one.errors);
    assert_eq!(a.clients, one.clients);
    for (x, y) in a.classes.iter().zip(&one.classes) {
        assert_eq!((x.requests, x.bytes, x.errors), (y.requests, y.bytes, y.errors));
        assert_eq!(x.latency_us, y.latency_us);
    }
    assert_eq!(a.status_counts().collect::<Vec<_>>(), one.status_counts().collect::<Vec<_>>());
    assert_eq!(a.timeline.buckets(), one.timeline.buckets());
    assert_eq!(a.first_error[ErrorKind::Timeout.index()].as_deref(), Some("slow"));
}

#[test]
fn a_window_counts_only_what_completes_inside_it() {
    let window = Some((Duration::from_secs(1), Duration::from_secs(3)));
    let mut s = Stats::new(None, 1, 1, window);
    for ms in (0..4000).step_by(10) {
        let at = Duration::from_millis(ms);
        s.record_response(&Completion {
            at,
            status: 200,
            bytes: 10,
            body_bytes: 5,
            latency: Duration::from_micros(100),
            class: 0,
            client: 0,
        });
        s.record_bytes(at, 10);
    }
    assert_eq!(s.requests, 200);
    assert_eq!(s.bytes, 2000);
    assert_eq!(s.clients[0].requests, 200);
    assert_eq!(s.timeline.buckets().iter().map(|b| b.requests).sum::<u64>(), 400);
}
