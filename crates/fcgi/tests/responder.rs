//! The crest-fcgi binary end to end: started on a temporary unix socket (or
//! TCP, or a socket passed as fd 0), spoken to with hand-built FastCGI
//! records, stopped with SIGTERM.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;
use crest_dynamic::bytes::Stream;
use crest_dynamic::env_page::{self, PAGE_BYTES};

const BIN: &str = env!("CARGO_BIN_EXE_crest-fcgi");
/// Bounds every wait, so a hung responder fails the test instead of hanging it.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

struct Responder {
    child: Child,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Responder {
    /// crest-fcgi on a fresh unix socket with one runtime thread (the
    /// hardest case for concurrency), ready to accept.
    fn start() -> Responder {
        Responder::start_with(&[])
    }

    /// As [`Responder::start`], with `extra` arguments.
    fn start_with(extra: &[&str]) -> Responder {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("fcgi.sock");
        let mut args = vec!["--socket", path_str(&socket), "--threads", "1"];
        args.extend_from_slice(extra);
        let child = spawn(&args, Stdio::null());
        let responder = Responder { child, socket, _dir: dir };
        wait_until(|| UnixStream::connect(&responder.socket).is_ok());
        responder
    }

    fn connect(&self) -> UnixStream {
        let stream = UnixStream::connect(&self.socket).expect("connect");
        stream.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
        stream.set_write_timeout(Some(IO_TIMEOUT)).expect("timeout");
        stream
    }

    /// SIGTERM; the exit status, stdout and stderr.
    fn stop(mut self) -> (ExitStatus, String, String) {
        terminate(&mut self.child)
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temp paths are UTF-8")
}

fn spawn(args: &[&str], stdin: impl Into<Stdio>) -> Child {
    Command::new(BIN)
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start crest-fcgi")
}

fn terminate(child: &mut Child) -> (ExitStatus, String, String) {
    let pid = i32::try_from(child.id()).expect("pid fits i32");
    // SAFETY: kill(2) with a pid of our own child and a valid signal.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + IO_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "crest-fcgi ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut s) = child.stdout.take() {
        s.read_to_string(&mut out).expect("stdout");
    }
    if let Some(mut s) = child.stderr.take() {
        s.read_to_string(&mut err).expect("stderr");
    }
    (status, out, err)
}

/// Polls `ready` until it holds; only start-up is waited for this way.
fn wait_until(mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + IO_TIMEOUT;
    while !ready() {
        assert!(Instant::now() < deadline, "crest-fcgi did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Reads records until `END_REQUEST` for `id`; nothing may follow it.
fn read_answer(stream: &mut impl Read, id: u16) -> Answer {
    read_answers(stream, &[id]).remove(0)
}

/// Reads the answers to `ids`, one after the other (no multiplexing: an
/// answer's records never interleave with another's).
fn read_answers(stream: &mut impl Read, ids: &[u16]) -> Vec<Answer> {
    let mut buf = Vec::new();
    let mut answers = Vec::new();
    let mut answer = Answer::default();
    let mut chunk = [0u8; 65536];
    loop {
        while let Some((rec, len)) = parse_one(&buf) {
            buf.drain(..len);
            assert_eq!(rec.1, ids[answers.len()], "record for another request: {rec:?}");
            answer.add(&rec);
            if answer.end.is_some() {
                answers.push(std::mem::take(&mut answer));
                if answers.len() == ids.len() {
                    assert!(buf.is_empty(), "bytes after the last END_REQUEST");
                    return answers;
                }
            }
        }
        let n = stream.read(&mut chunk).expect("read the answer");
        assert!(n > 0, "closed before END_REQUEST");
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn assert_closed(stream: &mut impl Read) {
    let mut byte = [0u8; 1];
    assert_eq!(stream.read(&mut byte).expect("read EOF"), 0, "connection left open");
}

fn env_params(query: &str) -> Vec<(&'static str, &str)> {
    vec![
        ("GATEWAY_INTERFACE", "CGI/1.1"),
        ("SERVER_SOFTWARE", "test/1.0"),
        ("REQUEST_METHOD", "POST"),
        ("SCRIPT_NAME", "/fcgi/crest-env"),
        ("QUERY_STRING", query),
        ("CONTENT_LENGTH", "100000"),
        ("HTTP_USER_AGENT", "responder-test"),
    ]
}

#[test]
fn env_page_is_exactly_crest_envs_1024_bytes() {
    let responder = Responder::start();
    let mut conn = responder.connect();
    let params = env_params("x=1&y=two");
    let body = vec![b'b'; 100_000];
    conn.write_all(&request(1, false, &params, &body)).expect("send");
    let answer = read_answer(&mut conn, 1);
    assert_eq!(answer.end, Some((0, REQUEST_COMPLETE)));
    let (head, page) = answer.head_and_body();
    assert_eq!(head, "Status: 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1024");
    assert_eq!(page.len(), PAGE_BYTES);
    let text = String::from_utf8_lossy(page);
    assert!(text.contains("<th>REQUEST_METHOD</th><td>POST</td>"), "{text}");
    assert!(text.contains("<th>QUERY_STRING</th><td>x=1&amp;y=two</td>"), "{text}");
    let expected = env_page::render_vars(|name| params.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_bytes()));
    assert_eq!(page, expected);
    assert_closed(&mut conn);
    let (status, out, err) = responder.stop();
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!((out.as_str(), err.as_str()), ("", ""), "nothing printed");
}

#[test]
fn a_kept_connection_serves_many_requests_then_closes_when_asked() {
    let responder = Responder::start();
    let mut conn = responder.connect();
    for id in 1..=5u16 {
        let query = format!("n={id}");
        conn.write_all(&request(id, true, &env_params(&query), b"")).expect("send");
        let answer = read_answer(&mut conn, id);
        let (_, page) = answer.head_and_body();
        assert!(String::from_utf8_lossy(page).contains(&format!("<td>n={id}</td>")));
    }
    // Two requests in one write (a server pipelining on a kept connection).
    let mut both = request(6, true, &[("SCRIPT_NAME", "/nope")], b"");
    both.extend(request(7, true, &[("SCRIPT_NAME", "/dyn/env")], b""));
    conn.write_all(&both).expect("send");
    let answers = read_answers(&mut conn, &[6, 7]);
    assert!(answers[0].head_and_body().0.starts_with("Status: 404"));
    assert!(answers[1].head_and_body().0.starts_with("Status: 200"));
    conn.write_all(&request(8, false, &env_params(""), b"")).expect("send");
    read_answer(&mut conn, 8);
    assert_closed(&mut conn);
}

#[test]
fn crest_bytes_and_not_found() {
    let responder = Responder::start();
    let mut conn = responder.connect();
    let size = 1_000_003;
    let query = format!("size={size}");
    let params = [("DOCUMENT_URI", "/x/crest-bytes"), ("QUERY_STRING", query.as_str())];
    conn.write_all(&request(1, true, &params, b"")).expect("send");
    let answer = read_answer(&mut conn, 1);
    let (head, body) = answer.head_and_body();
    assert!(head.ends_with(&format!("Content-Length: {size}")), "{head}");
    let mut expected = vec![0; size];
    Stream::new(size as u64).fill(&mut expected);
    assert!(body == expected, "crest-bytes' body");

    let params = [("REQUEST_URI", "/x/crest-bytes?size=-1")];
    conn.write_all(&request(2, true, &params, b"")).expect("send");
    let (head, _) = read_answer(&mut conn, 2).head_and_body();
    assert!(head.starts_with("Status: 400 Bad Request\r\n"), "{head}");

    conn.write_all(&request(3, true, &[("SCRIPT_NAME", "/index.php")], b"")).expect("send");
    let answer = read_answer(&mut conn, 3);
    let (head, body) = answer.head_and_body();
    assert!(head.starts_with("Status: 404 Not Found\r\n"), "{head}");
    assert!(head.ends_with(&format!("Content-Length: {}", body.len())));
}

#[test]
fn get_values_says_no_multiplexing() {
    let responder = Responder::start();
    let mut conn = responder.connect();
    let mut query = pair(b"FCGI_MAX_CONNS", b"");
    query.extend(pair(b"FCGI_MAX_REQS", b""));
    query.extend(pair(b"FCGI_MPXS_CONNS", b""));
    conn.write_all(&record(GET_VALUES, 0, &query, 0)).expect("send");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let (rec, _) = loop {
        if let Some(done) = parse_one(&buf) {
            break done;
        }
        let n = conn.read(&mut chunk).expect("read");
        assert!(n > 0, "closed");
        buf.extend_from_slice(&chunk[..n]);
    };
    assert_eq!((rec.0, rec.1), (GET_VALUES_RESULT, 0));
    let values = parse_pairs(&rec.2);
    let names: Vec<&str> = values.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["FCGI_MAX_CONNS", "FCGI_MAX_REQS", "FCGI_MPXS_CONNS"]);
    assert_eq!(values[2].1, "0");
    let max_conns: u32 = values[0].1.parse().expect("a number");
    assert!(max_conns >= 100, "{max_conns}");
    assert_eq!(values[0].1, values[1].1);
}

#[test]
fn idle_kept_alive_connections_do_not_stop_new_ones() {
    let responder = Responder::start();
    // 100 connections that were served once and stay open, as a web
    // server's pool keeps them, plus 20 stuck half-way through a request.
    let mut idle: Vec<UnixStream> = (0..100u16)
        .map(|i| {
            let mut conn = responder.connect();
            conn.write_all(&request(i + 1, true, &env_params(""), b"")).expect("send");
            read_answer(&mut conn, i + 1);
            conn
        })
        .collect();
    let stuck: Vec<UnixStream> = (0..20)
        .map(|_| {
            let mut conn = responder.connect();
            let mut partial = begin(1, RESPONDER, KEEP_CONN);
            partial.extend(record(PARAMS, 1, &pair(b"SCRIPT_NAME", b"/crest-env"), 0));
            conn.write_all(&partial).expect("send");
            conn
        })
        .collect();
    let started = Instant::now();
    let mut fresh = responder.connect();
    fresh.write_all(&request(1, false, &env_params("fresh"), b"")).expect("send");
    let answer = read_answer(&mut fresh, 1);
    assert_eq!(answer.head_and_body().1.len(), PAGE_BYTES);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    // The idle ones still work afterwards.
    for (i, conn) in idle.iter_mut().enumerate().step_by(33) {
        let id = 500 + i as u16;
        conn.write_all(&request(id, true, &env_params(""), b"")).expect("send");
        read_answer(conn, id);
    }
    drop(stuck);
    let (status, _, err) = responder.stop();
    assert!(status.success(), "{status:?}: {err}");
}

#[test]
fn sigterm_stops_it_and_removes_its_socket() {
    let responder = Responder::start();
    let socket = responder.socket.clone();
    let _idle = responder.connect();
    let (status, out, err) = responder.stop();
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    assert!(!socket.exists(), "socket file left behind");
}

#[test]
fn socket_is_0666_replaces_a_stale_file_and_refuses_a_live_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let socket = dir.path().join("stale.sock");
    // A socket file nobody listens on, as a killed process leaves it.
    drop(UnixListener::bind(&socket).expect("bind"));
    assert!(socket.exists());
    let mut child = spawn(&["--socket", path_str(&socket)], Stdio::null());
    wait_until(|| UnixStream::connect(&socket).is_ok());
    let mode = std::fs::metadata(&socket).expect("socket").permissions().mode();
    assert_eq!(mode & 0o777, 0o666);

    let second = spawn(&["--socket", path_str(&socket)], Stdio::null());
    let out = second.wait_with_output().expect("second instance");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is in use by a running server"), "{err}");
    assert!(socket.exists(), "the live socket was left alone");

    let not_a_socket = dir.path().join("file");
    std::fs::write(&not_a_socket, b"keep me").expect("write");
    let out = spawn(&["--socket", path_str(&not_a_socket)], Stdio::null()).wait_with_output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&not_a_socket).expect("still there"), b"keep me");

    let (status, _, err) = terminate(&mut child);
    assert!(status.success(), "{err}");
}

#[test]
fn listens_on_a_socket_passed_as_fd_0() {
    // Unix, as lighttpd's bin-path spawns it.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("spawned.sock");
    let listener = UnixListener::bind(&path).expect("bind");
    let mut child = spawn(&[], OwnedFd::from(listener));
    let mut conn = UnixStream::connect(&path).expect("connect");
    conn.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
    conn.write_all(&request(1, false, &env_params(""), b"")).expect("send");
    assert_eq!(read_answer(&mut conn, 1).head_and_body().1.len(), PAGE_BYTES);
    let (status, _, err) = terminate(&mut child);
    assert!(status.success(), "{err}");
    assert!(path.exists(), "the server's socket file is the server's to remove");

    // TCP, as h2o's fastcgi.spawn can.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut child = spawn(&[], OwnedFd::from(listener));
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
    conn.write_all(&request(1, false, &env_params(""), b"")).expect("send");
    assert_eq!(read_answer(&mut conn, 1).head_and_body().1.len(), PAGE_BYTES);
    let (status, _, err) = terminate(&mut child);
    assert!(status.success(), "{err}");
}

#[test]
fn listens_on_tcp() {
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = spawn(&["--listen", &addr, "--threads", "2"], Stdio::null());
    let mut conn = None;
    wait_until(|| {
        conn = TcpStream::connect(&addr).ok();
        conn.is_some()
    });
    let mut conn = conn.expect("connected");
    conn.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
    conn.write_all(&request(1, false, &env_params(""), b"")).expect("send");
    assert_eq!(read_answer(&mut conn, 1).head_and_body().1.len(), PAGE_BYTES);
    let (status, _, err) = terminate(&mut child);
    assert!(status.success(), "{err}");
}

#[test]
fn no_listener_is_a_one_line_error() {
    for args in [&[][..], &["--threads", "x"], &["--listen", "nowhere"]] {
        let out = spawn(args, Stdio::null()).wait_with_output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("crest-fcgi: error: "), "{err}");
    }
    let out = spawn(&[], Stdio::null()).wait_with_output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fd 0 is not a listening socket"), "{err}");
}

