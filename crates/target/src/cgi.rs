//! CGI/1.1 (RFC 3875): `/cgi-bin/NAME[/PATH_INFO][?QUERY]` runs `cgi_dir/NAME`
//! as a new process per request, with the standard meta-variables, the
//! request body on stdin, and its stdout parsed as the response.
//!
//! Owns script lookup, the environment, process lifetime and limits. No child
//! may outlive its request: each runs in its own process group, which is
//! killed if the request is dropped (client gone, timeout, server stop)
//! before the script has been reaped. Response parsing is in
//! `cgi_response.rs`.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use crate::request_body::ReqBody;
use bytes::Bytes;
use http::request::Parts;
use http::{header, Request, StatusCode};
use http_body_util::{BodyExt, Limited};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::Semaphore;

use crate::cgi_response;
use crate::conn_info::{self, ConnInfo};
use crate::dynamic;
use crate::responses::{self, Resp};

pub(crate) const PREFIX: &str = "/cgi-bin";
const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_REQUEST_BODY: usize = 16 * 1024 * 1024;
const MAX_OUTPUT: u64 = 16 * 1024 * 1024;
/// Scripts running at once; further requests wait. Bounds processes and the
/// memory held in buffered bodies (2 x 16 MiB each at worst).
const MAX_CONCURRENT: usize = 64;
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

pub(crate) struct Cgi {
    dir: PathBuf,
    docroot: PathBuf,
    path_env: OsString,
    slots: Semaphore,
}

/// `/cgi-bin/NAME/extra` split into the script name and PATH_INFO. Owned,
/// because it travels into the request's future.
pub(crate) struct Target {
    pub name: String,
    pub path_info: String,
}

/// Whether a normalised path belongs to CGI (and so is never served as a
/// static file, which would leak script sources).
pub(crate) fn is_cgi_path(path: &str) -> bool {
    path.strip_prefix(PREFIX).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Splits a normalised path under `/cgi-bin/`; `None` if it names no script.
pub(crate) fn target(path: &str) -> Option<Target> {
    let rest = path.strip_prefix(PREFIX)?.strip_prefix('/')?;
    let (name, path_info) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    if name.is_empty() || name.starts_with('.') {
        return None;
    }
    Some(Target { name: name.to_owned(), path_info: path_info.to_owned() })
}

impl Cgi {
    pub(crate) fn new(dir: PathBuf, docroot: PathBuf) -> Cgi {
        let path_env = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
        Cgi { dir, docroot, path_env, slots: Semaphore::new(MAX_CONCURRENT) }
    }

    pub(crate) async fn run(&self, conn: ConnInfo, req: Request<ReqBody>, target: Target) -> Resp {
        let script = self.dir.join(&target.name);
        match std::fs::metadata(&script) {
            Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => {}
            Ok(meta) if meta.is_file() => return responses::error(StatusCode::FORBIDDEN),
            _ => return responses::error(StatusCode::NOT_FOUND),
        }
        let (parts, body) = req.into_parts();
        let Ok(_permit) = self.slots.acquire().await else {
            return responses::error(StatusCode::SERVICE_UNAVAILABLE);
        };
        // Bounded in time too: a client trickling its body must not hold a
        // CGI slot forever.
        let body = match tokio::time::timeout(TIMEOUT, Limited::new(body, MAX_REQUEST_BODY).collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(_)) => return responses::error(StatusCode::PAYLOAD_TOO_LARGE),
            Err(_) => return responses::error(StatusCode::REQUEST_TIMEOUT),
        };
        let mut cmd = Command::new(&script);
        cmd.env_clear()
            .env("PATH", &self.path_env)
            .envs(self.meta_variables(&conn, &parts, &target, body.len()))
            .current_dir(&self.dir)
            .stdin(if body.is_empty() { Stdio::null() } else { Stdio::piped() })
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true);
        let Ok(child) = cmd.spawn() else {
            return responses::error(StatusCode::INTERNAL_SERVER_ERROR);
        };
        let running = Running { group: KillGroup(child.id()), child };
        match tokio::time::timeout(TIMEOUT, running.exchange(body)).await {
            Ok(Some(output)) => {
                cgi_response::parse(output).unwrap_or_else(|| responses::error(StatusCode::INTERNAL_SERVER_ERROR))
            }
            Ok(None) => responses::error(StatusCode::INTERNAL_SERVER_ERROR),
            Err(_) => responses::error(StatusCode::GATEWAY_TIMEOUT),
        }
    }

    fn meta_variables(
        &self,
        conn: &ConnInfo,
        parts: &Parts,
        target: &Target,
        body_len: usize,
    ) -> Vec<(String, OsString)> {
        let mut env: Vec<(String, OsString)> = Vec::with_capacity(32);
        let mut set = |name: &str, value: &str| env.push((name.to_owned(), value.into()));
        set("GATEWAY_INTERFACE", "CGI/1.1");
        set("SERVER_SOFTWARE", dynamic::SERVER_SOFTWARE);
        set("SERVER_NAME", &conn_info::server_name(&parts.headers, conn.local));
        set("SERVER_ADDR", &conn.local.ip().to_string());
        set("SERVER_PORT", &conn.local.port().to_string());
        set("SERVER_PROTOCOL", conn_info::protocol(parts.version));
        set("REQUEST_METHOD", parts.method.as_str());
        set("REQUEST_URI", parts.uri.path_and_query().map_or("/", |p| p.as_str()));
        set("QUERY_STRING", parts.uri.query().unwrap_or(""));
        set("SCRIPT_NAME", &format!("{PREFIX}/{}", target.name));
        set("SCRIPT_FILENAME", &self.dir.join(&target.name).to_string_lossy());
        set("REMOTE_ADDR", &conn.peer.ip().to_string());
        set("REMOTE_PORT", &conn.peer.port().to_string());
        // crest-specweb99 finds its files there, as under Apache or nginx.
        set("DOCUMENT_ROOT", &self.docroot.to_string_lossy());
        // php-cgi and friends refuse to run without it.
        set("REDIRECT_STATUS", "200");
        if !target.path_info.is_empty() {
            set("PATH_INFO", &target.path_info);
            let translated = self.docroot.join(target.path_info.trim_start_matches('/'));
            set("PATH_TRANSLATED", &translated.to_string_lossy());
        }
        if conn.tls {
            set("HTTPS", "on");
        }
        if body_len > 0 {
            set("CONTENT_LENGTH", &body_len.to_string());
        }
        if let Some(ct) = parts.headers.get(header::CONTENT_TYPE) {
            env.push(("CONTENT_TYPE".into(), std::ffi::OsStr::from_bytes(ct.as_bytes()).into()));
        }
        for name in parts.headers.keys() {
            if let (Some(var), Some(value)) =
                (http_variable(name.as_str()), conn_info::header_bytes(&parts.headers, name))
            {
                env.push((var, std::ffi::OsStr::from_bytes(&value).into()));
            }
        }
        env
    }
}

