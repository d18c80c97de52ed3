//! `/specweb99/dynamic` over raw HTTP: Reset, standard and custom-ad GET,
//! POST and Fetch against a docroot with files in the kit's format, the POST
//! log read back byte by byte; bad requests are 400s, missing files 404s.

use std::fs;
use std::net::SocketAddr;
use std::path::Path;

use crate::common::{request, Fixture, Reply};

const TAG: &str = "<!WEB99CAD><IMG SRC=\"/file_set/dir00000/class0_0\"><!/WEB99CAD>";
const CAD_COOKIE: &str = "my_cookie=user_id=10001&last_ad=20";

struct Sw99 {
    fx: Fixture,
    state: tempfile::TempDir,
}

fn start() -> Sw99 {
    let state = tempfile::tempdir().expect("tempdir");
    let dir = state.path().to_owned();
    let fx = Fixture::start_with(|c| c.specweb99_dir = Some(dir));
    write_file(fx.dir.path(), 0, 0, 1, 102);
    write_file(fx.dir.path(), 4, 1, 3, 2048);
    Sw99 { fx, state }
}

/// `<docroot>/file_set/dirNNNNN/classC_F` as the kit writes it: the size line, then
/// (class 1 and 2) ad tags among filler.
fn write_file(docroot: &Path, dir: u32, class: u32, file: u32, size: usize) -> Vec<u8> {
    let name = format!("file_set/dir{dir:05}/class{class}_{file}");
    let mut body = format!("{size:9} {name}\n").into_bytes();
    while body.len() < size {
        // Whole tags only, so the test's own substitution below finds each one.
        if (class == 1 || class == 2) && body.len() + TAG.len() < size {
            body.extend_from_slice(TAG.as_bytes());
        }
        body.extend_from_slice(b"\nfiller line\n");
    }
    body.truncate(size);
    let path = docroot.join(&name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, &body).unwrap();
    body
}

fn get(addr: SocketAddr, query: &str, cookie: Option<&str>) -> Reply {
    let cookie = cookie.map(|c| format!("Cookie: {c}\r\n")).unwrap_or_default();
    let raw =
        format!("GET /specweb99/dynamic?{query} HTTP/1.1\r\nHost: localhost\r\n{cookie}Connection: close\r\n\r\n");
    request(addr, raw.as_bytes())
}

