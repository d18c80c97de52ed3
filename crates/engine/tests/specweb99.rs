//! SPECweb99's client end to end: line-speed pacing, keep-alive counts, and
//! the generator and checks against a std-only server that serves kit-format
//! files (right, or with the ad substitution dropped). Also the Set-Cookie
//! capture on raw bytes and the plan's one-line refusals.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crest_engine::protocol::ResponseDecoder;
use crest_engine::specweb99::FileId;
use crest_engine::{HttpVersion, RunConfig, RunReport, Specweb99};

use crate::support::{config, run, Conn, Fixture};

const FILLER: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-\n";

/// Small sizes keep the runs short: every file still holds its header line,
/// and class 1 and 2 files their tags.
fn size(file: FileId) -> usize {
    [100, 1100, 2200, 3300][usize::from(file.class)] + 64 * usize::from(file.file)
}

/// A kit-format file as crest's file sets write it, its tags naming `ad`'s file.
fn kit_file(file: FileId, ad: Option<u32>) -> Vec<u8> {
    let size = size(file);
    let mut out = format!("{size:9} {file}\n").into_bytes();
    let tag = format!("<!WEB99CAD><IMG SRC=\"/{}\"><!/WEB99CAD> \n", FileId::of_ad(ad.unwrap_or(0)));
    while out.len() < size {
        if matches!(file.class, 1 | 2) {
            out.extend_from_slice(tag.as_bytes());
        }
        for _ in 0..15 {
            out.extend_from_slice(FILLER);
        }
    }
    out.truncate(size);
    out
}

fn envelope(query: &str, content: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n<body>\n\
         <p>SERVER_SOFTWARE = test\n<p>REMOTE_ADDR = 127.0.0.1\n<p>SCRIPT_NAME = /dyn\n<p>QUERY_STRING = {query}\n<pre>\n"
    )
    .into_bytes();
    out.extend_from_slice(content);
    out.extend_from_slice(b"\n</pre>\n</body></html>\n");
    out
}

/// `file_set/dirNNNNN/classC_F` → the file.
fn parse_file(name: &str) -> FileId {
    let rest = name.strip_prefix("file_set/dir").expect("a kit path");
    let (dir, rest) = rest.split_once("/class").expect("a class");
    let (class, file) = rest.split_once('_').expect("a file");
    FileId { dir: dir.parse().unwrap(), class: class.parse().unwrap(), file: file.parse().unwrap() }
}

/// What the server saw: per user, the last ad it sent; cookies naming
/// another last ad; POST forms.
#[derive(Default)]
struct Seen {
    last_ad: HashMap<u32, u32>,
    stale_cookies: u64,
    posts: Vec<String>,
}

/// A SPECweb99 server: static files under `/file_set/`, dynamic GETs at
/// `/dyn?`, CGI at `/cgi?`, POST at `/dyn`; CAD answers ad last_ad + 1 and
/// substitutes it into the tags unless `substitute` is false.
fn server(substitute: bool, seen: Arc<Mutex<Seen>>) -> Fixture {
    Fixture::start(move |mut conn: Conn| {
        while let Some(request) = conn.read_request() {
            let text = String::from_utf8(request).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            let line = head.lines().next().unwrap();
            let target = line.split(' ').nth(1).unwrap();
            let header = |name: &str| {
                head.lines().find_map(|l| {
                    let (n, v) = l.split_once(": ")?;
                    n.eq_ignore_ascii_case(name).then(|| v.to_string())
                })
            };
            let http10 = line.ends_with("HTTP/1.0");
            let close = match header("connection").as_deref() {
                Some("close") => true,
                Some("keep-alive") => false,
                _ => http10,
            };
            let cookie = header("cookie").map(|c| {
                let c = c.strip_prefix("my_cookie=user_id=").expect("my_cookie");
                let (user, last) = c.split_once("&last_ad=").unwrap();
                (user.parse::<u32>().unwrap(), last.parse::<u32>().unwrap())
            });
            let mut extra = String::new();
            let body = if let Some(path) = target.strip_prefix("/file_set/") {
                kit_file(parse_file(&format!("file_set/{path}")), None)
            } else if line.starts_with("POST") {
                let form: HashMap<&str, &str> = body.split('&').filter_map(|kv| kv.split_once('=')).collect();
                let file = FileId {
                    dir: form["dir"].parse().unwrap(),
                    class: form["class"].parse().unwrap(),
                    file: form["num"].parse().unwrap(),
                };
                let mut s = seen.lock().unwrap();
                s.posts.push(body.to_string());
                if let Some((user, last)) = cookie {
                    if s.last_ad.get(&user).is_some_and(|&ad| ad != last) {
                        s.stale_cookies += 1;
                    }
                }
                envelope("post", &kit_file(file, None))
            } else {
                let (script, query) = target.split_once('?').unwrap();
                let file = parse_file(query.strip_prefix('/').unwrap());
                match (script, cookie) {
                    ("/dyn", Some((user, last))) => {
                        let ad = (last + 1) % 360;
                        let mut s = seen.lock().unwrap();
                        if s.last_ad.insert(user, ad).is_some_and(|was| was != last) {
                            s.stale_cookies += 1;
                        }
                        extra = format!(
                            "Set-Cookie: my_cookie=x\r\nSet-Cookie: found_cookie=Ad_id={ad}&Ad_weight=7&Expired=0\r\n"
                        );
                        envelope(query, &kit_file(file, substitute.then_some(ad)))
                    }
                    ("/dyn" | "/cgi", None) => envelope(query, &kit_file(file, None)),
                    _ => panic!("unexpected request {line}"),
                }
            };
            let keep = if http10 && !close { "Connection: keep-alive\r\n" } else { "" };
            let version = if http10 { "1.0" } else { "1.1" };
            let mut response =
                format!("HTTP/{version} 200 OK\r\nContent-Length: {}\r\n{keep}{extra}\r\n", body.len()).into_bytes();
            response.extend_from_slice(&body);
            if !conn.send(&response) || close {
                return;
            }
        }
    })
}

