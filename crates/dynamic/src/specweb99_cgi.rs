//! `crest-specweb99` as library code: a CGI/1.1 environment and stdin in,
//! the raw CGI output out, so tests drive exactly what the program runs.
//!
//! The program finds its specweb99 directory beside its own cgi-bin
//! (`<exe dir>/../specweb99`: a site puts the program at
//! `<site>/cgi-bin/crest-specweb99` and the directory at `<site>/specweb99`)
//! and the files under `DOCUMENT_ROOT`. It never makes the directory: a
//! program copied elsewhere must not start writing there.
//!
//! Owns mapping CGI variables and stdin onto a [`Request`]; the answer is
//! [`crate::specweb99_answer`]'s.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::specweb99_answer::{self, Request, Response, MAX_POST_BYTES};
use crate::specweb99_state::State;

/// The specweb99 directory of a program at `exe`: `../specweb99` from its directory.
pub fn state_dir_for(exe: &Path) -> Option<PathBuf> {
    Some(exe.parent()?.parent()?.join("specweb99"))
}

/// The whole CGI output for a request with environment `env` and body
/// `stdin`, at `now_unix_s`, logged as process `pid`.
pub fn run(
    env: impl Fn(&str) -> Option<String>,
    stdin: &mut impl Read,
    state_dir: &Path,
    now_unix_s: i64,
    pid: u32,
) -> Vec<u8> {
    respond(&env, stdin, state_dir, now_unix_s, pid).to_cgi()
}

fn respond(
    env: &impl Fn(&str) -> Option<String>,
    stdin: &mut impl Read,
    state_dir: &Path,
    now_unix_s: i64,
    pid: u32,
) -> Response {
    let body = match read_body(env, stdin) {
        Ok(body) => body,
        Err(resp) => return resp,
    };
    let Some(docroot) = env("DOCUMENT_ROOT").filter(|d| !d.is_empty()) else {
        return Response::text(500, "crest-specweb99: the server set no DOCUMENT_ROOT");
    };
    let var = |name| env(name).unwrap_or_default();
    let (method, query, software, addr, script) =
        (var("REQUEST_METHOD"), var("QUERY_STRING"), var("SERVER_SOFTWARE"), var("REMOTE_ADDR"), var("SCRIPT_NAME"));
    let cookie = env("HTTP_COOKIE");
    let req = Request {
        method: &method,
        query: &query,
        cookie: cookie.as_deref(),
        body: &body,
        docroot: Path::new(&docroot),
        server_software: &software,
        remote_addr: &addr,
        script_name: &script,
    };
    specweb99_answer::answer(&State::new(state_dir), &req, now_unix_s, pid)
}