/// `user-agent` -> `HTTP_USER_AGENT`, or `None` for headers that are not
/// passed: those already given as CONTENT_* variables, credentials (as
/// Apache does), and `Proxy`, whose HTTP_PROXY would hijack the script's
/// outgoing HTTP ("httpoxy").
fn http_variable(name: &str) -> Option<String> {
    if matches!(name, "content-type" | "content-length" | "authorization" | "proxy-authorization" | "proxy") {
        return None;
    }
    let mut var = String::with_capacity(5 + name.len());
    var.push_str("HTTP_");
    var.extend(name.chars().map(|c| if c == '-' { '_' } else { c.to_ascii_uppercase() }));
    Some(var)
}

/// Kills the script's whole process group when dropped while armed, so
/// grandchildren (e.g. a shell's `sleep`) die with it.
struct KillGroup(Option<u32>);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.and_then(|id| i32::try_from(id).ok()) {
            // SAFETY: kill(2) has no memory-safety preconditions. The group
            // leader has not been reaped yet (we disarm right after
            // `wait()`), so its pid, and thus the group id, cannot have been
            // reused by an unrelated process.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

/// Field order matters: the group is killed before `child` is dropped
/// (whose `kill_on_drop` then reaps the leader in the background).
struct Running {
    group: KillGroup,
    child: Child,
}

impl Running {
    /// Feeds stdin while collecting stdout (concurrently, so a script that
    /// writes before reading cannot deadlock us), then reaps the script.
    /// `None` if the script failed or its output is too large.
    async fn exchange(mut self, body: Bytes) -> Option<Vec<u8>> {
        let stdin = self.child.stdin.take();
        let mut stdout = self.child.stdout.take()?;
        let feed = async move {
            if let Some(mut stdin) = stdin {
                // A script may legitimately exit without reading its input.
                let _ = stdin.write_all(&body).await;
            }
        };
        let mut output = Vec::new();
        let mut limited = (&mut stdout).take(MAX_OUTPUT + 1);
        let collect = limited.read_to_end(&mut output);
        let ((), read) = tokio::join!(feed, collect);
        drop(stdout);
        if read.is_err() || output.len() as u64 > MAX_OUTPUT {
            // Dropping `self` kills the group; waiting could take until the
            // timeout if the script is blocked writing more.
            return None;
        }
        let status = self.child.wait().await;
        self.group.0 = None;
        status.is_ok_and(|s| s.success()).then_some(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_targets() {
        let t = target("/cgi-bin/env.sh/a/b").unwrap();
        assert_eq!((t.name.as_str(), t.path_info.as_str()), ("env.sh", "/a/b"));
        let t = target("/cgi-bin/x").unwrap();
        assert_eq!((t.name.as_str(), t.path_info.as_str()), ("x", ""));
        assert!(is_cgi_path("/cgi-bin") && is_cgi_path("/cgi-bin/") && !is_cgi_path("/cgi-binx"));
        assert!(target("/cgi-bin/").is_none());
        assert!(target("/cgi-bin").is_none());
        assert!(target("/cgi-bin/.hidden").is_none());
        assert!(target("/cgi-binx/a").is_none());
    }

    #[test]
    fn header_variables() {
        assert_eq!(http_variable("user-agent").as_deref(), Some("HTTP_USER_AGENT"));
        assert_eq!(http_variable("proxy"), None);
        assert_eq!(http_variable("content-type"), None);
    }
}
