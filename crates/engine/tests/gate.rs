//! The input gate as a table: each row tweaks a valid config and names the
//! error it must get (field and template) or none. Every row is checked for
//! an HTTP run and for a file run with the same tweak, so the rules the two
//! kinds share cannot drift apart again; rows marked HTTP-only or file-only
//! are the rules of one kind.

use crest_engine::{Loadfile, RunConfig, Selection};

/// Which runs a row applies to.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Both,
    Http,
    File,
}

type Tweak = fn(&mut RunConfig);
/// The error a row expects: the field at fault and the message template.
type Expected = Option<(&'static str, &'static str)>;

/// (tweak, kinds, expected: None for ok, or (field, template)).
const ROWS: &[(Tweak, Kind, Expected)] = &[
    (|_| {}, Kind::Both, None),
    (|c| c.connections = 0, Kind::Both, Some(("connections", "{connections} must be at least 1 (got 0)"))),
    (|c| c.threads = 0, Kind::Both, Some(("threads", "{threads} must be at least 1 (got 0)"))),
    (
        |c| c.threads = 5,
        Kind::Both,
        Some((
            "threads",
            "{connections} (4) must be >= {threads} (5): each thread needs a connection; raise {connections} or \
             lower {threads}",
        )),
    ),
    (|c| c.threads = 4, Kind::Both, None),
    (
        |c| c.connections_per_client = 0,
        Kind::Both,
        Some(("connections_per_client", "{connections_per_client} must be at least 1 (got 0)")),
    ),
    (
        |c| c.connections_per_client = 3,
        Kind::File,
        Some(("connections_per_client", "{connections_per_client} (3) must divide {connections} (4) evenly")),
    ),
    (|c| c.connections_per_client = 3, Kind::Http, None),
    (
        |c| c.duration_s = None,
        Kind::Both,
        Some(("duration_s", "no stop condition: give {duration_s} or {max_requests}")),
    ),
    (
        |c| {
            c.duration_s = None;
            c.max_requests = Some(10);
        },
        Kind::Both,
        None,
    ),
    (
        |c| {
            c.duration_s = None;
            c.selection = Selection::Once;
        },
        Kind::Http,
        None,
    ),
    (
        |c| c.duration_s = Some(0.0),
        Kind::Both,
        Some(("duration_s", "{duration_s} must be > 0 and at most a week (got 0 s)")),
    ),
    (
        |c| c.duration_s = Some(-1.0),
        Kind::Both,
        Some(("duration_s", "{duration_s} must be > 0 and at most a week (got -1 s)")),
    ),
    (
        |c| c.duration_s = Some(1e30),
        Kind::Both,
        Some(("duration_s", "{duration_s} must be > 0 and at most a week (got 1000000000000000000000000000000 s)")),
    ),
    (
        |c| c.duration_s = Some(f64::NAN),
        Kind::Both,
        Some(("duration_s", "{duration_s} must be > 0 and at most a week (got NaN s)")),
    ),
    (
        |c| c.duration_s = Some(f64::INFINITY),
        Kind::Both,
        Some(("duration_s", "{duration_s} must be > 0 and at most a week (got inf s)")),
    ),
    (|c| c.duration_s = Some(7.0 * 86_400.0), Kind::Both, None),
    (|c| c.max_requests = Some(0), Kind::Both, Some(("max_requests", "{max_requests} must be at least 1 (got 0)"))),
    (|c| c.window_s = Some([1.0, 2.0]), Kind::Both, None),
    (
        |c| c.window_s = Some([2.0, 2.0]),
        Kind::Both,
        Some(("window_s", "{window_s} must be [start, end) seconds with 0 <= start < end (got [2, 2])")),
    ),
    (
        |c| c.window_s = Some([-1.0, 2.0]),
        Kind::Both,
        Some(("window_s", "{window_s} must be [start, end) seconds with 0 <= start < end (got [-1, 2])")),
    ),
    (
        |c| c.window_s = Some([0.0, f64::NAN]),
        Kind::Both,
        Some(("window_s", "{window_s} must be [start, end) seconds with 0 <= start < end (got [0, NaN])")),
    ),
    (
        |c| c.window_s = Some([0.0, 1e30]),
        Kind::Both,
        Some(("window_s", "{window_s} must end within a year (got [0, 1000000000000000000000000000000])")),
    ),
    (|c| c.think_time_s = 0.5, Kind::Both, None),
    (|c| c.think_time_s = -1.0, Kind::Both, Some(("think_time_s", "{think_time_s} must be >= 0 s (got -1)"))),
    (|c| c.think_time_s = f64::NAN, Kind::Both, Some(("think_time_s", "{think_time_s} must be >= 0 s (got NaN)"))),
    (
        |c| c.think_time_s = 1e30,
        Kind::Both,
        Some(("think_time_s", "{think_time_s} must be at most a year (got 1000000000000000000000000000000 s)")),
    ),
    (
        |c| c.client_start_delay_s = -1.0,
        Kind::Both,
        Some(("client_start_delay_s", "{client_start_delay_s} must be >= 0 s (got -1)")),
    ),
    (
        |c| c.client_start_delay_s = f64::INFINITY,
        Kind::Both,
        Some(("client_start_delay_s", "{client_start_delay_s} must be >= 0 s (got inf)")),
    ),
    (
        |c| c.client_start_delay_s = 1e30,
        Kind::Both,
        Some((
            "client_start_delay_s",
            "{client_start_delay_s} must be at most a year (got 1000000000000000000000000000000 s)",
        )),
    ),
    (|c| c.timeout_s = 3600.0, Kind::Both, None),
    (|c| c.timeout_s = 0.0, Kind::Both, Some(("timeout_s", "{timeout_s} must be > 0 and at most 1 h (got 0 s)"))),
    (
        |c| c.timeout_s = 7200.0,
        Kind::Both,
        Some(("timeout_s", "{timeout_s} must be > 0 and at most 1 h (got 7200 s)")),
    ),
    (
        |c| c.timeout_s = f64::NAN,
        Kind::Both,
        Some(("timeout_s", "{timeout_s} must be > 0 and at most 1 h (got NaN s)")),
    ),
    (|c| c.start_at_unix_s = Some(1.0), Kind::Both, None),
    (
        |c| c.start_at_unix_s = Some(f64::NAN),
        Kind::Both,
        Some(("start_at_unix_s", "{start_at_unix_s} must be a Unix time in seconds (got NaN)")),
    ),
    (|c| c.seed = u64::MAX, Kind::Both, None),
    (|c| c.drain_s = -1.0, Kind::Http, Some(("drain_s", "{drain_s} must be 0 to 3600 s (got -1)"))),
    (|c| c.rate_rps = Some(10.0), Kind::Http, None),
    (|c| c.rate_rps = Some(0.0), Kind::Http, Some(("rate_rps", "{rate_rps} must be > 0 requests/s (got 0)"))),
    (
        |c| c.rate_rps = Some(1e-30),
        Kind::Http,
        Some(("rate_rps", "{rate_rps} must leave less than a year between a connection's requests (got 0.000000000000000000000000000001)")),
    ),
    (
        |c| c.rate_rps = Some(10.0),
        Kind::File,
        Some(("rate_rps", "a loadfile run is a closed loop (each client replays its loadfile); drop the rate")),
    ),
];

