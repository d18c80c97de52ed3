//! One SPECweb99 dynamic request answered (reference specweb99.md §2.3–2.6),
//! the same way by every server side: the built-in target, the CGI program
//! `crest-specweb99` and crest-fcgi each turn their request into a
//! [`Request`] and send the [`Response`] back in their own framing.
//!
//! - `GET ?/file_set/dirNNNNN/classC_F`: the file in the envelope; with a
//!   `my_cookie` cookie a custom-ad GET: the ad chosen, `found_cookie` set
//!   and, in class 1 and 2 files, every ad tag rewritten;
//! - `POST` with `my_cookie` and the five-field form: one POST log record,
//!   `my_cookie=<user_id>` set, the named file in the envelope;
//! - `GET ?command/Reset&maxload=…&pttime=…&maxthread=…&exp=a,b`: new tables,
//!   an empty POST log; `GET ?command/Fetch`: the POST log in the envelope.
//!
//! Bad input is a 400, a missing file a 404, never a panic. Owns reading the
//! named file from the docroot; the specweb99 directory is
//! [`crate::specweb99_state`]'s, the formats [`crate::specweb99`]'s.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::specweb99::{self, Reset};
use crate::specweb99_state::State;

/// Largest POST body read: the kit's form is about 50 bytes.
pub const MAX_POST_BYTES: usize = 4096;

const TEXT_HTML: &str = "text/html";
const TEXT_PLAIN: &str = "text/plain";

/// A request as every server side sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `GET`, `HEAD` or `POST` (anything else is a 405).
    pub method: &'a str,
    /// The query string as received, without the `?`.
    pub query: &'a str,
    /// The `Cookie` header, if any.
    pub cookie: Option<&'a str>,
    /// The request body (POST), at most [`MAX_POST_BYTES`].
    pub body: &'a [u8],
    /// Where `/file_set/…` is found.
    pub docroot: &'a Path,
    /// The envelope's `SERVER_SOFTWARE`, `REMOTE_ADDR` and `SCRIPT_NAME`.
    pub server_software: &'a str,
    pub remote_addr: &'a str,
    pub script_name: &'a str,
}

/// What to answer; each server side frames it (status line or `Status:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub set_cookie: Option<String>,
    pub body: Vec<u8>,
}

impl Response {
    /// A one-line plain-text answer, e.g. a 400 saying what was wrong.
    pub fn text(status: u16, message: &str) -> Response {
        Response { status, content_type: TEXT_PLAIN, set_cookie: None, body: format!("{message}\n").into_bytes() }
    }

    fn page(body: Vec<u8>, set_cookie: Option<String>) -> Response {
        Response { status: 200, content_type: TEXT_HTML, set_cookie, body }
    }

