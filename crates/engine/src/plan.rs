//! `Plan`: a validated, resolved `RunConfig`, immutable and shared by all
//! workers. This is the single gate for bad input: every rule is checked
//! here, before any socket exists, with a one-line message naming the field.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use rustls::pki_types::ServerName;

use crate::config::{HttpVersion, RunConfig};
use crate::error::ConfigError;
use crate::protocol::{encode_request, RequestSpec};
use crate::schedule::Schedule;

/// Most requests pipelined on one connection.
pub const MAX_PIPELINE: u32 = 256;

/// Everything a worker needs, checked and precomputed.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Where connections go.
    pub addr: SocketAddr,
    /// TLS server name when the URL is https.
    pub tls_name: Option<ServerName<'static>>,
    /// One encoded request.
    pub request: Vec<u8>,
    /// `pipeline` copies of `request`, written back to back.
    pub batch: Vec<u8>,
    /// Requests per batch.
    pub pipeline: u32,
    /// Whether requests are HEAD (responses then carry no body).
    pub head_request: bool,
    /// Reuse connections.
    pub keepalive: bool,
    /// Connections in total and worker threads.
    pub connections: u32,
    /// Worker threads.
    pub threads: u32,
    /// Run length, if bounded by time.
    pub duration: Option<Duration>,
    /// Requests to issue in total, if bounded by count.
    pub max_requests: Option<u64>,
    /// When each connection sends.
    pub schedule: Schedule,
    /// Per-request timeout.
    pub timeout: Duration,
    /// TLS verification and resumption.
    pub insecure: bool,
    /// Offer resumption.
    pub tls_resumption: bool,
    /// Local addresses to bind, round-robin by connection.
    pub source_addrs: Vec<IpAddr>,
    /// SO_RCVBUF.
    pub recv_buffer_bytes: Option<u32>,
    /// Response head limit.
    pub max_header_bytes: usize,
    /// Response body limit.
    pub max_body_bytes: u64,
    /// Absolute start, as Unix seconds.
    pub start_at_unix_s: Option<f64>,
}