/// SPECweb99's dynamic set through FastCGI: a docroot with two files in the
/// kit's format, the state in its own directory, requests as nginx sends them.
mod specweb99 {
    use super::*;

    const TAG: &str = "<!WEB99CAD><IMG SRC=\"/file_set/dir00000/class0_0\"><!/WEB99CAD>";

    fn write_file(docroot: &Path, name: &str, class: u32, size: usize) -> Vec<u8> {
        let mut body = format!("{size:9} {name}\n").into_bytes();
        while body.len() < size {
            if (class == 1 || class == 2) && body.len() + TAG.len() < size {
                body.extend_from_slice(TAG.as_bytes());
            }
            body.extend_from_slice(b"\nfiller\n");
        }
        body.truncate(size);
        let path = docroot.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &body).expect("write");
        body
    }

    fn params<'a>(
        method: &'a str,
        query: &'a str,
        docroot: &'a str,
        cookie: Option<&'a str>,
    ) -> Vec<(&'a str, &'a str)> {
        let mut params = vec![
            ("GATEWAY_INTERFACE", "CGI/1.1"),
            ("SERVER_SOFTWARE", "nginx/1.22.1"),
            ("REQUEST_METHOD", method),
            ("SCRIPT_NAME", "/specweb99/dynamic"),
            ("QUERY_STRING", query),
            ("DOCUMENT_ROOT", docroot),
            ("REMOTE_ADDR", "127.0.0.1"),
        ];
        if let Some(cookie) = cookie {
            params.push(("HTTP_COOKIE", cookie));
        }
        params
    }

    fn envelope(query: &str, content: &[u8]) -> Vec<u8> {
        let mut page = format!(
            "<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n<body>\n\
             <p>SERVER_SOFTWARE = nginx/1.22.1\n<p>REMOTE_ADDR = 127.0.0.1\n\
             <p>SCRIPT_NAME = /specweb99/dynamic\n<p>QUERY_STRING = {query}\n<pre>\n"
        )
        .into_bytes();
        page.extend_from_slice(content);
        page.extend_from_slice(b"\n</pre>\n</body></html>\n");
        page
    }

    #[test]
    fn get_custom_ad_get_post_and_fetch() {
        let docroot = tempfile::tempdir().expect("docroot");
        let state = tempfile::tempdir().expect("state");
        let root = path_str(docroot.path());
        let plain = write_file(docroot.path(), "file_set/dir00000/class0_1", 0, 102);
        let ads = write_file(docroot.path(), "file_set/dir00004/class1_3", 1, 1500);
        let responder = Responder::start_with(&["--specweb99-dir", path_str(state.path())]);
        let mut conn = responder.connect();
        let mut id = 0u16;
        // Each request on the kept connection, its body as STDIN records of at most 7 bytes.
        let mut ask = |params: &[(&str, &str)], stdin: &[u8]| {
            id += 1;
            let mut bytes = begin(id, RESPONDER, KEEP_CONN);
            bytes.extend(stream(PARAMS, id, &pairs(params), 65535));
            bytes.extend(stream(STDIN, id, stdin, 7));
            conn.write_all(&bytes).expect("send");
            let answer = read_answer(&mut conn, id);
            assert_eq!(answer.end, Some((0, REQUEST_COMPLETE)));
            let (head, body) = answer.head_and_body();
            (head, body.to_vec())
        };

        let query = "/file_set/dir00000/class0_1";
        let (head, body) = ask(&params("GET", query, root, None), b"");
        let page = envelope(query, &plain);
        assert_eq!(head, format!("Status: 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}", page.len()));
        assert_eq!(body, page);

        let reset = "command/Reset&maxload=100&pttime=100&maxthread=100&exp=1,100&urlroot=/file_set/";
        let (head, _) = ask(&params("GET", reset, root, None), b"");
        assert!(head.starts_with("Status: 200 OK\r\n"), "{head}");

        // User 1 from last_ad 20: ad 28 (dir00000/class3_1), weight 18, not expired.
        let query = "/file_set/dir00004/class1_3";
        let cookie = "my_cookie=user_id=10001&last_ad=20";
        let (head, body) = ask(&params("GET", query, root, Some(cookie)), b"");
        assert!(head.contains("\r\nSet-Cookie: found_cookie=Ad_id=28&Ad_weight=18&Expired=0\r\n"), "{head}");
        let text = String::from_utf8(ads.clone()).expect("ASCII");
        assert!(text.matches(TAG).count() > 10);
        let substituted = text.replace(TAG, "<!WEB99CAD><IMG SRC=\"/file_set/dir00000/class3_1\"><!/WEB99CAD>");
        assert_eq!(body, envelope(query, substituted.as_bytes()));

        // POST: the form arrives as FCGI_STDIN, split over records.
        let form = b"class=1&client=2&dir=00004&num=3&urlroot=/file_set/";
        let mut post = params("POST", "", root, Some(cookie));
        post.push(("CONTENT_LENGTH", "52"));
        let (head, body) = ask(&post, form);
        assert!(head.contains("\r\nSet-Cookie: my_cookie=10001\r\n"), "{head}");
        assert_eq!(body, envelope("", &ads));
        let log = std::fs::read(state.path().join("post.log")).expect("the POST log");
        assert_eq!(log.len(), 11 + 139);
        assert_eq!(&log[..11], b"         1\n");
        let fields: Vec<&str> = std::str::from_utf8(&log[11..]).expect("ASCII").split_whitespace().collect();
        assert_eq!(fields[0], "1");
        assert_eq!(&fields[3..], ["4", "1", "3", "2", "/file_set/dir00004/class1_3", fields[2], "10001"]);

        let (_, body) = ask(&params("GET", "command/Fetch", root, None), b"");
        assert_eq!(body, envelope("command/Fetch", &log));

        // Bad query, missing file, bad form, oversized body.
        let (head, _) = ask(&params("GET", "command/Nope", root, None), b"");
        assert!(head.starts_with("Status: 400 Bad Request\r\n"), "{head}");
        let (head, _) = ask(&params("GET", "/file_set/dir00009/class0_1", root, None), b"");
        assert!(head.starts_with("Status: 404 Not Found\r\n"), "{head}");
        let (head, _) = ask(&post, b"class=1&client=2");
        assert!(head.starts_with("Status: 400 Bad Request\r\n"), "{head}");
        let (head, _) = ask(&post, &[b'x'; 10_000]);
        assert!(head.starts_with("Status: 413 Payload Too Large\r\n"), "{head}");
        assert_eq!(std::fs::read(state.path().join("post.log")).expect("log"), log);
        let (status, _, err) = responder.stop();
        assert!(status.success(), "{status:?}: {err}");
    }

    #[test]
    fn without_the_flag_the_route_is_a_404_naming_it() {
        let responder = Responder::start();
        let mut conn = responder.connect();
        conn.write_all(&request(1, false, &params("GET", "/file_set/dir00000/class0_0", "/", None), b""))
            .expect("send");
        let answer = read_answer(&mut conn, 1);
        let (head, body) = answer.head_and_body();
        assert!(head.starts_with("Status: 404 Not Found\r\n"), "{head}");
        assert!(String::from_utf8_lossy(body).contains("--specweb99-dir"));
    }
}
