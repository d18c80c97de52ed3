//! What crest-fcgi answers: a request's params in, the CGI-style response
//! (head and body) out as `FCGI_STDOUT` records.
//!
//! - a path ending in `crest-env`, or `/dyn/env`: crest-env's 1024-byte page
//!   of the request's CGI variables;
//! - a path ending in `crest-bytes`: crest-bytes' body for `?size=N`
//!   (`Status: 400` for a bad size);
//! - a path ending in `/specweb99/dynamic`: SPECweb99's dynamic set (GET,
//!   custom-ad GET, POST, Reset, Fetch) over `--specweb99-dir` and the
//!   request's `DOCUMENT_ROOT`, as the CGI program crest-specweb99 answers it
//!   (`Status: 404` naming the flag when it was not given);
//! - anything else: `Status: 404`.
//!
//! The pages come from crates/dynamic, the code the CGI programs run, so a
//! FastCGI mix transfers exactly what the CGI mix does. Sans-IO: appends
//! records to a `Vec`; the end of the stream and `FCGI_END_REQUEST` are
//! [`crate::connection`]'s.

use std::borrow::Cow;

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crest_dynamic::bytes::{self, Stream};
use crest_dynamic::env_page::{self, PAGE_BYTES};
use crest_dynamic::specweb99_answer::{self, Response as Answer, MAX_POST_BYTES};
use crest_dynamic::specweb99_state::State;

use crate::connection::Request;
use crate::params::Params;
use crate::record::{self, MAX_ALIGNED_CONTENT_LEN};

/// The path crest's built-in target serves its in-process page at; a server
/// that routes it here gets the same page.
pub const INPROC_PATH: &[u8] = b"/dyn/env";

const STATUS_OK: &str = "Status: 200 OK\r\n";

/// The answer to a path crest-fcgi does not serve.
pub const NOT_FOUND: &str = "Status: 404 Not Found\r\nContent-Type: text/plain\r\n\
                             Content-Length: 81\r\n\r\n\
                             not found: crest-fcgi answers .../crest-env, /dyn/env and .../crest-bytes?size=N\n";

/// The path suffix of SPECweb99's dynamic set.
pub const SPECWEB99_PATH: &[u8] = b"/specweb99/dynamic";

/// What the answers need beyond one request.
#[derive(Debug, Default)]
pub struct Site {
    /// SPECweb99's specweb99 directory (`--specweb99-dir`), if given.
    pub specweb99: Option<State>,
}

/// Bytes of random body per record: the largest content length that needs
/// no padding, a multiple of 8 as [`Stream::fill`] wants.
const RANDOM_BLOCK: usize = MAX_ALIGNED_CONTENT_LEN;

/// The programs crest-fcgi answers as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    Env,
    Bytes,
    Specweb99,
}

/// One response, written out in parts by [`Reply::write_next`].
#[derive(Debug)]
pub struct Reply {
    /// The CGI head, and the whole body when it is small.
    head: Cow<'static, [u8]>,
    /// crest-bytes' body, generated block by block as it is written.
    random: Option<Random>,
}

struct Random {
    stream: Stream,
    left: u64,
}

impl std::fmt::Debug for Random {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Random").field("left", &self.left).finish_non_exhaustive()
    }
}

impl Reply {
    /// The response to a request with these params and no body, on a site
    /// without SPECweb99.
    pub fn new(params: &Params) -> Reply {
        Reply::answer(&Request { id: 0, params: params.clone(), stdin: Vec::new(), stdin_len: 0 }, &Site::default())
    }

    /// The response to `request` on `site`.
    pub fn answer(request: &Request, site: &Site) -> Reply {
        let params = &request.params;
        match program(params) {
            Some(Program::Env) => env(params),
            Some(Program::Bytes) => random_bytes(&query(params)),
            Some(Program::Specweb99) => {
                let answer = specweb99(request, site);
                Reply { head: Cow::Owned(answer.to_cgi()), random: None }
            }
            None => Reply { head: Cow::Borrowed(NOT_FOUND.as_bytes()), random: None },
        }
    }