impl Plan {
    /// Validates `config` and resolves its target.
    pub fn new(config: &RunConfig) -> Result<Self, ConfigError> {
        let url = url::Url::parse(&config.url)
            .map_err(|e| ConfigError::new(format!("invalid URL '{}': {e}; expected http://host[:port]/path", config.url)))?;
        let tls = match url.scheme() {
            "http" => false,
            "https" => true,
            other => return Err(ConfigError::new(format!("unsupported URL scheme '{other}': use http:// or https://"))),
        };
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| {
            ConfigError::new(format!("URL '{}' has no host: expected http://host[:port]/path", config.url))
        })?;
        let port = url.port_or_known_default().unwrap_or(if tls { 443 } else { 80 });
        let addr = resolve(host, port)?;
        let tls_name = if tls {
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            Some(ServerName::try_from(bare.to_string()).map_err(|_| ConfigError::new(format!("invalid TLS server name '{bare}'")))?)
        } else {
            None
        };
        let host_header = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        check_fields(config)?;
        let keepalive = config.keepalive;
        let request = encode_request(&RequestSpec {
            method: &config.method,
            path_and_query: &path,
            host: &host_header,
            version: config.http_version,
            keepalive,
            headers: &config.headers,
            body: config.body.as_deref().map(str::as_bytes),
        });
        let batch = request.repeat(config.pipeline as usize);
        let source_addrs = config
            .source_addrs
            .iter()
            .map(|s| {
                s.parse::<IpAddr>()
                    .map_err(|_| ConfigError::new(format!("source_addrs: '{s}' is not an IP address (e.g. 127.0.0.2)")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(bad) = source_addrs.iter().find(|ip| ip.is_ipv4() != addr.is_ipv4()) {
            return Err(ConfigError::new(format!("source_addrs: {bad} is not of the target's address family ({addr})")));
        }
        let schedule = match config.rate_rps {
            Some(rate) => Schedule::open_loop(rate, config.connections),
            None => Schedule::closed_loop(Duration::from_secs_f64(config.think_time_s)),
        };
        Ok(Self {
            addr,
            tls_name,
            request,
            batch,
            pipeline: config.pipeline,
            head_request: config.method.eq_ignore_ascii_case("HEAD"),
            keepalive,
            connections: config.connections,
            threads: config.threads,
            duration: config.duration_s.map(Duration::from_secs_f64),
            max_requests: config.max_requests,
            schedule,
            timeout: Duration::from_secs_f64(config.timeout_s),
            insecure: config.insecure,
            tls_resumption: config.tls_resumption,
            source_addrs,
            recv_buffer_bytes: config.recv_buffer_bytes,
            max_header_bytes: config.max_header_bytes as usize,
            max_body_bytes: config.max_body_bytes,
            start_at_unix_s: config.start_at_unix_s,
        })
    }
}

fn check_fields(c: &RunConfig) -> Result<(), ConfigError> {
    let fail = |msg: String| Err(ConfigError::new(msg));
    let token_ok = !c.method.is_empty() && c.method.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token_ok {
        return fail(format!("method '{}' is not an HTTP token (e.g. GET, POST)", c.method));
    }
    for (name, value) in &c.headers {
        let name_ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':');
        if !name_ok || value.bytes().any(|b| b == b'\r' || b == b'\n') {
            return fail(format!("header '{name}: {value}' is not valid: expected 'Name: value' on one line"));
        }
    }
    if c.connections == 0 {
        return fail("connections must be >= 1 (got 0)".into());
    }
    if c.threads == 0 || c.threads > c.connections {
        return fail(format!("connections ({}) must be >= threads ({}) and threads >= 1", c.connections, c.threads));
    }
    if c.duration_s.is_none() && c.max_requests.is_none() {
        return fail("give a duration or a request count: duration_s or max_requests".into());
    }
    if let Some(d) = c.duration_s {
        if !(d.is_finite() && d > 0.0 && d <= 7.0 * 86400.0) {
            return fail(format!("duration must be > 0 and at most a week (got {d} s)"));
        }
    }
    if c.max_requests == Some(0) {
        return fail("max_requests must be >= 1 (got 0)".into());
    }
    if let Some(rate) = c.rate_rps {
        if !(rate.is_finite() && rate > 0.0) {
            return fail(format!("rate must be > 0 requests/s (got {rate})"));
        }
        if c.think_time_s > 0.0 {
            return fail("think time is a closed-loop setting: drop it or drop the rate".into());
        }
        if c.pipeline > 1 {
            return fail("pipelining is a closed-loop setting: drop it or drop the rate".into());
        }
    }
    if !(c.think_time_s.is_finite() && c.think_time_s >= 0.0) {
        return fail(format!("think time must be >= 0 s (got {})", c.think_time_s));
    }
    if !(c.timeout_s.is_finite() && c.timeout_s > 0.0 && c.timeout_s <= 3600.0) {
        return fail(format!("timeout must be > 0 and at most 1 h (got {} s)", c.timeout_s));
    }
    if c.pipeline == 0 || c.pipeline > MAX_PIPELINE {
        return fail(format!("pipeline must be 1..={MAX_PIPELINE} (got {})", c.pipeline));
    }
    if c.pipeline > 1 && (c.http_version != HttpVersion::Http11 || !c.keepalive) {
        return fail("pipelining needs HTTP/1.1 with keep-alive".into());
    }
    if c.max_header_bytes < 256 {
        return fail(format!("max_header_bytes must be >= 256 (got {})", c.max_header_bytes));
    }
    Ok(())
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, ConfigError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let mut addrs = (bare, port)
        .to_socket_addrs()
        .map_err(|e| ConfigError::new(format!("cannot resolve host '{bare}': {e}; check the URL")))?;
    addrs.next().ok_or_else(|| ConfigError::new(format!("host '{bare}' has no address; check the URL")))
}
