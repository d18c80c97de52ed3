//! The table a log becomes: time order, entries and their tallies, sessions, peak
//! concurrency, errors with line numbers, and `load`'s cache.

use std::sync::Arc;

use crest_replay::{load, Options, ReplayError, SessionKey, Table, CLASSES};

fn read(text: &str, options: &Options) -> Result<Table, ReplayError> {
    Table::read(text.as_bytes(), "access.log", options)
}

fn opts(format: &str) -> Options {
    Options { format: format.into(), ..Options::default() }
}

#[test]
fn sorted_by_start_with_entries_counted() {
    // Apache's crest line: integer ms at the request's start, %D µs.
    let log = "\
10.0.0.1 [1000] \"GET /a HTTP/1.1\" 200 100 10
10.0.0.2 [1000] \"GET /b HTTP/1.1\" 200 5000 10
10.0.0.1 [999] \"GET /a HTTP/1.1\" 304 0 10
10.0.0.1 [1002] \"GET /a HTTP/1.1\" 200 100 10
";
    let t = read(log, &Options::default()).unwrap();
    assert_eq!(t.format.name, "crest");
    assert_eq!(t.offsets_us, [0, 1000, 1000, 3000]);
    assert_eq!(t.requests, [0, 0, 1, 0], "equal times keep the log's order");
    assert_eq!(t.first_unix_us, 999_000);
    let a = &t.entries[0];
    assert_eq!((a.method.as_str(), a.target.as_str(), a.count), ("GET", "/a", 3));
    assert_eq!(
        (a.status, a.body_bytes, CLASSES[a.class as usize]),
        (200, 100, "static-1k"),
        "the most frequent status"
    );
    assert_eq!((t.entries[1].body_bytes, CLASSES[t.entries[1].class as usize]), (5000, "static-10k"));
    assert_eq!((t.lines, t.skipped, t.bad_lines), (4, 0, 0));
}

#[test]
fn end_logged_times_become_starts() {
    // nginx's crest line logs $msec at the end: the first line started later than the second.
    let log = "\
127.0.0.1 [10.005] \"GET /short HTTP/1.1\" 200 1 0.001
127.0.0.1 [10.006] \"GET /long HTTP/1.1\" 200 1 0.006
";
    let t = read(log, &opts("crest")).unwrap();
    assert_eq!(t.first_unix_us, 10_000_000);
    assert_eq!(t.offsets_us, [0, 4000]);
    assert_eq!(t.entries[t.requests[0] as usize].target, "/long");
    assert_eq!(t.peak_concurrency, Some(2));
}

#[test]
fn peak_concurrency_from_durations() {
    let log = "\
1.1.1.1 [0] \"GET /a HTTP/1.1\" 200 1 5000
1.1.1.1 [1] \"GET /b HTTP/1.1\" 200 1 500
1.1.1.1 [2] \"GET /c HTTP/1.1\" 200 1 5000
1.1.1.1 [7] \"GET /d HTTP/1.1\" 200 1 1
";
    assert_eq!(read(log, &opts("crest")).unwrap().peak_concurrency, Some(2));
    let combined = r#"1.2.3.4 - - [27/Nov/2026:20:41:07 +0000] "GET / HTTP/1.1" 200 1 "-" "ua""#;
    assert_eq!(read(combined, &opts("auto")).unwrap().peak_concurrency, None, "no duration logged");
    let lighttpd = "1.1.1.1 [0] \"GET /a HTTP/1.1\" 200 1\n";
    assert_eq!(read(lighttpd, &opts("crest")).unwrap().peak_concurrency, None, "crest's duration is optional");
    let instant = "1.1.1.1 [1.000] \"GET /a HTTP/1.1\" 200 1 0.000\n";
    assert_eq!(read(instant, &opts("crest")).unwrap().peak_concurrency, Some(1), "a 0.000 s request was in flight");
}

#[test]
fn a_tie_between_statuses_keeps_the_first() {
    // The same path answered 200 once, then 404 once (another Host): the 200 is the file's.
    let log = "1.1.1.1 [0] \"GET /a HTTP/1.1\" 200 6\n1.1.1.1 [1] \"GET /a HTTP/1.1\" 404 9\n";
    let t = read(log, &opts("crest")).unwrap();
    assert_eq!((t.entries[0].status, t.entries[0].body_bytes), (200, 6));
    let log = format!("{log}1.1.1.1 [2] \"GET /a HTTP/1.1\" 404 9\n");
    assert_eq!(read(&log, &opts("crest")).unwrap().entries[0].status, 404, "then the most frequent");
}

fn combined(client: &str, second: u32, path: &str, ua: &str) -> String {
    let (m, s) = (second / 60, second % 60);
    format!("{client} - - [27/Nov/2026:20:{m:02}:{s:02} +0000] \"GET {path} HTTP/1.1\" 200 10 \"-\" \"{ua}\"\n")
}

#[test]
fn sessions_by_client_and_agent_split_at_gaps() {
    let log = [
        combined("10.0.0.1", 0, "/a", "firefox"),
        combined("10.0.0.2", 5, "/b", "firefox"),
        combined("10.0.0.1", 10, "/c", "firefox"),
        combined("10.0.0.1", 10, "/d", "curl"),
        combined("10.0.0.1", 200, "/e", "firefox"),
    ]
    .concat();
    let t = read(&log, &Options { session_gap_s: 60.0, ..Options::default() }).unwrap();
    assert_eq!(t.sessions(), 4);
    assert_eq!(t.session(0), [0, 2], "10.0.0.1 firefox until the gap");
    assert_eq!(t.session(1), [1]);
    assert_eq!(t.session(2), [3], "another agent is another user");
    assert_eq!(t.session(3), [4], "190 s later: a new session");
    assert_eq!(read(&log, &Options::default()).unwrap().sessions(), 3, "within the default half hour");
}