fn specweb99(fx: &Fixture) -> Specweb99 {
    Specweb99 {
        base_url: fx.url(""),
        dynamic_url: fx.url("/dyn"),
        cgi_url: fx.url("/cgi"),
        dirs: 20,
        users: 1000,
        first_connection: 100,
        // Rare kinds and classes made common, so all 20 classes show in a short run.
        request_mix: [0.30, 0.20, 0.10, 0.25, 0.15],
        class_mix: [0.35, 0.30, 0.20, 0.15],
    }
}

fn sw_config(fx: &Fixture, requests: u64) -> RunConfig {
    RunConfig {
        specweb99: Some(specweb99(fx)),
        connections: 4,
        threads: 2,
        max_requests: Some(requests),
        keepalive_requests: Some([5, 15]),
        keepalive_request_share: 0.70,
        ..RunConfig::default()
    }
}

fn errors(report: &RunReport) -> u64 {
    report.errors.values().sum()
}

#[test]
fn specweb99_against_a_right_server_draws_every_class_by_the_mix_and_finds_no_error() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let fx = server(true, seen.clone());
    let requests = 8000;
    let cfg = sw_config(&fx, requests);
    let (report, _) = run(cfg.clone());
    assert_eq!(errors(&report), 0, "{:?}", report.error_notes);
    assert_eq!(report.requests, requests);
    assert_eq!(report.classes.len(), 20);
    assert_eq!(report.issued_by_class.values().sum::<u64>(), requests);
    let sw = cfg.specweb99.unwrap();
    let ops = ["static", "dynamic", "cgi", "cad", "post"];
    for (o, op) in ops.iter().enumerate() {
        for c in 0..4 {
            let name = format!("{op}/class{c}");
            let got = report.classes[&name].requests as f64 / requests as f64;
            let want = sw.request_mix[o] * sw.class_mix[c];
            let sd = (want * (1.0 - want) / requests as f64).sqrt();
            assert!(got > 0.0 && (got - want).abs() < 5.0 * sd, "{name}: {got} vs {want}");
            assert_eq!(report.issued_by_class[&name], report.classes[&name].requests);
        }
    }
    // One client per connection, each with its per-class counts and active time.
    assert_eq!(report.clients.len(), 4);
    for c in &report.clients {
        assert_eq!(c.class_requests.len(), 20);
        assert_eq!(c.class_requests.iter().sum::<u64>(), c.requests);
        assert_eq!(c.class_errors.iter().sum::<u64>(), 0);
        assert!(c.active_us > 0 && c.active_us as f64 <= report.duration_s * 1e6 + 1.0, "{}", c.active_us);
    }
    let s = seen.lock().unwrap();
    // Every CAD and POST carried the ad this connection was shown last.
    assert_eq!(s.stale_cookies, 0);
    // POSTs name the connection globally (first_connection 100).
    assert!(!s.posts.is_empty());
    for form in &s.posts {
        let client: u32 = form.split("&client=").nth(1).unwrap().split('&').next().unwrap().parse().unwrap();
        assert!((100..104).contains(&client), "{form}");
        assert!(form.starts_with("class=") && form.ends_with("&urlroot=/file_set/"), "{form}");
    }
    // Keep-alive connections of 5–15 requests for 70 % of requests: ~2.7 requests per connection.
    let per_connection = requests as f64 / report.connections_opened as f64;
    assert!((2.3..3.2).contains(&per_connection), "{per_connection} requests per connection");
    // Each connection's last request asked to close it (but those the run's end cut short).
    let log = fx.log.lock().unwrap();
    let closes = log.iter().filter(|r| String::from_utf8_lossy(r).contains("Connection: close")).count() as u64;
    assert!(closes <= report.connections_opened && closes + 4 >= report.connections_opened, "{closes}");
}

