//! The pacing arithmetic (no clock involved) and exact merging of stats.

use std::time::Duration;

use crest_engine::schedule::Schedule;
use crest_engine::stats::Stats;
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
fn merged_stats_equal_stats_recorded_in_one_place() {
    let mut one = Stats::new(None);
    let mut a = Stats::new(None);
    let mut b = Stats::new(None);
    for i in 0..1000u64 {
        let latency = Duration::from_micros(50 + i * 37 % 5000);
        let status = if i % 10 == 0 { 404 } else { 200 };
        let second = (i / 300) as usize;
        one.record_response(second, status, 100, latency);
        one.record_bytes(second, 150);
        let part = if i % 3 == 0 { &mut a } else { &mut b };
        part.record_response(second, status, 100, latency);
        part.record_bytes(second, 150);
    }
    one.record_error(2, ErrorKind::Timeout, Some(&"slow"));
    b.record_error(2, ErrorKind::Timeout, Some(&"slow"));
    a.merge(&b);
    assert_eq!(a.latency_us, one.latency_us);
    assert_eq!(a.requests, one.requests);
    assert_eq!(a.responses, one.responses);
    assert_eq!(a.bytes, one.bytes);
    assert_eq!(a.body_bytes, one.body_bytes);
    assert_eq!(a.errors, one.errors);
    assert_eq!(a.status_counts().collect::<Vec<_>>(), one.status_counts().collect::<Vec<_>>());
    assert_eq!(a.timeline.buckets(), one.timeline.buckets());
    assert_eq!(a.first_error[ErrorKind::Timeout.index()].as_deref(), Some("slow"));
}
