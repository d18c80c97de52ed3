//! Weighted request tables: selection follows the weights, every class and
//! client is accounted for, responses are validated against expected sizes,
//! and one table may mix plain and TLS targets (WebBench e-commerce).

use std::collections::HashMap;

use crate::support::{run, Conn, Fixture};
use crest_engine::rng::Rng;
use crest_engine::table::AliasTable;
use crest_engine::{RequestEntry, RunConfig};

#[test]
fn alias_table_probabilities_are_exactly_the_normalised_weights() {
    let weights = [35.0, 50.0, 14.0, 1.0, 0.001, 7.5];
    let total: f64 = weights.iter().sum();
    let table = AliasTable::new(&weights);
    for (p, w) in table.probabilities().iter().zip(weights) {
        assert!((p - w / total).abs() < 1e-12, "{p} vs {}", w / total);
    }
}

#[test]
fn alias_table_draws_follow_the_weights() {
    let weights = [35.0, 50.0, 14.0, 1.0];
    let table = AliasTable::new(&weights);
    let mut rng = Rng::new(7);
    let mut counts = [0u64; 4];
    let draws = 1_000_000;
    for _ in 0..draws {
        counts[table.pick(&mut rng)] += 1;
    }
    for (c, w) in counts.iter().zip(weights) {
        let p = w / 100.0;
        let sd = (draws as f64 * p * (1.0 - p)).sqrt();
        // Five standard deviations: a wrong distribution fails, chance does not.
        assert!((*c as f64 - draws as f64 * p).abs() < 5.0 * sd, "{counts:?}");
    }
}

/// Answers each request with a body whose length is the number in the path
/// (`/n/1234` → 1234 bytes); `/bad/N` answers one byte short.
fn sized_bodies(mut conn: Conn) {
    while let Some(request) = conn.read_request() {
        let line = String::from_utf8_lossy(&request).lines().next().unwrap_or_default().to_string();
        let path = line.split(' ').nth(1).unwrap_or("/n/0");
        let n: usize = path.rsplit('/').next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let n = if path.starts_with("/bad/") { n - 1 } else { n };
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n");
        if !conn.send(&[head.as_bytes(), &vec![b'x'; n]].concat()) {
            return;
        }
    }
}

fn entry(fx: &Fixture, path: &str, weight: f64, class: u32, expect: Option<u64>) -> RequestEntry {
    RequestEntry { weight, class, expect_body_bytes: expect, ..RequestEntry::to(fx.url(path)) }
}

#[test]
fn classes_get_their_shares_and_their_own_accounting() {
    let fx = Fixture::start(sized_bodies);
    let shares = [("class0", 35.0, 100), ("class1", 50.0, 1000), ("class2", 14.0, 10000), ("class3", 1.0, 100000)];
    let config = RunConfig {
        requests: shares
            .iter()
            .enumerate()
            .map(|(i, (_, w, n))| entry(&fx, &format!("/n/{n}"), *w, i as u32, Some(*n)))
            .collect(),
        classes: shares.iter().map(|(name, _, _)| name.to_string()).collect(),
        max_requests: Some(4000),
        connections: 4,
        threads: 2,
        seed: 42,
        ..RunConfig::default()
    };
    let (report, _) = run(config);
    assert_eq!(report.requests, 4000, "{:?}", report.error_notes);
    let mut seen: HashMap<String, u64> = HashMap::new();
    for request in fx.log.lock().unwrap().iter() {
        let path = String::from_utf8_lossy(request).split(' ').nth(1).unwrap().to_string();
        *seen.entry(path).or_default() += 1;
    }
    for (name, weight, n) in shares {
        let class = &report.classes[name];
        let p = weight / 100.0;
        let sd = (4000.0 * p * (1.0 - p)).sqrt();
        assert!((class.requests as f64 - 4000.0 * p).abs() < 5.0 * sd + 1.0, "{name}: {} requests", class.requests);
        assert_eq!(seen[&format!("/n/{n}")], class.requests);
        assert_eq!(class.errors, 0);
        assert!(class.bytes >= class.requests * n);
        assert!(class.latency_us.p50 > 0);
    }
}

#[test]
fn a_body_of_the_wrong_size_is_a_validation_error() {
    let fx = Fixture::start(sized_bodies);
    let config = RunConfig {
        requests: vec![entry(&fx, "/n/50", 1.0, 0, Some(50)), entry(&fx, "/bad/50", 1.0, 1, Some(50))],
        classes: vec!["good".into(), "bad".into()],
        max_requests: Some(200),
        connections: 2,
        ..RunConfig::default()
    };
    let (report, _) = run(config);
    assert_eq!(report.requests + report.errors["validation"], 200);
    assert_eq!(report.classes["bad"].requests, 0);
    assert_eq!(report.classes["bad"].errors, report.errors["validation"]);
    assert_eq!(report.classes["good"].errors, 0);
    assert!(
        report.error_notes.iter().any(|n| n.contains("49 bytes where the manifest says 50")),
        "{:?}",
        report.error_notes
    );
}

#[test]
fn clients_get_scores_for_their_connections() {
    let fx = Fixture::start(crate::support::respond_always(crate::support::OK_2));
    let config = RunConfig {
        url: fx.url("/"),
        connections: 6,
        threads: 2,
        connections_per_client: 3,
        max_requests: Some(600),
        ..RunConfig::default()
    };
    let (report, _) = run(config);
    assert_eq!(report.clients.len(), 2);
    assert_eq!(report.clients.iter().map(|c| c.requests).sum::<u64>(), 600);
    assert!(report.clients.iter().all(|c| c.requests > 0 && c.errors == 0));
}