#[test]
fn specweb99_over_http_1_0_keeps_alive_by_header() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let fx = server(true, seen);
    let cfg = RunConfig { http_version: HttpVersion::Http10, ..sw_config(&fx, 1000) };
    let (report, _) = run(cfg);
    assert_eq!(errors(&report), 0, "{:?}", report.error_notes);
    let per_connection = 1000.0 / report.connections_opened as f64;
    assert!((2.0..3.6).contains(&per_connection), "{per_connection} requests per connection");
}

#[test]
fn a_server_that_drops_the_ad_substitution_fails_cad_class1_and_class2_only() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let fx = server(false, seen);
    let (report, _) = run(sw_config(&fx, 3000));
    assert!(report.classes["cad/class1"].errors > 0 && report.classes["cad/class2"].errors > 0);
    for (name, class) in &report.classes {
        if name != "cad/class1" && name != "cad/class2" {
            assert_eq!(class.errors, 0, "{name}");
        }
    }
    assert_eq!(report.errors["validation"], errors(&report));
    assert!(
        report.error_notes.iter().any(|n| n.contains("<!WEB99CAD> tag does not name ad")),
        "{:?}",
        report.error_notes
    );
}

/// A server whose every response is `body_bytes` long.
fn fixed_body_server(body_bytes: usize) -> Fixture {
    let response: &'static [u8] = Box::leak(
        [format!("HTTP/1.1 200 OK\r\nContent-Length: {body_bytes}\r\n\r\n").into_bytes(), vec![b'x'; body_bytes]]
            .concat()
            .into_boxed_slice(),
    );
    Fixture::start(crate::support::respond_always(response))
}

#[test]
fn line_speed_paces_a_connection_to_its_bit_rate() {
    // 1 MB/s with 5 KB responses: ~400 exchanges in 2 s, so one exchange is 0.25 % of the bytes.
    let fx = fixed_body_server(5000);
    let bps = 8_000_000.0;
    let cfg = RunConfig { connections: 1, duration_s: Some(2.0), line_speed_bps: Some(bps), ..config(fx.url("/")) };
    let (report, _) = run(cfg);
    assert_eq!(errors(&report), 0, "{:?}", report.error_notes);
    let rate = report.bytes as f64 * 8.0 / report.duration_s;
    eprintln!("paced: {rate:.0} bit/s for a line of {bps} ({} requests)", report.requests);
    assert!((rate / bps - 1.0).abs() < 0.02, "{rate} bit/s for a line of {bps}");
    // Served faster than its line, the connection is credited the line speed: its line time is the
    // pacing's, up to the pause after its last response (at most one exchange past the end).
    let active_s = report.clients[0].active_us as f64 / 1e6;
    let credited = report.clients[0].bytes as f64 * 8.0 / active_s;
    assert!((credited / bps - 1.0).abs() < 0.01, "{credited} bit/s credited for a line of {bps}");
}

#[test]
fn a_connection_is_held_to_specweb99s_400_kbit_line() {
    // SPECweb99's line: 50 KB/s. 500-byte responses over 3 s are ~300 exchanges, one is 0.3 % of the bytes.
    let fx = fixed_body_server(500);
    let bps = 400_000.0;
    let cfg = RunConfig { connections: 1, duration_s: Some(3.0), line_speed_bps: Some(bps), ..config(fx.url("/")) };
    let (report, _) = run(cfg);
    assert_eq!(errors(&report), 0, "{:?}", report.error_notes);
    let rate = report.bytes as f64 * 8.0 / report.duration_s;
    eprintln!("paced: {rate:.0} bit/s for a line of {bps} ({} requests)", report.requests);
    assert!((rate / bps - 1.0).abs() < 0.02, "{rate} bit/s for a line of {bps}");
}

#[test]
fn keepalive_requests_closes_each_connection_after_its_count() {
    let fx = fixed_body_server(10);
    let cfg =
        RunConfig { connections: 1, max_requests: Some(30), keepalive_requests: Some([3, 3]), ..config(fx.url("/")) };
    let (report, _) = run(cfg);
    assert_eq!((report.requests, errors(&report)), (30, 0));
    assert_eq!(report.connections_opened, 10);
}