    /// The reason phrase of the statuses answered here.
    pub fn reason(&self) -> &'static str {
        match self.status {
            200 => "OK",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            413 => "Payload Too Large",
            _ => "Internal Server Error",
        }
    }

    /// The response as a CGI program (or a FastCGI responder) writes it:
    /// `Status:`, the headers, a blank line, the body.
    pub fn to_cgi(&self) -> Vec<u8> {
        let mut head = format!("Status: {} {}\r\nContent-Type: {}\r\n", self.status, self.reason(), self.content_type);
        if let Some(cookie) = &self.set_cookie {
            head.push_str(&format!("Set-Cookie: {cookie}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", self.body.len()));
        let mut out = head.into_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

/// The answer to `req`, at `now_unix_s`, logged as process `pid`.
pub fn answer(state: &State, req: &Request<'_>, now_unix_s: i64, pid: u32) -> Response {
    match req.method {
        "POST" => post(state, req, now_unix_s, pid),
        "GET" | "HEAD" => match req.query.strip_prefix("command/") {
            Some(command) => housekeeping(state, req, command, now_unix_s),
            None => get(state, req, now_unix_s),
        },
        _ => Response::text(405, "SPECweb99's dynamic set answers GET, HEAD and POST"),
    }
}

fn get(state: &State, req: &Request<'_>, now_unix_s: i64) -> Response {
    let mut content = match read_file(req.docroot, req.query) {
        Ok(content) => content,
        Err(resp) => return resp,
    };
    // The kit tells a custom-ad GET from a plain one only by the cookie.
    let Some(cookie) = req.cookie.filter(|c| c.contains("my_cookie=")) else {
        return Response::page(envelope(req, &content), None);
    };
    let choice = state.choose_ad(specweb99::parse_my_cookie(cookie), now_unix_s);
    if let (Some(path), true) = (choice.path(), carries_ads(req.query)) {
        specweb99::substitute_ads(&mut content, path);
    }
    Response::page(envelope(req, &content), Some(choice.cookie()))
}

fn post(state: &State, req: &Request<'_>, now_unix_s: i64, pid: u32) -> Response {
    if req.body.len() > MAX_POST_BYTES {
        return Response::text(413, &format!("a SPECweb99 POST body is at most {MAX_POST_BYTES} bytes"));
    }
    let Some(form) = std::str::from_utf8(req.body).ok().and_then(specweb99::parse_post) else {
        return Response::text(400, "POST body: expected class=C&client=N&dir=DDDDD&num=F&urlroot=/file_set/");
    };
    let Some(cookie) = req.cookie.and_then(specweb99::parse_my_cookie) else {
        return Response::text(400, "POST: expected the cookie my_cookie=user_id=<id>&last_ad=<n>");
    };
    // The file first: a POST naming no file is refused without a record.
    let content = match read_file(req.docroot, &form.filename()) {
        Ok(content) => content,
        Err(resp) => return resp,
    };
    if let Err(e) = state.append_post(&form, cookie.user_id, now_unix_s, pid) {
        return Response::text(500, &format!("cannot append to the POST log in {}: {e}", state.dir().display()));
    }
    Response::page(envelope(req, &content), Some(format!("my_cookie={}", cookie.user_id)))
}

fn housekeeping(state: &State, req: &Request<'_>, command: &str, now_unix_s: i64) -> Response {
    let (name, args) = command.split_once('&').unwrap_or((command, ""));
    match name {
        "Reset" => {
            let Some(reset) = parse_reset(args) else {
                return Response::text(
                    400,
                    "Reset: expected command/Reset&maxload=N&pttime=S&maxthread=T&exp=A,B[&urlroot=U]",
                );
            };
            match state.reset(&reset, now_unix_s) {
                Ok(()) => Response::page(
                    b"<html><head><title>SPECweb99 Reset</title></head><body>Reset done</body></html>\n".to_vec(),
                    None,
                ),
                Err(e) => {
                    Response::text(500, &format!("Can't reset POST log on server ({}): {e}", state.dir().display()))
                }
            }
        }
        "Fetch" => match state.post_log() {
            Ok(log) => Response::page(envelope(req, &log), None),
            Err(e) => Response::text(500, &format!("cannot read the POST log in {}: {e}", state.dir().display())),
        },
        _ => Response::text(400, "unknown command: expected command/Reset&… or command/Fetch"),
    }
}

/// Reset's arguments; the first two `exp` positions are the expired blocks.
/// `urlroot` and unknown names are information only.
pub fn parse_reset(args: &str) -> Option<Reset> {
    let (mut maxload, mut pttime, mut maxthread, mut expired) = (None, None, None, None);
    for pair in args.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=')?;
        match key {
            "maxload" => maxload = Some(value.parse().ok()?),
            "pttime" => pttime = Some(value.parse().ok()?),
            "maxthread" => maxthread = Some(value.parse().ok()?),
            "exp" => {
                let (a, b) = value.split_once(',')?;
                expired = Some((a.trim().parse().ok()?, b.trim().parse().ok()?));
            }
            _ => {}
        }
    }
    Some(Reset { maxload: maxload?, pttime: pttime?, maxthread: maxthread?, expired: expired? })
}

/// The bytes of the file `url` names under `docroot`, or the 400 / 404 to send.
fn read_file(docroot: &Path, url: &str) -> Result<Vec<u8>, Response> {
    let Some(relative) = safe_path(url) else {
        return Err(Response::text(400, "expected a file path such as /file_set/dir00000/class0_0"));
    };
    let path = docroot.join(relative);
    match fs::metadata(&path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(not_found(url)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(not_found(url)),
        Err(e) => return Err(Response::text(500, &format!("cannot read {url}: {e}"))),
    }
    fs::read(&path).map_err(|e| Response::text(500, &format!("cannot read {url}: {e}")))
}

fn not_found(url: &str) -> Response {
    Response::text(404, &format!("no such file: {url}"))
}

/// `/a/b/c` as a relative path when every segment is a plain name (letters,
/// digits, `.`, `_`, `-`, not `.` or `..`): nothing outside the docroot.
fn safe_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix('/')?;
    let plain = |s: &str| {
        !s.is_empty() && s != "." && s != ".." && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    };
    rest.split('/').all(plain).then(|| PathBuf::from(rest))
}

/// Class 1 and 2 files carry the ad tags (`…/class1_F`, `…/class2_F`).
fn carries_ads(url: &str) -> bool {
    let name = url.rsplit('/').next().unwrap_or_default();
    name.starts_with("class1_") || name.starts_with("class2_")
}

fn envelope(req: &Request<'_>, content: &[u8]) -> Vec<u8> {
    specweb99::envelope(req.server_software, req.remote_addr, req.script_name, req.query, content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_arguments() {
        let r = parse_reset("maxload=5&pttime=100&maxthread=100&exp=1,100&urlroot=http://x/").unwrap();
        assert_eq!(r, Reset { maxload: 5, pttime: 100, maxthread: 100, expired: (1, 100) });
        assert_eq!(parse_reset("maxload=5&pttime=100&maxthread=100"), None);
        assert_eq!(parse_reset("maxload=x&pttime=100&maxthread=100&exp=1,2"), None);
        assert_eq!(parse_reset("maxload=5&pttime=100&maxthread=100&exp=1"), None);
    }

    #[test]
    fn paths_stay_inside_the_docroot() {
        assert_eq!(safe_path("/file_set/dir00000/class0_0"), Some(PathBuf::from("file_set/dir00000/class0_0")));
        for bad in ["file_set/x", "/../etc/passwd", "/a//b", "/a/./b", "/a/b/", "/a b", "/a%2f"] {
            assert_eq!(safe_path(bad), None, "{bad}");
        }
        assert!(carries_ads("/file_set/dir00001/class2_8"));
        assert!(!carries_ads("/file_set/dir00001/class3_8"));
    }

    #[test]
    fn cgi_framing_counts_the_body() {
        let r =
            Response { status: 200, content_type: TEXT_HTML, set_cookie: Some("a=b".into()), body: b"xyz".to_vec() };
        assert_eq!(
            r.to_cgi(),
            b"Status: 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: a=b\r\nContent-Length: 3\r\n\r\nxyz".to_vec()
        );
    }
}
