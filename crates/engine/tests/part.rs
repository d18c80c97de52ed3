//! Parts: a run's results survive their wire form whole, and merging the
//! parts of stats split over machines gives the report of all of them at once.

use std::time::Duration;

use crest_engine::rng::Rng;
use crest_engine::stats::{ClientScore, Completion, Stats};
use crest_engine::{merge_parts, ErrorKind, Part, RunConfig, RunFacts, RunReport};

use crate::support::{config, respond_always, run, Fixture, OK_2};

const CLASSES: usize = 3;
const WINDOW: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(9));

fn facts(threads: u32, connections: u32, rate_rps: Option<f64>) -> RunFacts {
    RunFacts {
        classes: vec!["static".into(), "dynamic".into(), "ssl".into()],
        window: Some(WINDOW),
        duration: Some(Duration::from_secs(10)),
        rate_rps,
        threads,
        connections,
    }
}

/// Stats counting per class per client too (as SPECweb99 runs do), so every field crosses.
fn stats(clients: usize) -> Stats {
    Stats::new(Some(Duration::from_secs(10)), CLASSES, clients, Some(WINDOW)).with_client_classes()
}

/// Records one pseudo-random event of `client` into each of `into`, a
/// stats and the client it numbers from: mostly responses (some failing),
/// reads, connects, handshakes and errors with messages naming `tag`.
fn record(rng: &mut Rng, into: &mut [(&mut Stats, usize)], client: usize, tag: usize) {
    let at = Duration::from_micros(rng.below(10_000_000) as u64);
    let (class, event, flip) = (rng.below(CLASSES), rng.below(20), rng.below(2) == 0);
    let latency = Duration::from_micros((1e7f64.powf(rng.next_f64())) as u64);
    let status = [200, 200, 200, 304, 404, 503, 700][rng.below(7)];
    let (bytes, read) = (100 + rng.below(1000) as u64, rng.below(70_000));
    for (stats, first) in into.iter_mut() {
        let client = client - *first;
        match event {
            0 => stats.record_error(at, ErrorKind::Timeout, class, client, Some(&format!("slow {tag}"))),
            1 => stats.record_error(at, ErrorKind::Connect, class, client, Some(&format!("refused {tag}"))),
            2 => stats.record_connect(latency),
            3 => {
                // TLS 1.3 or 1.2 with one of two suites: parts must carry every pair.
                let negotiated = if flip {
                    (Some(rustls::ProtocolVersion::TLSv1_3), Some(rustls::CipherSuite::TLS13_AES_128_GCM_SHA256))
                } else {
                    (
                        Some(rustls::ProtocolVersion::TLSv1_2),
                        Some(rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
                    )
                };
                stats.record_tls_handshake(latency, flip, negotiated)
            }
            4 => {
                // HTTP/2's counters travel in parts too (a cluster's nodes merge them).
                stats.h2.record_open(1 + read as u32 % 100, bytes as usize, read);
                stats.h2.response_header_block_bytes += bytes;
                stats.h2.goaways += u64::from(flip);
                stats.h2.refused += u64::from(!flip);
                stats.record_error(at, ErrorKind::Reset, class, client, Some(&format!("reset {tag}")));
            }
            _ => {
                let c = Completion { at, status, bytes, body_bytes: bytes / 2, latency, class, client };
                stats.record_issued(class, 1);
                stats.record_response(&c);
                stats.record_active(at, client, latency.as_micros() as u64);
                stats.record_bytes(at, bytes);
                stats.record_read(read);
            }
        }
    }
}

/// Stats of `events` random events over `clients` clients.
fn filled(seed: u64, clients: usize, events: usize) -> Stats {
    let mut s = stats(clients);
    let mut rng = Rng::new(seed);
    for _ in 0..events {
        let client = rng.below(clients);
        record(&mut rng, &mut [(&mut s, 0)], client, 0);
    }
    s.addr_not_available = 3;
    s
}

fn part(stats: Stats, facts: RunFacts) -> Part {
    Part {
        stats,
        facts,
        elapsed: Duration::from_millis(10_003),
        cpu: Duration::from_nanos(1_234_567_891),
        cancelled: false,
    }
}

/// The report as JSON, without its part.
fn json(report: &RunReport) -> serde_json::Value {
    let mut v = serde_json::to_value(report).expect("serializes");
    v.as_object_mut().expect("an object").remove("part");
    v
}

fn assert_same_stats(a: &Stats, b: &Stats) {
    let hists = |s: &Stats| [s.latency_us.clone(), s.connect_us.clone(), s.tls_handshake_us.clone()];
    for (x, y) in hists(a).iter().zip(&hists(b)) {
        assert_eq!(x, y);
        let values = |h: &hdrhistogram::Histogram<u64>| {
            h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect::<Vec<_>>()
        };
        assert_eq!(values(x), values(y));
    }
    let counts = |s: &Stats| {
        [
            s.requests,
            s.responses,
            s.bytes,
            s.body_bytes,
            s.connections_opened,
            s.reads,
            s.largest_read_bytes,
            s.tls_handshakes,
            s.tls_resumed,
            s.addr_not_available,
        ]
    };
    assert_eq!(counts(a), counts(b));
    assert_eq!(a.tls_negotiated, b.tls_negotiated);
    assert_eq!(a.errors, b.errors);
    assert_eq!(a.first_error, b.first_error);
    assert_eq!(a.classes.len(), b.classes.len());
    for (x, y) in a.classes.iter().zip(&b.classes) {
        assert_eq!((x.requests, x.bytes, x.errors), (y.requests, y.bytes, y.errors));
        assert_eq!(x.latency_us, y.latency_us);
    }
    assert_eq!(a.clients, b.clients);
    assert_eq!(a.issued, b.issued);
    assert_eq!(a.status_counts().collect::<Vec<_>>(), b.status_counts().collect::<Vec<_>>());
    assert_eq!(a.timeline.buckets(), b.timeline.buckets());
    assert_eq!(a.h2, b.h2);
}

#[test]
fn a_part_survives_its_wire_form_whole() {
    let stats = filled(1, 5, 5000);
    assert!(stats.first_error.iter().flatten().count() == 3 && stats.status_counts().count() >= 5);
    let original = Part { cancelled: true, ..part(stats, facts(2, 9, Some(1234.5))) };
    let wire = original.to_json();
    let back = Part::from_json(&wire).expect("reads back");
    assert_same_stats(&back.stats, &original.stats);
    assert_eq!(back.facts, original.facts);
    assert_eq!((back.elapsed, back.cpu, back.cancelled), (original.elapsed, original.cpu, original.cancelled));
    assert_eq!(back.to_json(), wire);
    assert_eq!(json(&back.into_report()), json(&original.into_report()));
}

#[test]
fn merged_parts_equal_one_engine_holding_all_their_stats() {
    // Clients 0..12 dealt to three machines by client, four each.
    let (clients, share) = (12, 4);
    let mut one = stats(clients);
    let mut parts: Vec<Stats> = (0..3).map(|_| stats(share)).collect();
    let mut rng = Rng::new(2);
    for (k, p) in parts.iter_mut().enumerate() {
        // Each machine's events, into its part and into the one engine (part order first errors).
        for _ in 0..4000 {
            let client = k * share + rng.below(share);
            record(&mut rng, &mut [(p, k * share), (&mut one, 0)], client, k);
        }
    }
    for rate in [None, Some(100.0)] {
        let wires: Vec<(String, u32)> = parts
            .iter()
            .enumerate()
            .map(|(k, s)| {
                (
                    part(s.clone(), facts(k as u32 + 1, 8, rate.map(|r| r * (k + 1) as f64))).to_json(),
                    (k * share) as u32,
                )
            })
            .collect();
        let input: Vec<(&str, u32)> = wires.iter().map(|(w, first)| (w.as_str(), *first)).collect();
        let merged = merge_parts(&input).expect("merges");
        assert!(merged.part.is_none());
        let cpu = Duration::from_nanos(3 * 1_234_567_891);
        let whole = Part { stats: one.clone(), cpu, ..part(stats(1), facts(6, 24, rate.map(|r| r * 6.0))) };
        assert_same_stats(&merged.stats, &whole.stats);
        let expected = whole.into_report();
        assert_eq!(json(&merged), json(&expected));
        assert_eq!(merged.histogram_b64, expected.histogram_b64);
        assert_eq!((merged.rate_rps, merged.open_loop, merged.threads), (rate.map(|r| r * 6.0), rate.is_some(), 6));
    }
}

#[test]
fn each_parts_clients_go_where_its_first_client_says() {
    let (a, b) = (filled(3, 2, 300), filled(4, 3, 300));
    let (wa, wb) = (part(a.clone(), facts(1, 2, None)).to_json(), part(b.clone(), facts(1, 3, None)).to_json());
    let merged = merge_parts(&[(&wa, 5), (&wb, 0)]).expect("merges");
    let clients = &merged.stats.clients;
    assert_eq!(clients.len(), 7);
    assert_eq!(clients[..3], b.clients[..]);
    assert_eq!(clients[3..5], vec![ClientScore::default(); 2]);
    assert!(clients[5].active_us > 0 && clients[5].class_requests.iter().sum::<u64>() > 0);
    assert_eq!(clients[5..], a.clients[..]);
    assert_eq!(merged.clients.iter().map(|c| c.client).collect::<Vec<_>>(), (0..7).collect::<Vec<_>>());
    assert_eq!((merged.threads, merged.connections), (2, 5));
}

#[test]
fn parts_of_different_runs_are_refused() {
    let base = facts(1, 4, None);
    let wire = |f: RunFacts| part(stats(2), f).to_json();
    let mut renamed = base.clone();
    renamed.classes[2] = "tls".into();
    let cases = [
        (renamed, "classes"),
        (RunFacts { window: None, ..base.clone() }, "window"),
        (RunFacts { duration: Some(Duration::from_secs(11)), ..base.clone() }, "duration"),
        (RunFacts { rate_rps: Some(10.0), ..base.clone() }, "load model"),
    ];
    for (other, what) in cases {
        let (first, second) = (wire(base.clone()), wire(other));
        let err = merge_parts(&[(&first, 0), (&second, 2)]).expect_err("refused").to_string();
        assert!(err.starts_with("part 1 differs from part 0 in its ") && err.contains(what), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn malformed_parts_are_refused_in_one_line() {
    let good = part(filled(5, 2, 500), facts(1, 2, None)).to_json();
    let mut value: serde_json::Value = serde_json::from_str(&good).expect("json");
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = value.clone();
        f(&mut v);
        v.to_string()
    };
    let cases = [
        ("".to_string(), "malformed part"),
        ("{}".into(), "missing field"),
        (good[..good.len() / 2].into(), "EOF"),
        (edit(&|v| v["format"] = 2.into()), "format 2"),
        (edit(&|v| v["stats"]["latency_us"] = "AAAA".into()), "latency_us"),
        (edit(&|v| v["stats"]["connect_us"] = "not base64!".into()), "base64"),
        (
            edit(&|v| {
                v["stats"]["classes"][1]["latency_us"] =
                    v["stats"]["classes"][1]["latency_us"].as_str().map(|s| &s[..s.len() - 8]).into()
            }),
            "dynamic",
        ),
        (edit(&|v| v["facts"]["classes"] = serde_json::json!(["a", "b"])), "class stats"),
        (edit(&|v| v["stats"]["errors"]["dns"] = 1.into()), "\"dns\""),
        (edit(&|v| v["stats"]["status"]["600"] = 1.into()), "600"),
        (edit(&|v| v["elapsed_ns"] = (-1).into()), "malformed"),
    ];
    for (bad, what) in &cases {
        let err = merge_parts(&[(&good, 0), (bad, 2)]).expect_err("refused").to_string();
        assert!(err.starts_with("part 1: malformed part") || err.starts_with("part 1: part format"), "{err}");
        assert!(err.contains(what) && !err.contains('\n'), "{what}: {err}");
        assert!(Part::from_json(bad).is_err());
    }
    assert_eq!(merge_parts(&[]).expect_err("refused").to_string(), "no parts to merge");
    value["stats"]["status"]["599"] = 1.into();
    assert!(Part::from_json(&value.to_string()).is_ok());
}

#[test]
fn a_runs_own_part_merges_into_its_own_report() {
    let fx = Fixture::start(respond_always(OK_2));
    let cfg = RunConfig { max_requests: Some(200), connections: 4, threads: 2, ..config(fx.url("/")) };
    let (plain, _) = run(cfg.clone());
    assert!(plain.part.is_none() && !serde_json::to_string(&plain).expect("json").contains("\"part\""));
    let (report, _) = run(RunConfig { report_part: true, ..cfg });
    let wire = report.part.as_deref().expect("a part");
    assert_eq!(report.requests, 200);
    let merged = merge_parts(&[(wire, 0)]).expect("merges");
    assert_eq!(json(&merged), json(&report));
    let config: RunConfig = serde_json::from_str(r#"{"url": "http://x/", "report_part": true}"#).expect("parses");
    assert!(config.report_part);
}