    /// Appends the next part of the response to `out` as `FCGI_STDOUT`
    /// records of `request_id`: the head (with the body, when small) and at
    /// most one block of a generated body, so a caller that writes `out`
    /// after each call holds at most one block in memory. Returns whether
    /// there is more to come.
    pub fn write_next(&mut self, request_id: u16, out: &mut Vec<u8>) -> bool {
        if !self.head.is_empty() {
            record::encode_stream(out, record::STDOUT, request_id, &self.head);
            self.head = Cow::Borrowed(&[]);
        }
        let Some(random) = &mut self.random else {
            return false;
        };
        // `left` <= bytes::MAX_SIZE, so the cast cannot truncate.
        let n = RANDOM_BLOCK.min(random.left as usize);
        if n > 0 {
            let padding = record::padding_len(n);
            record::encode_header(out, record::STDOUT, request_id, n, padding);
            let start = out.len();
            out.resize(start + n + padding, 0);
            random.stream.fill(&mut out[start..start + n]);
            random.left -= n as u64;
        }
        random.left > 0
    }
}

/// Which program a request names: the first of `SCRIPT_NAME`,
/// `DOCUMENT_URI` and `REQUEST_URI` (less its query) whose last segment is
/// a program's name (or that is [`INPROC_PATH`]). Servers fill these
/// differently (nginx sets all three, Apache's mod_proxy_fcgi and Caddy
/// may leave `SCRIPT_NAME` empty), so every one is tried.
pub fn program(params: &Params) -> Option<Program> {
    ["SCRIPT_NAME", "DOCUMENT_URI", "REQUEST_URI"].into_iter().filter_map(|name| params.get(name)).find_map(|value| {
        let path = value.split(|&b| b == b'?').next().unwrap_or_default();
        let last = path.rsplit(|&b| b == b'/').next().unwrap_or_default();
        match last {
            b"crest-env" => Some(Program::Env),
            b"crest-bytes" => Some(Program::Bytes),
            _ if path == INPROC_PATH => Some(Program::Env),
            _ if path.ends_with(SPECWEB99_PATH) => Some(Program::Specweb99),
            _ => None,
        }
    })
}

/// `QUERY_STRING`, or the query part of `REQUEST_URI` when a server sends no
/// `QUERY_STRING`.
fn query(params: &Params) -> Cow<'_, [u8]> {
    if let Some(query) = params.get("QUERY_STRING") {
        return Cow::Borrowed(query);
    }
    let uri = params.get("REQUEST_URI").unwrap_or_default();
    match uri.iter().position(|&b| b == b'?') {
        Some(at) => Cow::Borrowed(&uri[at + 1..]),
        None => Cow::Borrowed(&[]),
    }
}

/// crest-env's page, its variables looked up in the params where crest-env
/// looks them up in its environment.
fn env(params: &Params) -> Reply {
    let page = env_page::render_vars(|name| params.get(name));
    let mut head = Vec::with_capacity(STATUS_OK.len() + env_page::HEADER.len() + PAGE_BYTES);
    head.extend_from_slice(STATUS_OK.as_bytes());
    head.extend_from_slice(env_page::HEADER.as_bytes());
    head.extend_from_slice(&page);
    Reply { head: Cow::Owned(head), random: None }
}

/// SPECweb99's answer, from the params as the CGI program reads its environment.
fn specweb99(request: &Request, site: &Site) -> Answer {
    let Some(state) = &site.specweb99 else {
        return Answer::text(404, "SPECweb99's dynamic set is off: start crest-fcgi with --specweb99-dir DIR");
    };
    if request.stdin_len > MAX_POST_BYTES as u64 {
        return Answer::text(413, &format!("a SPECweb99 POST body is at most {MAX_POST_BYTES} bytes"));
    }
    let params = &request.params;
    let var = |name| String::from_utf8_lossy(params.get(name).unwrap_or_default()).into_owned();
    let docroot = var("DOCUMENT_ROOT");
    if docroot.is_empty() {
        return Answer::text(500, "crest-fcgi: the server sent no DOCUMENT_ROOT");
    }
    let query = String::from_utf8_lossy(&query(params)).into_owned();
    let cookie = params.get("HTTP_COOKIE").map(|c| String::from_utf8_lossy(c).into_owned());
    let (method, software, addr) = (var("REQUEST_METHOD"), var("SERVER_SOFTWARE"), var("REMOTE_ADDR"));
    let script = script_name(params);
    let req = specweb99_answer::Request {
        method: &method,
        query: &query,
        cookie: cookie.as_deref(),
        body: &request.stdin,
        docroot: Path::new(&docroot),
        server_software: &software,
        remote_addr: &addr,
        script_name: &script,
    };
    let now =
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    specweb99_answer::answer(state, &req, now, std::process::id())
}

