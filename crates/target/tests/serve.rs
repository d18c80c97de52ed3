//! Static files, HTTP/1.x connection handling, /dyn/env and lifecycle,
//! checked over raw sockets against a live server on a free loopback port.

use std::fs;
use std::io::{BufReader, Write};
use std::time::{Duration, Instant};

use crate::common::{closes, connect, read_reply, request, Fixture, HELLO};
use crest_dynamic::env_page;
use crest_target::{ServeConfig, ServeError, Server};

#[test]
fn get_small_file() {
    let fx = Fixture::start();
    let r = fx.get("/hello.txt?ignored=1");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, HELLO.as_bytes());
    assert_eq!(r.header("content-length"), Some(HELLO.len().to_string().as_str()));
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(r.header("server"), Some("crest"));
}

#[test]
fn head_sends_no_body() {
    let fx = Fixture::start();
    // Keep-alive HEAD followed by GET: a stray HEAD body would corrupt the
    // second response.
    let mut s = connect(fx.addr);
    s.write_all(b"HEAD /hello.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reader = BufReader::new(s);
    let head = read_reply(&mut reader, true);
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), Some(HELLO.len().to_string().as_str()));
    let get = read_reply(&mut reader, false);
    assert_eq!(get.body, HELLO.as_bytes());
}

