//! CGI/1.1 execution: meta-variables, stdin, response parsing, failures,
//! and that no script process outlives the server.

use std::fs;
use std::time::{Duration, Instant};

use crate::common::{request, Fixture};

#[test]
fn query_method_and_gateway_interface() {
    let fx = Fixture::start();
    let r = fx.get("/cgi-bin/echo.sh?a=1&b=two");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("text/plain"));
    assert_eq!(r.text(), "a=1&b=two GET CGI/1.1\n");
}

#[test]
fn meta_variables() {
    let fx = Fixture::start();
    let raw = "GET /cgi-bin/env.sh/extra/path?x=y HTTP/1.1\r\nHost: example.test:1234\r\nUser-Agent: crest-test\r\n\
               X-Custom-Thing: 42\r\nProxy: http://evil/\r\nConnection: close\r\n\r\n";
    let r = request(fx.addr, raw.as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    let env = r.text();
    let has = |line: &str| env.lines().any(|l| l == line);
    for line in [
        "GATEWAY_INTERFACE=CGI/1.1",
        "SERVER_PROTOCOL=HTTP/1.1",
        "REQUEST_METHOD=GET",
        "QUERY_STRING=x=y",
        "SCRIPT_NAME=/cgi-bin/env.sh",
        "PATH_INFO=/extra/path",
        "SERVER_NAME=example.test",
        &format!("SERVER_PORT={}", fx.addr.port()),
        "REMOTE_ADDR=127.0.0.1",
        "HTTP_HOST=example.test:1234",
        "HTTP_USER_AGENT=crest-test",
        "HTTP_X_CUSTOM_THING=42",
    ] {
        assert!(has(line), "missing {line} in\n{env}");
    }
    assert!(env.lines().any(|l| l.starts_with("REMOTE_PORT=")));
    assert!(env.lines().any(|l| l.starts_with("SERVER_SOFTWARE=crest")));
    assert!(!env.contains("HTTP_PROXY"), "httpoxy: Proxy header must not become HTTP_PROXY");
    assert!(!env.contains("HTTPS="));
    // The environment is cleared apart from PATH: nothing of ours leaks.
    assert!(!env.contains("CARGO"), "server environment leaked into CGI");
}

#[test]
fn post_body_reaches_stdin() {
    let fx = Fixture::start();
    let body = "field=value&other=".to_owned() + &"z".repeat(200_000);
    let raw = format!(
        "POST /cgi-bin/cat.sh HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let r = request(fx.addr, raw.as_bytes());
    assert_eq!(r.status, 201);
    assert_eq!(r.header("x-len"), Some(body.len().to_string().as_str()));
    assert!(r.text() == body, "stdin did not round-trip");
}

#[test]
fn failures_are_500() {
    let fx = Fixture::start();
    assert_eq!(fx.get("/cgi-bin/fail.sh").status, 500);
    assert_eq!(fx.get("/cgi-bin/garbage.sh").status, 500);
    // The server keeps working afterwards.
    assert_eq!(fx.get("/cgi-bin/echo.sh").status, 200);
}

#[test]
fn missing_and_non_executable_scripts() {
    let fx = Fixture::start();
    assert_eq!(fx.get("/cgi-bin/nope.sh").status, 404);
    assert_eq!(fx.get("/cgi-bin/").status, 404);
    assert_eq!(fx.get("/cgi-bin/noexec.sh").status, 403);
    assert_eq!(fx.get("/cgi-bin/../hello.txt").status, 403);
}

#[test]
fn redirect_and_head() {
    let fx = Fixture::start();
    let r = fx.get("/cgi-bin/redirect.sh");
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some("/hello.txt"));
    let r = request(fx.addr, b"HEAD /cgi-bin/echo.sh?q HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(r.status, 200);
    // The body a GET would get, "q HEAD CGI/1.1\n", is counted but not sent.
    assert_eq!(r.header("content-length"), Some("15"));
}

#[test]
fn stop_kills_running_scripts_and_their_children() {
    let mut fx = Fixture::start();
    let addr = fx.addr;
    let client = std::thread::spawn(move || {
        // Either an error response or a closed connection; must not hang.
        let mut s = crate::common::connect(addr);
        std::io::Write::write_all(&mut s, b"GET /cgi-bin/sleepy.sh HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut s, &mut buf);
    });
    let pidfile = fx.dir.path().join("cgi-bin/sleepy.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid = loop {
        if let Some(pid) = fs::read_to_string(&pidfile).ok().and_then(|s| s.trim().parse::<u32>().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "CGI script never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let started = Instant::now();
    fx.server.take().unwrap().stop();
    assert!(started.elapsed() < Duration::from_secs(2), "stop took {:?}", started.elapsed());
    client.join().unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    while alive(pid) {
        assert!(Instant::now() < deadline, "grandchild {pid} outlived the server");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Running or sleeping; a zombie (killed, awaiting its reaper) counts as gone.
fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}