#[test]
fn sessions_by_cookie() {
    let format = r#"%h [%{sec}t] "%r" %>s %b "%{Cookie}i""#;
    let log = "\
10.0.0.1 [1] \"GET /a HTTP/1.1\" 200 1 \"theme=dark; sid=abc\"
10.0.0.9 [2] \"GET /b HTTP/1.1\" 200 1 \"sid=abc\"
10.0.0.1 [3] \"GET /c HTTP/1.1\" 200 1 \"-\"
10.0.0.1 [4] \"GET /d HTTP/1.1\" 200 1 \"sid=xyz\"
";
    let options =
        Options { format: format.into(), session_key: SessionKey::Cookie("sid".into()), ..Options::default() };
    let t = read(log, &options).unwrap();
    assert_eq!(t.sessions(), 3);
    assert_eq!(t.session(0), [0, 1], "one cookie across two addresses");
    assert_eq!(t.session(1), [2], "no cookie: by address and agent");
    assert_eq!(t.session(2), [3]);
}

#[test]
fn options_from_json() {
    let o: Options =
        serde_json::from_str(r#"{"format":"combined","session_key":{"cookie":"sid"},"session_gap_s":60}"#).unwrap();
    assert_eq!((o.session_key, o.max_bad_lines), (SessionKey::Cookie("sid".into()), 0));
    let o: Options = serde_json::from_str(r#"{"session_key":"client"}"#).unwrap();
    assert_eq!(o, Options::default());
    assert!(serde_json::from_str::<Options>(r#"{"formt":"x"}"#).is_err());
}

#[test]
fn a_bad_line_names_its_number_and_the_fix() {
    let log = format!("\n{}not a log line\n{}", combined("1.1.1.1", 1, "/a", "x"), combined("1.1.1.1", 2, "/b", "x"));
    let err = read(&log, &Options::default()).unwrap_err().to_string();
    assert!(err.starts_with("access.log line 3: expected ` [` after the field"), "{err}");
    assert!(err.contains("(format combined): give the log's own format string") && !err.contains('\n'), "{err}");
    let t = read(&log, &Options { max_bad_lines: 1, ..Options::default() }).unwrap();
    assert_eq!((t.len(), t.bad_lines, t.lines), (2, 1, 3));

    let err = read("hello\n", &Options::default()).unwrap_err().to_string();
    assert!(err.starts_with("access.log line 1: format auto:"), "{err}");
    let err = read("x", &opts("apache")).unwrap_err().to_string();
    assert!(err.starts_with("unknown log format \"apache\""), "{err}");
    let err = Table::read(&b"\x1f\x8b\x08"[..], "access.log", &opts("auto")).unwrap_err().to_string();
    assert!(err.contains("gzip-compressed: gunzip it first"), "{err}");
    let err = read("x", &Options { session_gap_s: 0.0, ..Options::default() }).unwrap_err().to_string();
    assert!(err.starts_with("session_gap_s is 0"), "{err}");
}

#[test]
fn only_unreplayable_requests_is_empty() {
    let log = r#"1.2.3.4 - - [27/Nov/2026:20:41:07 +0000] "\x16\x03\x01" 400 157 "-" "-"
1.2.3.4 - - [27/Nov/2026:20:41:08 +0000] "-" 400 0 "-" "-"
"#;
    let err = read(log, &Options::default()).unwrap_err();
    assert!(matches!(err, ReplayError::Empty { .. }));
    assert_eq!(
        err.to_string(),
        "access.log has no request to replay: 2 lines: 2 requests that cannot be sent again, 0 not in format combined"
    );
    assert!(read("", &Options::default()).is_err());
    let mixed = format!("{log}{}", combined("1.1.1.1", 1, "/a", "x"));
    let t = read(&mixed, &Options::default()).unwrap();
    assert_eq!((t.len(), t.skipped, t.lines), (1, 2, 3));
}

#[test]
fn summary_for_python() {
    let log =
        [combined("1.1.1.1", 1, "/a", "x"), combined("1.1.1.1", 2, "/a?q=1", "x"), combined("1.1.1.1", 4, "/a", "x")]
            .concat();
    let s = read(&log, &Options::default()).unwrap().summary();
    assert_eq!((s.requests, s.distinct, s.sessions, s.duration_s), (3, 2, 1, 3.0));
    assert_eq!(s.class_requests[..5], [2, 0, 0, 0, 1]);
    assert_eq!(s.first_unix_s, 1_795_809_601.0);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["entries"][1]["target"], "/a?q=1");
    assert_eq!(json["classes"][4], "dynamic");
    assert!(json["table_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn load_caches_by_file_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    std::fs::write(&path, combined("1.1.1.1", 1, "/a", "x")).unwrap();
    let first = load(&path, &Options::default()).unwrap();
    assert!(Arc::ptr_eq(&first, &load(&path, &Options::default()).unwrap()), "read once");
    let other = load(&path, &Options { session_gap_s: 5.0, ..Options::default() }).unwrap();
    assert!(!Arc::ptr_eq(&first, &other), "other options, another table");
    std::fs::write(&path, [combined("1.1.1.1", 1, "/a", "x"), combined("1.1.1.1", 2, "/b", "x")].concat()).unwrap();
    assert_eq!(load(&path, &Options::default()).unwrap().len(), 2, "a changed file is read again");

    let err = load(&dir.path().join("missing.log"), &Options::default()).unwrap_err().to_string();
    assert!(err.starts_with("cannot read ") && err.contains("missing.log"), "{err}");
    let err = load(dir.path(), &Options::default()).unwrap_err().to_string();
    assert!(err.contains("it is a directory"), "{err}");
}