fn post(addr: SocketAddr, body: &str, cookie: &str) -> Reply {
    let raw = format!(
        "POST /specweb99/dynamic HTTP/1.1\r\nHost: localhost\r\nCookie: {cookie}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    request(addr, raw.as_bytes())
}

fn envelope(query: &str, content: &[u8]) -> Vec<u8> {
    let mut page = format!(
        "<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n<body>\n\
         <p>SERVER_SOFTWARE = crest-target/{}\n<p>REMOTE_ADDR = 127.0.0.1\n\
         <p>SCRIPT_NAME = /specweb99/dynamic\n<p>QUERY_STRING = {query}\n<pre>\n",
        env!("CARGO_PKG_VERSION")
    )
    .into_bytes();
    page.extend_from_slice(content);
    page.extend_from_slice(b"\n</pre>\n</body></html>\n");
    page
}

fn reset(addr: SocketAddr) {
    let r = get(addr, "command/Reset&maxload=100&pttime=100&maxthread=100&exp=1,100&urlroot=/file_set/", None);
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn without_a_specweb99_dir_the_route_is_a_404_naming_the_option() {
    let fx = Fixture::start();
    let r = fx.get("/specweb99/dynamic?/file_set/dir00000/class0_1");
    assert_eq!(r.status, 404);
    assert!(r.text().contains("specweb99_dir"), "{}", r.text());
}

#[test]
fn get_and_custom_ad_get() {
    let sw = start();
    let addr = sw.fx.addr;
    let query = "/file_set/dir00000/class0_1";
    let file = fs::read(sw.fx.dir.path().join("file_set/dir00000/class0_1")).unwrap();
    let r = get(addr, query, None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html"));
    assert_eq!(r.header("set-cookie"), None);
    assert_eq!(r.header("content-length"), Some(r.body.len().to_string().as_str()));
    assert_eq!(r.body, envelope(query, &file));

    // Custom-ad GET before any Reset: the error form, the file untouched.
    let query = "/file_set/dir00004/class1_3";
    let file = fs::read(sw.fx.dir.path().join("file_set/dir00004/class1_3")).unwrap();
    let r = get(addr, query, Some(CAD_COOKIE));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("set-cookie"), Some("found_cookie=Ad_id=-1&Ad_weight=0&Expired=1"));
    assert_eq!(r.body, envelope(query, &file));

    reset(addr);
    // User 1 from last_ad 20: the easy ad 28 (maxthread 100 → 4, 28, …), weight 3 (gender) +
    // 15 (interest-2) = 18, not in the expired blocks; ad 28 is dir00000/class3_1.
    let r = get(addr, query, Some(&format!("other=1; {CAD_COOKIE}")));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("set-cookie"), Some("found_cookie=Ad_id=28&Ad_weight=18&Expired=0"));
    let text = String::from_utf8(file.clone()).unwrap();
    let tags = text.matches(TAG).count();
    assert!(tags > 10, "{tags}");
    let expected = text.replace(TAG, "<!WEB99CAD><IMG SRC=\"/file_set/dir00000/class3_1\"><!/WEB99CAD>");
    assert_eq!(r.body, envelope(query, expected.as_bytes()));
    assert_eq!(r.header("content-length"), Some(envelope(query, &file).len().to_string().as_str()));
}

#[test]
fn post_appends_one_record_and_fetch_returns_the_log() {
    let sw = start();
    let addr = sw.fx.addr;
    reset(addr);
    let log_path = sw.state.path().join("post.log");
    assert_eq!(fs::read(&log_path).unwrap(), b"         0\n");
    let r = post(addr, "class=1&client=2&dir=00004&num=3&urlroot=/file_set/", CAD_COOKIE);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("set-cookie"), Some("my_cookie=10001"));
    let file = fs::read(sw.fx.dir.path().join("file_set/dir00004/class1_3")).unwrap();
    assert_eq!(r.body, envelope("", &file));
    let log = fs::read(&log_path).unwrap();
    assert_eq!(log.len(), 11 + 139);
    assert_eq!(&log[..11], b"         1\n");
    let record = std::str::from_utf8(&log[11..]).unwrap();
    let fields: Vec<&str> = record.split_whitespace().collect();
    assert_eq!(fields[0], "1");
    assert_eq!(fields[2], std::process::id().to_string(), "the server's pid");
    assert_eq!(&fields[3..], ["4", "1", "3", "2", "/file_set/dir00004/class1_3", fields[2], "10001"]);
    assert_eq!(&record[56..117], format!("{:<60} ", "/file_set/dir00004/class1_3"));

    let r = get(addr, "command/Fetch", None);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, envelope("command/Fetch", &log));

    // Refused without a record: a bad form, no cookie, a missing file, an oversized body.
    assert_eq!(post(addr, "class=9&client=2&dir=00004&num=3&urlroot=/file_set/", CAD_COOKIE).status, 400);
    assert_eq!(post(addr, "class=1&client=2&dir=00004&num=3&urlroot=/file_set/", "x=1").status, 400);
    assert_eq!(post(addr, "class=1&client=2&dir=00077&num=3&urlroot=/file_set/", CAD_COOKIE).status, 404);
    assert_eq!(post(addr, &"x".repeat(5000), CAD_COOKIE).status, 413);
    assert_eq!(fs::read(&log_path).unwrap(), log);

    // Reset empties it again.
    reset(addr);
    assert_eq!(fs::read(&log_path).unwrap(), b"         0\n");
}

#[test]
fn concurrent_posts_get_strictly_rising_record_numbers() {
    let sw = start();
    let addr = sw.fx.addr;
    reset(addr);
    std::thread::scope(|s| {
        for client in 0..4 {
            s.spawn(move || {
                for _ in 0..10 {
                    let body = format!("class=0&client={client}&dir=00000&num=1&urlroot=/file_set/");
                    assert_eq!(post(addr, &body, CAD_COOKIE).status, 200);
                }
            });
        }
    });
    let log = fs::read(sw.state.path().join("post.log")).unwrap();
    assert_eq!(log.len(), 11 + 40 * 139);
    assert_eq!(&log[..11], b"        40\n");
    let numbers: Vec<u64> =
        log[11..].chunks(139).map(|r| std::str::from_utf8(&r[..10]).unwrap().trim().parse().unwrap()).collect();
    assert_eq!(numbers, (1..=40).collect::<Vec<u64>>());
}

#[test]
fn bad_queries_are_400_and_missing_files_404() {
    let sw = start();
    let addr = sw.fx.addr;
    for query in ["command/Reset&maxload=1", "command/Nope", "file_set/dir00000/class0_1", "/file_set/../hello.txt", ""]
    {
        let r = get(addr, query, None);
        assert_eq!(r.status, 400, "{query}: {}", r.text());
    }
    assert_eq!(get(addr, "/file_set/dir00003/class0_1", None).status, 404);
    let raw = "DELETE /specweb99/dynamic HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_eq!(request(addr, raw.as_bytes()).status, 405);
    // HEAD: the GET's head, no body.
    let raw = "HEAD /specweb99/dynamic?/file_set/dir00000/class0_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let r = request(addr, raw.as_bytes());
    assert_eq!(r.status, 200);
    let file = fs::read(sw.fx.dir.path().join("file_set/dir00000/class0_1")).unwrap();
    let length = envelope("/file_set/dir00000/class0_1", &file).len().to_string();
    assert_eq!(r.header("content-length"), Some(length.as_str()));
}