/// `SCRIPT_NAME`, or when a server sends it empty (Caddy, H2O put the path
/// in `PATH_INFO`) the path that routed the request here.
fn script_name(params: &Params) -> String {
    let path = ["SCRIPT_NAME", "DOCUMENT_URI", "REQUEST_URI"]
        .into_iter()
        .filter_map(|name| params.get(name))
        .map(|value| value.split(|&b| b == b'?').next().unwrap_or_default())
        .find(|path| !path.is_empty())
        .unwrap_or_default();
    String::from_utf8_lossy(path).into_owned()
}

fn random_bytes(query: &[u8]) -> Reply {
    let Some(size) = bytes::parse_size(query) else {
        return Reply { head: Cow::Borrowed(bytes::BAD_REQUEST.as_bytes()), random: None };
    };
    Reply {
        head: Cow::Owned(format!("{STATUS_OK}{}", bytes::header(size)).into_bytes()),
        random: Some(Random { stream: Stream::new(size), left: size }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        let mut bytes = Vec::new();
        for (name, value) in pairs {
            record::encode_pair(&mut bytes, name.as_bytes(), value.as_bytes());
        }
        Params::new(bytes).expect("well-formed")
    }

    #[test]
    fn not_found_length_is_right() {
        let (_, body) = NOT_FOUND.split_once("\r\n\r\n").expect("head and body");
        assert!(NOT_FOUND.contains(&format!("Content-Length: {}\r\n", body.len())));
    }

    #[test]
    fn routes_by_last_segment_of_any_path_param() {
        let route = |pairs: &[(&str, &str)]| program(&params(pairs));
        assert_eq!(route(&[("SCRIPT_NAME", "/fcgi/crest-env")]), Some(Program::Env));
        assert_eq!(route(&[("SCRIPT_NAME", "/dyn/env")]), Some(Program::Env));
        assert_eq!(route(&[("DOCUMENT_URI", "/x/crest-bytes")]), Some(Program::Bytes));
        assert_eq!(route(&[("SCRIPT_NAME", ""), ("REQUEST_URI", "/a/crest-bytes?size=1")]), Some(Program::Bytes));
        assert_eq!(route(&[("SCRIPT_NAME", "/fcgi/not-crest-env")]), None);
        assert_eq!(route(&[("SCRIPT_NAME", "/crest-env/x")]), None);
        assert_eq!(route(&[("REQUEST_URI", "/dyn/env/")]), None);
        assert_eq!(route(&[("SCRIPT_NAME", "/specweb99/dynamic")]), Some(Program::Specweb99));
        assert_eq!(
            route(&[("REQUEST_URI", "/x/specweb99/dynamic?/file_set/dir00000/class0_0")]),
            Some(Program::Specweb99)
        );
        assert_eq!(route(&[("SCRIPT_NAME", "/specweb99/dynamic/x")]), None);
        assert_eq!(route(&[]), None);
    }

    #[test]
    fn an_empty_script_name_falls_back_to_the_routed_path() {
        let p = params(&[("SCRIPT_NAME", ""), ("REQUEST_URI", "/specweb99/dynamic?/file_set/x")]);
        assert_eq!(script_name(&p), "/specweb99/dynamic");
        assert_eq!(script_name(&params(&[("SCRIPT_NAME", "/s")])), "/s");
    }

    #[test]
    fn query_falls_back_to_request_uri() {
        let p = params(&[("REQUEST_URI", "/crest-bytes?size=3&x")]);
        assert_eq!(&*query(&p), b"size=3&x");
        let p = params(&[("QUERY_STRING", ""), ("REQUEST_URI", "/crest-bytes?size=3")]);
        assert_eq!(&*query(&p), b"");
    }
}
