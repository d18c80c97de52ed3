//! Targets that misbehave: every failure is counted under its kind, the run
//! ends by its own deadline, and nothing hangs. Time bounds here only catch
//! hangs (generous multiples), they do not measure speed.

use std::time::Duration;

use crate::support::{
    assert_ended_by_deadline, config, run, smb, Conn, Fixture, TRICKLE_DURATION_S, TRICKLE_TIMEOUT_S,
};
use crest_engine::RunConfig;

/// Limit used to catch a hang: well above any run here.
const HANG: Duration = Duration::from_secs(10);

/// A run of one second over two connections. Its timeout is one no exchange
/// here waits for unless the test means it to: each failure comes at once, and
/// a short timeout would race a busy host's scheduling and count a timeout
/// instead (the tests of timeouts set their own).
fn short_run(fx: &Fixture) -> RunConfig {
    RunConfig { duration_s: Some(1.0), connections: 2, timeout_s: 5.0, ..config(fx.url("/")) }
}

fn only_errors_of(report: &crest_engine::RunReport, kind: &str) {
    assert!(report.errors[kind] > 0, "no {kind} errors: {:?}", report.errors);
    for (k, n) in &report.errors {
        if *k != kind {
            assert_eq!(*n, 0, "unexpected {k} errors: {:?} notes {:?}", report.errors, report.error_notes);
        }
    }
    assert_eq!(report.requests, 0);
}

#[test]
fn connection_reset_is_a_read_error() {
    let fx = Fixture::start(|mut conn: Conn| {
        if conn.read_request().is_some() {
            socket2::SockRef::from(&conn.stream).set_linger(Some(Duration::ZERO)).unwrap();
        }
    });
    let (report, wall) = run(short_run(&fx));
    only_errors_of(&report, "read");
    assert!(wall < HANG);
}

#[test]
fn stalled_target_times_out_and_run_ends_on_time() {
    let fx = Fixture::start(|mut conn: Conn| {
        conn.read_request();
        conn.stall();
    });
    let (report, wall) = run(RunConfig { timeout_s: 0.3, ..short_run(&fx) });
    only_errors_of(&report, "timeout");
    assert!(report.duration_s <= 1.0 + 1e-9);
    assert!(wall < HANG);
}

#[test]
fn malformed_status_line_is_a_parse_error() {
    let fx = Fixture::start(|mut conn: Conn| {
        while conn.read_request().is_some() {
            conn.send(b"HTTP/1.1 abc OK\r\n\r\n");
        }
    });
    only_errors_of(&run(short_run(&fx)).0, "parse");
}

#[test]
fn oversized_headers_are_a_parse_error() {
    let fx = Fixture::start(|mut conn: Conn| {
        if conn.read_request().is_some() {
            let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
            for i in 0..20 {
                head.extend_from_slice(format!("X-Filler-{i}: {}\r\n", "y".repeat(4000)).as_bytes());
            }
            conn.send(&head);
            conn.stall();
        }
    });
    let (report, _) = run(RunConfig { max_header_bytes: 64 * 1024, ..short_run(&fx) });
    only_errors_of(&report, "parse");
    assert!(report.error_notes.iter().any(|n| n.contains("head larger than")), "{:?}", report.error_notes);
}

#[test]
fn endless_chunked_body_hits_the_body_limit() {
    let fx = Fixture::start(|mut conn: Conn| {
        if conn.read_request().is_none() {
            return;
        }
        let chunk = format!("1000\r\n{}\r\n", "z".repeat(4096));
        if !conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") {
            return;
        }
        let started = std::time::Instant::now();
        while started.elapsed() < HANG && conn.send(chunk.as_bytes()) {}
    });
    let (report, wall) = run(RunConfig { max_body_bytes: 1 << 20, ..short_run(&fx) });
    only_errors_of(&report, "parse");
    assert!(report.error_notes.iter().any(|n| n.contains("body larger than")), "{:?}", report.error_notes);
    assert!(wall < HANG);
}