#[test]
fn the_found_cookie_is_captured_from_a_head_split_anywhere() {
    let response: &[u8] = b"HTTP/1.1 200 OK\r\nSet-Cookie: my_cookie=10001\r\nset-cookie: found_cookie=Ad_id=12&Ad_weight=3&Expired=0\r\nSet-Cookie: found_cookie=Ad_id=99\r\nContent-Length: 3\r\n\r\nabc";
    for cut in 0..=response.len() {
        let mut d = ResponseDecoder::new(4096, 1 << 20, false);
        d.set_header_capture("set-cookie", "found_cookie=");
        let (used, first) = d.decode(&response[..cut]).unwrap();
        let done = match first {
            Some(r) => r,
            None => {
                assert_eq!(used, cut);
                d.decode(&response[cut..]).unwrap().1.expect("complete")
            }
        };
        assert_eq!(done.body_bytes, 3);
        assert_eq!(d.captured_header(), Some(&b"found_cookie=Ad_id=12&Ad_weight=3&Expired=0"[..]), "cut {cut}");
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        d.decode(plain).unwrap();
        assert_eq!(d.captured_header(), None);
    }
}

#[test]
fn the_plan_refuses_what_does_not_fit_in_one_line_naming_the_field() {
    let fx = Fixture::start(|_conn: Conn| {});
    let sw = || RunConfig { specweb99: Some(specweb99(&fx)), max_requests: Some(1), ..RunConfig::default() };
    let table = serde_json::from_value(serde_json::json!([{"url": fx.url("/"), "weight": 1.0}])).unwrap();
    let cases: Vec<(RunConfig, &str)> = vec![
        (RunConfig { requests: table, ..sw() }, "requests"),
        (RunConfig { classes: vec!["a".into()], ..sw() }, "classes"),
        (RunConfig { connections_per_client: 2, connections: 2, ..sw() }, "connections_per_client"),
        (RunConfig { pipeline: 2, ..sw() }, "pipeline"),
        (RunConfig { specweb99: Some(Specweb99 { dirs: 0, ..specweb99(&fx) }), ..sw() }, "specweb99"),
        (RunConfig { specweb99: Some(Specweb99 { users: 0, ..specweb99(&fx) }), ..sw() }, "specweb99"),
        (
            RunConfig { specweb99: Some(Specweb99 { cgi_url: "ftp://x/".into(), ..specweb99(&fx) }), ..sw() },
            "specweb99",
        ),
        (RunConfig { line_speed_bps: Some(0.0), ..sw() }, "line_speed_bps"),
        (RunConfig { keepalive_requests: Some([0, 3]), ..sw() }, "keepalive_requests"),
        (RunConfig { keepalive_requests: Some([5, 3]), ..sw() }, "keepalive_requests"),
        (RunConfig { keepalive_requests: Some([5, 15]), keepalive: false, ..sw() }, "keepalive_requests"),
        (RunConfig { keepalive_request_share: 0.7, ..sw() }, "keepalive_request_share"),
        (
            RunConfig { keepalive_requests: Some([5, 15]), keepalive_request_share: 1.5, ..sw() },
            "keepalive_request_share",
        ),
    ];
    for (cfg, field) in cases {
        let err = crest_engine::validate(&cfg).expect_err(field);
        assert_eq!(err.field, field, "{err}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }
    assert!(crest_engine::validate(&sw()).is_ok());
    // The defaults fill what a caller leaves out.
    let parsed: Specweb99 = serde_json::from_value(serde_json::json!({
        "base_url": "http://h", "dynamic_url": "http://h/d", "cgi_url": "http://h/c", "dirs": 10, "users": 10
    }))
    .unwrap();
    assert_eq!(parsed.request_mix, [0.70, 0.1245, 0.0015, 0.126, 0.048]);
    assert_eq!((parsed.class_mix, parsed.first_connection), ([0.35, 0.50, 0.14, 0.01], 0));
}

/// Bodies cut into random pieces, files whose last tag is cut short included.
#[test]
fn custom_ad_bodies_in_random_pieces_pass() {
    use crest_engine::rng::Rng;
    use crest_engine::specweb99::{BodyCheck, Op};
    let mut rng = Rng::new(1);
    for ad in (0..360u32).step_by(7) {
        for class in 1..3u8 {
            for f in 0..9u8 {
                let file = FileId { dir: 3, class, file: f };
                let body = envelope("q", &kit_file(file, Some(ad)));
                for _ in 0..20 {
                    let mut check = BodyCheck::new();
                    check.start(Op::Cad, file);
                    let mut at = 0;
                    while at < body.len() {
                        let n = 1 + rng.below(body.len() - at);
                        check.feed(&body[at..at + n]);
                        at += n;
                    }
                    assert_eq!(check.finish(body.len() as u64, Some(i64::from(ad))), Ok(()), "{ad} {file}");
                }
            }
        }
    }
}