/// `CONTENT_LENGTH` bytes of stdin (fewer at end of input); a longer body is
/// read to its end, so the server never blocks writing it, and refused.
fn read_body(env: &impl Fn(&str) -> Option<String>, stdin: &mut impl Read) -> Result<Vec<u8>, Response> {
    let len = env("CONTENT_LENGTH").and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
    let mut body = Vec::new();
    let read = stdin.take(len.min(MAX_POST_BYTES as u64)).read_to_end(&mut body);
    if len > MAX_POST_BYTES as u64 {
        let _ = io::copy(&mut stdin.take(len - MAX_POST_BYTES as u64), &mut io::sink());
        return Err(Response::text(413, &format!("a SPECweb99 POST body is at most {MAX_POST_BYTES} bytes")));
    }
    read.map(|_| body).map_err(|e| Response::text(400, &format!("cannot read the request body: {e}")))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::specweb99_state::{ADS_FILE, POST_LOG_FILE, USERS_FILE};
    use crate::test_support::{tempdir, write_file, TempDir, TAG};

    const NOW: i64 = 1_000_000_000;
    const PID: u32 = 4242;

    struct Site {
        docroot: TempDir,
        state: TempDir,
    }

    fn site() -> Site {
        let site = Site { docroot: tempdir(), state: tempdir() };
        write_file(site.docroot.path(), 0, 0, 1, 102);
        write_file(site.docroot.path(), 4, 1, 3, 1024);
        site
    }

    /// The program's output for one request: `vars` on top of a fixed environment.
    fn cgi(site: &Site, vars: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
        let docroot = site.docroot.path().to_str().expect("utf-8").to_owned();
        let env = |name: &str| {
            vars.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()).or_else(|| match name {
                "DOCUMENT_ROOT" => Some(docroot.clone()),
                "REQUEST_METHOD" => Some("GET".into()),
                "SERVER_SOFTWARE" => Some("nginx/1.22.1".into()),
                "REMOTE_ADDR" => Some("127.0.0.1".into()),
                "SCRIPT_NAME" => Some("/cgi-bin/crest-specweb99".into()),
                _ => None,
            })
        };
        run(env, &mut &body[..], site.state.path(), NOW, PID)
    }

    fn page(query: &str, content: &[u8]) -> Vec<u8> {
        let mut page = format!(
            "<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n<body>\n\
             <p>SERVER_SOFTWARE = nginx/1.22.1\n<p>REMOTE_ADDR = 127.0.0.1\n\
             <p>SCRIPT_NAME = /cgi-bin/crest-specweb99\n<p>QUERY_STRING = {query}\n<pre>\n"
        )
        .into_bytes();
        page.extend_from_slice(content);
        page.extend_from_slice(b"\n</pre>\n</body></html>\n");
        page
    }

    fn ok(cookie: Option<&str>, body: &[u8]) -> Vec<u8> {
        let cookie = cookie.map(|c| format!("Set-Cookie: {c}\r\n")).unwrap_or_default();
        let mut out =
            format!("Status: 200 OK\r\nContent-Type: text/html\r\n{cookie}Content-Length: {}\r\n\r\n", body.len())
                .into_bytes();
        out.extend_from_slice(body);
        out
    }

    fn reset(site: &Site) {
        let query = "command/Reset&maxload=100&pttime=100&maxthread=100&exp=1,100&urlroot=http://x/file_set/";
        let out = cgi(site, &[("QUERY_STRING", query)], b"");
        assert!(out.starts_with(b"Status: 200 OK\r\n"), "{}", String::from_utf8_lossy(&out));
    }

    #[test]
    fn a_standard_get_is_the_file_in_the_envelope() {
        let site = site();
        let file = fs::read(site.docroot.path().join("file_set/dir00000/class0_1")).unwrap();
        assert!(file.starts_with(b"      102 file_set/dir00000/class0_1\n"));
        let query = "/file_set/dir00000/class0_1";
        assert_eq!(cgi(&site, &[("QUERY_STRING", query)], b""), ok(None, &page(query, &file)));
        // A class 1 file is unmodified without the cookie.
        let query = "/file_set/dir00004/class1_3";
        let file = fs::read(site.docroot.path().join("file_set/dir00004/class1_3")).unwrap();
        assert_eq!(cgi(&site, &[("QUERY_STRING", query)], b""), ok(None, &page(query, &file)));
    }

    #[test]
    fn a_custom_ad_get_sets_the_ad_and_rewrites_every_tag() {
        let site = site();
        let query = "/file_set/dir00004/class1_3";
        let cookie = [("QUERY_STRING", query), ("HTTP_COOKIE", "my_cookie=user_id=10001&last_ad=20")];
        // No Reset yet: no tables, the error form, the file as it is.
        let file = fs::read(site.docroot.path().join("file_set/dir00004/class1_3")).unwrap();
        let none = "found_cookie=Ad_id=-1&Ad_weight=0&Expired=1";
        assert_eq!(cgi(&site, &cookie, b""), ok(Some(none), &page(query, &file)));
        reset(&site);
        // User 1: k = 10000 = 0x2710 → gender 0x10000000, age 0x08000000, region 0x00100000,
        // interest-1 0x00040000, interest-2 0x200. From last_ad 20 the first ad that reaches its
        // minmatch is the easy ad 28 (4 + 24; maxthread 100 mod 24 = 4): k = 280000 mod 12301 =
        // 9378 = 0x24A2 → gender 0x10000000 (shared: gender nibble of 0x3FFFF = 3), age
        // 0x02000000, region 0x00200000, interest-1 0x00020000 (none shared), interest-2 |= 0x3FF
        // (shared: 0xF). Weight 3 + 15 = 18; 28 is outside the expired blocks 1..25 and 100..124.
        let expected = file.clone();
        let text = String::from_utf8(expected).unwrap();
        let tags = text.matches(TAG).count();
        assert!(tags >= 10, "{tags}");
        // Ad 28: dir 28/36 = 0, class (28 % 36)/9 = 3, file 28 % 9 = 1.
        let substituted = text.replace(TAG, "<!WEB99CAD><IMG SRC=\"/file_set/dir00000/class3_1\"><!/WEB99CAD>");
        let cad = "found_cookie=Ad_id=28&Ad_weight=18&Expired=0";
        assert_eq!(cgi(&site, &cookie, b""), ok(Some(cad), &page(query, substituted.as_bytes())));
        // Unknown user: the error form, tags left alone.
        let stranger = [("QUERY_STRING", query), ("HTTP_COOKIE", "my_cookie=user_id=20000&last_ad=3")];
        assert_eq!(cgi(&site, &stranger, b""), ok(Some(none), &page(query, &file)));
    }

    #[test]
    fn a_post_appends_one_record_and_fetch_returns_the_log() {
        let site = site();
        reset(&site);
        let log_path = site.state.path().join(POST_LOG_FILE);
        assert_eq!(fs::read(&log_path).unwrap(), b"         0\n");
        let body = b"urlroot=/file_set/&dir=00004&class=1&num=3&client=2";
        let vars = [
            ("REQUEST_METHOD", "POST"),
            ("QUERY_STRING", ""),
            ("CONTENT_LENGTH", "52"),
            ("HTTP_COOKIE", "my_cookie=user_id=10001&last_ad=20"),
        ];
        let file = fs::read(site.docroot.path().join("file_set/dir00004/class1_3")).unwrap();
        assert_eq!(cgi(&site, &vars, body), ok(Some("my_cookie=10001"), &page("", &file)));
        let log = fs::read(&log_path).unwrap();
        let record = format!(
            "         1 1000000000       4242     4  1  3          2 {:<60}       4242      10001\n",
            "/file_set/dir00004/class1_3"
        );
        assert_eq!(record.len(), 139);
        assert_eq!(log, format!("         1\n{record}").into_bytes());
        let query = "command/Fetch";
        assert_eq!(cgi(&site, &[("QUERY_STRING", query)], b""), ok(None, &page(query, &log)));
        // A bad form, a missing cookie, a missing file: refused, nothing logged.
        let bad =
            [("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "9"), ("HTTP_COOKIE", "my_cookie=user_id=1&last_ad=2")];
        assert!(cgi(&site, &bad, b"class=1&x").starts_with(b"Status: 400 Bad Request\r\n"));
        let no_cookie = [("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "52")];
        assert!(cgi(&site, &no_cookie, body).starts_with(b"Status: 400 Bad Request\r\n"));
        let missing = b"urlroot=/file_set/&dir=00009&class=1&num=3&client=2";
        assert!(cgi(&site, &vars, missing).starts_with(b"Status: 404 Not Found\r\n"));
        assert_eq!(fs::read(&log_path).unwrap(), log);
    }

    #[test]
    fn equal_resets_write_equal_tables_but_for_expiration() {
        let site = site();
        let query = "command/Reset&maxload=50&pttime=600&maxthread=70&exp=17,117";
        let run_at = |now| {
            let docroot = site.docroot.path().to_str().unwrap().to_owned();
            let env = |name: &str| match name {
                "DOCUMENT_ROOT" => Some(docroot.clone()),
                "REQUEST_METHOD" => Some("GET".to_owned()),
                "QUERY_STRING" => Some(query.to_owned()),
                _ => None,
            };
            let out = run(env, &mut io::empty(), site.state.path(), now, PID);
            assert!(out.starts_with(b"Status: 200 OK\r\n"));
            let read = |name| fs::read_to_string(site.state.path().join(name)).unwrap();
            (read(USERS_FILE), read(ADS_FILE))
        };
        let (users1, ads1) = run_at(NOW);
        let (users2, ads2) = run_at(NOW + 1);
        assert_eq!(users1, users2);
        assert_eq!(users1.len(), 70 * 15); // max(maxload, maxthread) users
        assert_ne!(ads1, ads2);
        let without_expiry = |ads: &str| ads.lines().map(|l| l[..28].to_owned()).collect::<Vec<_>>();
        assert_eq!(without_expiry(&ads1), without_expiry(&ads2));
        assert_eq!(ads1.len(), 360 * 39);
    }

    #[test]
    fn bad_requests_are_400_and_missing_files_404() {
        let site = site();
        let status = |vars: &[(&str, &str)]| {
            let out = cgi(&site, vars, b"");
            String::from_utf8_lossy(&out).lines().next().unwrap_or_default().to_owned()
        };
        assert_eq!(status(&[("QUERY_STRING", "/file_set/../../etc/passwd")]), "Status: 400 Bad Request");
        assert_eq!(status(&[("QUERY_STRING", "command/Reset&maxload=1")]), "Status: 400 Bad Request");
        assert_eq!(status(&[("QUERY_STRING", "command/Explode")]), "Status: 400 Bad Request");
        assert_eq!(status(&[("QUERY_STRING", "")]), "Status: 400 Bad Request");
        assert_eq!(status(&[("QUERY_STRING", "/file_set/dir00007/class0_1")]), "Status: 404 Not Found");
        assert_eq!(status(&[("QUERY_STRING", "/file_set/dir00000")]), "Status: 404 Not Found");
        assert_eq!(status(&[("REQUEST_METHOD", "PUT")]), "Status: 405 Method Not Allowed");
        assert_eq!(status(&[("DOCUMENT_ROOT", "")]), "Status: 500 Internal Server Error");
        let huge = [("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "5000")];
        assert!(cgi(&site, &huge, &[b'x'; 5000]).starts_with(b"Status: 413 Payload Too Large\r\n"));
        assert_eq!(state_dir_for(Path::new("/site/cgi-bin/crest-specweb99")), Some(PathBuf::from("/site/specweb99")));
    }
}