/// A valid HTTP run (nothing is resolved by `validate`).
fn http() -> RunConfig {
    RunConfig {
        url: "http://127.0.0.1:1/".into(),
        connections: 4,
        threads: 1,
        duration_s: Some(1.0),
        ..RunConfig::default()
    }
}

/// A valid file run against `dir`, replaying `loadfile`.
fn file(dir: &std::path::Path, loadfile: &std::path::Path) -> RunConfig {
    RunConfig {
        url: format!("file://{}", dir.display()),
        loadfile: Some(Loadfile {
            path: loadfile.display().to_string(),
            password: None,
            cleanup: true,
            first_client: 0,
            resolve_names: Default::default(),
        }),
        ..http()
    }
}

#[test]
fn http_and_file_runs_share_one_gate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let loadfile = dir.path().join("client.txt");
    std::fs::write(&loadfile, "Mkdir \"\\clients\" NT_STATUS_OK\n").expect("loadfile");
    for (row, (tweak, kind, expected)) in ROWS.iter().enumerate() {
        let kinds: &[(&str, RunConfig)] = &[("HTTP", http()), ("file", file(dir.path(), &loadfile))];
        for (name, base) in kinds {
            let applies = match kind {
                Kind::Both => true,
                Kind::Http => *name == "HTTP",
                Kind::File => *name == "file",
            };
            if !applies {
                continue;
            }
            let mut config = base.clone();
            tweak(&mut config);
            let got = crest_engine::validate(&config).map_err(|e| (e.field, e.template));
            match expected {
                None => assert!(got.is_ok(), "row {row}, {name} run: expected ok, got {got:?}"),
                Some((field, template)) => {
                    assert_eq!(got, Err((*field, template.to_string())), "row {row}, {name} run");
                }
            }
        }
    }
}

/// What the gate lets through never panics where a duration is made: the
/// largest values each field accepts start and end a run (cancelled at once).
/// Not `start_at_unix_s`: a worker sleeps until the start without watching
/// for a cancel, and `start_instant` clamps any finite time to an hour ahead.
#[test]
fn the_largest_accepted_values_start_a_run() {
    let config = RunConfig {
        duration_s: Some(7.0 * 86_400.0),
        window_s: Some([0.0, 366.0 * 86_400.0]),
        think_time_s: 366.0 * 86_400.0,
        client_start_delay_s: 366.0 * 86_400.0,
        timeout_s: 3600.0,
        drain_s: 3600.0,
        ..http()
    };
    let handle = crest_engine::start(&config).expect("starts");
    handle.cancel();
    handle.join().expect("a report");
    let open = RunConfig { think_time_s: 0.0, rate_rps: Some(4.0 / (366.0 * 86_400.0)), ..config };
    let handle = crest_engine::start(&open).expect("starts");
    handle.cancel();
    handle.join().expect("a report");
}
