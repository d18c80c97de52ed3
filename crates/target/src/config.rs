//! Server configuration as given by callers (the Python CLI via the binding,
//! tests) and its validation into the values the server actually runs with.
//!
//! Owns defaults and up-front checks that can be reported as a one-line
//! `ServeError`; it must not open sockets or spawn anything.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::ServeError;

/// Largest worker-thread count accepted; more than this is almost certainly a typo.
const MAX_THREADS: usize = 1024;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Directory served as `/`. Required in practice.
    pub docroot: PathBuf,
    /// Address to listen on (default 127.0.0.1).
    pub host: IpAddr,
    /// Port of the main listener; 0 picks a free port.
    pub port: u16,
    /// The main listener speaks TLS (https).
    pub tls: bool,
    /// If set, additionally serve TLS on this port (0 = a free port).
    pub tls_port: Option<u16>,
    /// Worker threads; 0 = the CPUs this process may run on.
    pub threads: usize,
    /// Directory of CGI programs; default `docroot/cgi-bin`.
    pub cgi_dir: Option<PathBuf>,
    /// Files up to this size are cached in memory; larger ones are mmap'd.
    pub memory_cache_max_file_bytes: u64,
    /// If set and TLS is on, the generated `cert.pem` and `key.pem` (mode
    /// 0600) are written there, e.g. for clients that pin the certificate.
    pub tls_dir: Option<PathBuf>,
    /// If set, one line per request is appended there in crest's format,
    /// `ADDR [UNIX_S.MICROS] "REQUEST" STATUS BODY_BYTES`, stamped when the request arrived.
    pub access_log: Option<PathBuf>,
    /// If set, `/specweb99/dynamic` answers SPECweb99's dynamic set and keeps
    /// its tables and POST log here (made if missing); never the docroot,
    /// which may be a shared, read-only fileset. None: that route is a 404.
    pub specweb99_dir: Option<PathBuf>,
    /// Serve every request in this many µs, one at a time in arrival order
    /// (a single-server queue of known capacity: 1e6 ÷ this req/s), for
    /// testing capacity searches. 0: off, requests are answered at once.
    pub service_time_us: u64,
    /// Also serve HTTP/3 (QUIC) on the UDP twin of the TLS listener's port:
    /// `tls_port` when set, else the main port (which must then be TLS).
    pub http3: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            docroot: PathBuf::new(),
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            tls: false,
            tls_port: None,
            threads: 0,
            cgi_dir: None,
            memory_cache_max_file_bytes: 256 * 1024,
            tls_dir: None,
            access_log: None,
            specweb99_dir: None,
            service_time_us: 0,
            http3: false,
        }
    }
}

/// Validated, absolute settings derived from a `ServeConfig`.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub docroot: PathBuf,
    pub cgi_dir: PathBuf,
    pub threads: usize,
    pub specweb99_dir: Option<PathBuf>,
}

impl ServeConfig {
    pub(crate) fn resolve(&self) -> Result<Resolved, ServeError> {
        if self.docroot.as_os_str().is_empty() {
            return Err(ServeError::NoDocroot);
        }
        let docroot = existing_dir(&self.docroot).map_err(|kind| match kind {
            DirProblem::Missing => ServeError::DocrootMissing(self.docroot.clone()),
            DirProblem::NotDir => ServeError::DocrootNotDir(self.docroot.clone()),
        })?;
        // An explicit CGI directory must exist; the default one is optional
        // (without it every /cgi-bin/ request is simply a 404).
        let cgi_dir = match &self.cgi_dir {
            Some(dir) => existing_dir(dir).map_err(|_| ServeError::CgiDir(dir.clone()))?,
            None => docroot.join("cgi-bin"),
        };
        if self.threads > MAX_THREADS {
            return Err(ServeError::Config(format!(
                "threads = {} is too many: pass at most {MAX_THREADS}, or 0 for one per CPU",
                self.threads
            )));
        }
        if let Some(tls_port) = self.tls_port {
            if tls_port != 0 && tls_port == self.port {
                return Err(ServeError::Config(format!(
                    "tls port {tls_port} equals the plain port: pass a different --tls-port"
                )));
            }
        }
        if self.http3 && !self.tls && self.tls_port.is_none() {
            return Err(ServeError::Config(
                "HTTP/3 runs over QUIC, which is always TLS: add --tls or --tls-port".to_string(),
            ));
        }
        let threads = match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let specweb99_dir = match &self.specweb99_dir {
            Some(dir) => Some(
                std::fs::create_dir_all(dir)
                    .and_then(|()| dir.canonicalize())
                    .map_err(|e| ServeError::Specweb99Dir { path: dir.clone(), source: e })?,
            ),
            None => None,
        };
        Ok(Resolved { docroot, cgi_dir, threads, specweb99_dir })
    }
}

enum DirProblem {
    Missing,
    NotDir,
}

/// Canonical form of an existing directory. Canonicalising once here means
/// request paths can be joined onto it without re-resolving the root.
fn existing_dir(dir: &Path) -> Result<PathBuf, DirProblem> {
    let canonical = dir.canonicalize().map_err(|_| DirProblem::Missing)?;
    if canonical.is_dir() {
        Ok(canonical)
    } else {
        Err(DirProblem::NotDir)
    }
}
