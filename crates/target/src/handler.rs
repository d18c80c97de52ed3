//! Per-request dispatch: the hyper `Service` for one connection, routing a
//! normalised path to the dynamic page, SPECweb99's dynamic set, CGI or
//! static files, and the access log hook.
//!
//! Static files, `/dyn/env` and SPECweb99's GETs are answered synchronously
//! inside `call`, so the hot path allocates no future and clones no `Arc`;
//! only CGI and SPECweb99's POST (whose body must be read) get a boxed future. Must not do socket work (see `listener.rs`).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{HeaderValue, Method, Request, StatusCode};
use hyper::body::{Body as _, Incoming};
use hyper::service::Service;

use crate::access_log::AccessLog;
use crate::cgi::{self, Cgi};
use crate::conn_info::ConnInfo;
use crate::dynamic;
use crate::path;
use crate::request_body::ReqBody;
use crate::responses::{self, Resp};
use crate::service_queue::ServiceQueue;
use crate::specweb99::{self, Specweb99};
use crate::static_files::StaticFiles;

const TEXT_HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");
const DYN_LENGTH: HeaderValue = HeaderValue::from_static("1024");
const _: () = assert!(dynamic::PAGE_BYTES == 1024);

/// Everything a request may need, shared by all connections of a server.
pub(crate) struct Site {
    pub files: StaticFiles,
    pub cgi: Cgi,
    pub specweb99: Specweb99,
    pub log: Option<AccessLog>,
    /// A fixed service time per request, one at a time (`ServeConfig::service_time_us`).
    pub queue: Option<ServiceQueue>,
}

pub(crate) struct Handler {
    pub site: Arc<Site>,
    pub conn: ConnInfo,
}

pub(crate) enum Reply {
    Ready(Option<Resp>),
    Later(Pin<Box<dyn Future<Output = Resp> + Send>>),
}

impl Future for Reply {
    type Output = Result<Resp, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Reply::Ready(resp) => {
                Poll::Ready(Ok(resp.take().unwrap_or_else(|| responses::error(StatusCode::INTERNAL_SERVER_ERROR))))
            }
            Reply::Later(fut) => fut.as_mut().poll(cx).map(Ok),
        }
    }
}

impl Service<Request<Incoming>> for Handler {
    type Response = Resp;
    type Error = Infallible;
    type Future = Reply;

    fn call(&self, req: Request<Incoming>) -> Reply {
        self.respond(req.map(ReqBody::Stream))
    }
}

impl Handler {
    /// Answers a request of any protocol (HTTP/3's come here with their body read whole).
    pub(crate) fn respond(&self, req: Request<ReqBody>) -> Reply {
        if let Some(queue) = &self.site.queue {
            let done = queue.admit(std::time::Instant::now());
            let reply = self.logged(req);
            return Reply::Later(Box::pin(async move {
                tokio::time::sleep_until(done.into()).await;
                match reply.await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                }
            }));
        }
        self.logged(req)
    }

    fn logged(&self, req: Request<ReqBody>) -> Reply {
        if self.site.log.is_none() {
            return self.route(req);
        }
        // The request's head is parsed: this is when it arrived (what a replay's accuracy is read from).
        let arrived = std::time::SystemTime::now();
        let line = format!("{} {} {:?}", req.method(), req.uri(), req.version());
        let head = req.method() == Method::HEAD;
        match self.route(req) {
            Reply::Ready(Some(resp)) => {
                log(&self.site.log, &self.conn, arrived, &line, &resp, head);
                Reply::Ready(Some(resp))
            }
            Reply::Ready(None) => Reply::Ready(None),
            Reply::Later(fut) => {
                let (site, conn) = (self.site.clone(), self.conn);
                Reply::Later(Box::pin(async move {
                    let resp = fut.await;
                    log(&site.log, &conn, arrived, &line, &resp, head);
                    resp
                }))
            }
        }
    }

    fn route(&self, req: Request<ReqBody>) -> Reply {
        let path = match path::normalize(req.uri().path()) {
            Ok(path) => path,
            Err(status) => return now(responses::error(status)),
        };
        if path == dynamic::SCRIPT_NAME {
            return now(self.dynamic(&req));
        }
        if path == specweb99::SCRIPT_NAME {
            if !self.site.specweb99.wants_body(&req) {
                return now(self.site.specweb99.answer_now(&req, &self.conn));
            }
            let (site, conn) = (self.site.clone(), self.conn);
            return Reply::Later(Box::pin(async move { site.specweb99.answer_post(req, conn).await }));
        }
        if cgi::is_cgi_path(&path) {
            let Some(target) = cgi::target(&path) else {
                return now(responses::error(StatusCode::NOT_FOUND));
            };
            let (site, conn) = (self.site.clone(), self.conn);
            return Reply::Later(Box::pin(async move { site.cgi.run(conn, req, target).await }));
        }
        let head = match *req.method() {
            Method::GET => false,
            Method::HEAD => true,
            _ => return now(responses::method_not_allowed("GET, HEAD")),
        };
        match self.site.files.get(&path) {
            Ok(file) => now(responses::ok(file.body, file.content_type, file.content_length, head)),
            Err(status) => now(responses::error(status)),
        }
    }

    fn dynamic(&self, req: &Request<ReqBody>) -> Resp {
        let head = match *req.method() {
            Method::GET | Method::POST => false,
            Method::HEAD => true,
            _ => return responses::method_not_allowed("GET, HEAD, POST"),
        };
        let page = dynamic::render(req, &self.conn);
        responses::ok(page, TEXT_HTML, DYN_LENGTH, head)
    }
}

fn now(resp: Resp) -> Reply {
    Reply::Ready(Some(resp))
}

fn log(log: &Option<AccessLog>, conn: &ConnInfo, arrived: std::time::SystemTime, line: &str, resp: &Resp, head: bool) {
    if let Some(log) = log {
        let bytes = if head { 0 } else { resp.body().size_hint().exact().unwrap_or(0) };
        log.record(conn, arrived, line, resp.status(), bytes);
    }
}