#[test]
fn one_table_can_mix_plain_and_tls_targets() {
    let docroot = tempfile::tempdir().unwrap();
    std::fs::write(docroot.path().join("f.html"), vec![b'x'; 300]).unwrap();
    let server = crest_target::Server::start(crest_target::ServeConfig {
        docroot: docroot.path().into(),
        tls_port: Some(0),
        threads: 1,
        ..Default::default()
    })
    .unwrap();
    let urls = server.urls();
    let config = RunConfig {
        requests: vec![
            RequestEntry {
                weight: 92.0,
                class: 0,
                expect_body_bytes: Some(300),
                ..RequestEntry::to(format!("{}f.html", urls[0]))
            },
            RequestEntry {
                weight: 8.0,
                class: 1,
                expect_body_bytes: Some(300),
                ..RequestEntry::to(format!("{}f.html", urls[1]))
            },
        ],
        classes: vec!["plain".into(), "ssl".into()],
        insecure: true,
        keepalive: false,
        max_requests: Some(300),
        connections: 2,
        ..RunConfig::default()
    };
    let (report, _) = run(config);
    assert_eq!(report.requests, 300, "{:?}", report.error_notes);
    assert!(report.classes["ssl"].requests > 0);
    assert_eq!(report.tls_handshakes, report.classes["ssl"].requests);
    assert_eq!(report.connections_opened, 300);
}

#[test]
fn a_window_cuts_the_ramps_of_a_real_run() {
    let fx = Fixture::start(crate::support::respond_always(crate::support::OK_2));
    let config = RunConfig {
        url: fx.url("/"),
        connections: 2,
        duration_s: Some(3.0),
        window_s: Some([1.0, 2.0]),
        ..RunConfig::default()
    };
    let (report, _) = run(config);
    assert!((report.window_s - 1.0).abs() < 1e-9);
    assert!(report.timeline.len() >= 3);
    // Whole-second buckets line up with the window: the middle one is it.
    assert_eq!(report.requests, report.timeline[1].requests);
    assert!((report.rps - report.requests as f64).abs() < 1e-6);
}

/// Serves `/ok/N` and `/bad/N` as N-byte bodies starting "head:N\n" (bad: "HEAD"),
/// with Content-Length, or chunked in 3-byte chunks when the path ends in `c`.
fn headed_bodies(mut conn: Conn) {
    while let Some(request) = conn.read_request() {
        let line = String::from_utf8_lossy(&request).lines().next().unwrap_or_default().to_string();
        let path = line.split(' ').nth(1).unwrap_or("/ok/0").to_string();
        let chunked = path.ends_with('c');
        let n: usize = path.trim_end_matches('c').rsplit('/').next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let head = if path.starts_with("/bad/") { format!("HEAD:{n}\n") } else { format!("head:{n}\n") };
        let mut body = head.into_bytes();
        body.resize(n, b'.');
        let response = if chunked {
            let mut r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            for piece in body.chunks(3) {
                r.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                r.extend_from_slice(piece);
                r.extend_from_slice(b"\r\n");
            }
            r.extend_from_slice(b"0\r\n\r\n");
            r
        } else {
            [format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes(), body].concat()
        };
        if !conn.send(&response) {
            return;
        }
    }
}

#[test]
fn a_body_that_starts_wrong_is_a_validation_error() {
    let fx = Fixture::start(headed_bodies);
    let with_prefix = |path: &str, class: u32, n: u64| RequestEntry {
        class,
        expect_body_bytes: Some(n),
        expect_body_prefix: Some(format!("head:{n}\n")),
        ..RequestEntry::to(fx.url(path))
    };
    let config = RunConfig {
        requests: vec![
            with_prefix("/ok/500", 0, 500),
            with_prefix("/ok/500c", 1, 500),
            with_prefix("/ok/4", 2, 4),
            with_prefix("/bad/500", 3, 500),
            with_prefix("/bad/500c", 4, 500),
        ],
        classes: vec!["ok".into(), "ok-chunked".into(), "ok-short".into(), "bad".into(), "bad-chunked".into()],
        max_requests: Some(500),
        connections: 2,
        ..RunConfig::default()
    };
    let (report, _) = run(config);
    for good in ["ok", "ok-chunked", "ok-short"] {
        assert_eq!(report.classes[good].errors, 0, "{good}: {:?}", report.error_notes);
        assert!(report.classes[good].requests > 0);
    }
    for bad in ["bad", "bad-chunked"] {
        assert_eq!(report.classes[bad].requests, 0);
        assert!(report.classes[bad].errors > 0);
    }
    assert_eq!(report.errors["validation"], report.classes["bad"].errors + report.classes["bad-chunked"].errors);
    assert!(report.error_notes.iter().any(|n| n.contains("does not start with")), "{:?}", report.error_notes);
}

#[test]
fn once_sends_every_entry_exactly_once_and_ends_by_itself() {
    let fx = Fixture::start(sized_bodies);
    let config = RunConfig {
        requests: (0..53).map(|i| entry(&fx, &format!("/n/{}", 10 + i), 1.0 + i as f64, 0, Some(10 + i))).collect(),
        selection: crest_engine::Selection::Once,
        connections: 5,
        threads: 3,
        seed: 9,
        ..RunConfig::default()
    };
    let (report, _) = run(config);
    assert_eq!(report.requests, 53, "{:?}", report.error_notes);
    let mut seen: Vec<String> = fx
        .log
        .lock()
        .unwrap()
        .iter()
        .map(|r| String::from_utf8_lossy(r).split(' ').nth(1).unwrap().to_string())
        .collect();
    let in_order = seen.clone();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 53, "a path was requested twice");
    let sorted: Vec<String> = (0..53).map(|i| format!("/n/{}", 10 + i)).collect();
    assert_ne!(in_order, sorted, "the order is shuffled");
}
