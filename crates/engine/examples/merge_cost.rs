//! What merging a cluster's results costs the driver: builds 100 synthetic
//! parts (10 classes, 100 clients, a 300 s timeline and 1e5 latencies from
//! 1 µs to 10 s each), then times `merge_parts` over them (median of 21).
//! `cargo run --release --example merge_cost --features pyo3/extension-module`

use std::time::{Duration, Instant};

use crest_engine::rng::Rng;
use crest_engine::stats::{Completion, Stats};
use crest_engine::{merge_parts, ErrorKind, Part, RunFacts};

const PARTS: usize = 100;
const CLASSES: usize = 10;
const CLIENTS: usize = 100;
const SECONDS: u64 = 300;
const RESPONSES: usize = 100_000;
const REPEATS: usize = 21;

fn main() {
    let facts = RunFacts {
        classes: (0..CLASSES).map(|c| format!("class{c}")).collect(),
        window: Some((Duration::ZERO, Duration::from_secs(SECONDS))),
        duration: Some(Duration::from_secs(SECONDS)),
        rate_rps: None,
        threads: 4,
        connections: CLIENTS as u32,
    };
    let parts: Vec<String> = (0..PARTS).map(|i| synthetic(&facts, i as u64).to_json()).collect();
    let bytes: usize = parts.iter().map(String::len).sum();
    let input: Vec<(&str, u32)> = parts.iter().enumerate().map(|(i, p)| (p.as_str(), (i * CLIENTS) as u32)).collect();
    let mut times: Vec<Duration> = (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            let report = merge_parts(&input).expect("synthetic parts merge");
            let took = start.elapsed();
            assert_eq!(report.requests + report.errors["status"], (PARTS * RESPONSES) as u64);
            took
        })
        .collect();
    times.sort();
    let median = times[REPEATS / 2];
    eprintln!("({PARTS} parts of {:.0} KiB each on average)", bytes as f64 / PARTS as f64 / 1024.0);
    println!("merge_parts: {PARTS} parts in {:.1} ms", median.as_secs_f64() * 1e3);
}

/// One node's results: latencies log-uniform over 1 µs – 10 s.
fn synthetic(facts: &RunFacts, seed: u64) -> Part {
    let mut rng = Rng::new(seed);
    let mut stats = Stats::new(facts.duration, CLASSES, CLIENTS, facts.window);
    for _ in 0..RESPONSES {
        let at = Duration::from_secs_f64(rng.next_f64() * SECONDS as f64);
        let status = if rng.below(100) == 0 { 503 } else { 200 };
        let latency = Duration::from_secs_f64(1e-6 * 1e7f64.powf(rng.next_f64()));
        let c = Completion {
            at,
            status,
            bytes: 1000,
            body_bytes: 800,
            latency,
            class: rng.below(CLASSES),
            client: rng.below(CLIENTS),
        };
        stats.record_response(&c);
        stats.record_bytes(at, 1000);
        stats.record_read(1000);
    }
    for _ in 0..1000 {
        stats.record_connect(Duration::from_micros(20 + rng.below(2000) as u64));
        let negotiated = (Some(rustls::ProtocolVersion::TLSv1_3), Some(rustls::CipherSuite::TLS13_AES_128_GCM_SHA256));
        stats.record_tls_handshake(Duration::from_micros(500 + rng.below(5000) as u64), rng.below(2) == 0, negotiated);
    }
    stats.record_error(Duration::from_secs(1), ErrorKind::Timeout, 0, 0, Some(&"no response within 10 s"));
    Part {
        stats,
        facts: facts.clone(),
        elapsed: Duration::from_secs(SECONDS),
        cpu: Duration::from_secs(30),
        cancelled: false,
    }
}