#[test]
fn endless_body_within_the_limit_times_out() {
    let fx = Fixture::start(|mut conn: Conn| {
        if conn.read_request().is_none() {
            return;
        }
        conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        let started = std::time::Instant::now();
        // Slow drip: never finishes, never exceeds the limit.
        while started.elapsed() < HANG && conn.send(b"1\r\nz\r\n") {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let (report, wall) = run(RunConfig { timeout_s: 0.3, ..short_run(&fx) });
    only_errors_of(&report, "timeout");
    assert!(wall < HANG);
}

/// A run of `TRICKLE_DURATION_S` with a `TRICKLE_TIMEOUT_S` timeout over `connections` connections.
fn trickle_run(fx: &Fixture, connections: u32) -> RunConfig {
    RunConfig { duration_s: Some(TRICKLE_DURATION_S), connections, timeout_s: TRICKLE_TIMEOUT_S, ..config(fx.url("/")) }
}

#[test]
fn a_head_trickled_a_byte_at_a_time_times_out_at_the_deadline() {
    // A status line and then a header that never ends, one byte per TRICKLE_EVERY.
    let fx = Fixture::start(|mut conn: Conn| {
        if conn.read_request().is_some() {
            let head = b"HTTP/1.1 200 OK\r\nX-Trickle: ".iter().copied();
            conn.trickle(head.chain(std::iter::repeat(b'z')));
        }
    });
    let (report, wall) = run(trickle_run(&fx, 2));
    assert_ended_by_deadline(&report, wall, 2, "complete response");
}

#[test]
fn a_body_trickled_a_byte_at_a_time_times_out_at_the_deadline() {
    let fx = Fixture::start(|mut conn: Conn| {
        if conn.read_request().is_some() && conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n") {
            conn.trickle(std::iter::repeat(b'z'));
        }
    });
    let (report, wall) = run(trickle_run(&fx, 2));
    assert_ended_by_deadline(&report, wall, 2, "complete response");
}

/// A loadfile run against the SMB2 peer `fx` for `TRICKLE_DURATION_S` over two
/// clients with a `TRICKLE_TIMEOUT_S` timeout: each opens a file and reads it.
fn smb_trickle_run(fx: &Fixture, dir: &std::path::Path) -> RunConfig {
    let loadfile = dir.join("client.txt");
    let lines = "NTCreateX \"\\clients\\client1\\a.txt\" 0x40 0x5 3 NT_STATUS_OK\nReadX 3 0 4096 4096 NT_STATUS_OK\n";
    std::fs::write(&loadfile, lines).unwrap();
    RunConfig {
        duration_s: Some(TRICKLE_DURATION_S),
        timeout_s: TRICKLE_TIMEOUT_S,
        connections: 2,
        loadfile: Some(crest_engine::Loadfile {
            path: loadfile.display().to_string(),
            password: Some("pw".into()),
            cleanup: false,
            first_client: 0,
            resolve_names: crest_engine::ResolveNames::default(),
        }),
        ..config(format!("smb://crest@{}/share", fx.addr))
    }
}

#[test]
fn an_smb2_negotiate_reply_trickled_ends_the_login_at_the_deadline() {
    let fx = Fixture::start(smb::serve(|command| {
        (command == smb::NEGOTIATE).then(|| smb::Answer::Trickle(smb::captured("ops-00-connect").remove(0)))
    }));
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let refused = crest_engine::start(&smb_trickle_run(&fx, dir.path())).err().expect("the login never finishes");
    let wall = started.elapsed();
    assert!(refused.to_string().contains("did not finish the login within 500ms (timeout_s)"), "{refused}");
    assert!(wall < Duration::from_secs_f64(TRICKLE_TIMEOUT_S + 1.0), "the start took {wall:?}");
}

#[test]
fn an_smb2_read_reply_trickled_times_out_at_the_deadline() {
    // The open is answered as Samba answered it; the READ's reply (4 KiB of data) comes a byte at a time.
    let fx = Fixture::start(smb::serve(|command| match command {
        smb::CREATE => Some(smb::Answer::Reply(smb::captured("ops-03-open").remove(0))),
        smb::READ => Some(smb::Answer::Trickle(smb::captured("ops-05-read").remove(0))),
        _ => None,
    }));
    let dir = tempfile::tempdir().unwrap();
    let (report, wall) = run(smb_trickle_run(&fx, dir.path()));
    // A client whose reply timed out stops (its session is out of step), so each client has one at most.
    let timeouts = report.errors["timeout"];
    assert!((1..=2).contains(&timeouts), "errors {:?} notes {:?}", report.errors, report.error_notes);
    assert_eq!(report.errors.values().sum::<u64>(), timeouts, "{:?}", report.errors);
    assert_eq!(report.requests, 2, "each client's open succeeded");
    assert!(report.error_notes.iter().all(|n| n.contains("no reply within 500ms")), "{:?}", report.error_notes);
    let bound = Duration::from_secs_f64(TRICKLE_DURATION_S + TRICKLE_TIMEOUT_S + 1.0);
    assert!(wall < bound, "the run took {wall:?}, more than its duration + timeout + 1 s");
}

#[test]
fn close_mid_body_is_a_read_error() {
    let fx = Fixture::start(|mut conn: Conn| {
        if conn.read_request().is_some() {
            conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b");
        }
    });
    let (report, _) = run(short_run(&fx));
    only_errors_of(&report, "read");
    assert!(report.error_notes.iter().any(|n| n.contains("before the response ended")), "{:?}", report.error_notes);
}

#[test]
fn error_statuses_are_counted_not_successes() {
    let fx = Fixture::start(crate::support::respond_always(b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"));
    let (report, _) = run(RunConfig { max_requests: Some(25), connections: 1, ..config(fx.url("/")) });
    assert_eq!(report.requests, 0);
    assert_eq!(report.responses, 25);
    assert_eq!(report.errors["status"], 25);
    assert_eq!(report.status.get("503"), Some(&25));
}

#[test]
fn refused_connections_are_connect_errors() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (report, wall) =
        run(RunConfig { duration_s: Some(0.5), connections: 2, ..config(format!("http://127.0.0.1:{port}/")) });
    only_errors_of(&report, "connect");
    assert_eq!(report.connections_opened, 0);
    assert!(wall < HANG);
}

#[test]
fn unusable_source_address_is_explained() {
    // Binding to an address this host does not have fails locally with
    // EADDRNOTAVAIL, like a used-up port range; nothing is sent.
    let fx = Fixture::start(crate::support::respond_always(crate::support::OK_2));
    let (report, _) = run(RunConfig {
        duration_s: Some(0.3),
        connections: 1,
        source_addrs: vec!["198.51.100.7".into()],
        ..config(fx.url("/"))
    });
    only_errors_of(&report, "connect");
    assert!(report.error_notes.iter().any(|n| n.contains("EADDRNOTAVAIL") && n.contains("--source-addrs")));
}

#[test]
fn cancel_stops_a_long_run_promptly() {
    let fx = Fixture::start(|mut conn: Conn| {
        conn.read_request();
        conn.stall();
    });
    let mut handle =
        crest_engine::start(&RunConfig { duration_s: Some(600.0), connections: 4, ..config(fx.url("/")) }).unwrap();
    assert!(handle.wait(Duration::from_millis(200)).unwrap().is_none());
    handle.cancel();
    let report = handle.wait(HANG).unwrap().expect("finished after cancel");
    assert!(report.cancelled);
    assert!(report.duration_s < 60.0);
}