#[test]
fn directories_and_missing_files() {
    let fx = Fixture::start();
    assert_eq!(fx.get("/").text(), "<h1>root index</h1>\n");
    assert_eq!(fx.get("/sub/").text(), "<h1>sub index</h1>\n");
    assert_eq!(fx.get("/sub").header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(fx.get("/empty/").status, 404);
    assert_eq!(fx.get("/nope.txt").status, 404);
    assert_eq!(fx.get("/hello.txt/").status, 404);
}

#[test]
fn traversal_is_rejected() {
    let fx = Fixture::start();
    for target in
        ["/../etc/passwd", "/%2e%2e/x", "/sub/../../etc/passwd", "/%2E%2E%2Fetc%2Fpasswd", "/sub/..%2f..%2fetc/passwd"]
    {
        let r = fx.get(target);
        assert!(matches!(r.status, 400 | 403 | 404), "{target} -> {}", r.status);
        assert!(!r.text().contains("root:"), "{target} leaked");
    }
    // CGI sources must not be readable as static files, however spelled.
    let r = fx.get("/%63gi-bin/fail.sh");
    assert!(!r.text().contains("exit 1"));
}

#[test]
fn other_methods_get_405() {
    let fx = Fixture::start();
    let r = request(fx.addr, b"DELETE /hello.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
}

#[test]
fn http10_without_keep_alive_closes() {
    let fx = Fixture::start();
    let mut s = connect(fx.addr);
    s.write_all(b"GET /hello.txt HTTP/1.0\r\n\r\n").unwrap();
    let mut reader = BufReader::new(s);
    let r = read_reply(&mut reader, false);
    assert_eq!((r.status, r.body.as_slice()), (200, HELLO.as_bytes()));
    assert!(r.version.starts_with("HTTP/1."));
    assert!(closes(&mut reader), "server kept an HTTP/1.0 connection open");
}

#[test]
fn http11_keep_alive_serves_several_requests() {
    let fx = Fixture::start();
    let mut reader = BufReader::new(connect(fx.addr));
    for _ in 0..3 {
        reader.get_mut().write_all(b"GET /hello.txt HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let r = read_reply(&mut reader, false);
        assert_eq!((r.status, r.body.as_slice()), (200, HELLO.as_bytes()));
    }
    reader.get_mut().write_all(b"GET /hello.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(read_reply(&mut reader, false).status, 200);
    assert!(closes(&mut reader));
}

#[test]
fn malformed_request_gets_400_or_close() {
    let fx = Fixture::start();
    for raw in [&b"GARBAGE\r\n\r\n"[..], b"GET / HTTP/9.9\r\n\r\n", b"GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n"] {
        let mut s = connect(fx.addr);
        s.write_all(raw).unwrap();
        let mut reader = BufReader::new(s);
        let mut first = String::new();
        let _ = std::io::BufRead::read_line(&mut reader, &mut first);
        assert!(first.is_empty() || first.contains(" 400 ") || first.contains(" 505 "), "{raw:?} -> {first:?}");
    }
    // The server is still healthy afterwards.
    assert_eq!(fx.get("/hello.txt").status, 200);
}

#[test]
fn large_file_is_served_intact() {
    let fx = Fixture::start();
    let data: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(fx.dir.path().join("big.bin"), &data).unwrap();
    for _ in 0..2 {
        let r = fx.get("/big.bin");
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("application/octet-stream"));
        assert!(r.body == data, "3 MB body differs");
    }
}

#[test]
fn memory_cached_file_follows_edits() {
    let fx = Fixture::start_with(|c| c.threads = 1);
    let path = fx.dir.path().join("edit.txt");
    fs::write(&path, "one").unwrap();
    assert_eq!(fx.get("/edit.txt").text(), "one");
    fs::write(&path, "two, longer").unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while fx.get("/edit.txt").text() != "two, longer" {
        assert!(Instant::now() < deadline, "edit never became visible");
        std::thread::sleep(Duration::from_millis(100));
    }
    fs::remove_file(&path).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(fx.get("/edit.txt").status, 404);
}

#[test]
fn dyn_env_is_exactly_1024_bytes_and_escaped() {
    let fx = Fixture::start();
    let r = request(
        fx.addr,
        b"GET /dyn/env?name='x'&q=%3Cscript%3E HTTP/1.1\r\nHost: localhost\r\nUser-Agent: <script>alert(1)</script>\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), 1024);
    assert_eq!(r.header("content-length"), Some("1024"));
    let page = r.text();
    assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"));
    assert!(!page.contains("<script>"), "unescaped markup in {page}");
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("name=&#39;x&#39;&amp;q=%3Cscript%3E"));
    assert!(page.contains("<td>GET</td>") && page.contains("<td>HTTP/1.1</td>"));
    // A raw '<' in the request target is not a valid URI: hyper refuses it,
    // so it can never be reflected either.
    let r = request(fx.addr, b"GET /dyn/env?<script> HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(r.status == 400 || (r.body.len() == 1024 && !r.text().contains("<script>")));
    // A huge header is truncated, never overflowing the page.
    let big = format!(
        "GET /dyn/env?{} HTTP/1.1\r\nHost: x\r\nUser-Agent: {}\r\nConnection: close\r\n\r\n",
        "a&".repeat(3000),
        "<".repeat(3000)
    );
    let r = request(fx.addr, big.as_bytes());
    assert_eq!((r.status, r.body.len()), (200, 1024));
}

/// `/dyn/env` is crest-dynamic's page (the one crest-env and crest-fcgi
/// render): its rows, in order, and their values as CGI would set them.
#[test]
fn dyn_env_is_the_cgi_page() {
    let fx = Fixture::start();
    let r = request(
        fx.addr,
        b"POST /dyn/env?a=1 HTTP/1.0\r\nHost: example.org:99\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc",
    );
    assert_eq!((r.status, r.body.len()), (200, env_page::PAGE_BYTES));
    let page = r.text();
    let names: Vec<&str> = page.split("<tr><th>").skip(1).filter_map(|row| row.split("</th>").next()).collect();
    assert_eq!(names, env_page::VARIABLES);
    let row = |name: &str, value: &str| format!("<tr><th>{name}</th><td>{value}</td></tr>");
    for (name, value) in [
        ("GATEWAY_INTERFACE", "CGI/1.1"),
        ("SERVER_NAME", "example.org"),
        ("SERVER_PROTOCOL", "HTTP/1.0"),
        ("REQUEST_METHOD", "POST"),
        ("SCRIPT_NAME", "/dyn/env"),
        ("PATH_INFO", ""),
        ("QUERY_STRING", "a=1"),
        ("REMOTE_ADDR", "127.0.0.1"),
        ("HTTP_HOST", "example.org:99"),
        ("CONTENT_TYPE", "text/plain"),
        ("CONTENT_LENGTH", "3"),
        ("HTTPS", ""),
    ] {
        assert!(page.contains(&row(name, value)), "{name}={value} not in {page}");
    }
}

#[test]
fn access_log_records_requests() {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("access.log");
    let fx = Fixture::start_with(|c| c.access_log = Some(log.clone()));
    assert_eq!(fx.get("/hello.txt").status, 200);
    assert_eq!(fx.get("/missing").status, 404);
    drop(fx);
    let text = fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    // crest's format: the address, then the Unix time the request arrived, to the µs.
    let stamp = lines[0].strip_prefix("127.0.0.1 [").and_then(|rest| rest.split(']').next()).unwrap_or("");
    let (secs, micros) = stamp.split_once('.').unwrap_or(("", ""));
    assert!(secs.parse::<u64>().is_ok() && micros.len() == 6 && micros.parse::<u32>().is_ok(), "{}", lines[0]);
    assert!(lines[0].ends_with(&format!("\"GET /hello.txt HTTP/1.1\" 200 {}", HELLO.len())), "{}", lines[0]);
    assert!(lines[1].contains("\"GET /missing HTTP/1.1\" 404 "));
}

#[test]
fn stop_is_prompt_with_idle_keep_alive_connection() {
    let mut fx = Fixture::start();
    let mut reader = BufReader::new(connect(fx.addr));
    reader.get_mut().write_all(b"GET /hello.txt HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(read_reply(&mut reader, false).status, 200);
    // Also a connection that sent half a request head.
    let mut half = connect(fx.addr);
    half.write_all(b"GET /hello.txt HTTP/1.1\r\nHo").unwrap();
    let started = Instant::now();
    fx.server.take().unwrap().stop();
    assert!(started.elapsed() < Duration::from_secs(2), "stop took {:?}", started.elapsed());
    assert!(closes(&mut reader), "keep-alive connection left open");
    assert!(std::net::TcpStream::connect(fx.addr).is_err(), "still accepting after stop");
}

#[test]
fn start_errors_are_clear() {
    let missing = ServeConfig { docroot: "/definitely/not/here".into(), ..ServeConfig::default() };
    let err = Server::start(missing).err().expect("missing docroot must fail");
    assert!(matches!(err, ServeError::DocrootMissing(_)));
    assert!(err.to_string().contains("--docroot"), "{err}");

    let fx = Fixture::start();
    let taken = ServeConfig { docroot: fx.dir.path().to_owned(), port: fx.addr.port(), ..ServeConfig::default() };
    let err = Server::start(taken).err().expect("port in use must fail");
    assert!(matches!(err, ServeError::AddrInUse { .. }), "{err:?}");
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn config_deserializes_with_defaults() {
    let c: ServeConfig = serde_json::from_str(r#"{"docroot": "/srv", "port": 8080}"#).unwrap();
    assert_eq!((c.port, c.threads, c.tls, c.memory_cache_max_file_bytes), (8080, 0, false, 256 * 1024));
    assert_eq!(c.host.to_string(), "127.0.0.1");
    assert!(serde_json::from_str::<ServeConfig>(r#"{"docroot": "/srv", "bogus": 1}"#).is_err());
}

#[test]
fn urls_and_threads() {
    let fx = Fixture::start_with(|c| c.threads = 3);
    let server = fx.server.as_ref().unwrap();
    assert_eq!(server.urls(), vec![format!("http://{}/", fx.addr)]);
    let names: Vec<String> = fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .collect();
    for i in 0..3 {
        assert!(names.iter().any(|n| n.trim() == format!("crest-target-{i}")), "{names:?}");
    }
}
