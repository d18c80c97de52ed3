//! Each format crest names, on lines shaped as the servers write them, and custom format strings.

use crest_replay::line::LineError;
use crest_replay::{parse_line, Format, Record};

/// 2000-10-10T20:55:36Z, Apache's documented example time (13:55:36 -0700).
const APACHE_EXAMPLE_US: i64 = 971_211_336_000_000;

pub const NGINX_COMBINED: &str = r#"203.0.113.9 - - [27/Nov/2026:20:41:07 +0000] "GET /index.html HTTP/1.1" 200 612 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0""#;
pub const APACHE_COMBINED: &str = r#"192.0.2.17 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)""#;
pub const APACHE_COMMON: &str =
    r#"127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326"#;
pub const H2O_DEFAULT: &str = r#"198.51.100.2 - - [27/Nov/2026:20:41:07 +0900] "GET /img/logo.png HTTP/2" 304 - "https://example.org/" "curl/8.5.0""#;
pub const CADDY: &str = r#"{"level":"info","ts":1700000000.5241024,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"41342","client_ip":"10.0.0.7","proto":"HTTP/1.1","method":"GET","host":"localhost:8080","uri":"/search?q=a%20b&n=1","headers":{"Accept":["*/*"],"User-Agent":["curl/8.5.0"],"Cookie":["REDACTED"]},"tls":{"resumed":false,"version":772}},"bytes_read":0,"user_id":"","duration":0.000929675,"size":10900,"status":200,"resp_headers":{"Server":["Caddy"],"Content-Type":["text/html; charset=utf-8"]}}"#;
pub const CREST_NGINX: &str = r#"127.0.0.1 [1700000000.123] "GET /file_set/dir00001/class1_3 HTTP/1.1" 200 5120 0.004"#;
pub const CREST_APACHE: &str = r#"127.0.0.1 [1700000000123] "POST /cgi-bin/echo HTTP/1.1" 201 1024 350"#;
pub const CREST_LIGHTTPD: &str = r#"127.0.0.1 [1700000000123] "HEAD /a.html HTTP/1.0" 200 -"#;
pub const CREST_BUILTIN: &str = r#"127.0.0.1 [1700000000.123456] "GET /x HTTP/1.1" 200 1024"#;

pub fn parse<'a>(line: &'a str, format: &str) -> Result<Record<'a>, LineError> {
    parse_line(line.as_bytes(), &Format::parse(format).unwrap())
}

fn ok<'a>(line: &'a str, format: &str) -> Record<'a> {
    parse(line, format).unwrap_or_else(|e| panic!("{format}: {e:?}"))
}

#[test]
fn combined_from_nginx_apache_and_h2o() {
    let r = ok(NGINX_COMBINED, "combined");
    assert_eq!((r.method, r.target, r.status, r.body_bytes), (&b"GET"[..], &b"/index.html"[..], 200, Some(612)));
    assert_eq!(r.client, b"203.0.113.9");
    assert!(r.user_agent.starts_with(b"Mozilla/5.0 (X11"));
    assert_eq!(r.time_us, 1_795_812_067_000_000, "2026-11-27T20:41:07Z");
    assert_eq!(r.duration_us, None);

    let r = ok(APACHE_COMBINED, "combined");
    assert_eq!(r.time_us, APACHE_EXAMPLE_US, "the -0700 zone is taken off");
    assert_eq!((r.target, r.body_bytes), (&b"/apache_pb.gif"[..], Some(2326)));
    assert_eq!(r.user_agent, b"Mozilla/4.08 [en] (Win98; I ;Nav)");

    let r = ok(H2O_DEFAULT, "h2o");
    assert_eq!((r.status, r.body_bytes), (304, Some(0)), "`-` bytes are 0");
    assert_eq!(r.time_us, 1_795_812_067_000_000 - 9 * 3_600_000_000);
    assert_eq!(ok(H2O_DEFAULT, "combined"), r);
}

