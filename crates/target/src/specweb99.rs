//! `/specweb99/dynamic`: SPECweb99's dynamic set (standard and custom-ad
//! GET, POST, Reset, Fetch) answered in-process, by the code the CGI program
//! `crest-specweb99` and crest-fcgi run (`crest_dynamic::specweb99_answer`),
//! over the specweb99 directory given as `specweb99_dir`. Without one every
//! request here is a 404 that names the option.
//!
//! Owns mapping a hyper request onto that code and its answer onto a
//! response. The answer does blocking file I/O (the file, the tables' stat,
//! the POST log's flock): small reads and one short lock, done inline like
//! the static files' cache misses; must not do socket work.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::request_body::ReqBody;
use bytes::Bytes;
use crest_dynamic::specweb99_answer::{self, Request as Answerable, Response as Answer, MAX_POST_BYTES};
use crest_dynamic::specweb99_state::State;
use http::header::{COOKIE, SET_COOKIE};
use http::{HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Limited};

use crate::conn_info::ConnInfo;
use crate::dynamic::SERVER_SOFTWARE;
use crate::responses::{self, Resp};

pub(crate) const SCRIPT_NAME: &str = "/specweb99/dynamic";
/// How long a client may take to send a POST body.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
const NOT_CONFIGURED: &str =
    "SPECweb99's dynamic set is off: start the target with a specweb99 directory (specweb99_dir, --specweb99-dir)\n";

/// The in-process SPECweb99 dynamic set and where its docroot and state are.
pub(crate) struct Specweb99 {
    state: Option<State>,
    docroot: PathBuf,
}

impl Specweb99 {
    pub(crate) fn new(state_dir: Option<PathBuf>, docroot: PathBuf) -> Specweb99 {
        Specweb99 { state: state_dir.map(State::new), docroot }
    }

    /// Whether a request needs its body read first (a POST, with the set on).
    pub(crate) fn wants_body(&self, req: &Request<ReqBody>) -> bool {
        self.state.is_some() && req.method() == Method::POST
    }

    /// The answer to a request without a body (GET, HEAD, or anything refused).
    pub(crate) fn answer_now(&self, req: &Request<ReqBody>, conn: &ConnInfo) -> Resp {
        self.answer(req, b"", conn)
    }

    /// Reads a POST's body (bounded in size and time), then answers it.
    pub(crate) async fn answer_post(&self, req: Request<ReqBody>, conn: ConnInfo) -> Resp {
        let (parts, body) = req.into_parts();
        let body = match tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, MAX_POST_BYTES).collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(_)) => return responses::error(StatusCode::PAYLOAD_TOO_LARGE),
            Err(_) => return responses::error(StatusCode::REQUEST_TIMEOUT),
        };
        self.answer(&Request::from_parts(parts, ()), &body, &conn)
    }

    fn answer<B>(&self, req: &Request<B>, body: &[u8], conn: &ConnInfo) -> Resp {
        let Some(state) = &self.state else {
            return text(StatusCode::NOT_FOUND, NOT_CONFIGURED);
        };
        let remote = conn.peer.ip().to_string();
        // Several Cookie headers (HTTP/2 splits them) read as one, as a CGI's HTTP_COOKIE does.
        let cookies: Vec<&str> = req.headers().get_all(COOKIE).iter().filter_map(|v| v.to_str().ok()).collect();
        let cookie = (!cookies.is_empty()).then(|| cookies.join("; "));
        let request = Answerable {
            method: req.method().as_str(),
            query: req.uri().query().unwrap_or(""),
            cookie: cookie.as_deref(),
            body,
            docroot: &self.docroot,
            server_software: SERVER_SOFTWARE,
            remote_addr: &remote,
            script_name: SCRIPT_NAME,
        };
        let answer = specweb99_answer::answer(state, &request, now_unix_s(), std::process::id());
        response(answer, req.method() == Method::HEAD)
    }
}

fn now_unix_s() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn response(answer: Answer, head: bool) -> Resp {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let length = HeaderValue::from(answer.body.len());
    let mut resp = responses::ok(Bytes::from(answer.body), HeaderValue::from_static(answer.content_type), length, head);
    *resp.status_mut() = status;
    if let Some(cookie) = answer.set_cookie.and_then(|c| HeaderValue::try_from(c).ok()) {
        resp.headers_mut().insert(SET_COOKIE, cookie);
    }
    resp
}

fn text(status: StatusCode, message: &'static str) -> Resp {
    let mut resp = responses::ok(
        Bytes::from_static(message.as_bytes()),
        HeaderValue::from_static("text/plain; charset=utf-8"),
        HeaderValue::from(message.len()),
        false,
    );
    *resp.status_mut() = status;
    resp
}