#[test]
fn common_and_its_extra_fields() {
    let r = ok(APACHE_COMMON, "common");
    assert_eq!((r.time_us, r.status, r.body_bytes), (APACHE_EXAMPLE_US, 200, Some(2326)));
    assert_eq!(r.user_agent, b"");
    // A combined line is a common one with fields after it, which crest does not need.
    assert_eq!(ok(APACHE_COMBINED, "common").target, b"/apache_pb.gif");
}

#[test]
fn caddy_json() {
    let r = ok(CADDY, "caddy");
    assert_eq!((r.method, r.target), (&b"GET"[..], &b"/search?q=a%20b&n=1"[..]));
    assert_eq!((r.status, r.body_bytes, r.duration_us), (200, Some(10900), Some(929)));
    assert_eq!(r.time_us, 1_700_000_000_524_102);
    assert!(r.logged_at_end, "Caddy logs when the request is handled");
    assert_eq!(r.client, b"10.0.0.7", "client_ip (the real client behind a trusted proxy) before remote_ip");
    assert_eq!((r.user_agent, r.cookie), (&b"curl/8.5.0"[..], &b"REDACTED"[..]));
    let iso = CADDY.replace("1700000000.5241024", "\"2023-11-14T22:13:20.524102Z\"");
    assert_eq!(ok(&iso, "caddy").time_us, 1_700_000_000_524_102);
    let escaped = CADDY.replace("curl/8.5.0", r#"a \"quoted\" agent \\ \u00e9"#);
    assert_eq!(ok(&escaped, "caddy").user_agent, br#"a \"quoted\" agent \\ \u00e9"#);
    assert!(
        matches!(parse(r#"{"level":"info","ts":1,"msg":"x"}"#, "caddy"), Err(LineError::Malformed(m)) if m.contains("request"))
    );
}

#[test]
fn crest_reads_every_adapters_line() {
    let r = ok(CREST_NGINX, "crest");
    assert_eq!((r.time_us, r.duration_us, r.logged_at_end), (1_700_000_000_123_000, Some(4000), true));
    assert_eq!((r.status, r.body_bytes), (200, Some(5120)));
    let r = ok(CREST_APACHE, "crest");
    assert_eq!((r.time_us, r.duration_us, r.logged_at_end), (1_700_000_000_123_000, Some(350), false));
    assert_eq!((r.method, r.status), (&b"POST"[..], 201));
    let r = ok(CREST_LIGHTTPD, "crest");
    assert_eq!((r.method, r.body_bytes, r.duration_us), (&b"HEAD"[..], Some(0), None));
    let r = ok(CREST_BUILTIN, "crest");
    assert_eq!((r.time_us, r.logged_at_end, r.target), (1_700_000_000_123_456, false, &b"/x"[..]));
}

#[test]
fn auto_detects_each() {
    let detect = |line: &str| Format::detect(line.as_bytes()).unwrap().name;
    assert_eq!(detect(CADDY), "caddy");
    for line in [CREST_NGINX, CREST_APACHE, CREST_LIGHTTPD, CREST_BUILTIN] {
        assert_eq!(detect(line), "crest");
    }
    assert_eq!(detect(NGINX_COMBINED), "combined");
    assert_eq!(detect(H2O_DEFAULT), "combined");
    assert_eq!(detect(APACHE_COMMON), "common");
    let err = Format::detect(b"hello world").unwrap_err().to_string();
    assert!(err.contains("format auto") && err.contains("`hello world`") && !err.contains('\n'), "{err}");
}

#[test]
fn custom_nginx_format() {
    let spec = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time"#;
    let line = format!("{NGINX_COMBINED} 0.250");
    let r = ok(&line, spec);
    assert_eq!((r.duration_us, r.logged_at_end, r.body_bytes), (Some(250_000), true, Some(612)));
    let r = ok(
        r#"2026-11-27T21:41:07+01:00 POST /api/v1/items ?a=1 201 17 ${x}"#,
        "$time_iso8601 $request_method $uri $args $status $bytes_sent ${x}",
    );
    assert_eq!((r.method, r.target, r.body_bytes), (&b"POST"[..], &b"/api/v1/items"[..], Some(17)));
    assert_eq!(r.time_us, 1_795_812_067_000_000);
    let r = ok("[1.5] GET /a?b=c 200 sid=9; x=1", "[$msec] $request_method $uri$is_args$args $status $http_cookie");
    assert_eq!((r.target, r.time_us, r.cookie), (&b"/a?b=c"[..], 1_500_000, &b"sid=9; x=1"[..]));
}

#[test]
fn custom_apache_format() {
    let r = ok(
        r#"10.1.1.1 1700000000000001 "GET /p?q=1 HTTP/1.1" 404 0 1200 "sid=77""#,
        r#"%h %{usec}t \"%r\" %>s %B %D \"%{Cookie}i\""#,
    );
    assert_eq!(
        (r.time_us, r.status, r.duration_us, r.cookie),
        (1_700_000_000_000_001, 404, Some(1200), &b"sid=77"[..])
    );
    let r = ok(
        r#"PUT /u/1?x=y "agent" 1700000000 .042 2 200"#,
        r#"%m %U%q "%{User-agent}i" %{sec}t .%{msec_frac}t %T %>s"#,
    );
    assert_eq!((r.method, r.target, r.user_agent), (&b"PUT"[..], &b"/u/1?x=y"[..], &b"agent"[..]));
    assert_eq!((r.time_us, r.duration_us), (1_700_000_000_042_000, Some(2_000_000)));
    let r = ok(r#"[1700000000999] "GET /e HTTP/1.1" 200 5"#, r#"[%{end:msec}t] "%r" %s %O"#);
    assert_eq!((r.logged_at_end, r.body_bytes), (true, Some(5)));
}

#[test]
fn format_errors_name_what_crest_reads() {
    for (spec, says) in [
        ("nginx", "unknown log format \"nginx\""),
        ("%h %Z %r %s", "unknown directive %Z"),
        ("%h %{%d/%b}t %r %s", "unknown directive %{%d/%b}t"),
        ("%h %t %>s", "logs no request"),
        ("$remote_addr $request", "logs no status"),
        ("$remote_addr$request $status", "no text between them"),
        ("%h %t %{msec}t %r %s", "the time twice"),
        ("", "empty"),
    ] {
        let err = Format::parse(spec).unwrap_err().to_string();
        assert!(err.contains(says), "{spec:?}: {err}");
        assert!(err.contains("crest reads auto, combined") && !err.contains('\n'), "{err}");
    }
}

#[test]
fn escapes_inside_quotes() {
    // Apache writes \" inside a quoted field, nginx \x22; neither ends the field.
    let apache = APACHE_COMBINED.replace("Mozilla/4.08 [en]", r#"Mozilla \"4.08\" [en]"#);
    assert_eq!(ok(&apache, "combined").user_agent, br#"Mozilla \"4.08\" [en] (Win98; I ;Nav)"#);
    let nginx = NGINX_COMBINED.replace("/index.html", r"/a\x22b\x5Cc");
    let r = ok(&nginx, "combined");
    assert_eq!(r.target, br"/a\x22b\x5Cc", "the record keeps the target as logged");
    let mut out = Vec::new();
    crest_replay::line::unescape(r.target, &mut out);
    assert_eq!(out, b"/a%22b%5Cc", "what is sent: decoded, then percent-encoded where a target needs it");
    crest_replay::line::unescape(br"/caf\u00e9 x\/y", &mut out);
    assert_eq!(out, b"/caf%C3%A9%20x/y");
}

#[test]
fn unreplayable_requests_are_told_apart_from_malformed_lines() {
    let tls = r#"198.51.100.4 - - [27/Nov/2026:20:41:07 +0000] "\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03" 400 157 "-" "-""#;
    assert_eq!(parse(tls, "combined"), Err(LineError::Unreplayable));
    for request in [
        "-",
        "",
        "GET",
        "CONNECT example.org:443 HTTP/1.1",
        "OPTIONS * HTTP/1.1",
        "GET /a b HTTP/1.1",
        "G(T / HTTP/1.1",
    ] {
        let line = format!(r#"1.2.3.4 - - [27/Nov/2026:20:41:07 +0000] "{request}" 400 0 "-" "-""#);
        assert_eq!(parse(&line, "combined"), Err(LineError::Unreplayable), "{request}");
    }
    let absolute = r#"1.2.3.4 - - [27/Nov/2026:20:41:07 +0000] "GET http://example.org/a?b HTTP/1.1" 200 1 "-" "-""#;
    assert_eq!(ok(absolute, "combined").target, b"/a?b", "an absolute-form target is cut to its path");
    let no_proto = r#"1.2.3.4 - - [27/Nov/2026:20:41:07 +0000] "GET /old" 200 1 "-" "-""#;
    assert_eq!(ok(no_proto, "combined").target, b"/old", "HTTP/0.9 has no protocol");
    // A line whose other fields do not parse is malformed whatever its request.
    let bad_status = tls.replace(" 400 ", " 4x0 ");
    assert!(matches!(parse(&bad_status, "combined"), Err(LineError::Malformed(_))));
}

#[test]
fn malformed_says_what_was_expected_where() {
    let Err(LineError::Malformed(why)) = parse(&APACHE_COMMON.replace("[10/Oct", "10/Oct"), "common") else { panic!() };
    assert!(why.contains("expected ` [`") && why.contains("at byte"), "{why}");
    let Err(LineError::Malformed(why)) = parse(&APACHE_COMMON.replace("Oct", "Okt"), "common") else { panic!() };
    assert!(why.contains("the time [dd/Mon/yyyy:hh:mm:ss +zzzz] is `10/Okt/2000:13:55:36 -0700`"), "{why}");
    let long = format!("{}\x01{}", "x".repeat(30), "y".repeat(100));
    let Err(LineError::Malformed(why)) = parse(&long, "common") else { panic!() };
    assert!(why.contains(r"\x01") && why.contains('…') && why.len() < 200, "{why}");
}

/// Every line cut short: never a panic; malformed unless only the last (numeric, or
/// optional) field was cut, which still reads as a shorter number.
#[test]
fn lines_cut_at_every_byte() {
    let cases: &[(&str, &str, usize)] = &[
        ("combined", NGINX_COMBINED, NGINX_COMBINED.len()),
        ("combined", APACHE_COMBINED, APACHE_COMBINED.len()),
        ("h2o", H2O_DEFAULT, H2O_DEFAULT.len()),
        ("caddy", CADDY, CADDY.len()),
        ("common", APACHE_COMMON, APACHE_COMMON.rfind(' ').unwrap() + 2),
        ("crest", CREST_NGINX, CREST_NGINX.find(" 200 ").unwrap() + 6),
        ("crest", CREST_APACHE, CREST_APACHE.find(" 201 ").unwrap() + 6),
        ("crest", CREST_LIGHTTPD, CREST_LIGHTTPD.len()),
        ("crest", CREST_BUILTIN, CREST_BUILTIN.find(" 200 ").unwrap() + 6),
    ];
    for &(format, line, ok_from) in cases {
        let format = Format::parse(format).unwrap();
        for cut in 0..line.len() {
            let got = parse_line(&line.as_bytes()[..cut], &format);
            if cut < ok_from {
                assert!(matches!(got, Err(LineError::Malformed(_))), "{} cut at {cut}: {got:?}", format.name);
            }
        }
        assert!(parse_line(line.as_bytes(), &format).is_ok());
    }
}
