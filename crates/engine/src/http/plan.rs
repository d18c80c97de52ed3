//! `Plan`: a validated, resolved HTTP `RunConfig`, immutable and shared by
//! all workers. This is the HTTP runs' gate for bad input: every rule is
//! checked here, before any socket exists, with a one-line message naming
//! the field. `validate` runs every rule but resolving host names, so
//! callers (the Python CLI) check input without DNS or sockets; `Plan::new`
//! adds the resolution. It must not know of file runs (`dispatch` decides).

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;

use crate::config::{HttpVersion, Replay, ReplayMode, RequestEntry, RunConfig, Selection, Specweb99};
use crate::error::ConfigError;
use crate::gate::{self, Shared};
use crate::keepalive::KeepaliveDraw;
use crate::protocol::{encode_request, RequestSpec};
use crate::schedule::Schedule;
use crate::script::{Script, ScriptConfig};
use crate::specweb99::{self, Endpoint, Mix, Site};
use crate::table::AliasTable;

/// Longest body prefix a content check compares.
pub const MAX_BODY_PREFIX: usize = 512;

/// Largest read buffer: one is allocated per worker, up front.
pub const MAX_READ_BUFFER_BYTES: u32 = 16 << 20;

/// Most requests pipelined on one connection.
pub const MAX_PIPELINE: u32 = 256;

/// Most directories of a SPECweb99 file set: the path has 5 digits.
pub const MAX_SPECWEB99_DIRS: u32 = 100_000;

/// A server the run connects to: one per distinct scheme, host and port.
#[derive(Debug, Clone)]
pub struct Target {
    /// Where connections go.
    pub addr: SocketAddr,
    /// TLS server name when the scheme is https.
    pub tls_name: Option<ServerName<'static>>,
}

/// Most concurrent streams per HTTP/2 connection.
pub const MAX_STREAMS: u32 = 1024;

/// HTTP/2's settings of a run.
#[derive(Debug, Clone, Copy)]
pub struct H2Plan {
    /// Concurrent streams per connection.
    pub streams: u32,
    /// Receive window per stream.
    pub stream_window: u32,
    /// Receive window per connection.
    pub connection_window: u32,
}

/// HTTP/3's settings of a run.
#[derive(Debug, Clone, Copy)]
pub struct H3Plan {
    /// Concurrent streams per connection.
    pub streams: u32,
    /// QUIC receive window per stream.
    pub stream_window: u32,
    /// QUIC receive window per connection.
    pub connection_window: u32,
}

/// One encoded request of the table.
#[derive(Debug, Clone)]
pub struct Request {
    /// Request bytes (head and body); HTTP/1.x only.
    pub bytes: Vec<u8>,
    /// HTTP/2: the request's header blocks, encoded once (see `RequestBlocks`).
    pub h2: crate::protocol::h2::hpack::RequestBlocks,
    /// HTTP/3: the request's frames (HEADERS with its QPACK field section, DATA), encoded once.
    pub h3: Vec<u8>,
    /// HTTP/3: bytes of the field section.
    pub h3_block_bytes: usize,
    /// HTTP/3: bytes of the same fields as HTTP/1.1 text.
    pub h3_raw_bytes: usize,
    /// Index into `Plan::targets`.
    pub target: usize,
    /// Index into `Plan::classes`.
    pub class: usize,
    /// A HEAD request: its response has no body.
    pub head: bool,
    /// Expected body length of a successful response.
    pub expect_body_bytes: Option<u64>,
    /// Expected first bytes of a successful response's body.
    pub expect_body_prefix: Option<Vec<u8>>,
    /// The exact status a response must have (None: any 2xx or 3xx).
    pub expect_status: Option<u16>,
}

/// A replay of a log: its table (shared with every run that reads the same
/// log: `crest_replay::load` caches it) and how it is sent. `Plan::requests`
/// holds one prepared request per table entry, at the entry's index.
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    /// The log's requests.
    pub table: Arc<crest_replay::Table>,
    /// Timed or sessions.
    pub mode: ReplayMode,
    /// How many times faster than logged.
    pub speed: f64,
    /// This engine's share `(k, n)`: logged requests (timed) or sessions with index mod n = k.
    pub part: (u32, u32),
}

/// Everything a worker needs, checked and precomputed.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Servers, by first appearance in the table.
    pub targets: Vec<Target>,
    /// The request table.
    pub requests: Vec<Request>,
    /// Weighted selection over `requests`.
    pub table: AliasTable,
    /// Class names.
    pub classes: Vec<String>,
    /// `pipeline` copies of the only request, written back to back.
    pub batch: Vec<u8>,
    /// Requests per batch.
    pub pipeline: u32,
    /// Reuse connections.
    pub keepalive: bool,
    /// Connections in total.
    pub connections: u32,
    /// Worker threads.
    pub threads: u32,
    /// Connections per client.
    pub connections_per_client: u32,
    /// Run length, if bounded by time.
    pub duration: Option<Duration>,
    /// Requests to issue in total, if bounded by count.
    pub max_requests: Option<u64>,
    /// Offsets from the start between which completions are counted.
    pub window: Option<(Duration, Duration)>,
    /// When each connection sends.
    pub schedule: Schedule,
    /// Largest random wait of a client before its first request.
    pub client_start_delay: Duration,
    /// How long in-flight exchanges may finish after the end.
    pub drain: Duration,
    /// Seed for selection and delays.
    pub seed: u64,
    /// How requests are drawn.
    pub selection: Selection,
    /// Per-request timeout.
    pub timeout: Duration,
    /// TLS verification and resumption.
    pub insecure: bool,
    /// Offer resumption.
    pub tls_resumption: bool,
    /// Nap under load instead of blocking (`nap`).
    pub nap: bool,
    /// Local addresses to bind, round-robin by connection.
    pub source_addrs: Vec<IpAddr>,
    /// Most bytes one read takes (the worker's read buffer).
    pub read_buffer_bytes: usize,
    /// SO_RCVBUF; None leaves it to the kernel.
    pub socket_rcvbuf_bytes: Option<u32>,
    /// Response head limit.
    pub max_header_bytes: usize,
    /// Response body limit.
    pub max_body_bytes: u64,
    /// Absolute start, as Unix seconds.
    pub start_at_unix_s: Option<f64>,
    /// Add a part to the report.
    pub report_part: bool,
    /// Emulated line speed per connection, bits/s.
    pub line_speed_bps: Option<f64>,
    /// How many requests each new connection carries, when drawn.
    pub keepalive_draw: Option<KeepaliveDraw>,
    /// SPECweb99's generator and checks (then `requests` is empty).
    pub specweb99: Option<specweb99::Plan>,
    /// HTTP/2 (None: HTTP/1.x or HTTP/3).
    pub http2: Option<H2Plan>,
    /// HTTP/3 (None: HTTP/1.x or HTTP/2).
    pub http3: Option<H3Plan>,
    /// The request body (HTTP/2 sends it in DATA frames; HTTP/1.x has it in `Request::bytes`).
    pub body: Vec<u8>,
    /// A log replayed in place of a weighted table.
    pub replay: Option<ReplayPlan>,
    /// A HAR's page loads over the table (`super::page`).
    pub(crate) pages: Option<super::page::PagesPlan>,
    /// Scripted sessions in place of a weighted table (then `requests` is empty).
    pub script: Option<ScriptPlan>,
}

/// A script, compiled, and where its steps go: `url`'s server (its `Host`).
#[derive(Debug, Clone)]
pub struct ScriptPlan {
    /// The steps, their templates and finders.
    pub script: Script,
    /// Index into `Plan::targets`.
    pub target: usize,
    /// `Host` header value.
    pub host: String,
}

impl Plan {
    /// Validates `config` and resolves its targets.
    pub fn new(config: &RunConfig) -> Result<Self, ConfigError> {
        let checked = check(config)?;
        let entries = checked.entries;
        let field = match (&config.specweb99, config.requests.is_empty()) {
            (Some(_), _) => "specweb99",
            (None, true) => "url",
            (None, false) => "requests",
        };
        let mut targets: Vec<(String, Target)> = Vec::new();
        let mut target_of = |parsed: &ParsedUrl| -> Result<usize, ConfigError> {
            Ok(match targets.iter().position(|(key, _)| *key == parsed.key) {
                Some(t) => t,
                None => {
                    targets.push((parsed.key.clone(), resolve_target(parsed, field)?));
                    targets.len() - 1
                }
            })
        };
        let specweb99 = match &config.specweb99 {
            Some(sw) => {
                let mut endpoint = |parsed: &ParsedUrl, trim: bool| -> Result<Endpoint, ConfigError> {
                    let path = if trim { parsed.path.trim_end_matches('/') } else { &parsed.path };
                    Ok(Endpoint { target: target_of(parsed)?, host: parsed.host_header.clone(), path: path.into() })
                };
                let site = Site {
                    base: endpoint(&checked.urls[0], true)?,
                    dynamic: endpoint(&checked.urls[1], false)?,
                    cgi: endpoint(&checked.urls[2], false)?,
                    version: config.http_version,
                };
                Some(specweb99::Plan {
                    mix: Mix::new(&sw.request_mix, &sw.class_mix, sw.dirs),
                    site,
                    users: sw.users,
                    first_connection: sw.first_connection,
                })
            }
            None => None,
        };
        let script = match checked.script {
            Some(script) => {
                let base = &checked.urls[0];
                Some(ScriptPlan { script, target: target_of(base)?, host: base.host_header.clone() })
            }
            None => None,
        };
        let mut requests = Vec::with_capacity(entries.len());
        for (entry, parsed) in entries.iter().zip(&checked.urls) {
            let target = target_of(parsed)?;
            let http2 = config.http_version == HttpVersion::Http2;
            let http3 = config.http_version == HttpVersion::Http3;
            let method = entry.method.as_deref().unwrap_or(&config.method);
            let head = crate::protocol::h2::hpack::RequestHead {
                method,
                scheme: if parsed.tls { "https" } else { "http" },
                authority: &parsed.host_header,
                path: &parsed.path,
                headers: &config.headers,
                content_length: config.body.as_ref().map(String::len),
                user_agent: concat!("crest/", env!("CARGO_PKG_VERSION")),
                index_path: entries.len() == 1,
            };
            let h2 = if http2 { crate::protocol::h2::hpack::encode_request(&head) } else { Default::default() };
            let (h3, h3_block_bytes, h3_raw_bytes) = if http3 {
                let section = crate::protocol::h3::qpack::encode_request(&head);
                let body = config.body.as_deref().map_or(&[][..], str::as_bytes);
                (crate::protocol::h3::frame::request(&section.block, body), section.block.len(), section.raw_bytes)
            } else {
                (Vec::new(), 0, 0)
            };
            let bytes = if http2 || http3 {
                Vec::new()
            } else {
                encode_request(&RequestSpec {
                    method,
                    path_and_query: &parsed.path,
                    host: &parsed.host_header,
                    version: config.http_version,
                    keepalive: config.keepalive,
                    headers: &config.headers,
                    body: entry.body.as_deref().or(config.body.as_deref()).map(str::as_bytes),
                })
            };
            requests.push(Request {
                bytes,
                h2,
                h3,
                h3_block_bytes,
                h3_raw_bytes,
                target,
                class: entry.class as usize,
                head: method.eq_ignore_ascii_case("HEAD"),
                expect_body_bytes: entry.expect_body_bytes,
                expect_body_prefix: entry.expect_body_prefix.as_ref().map(|p| p.as_bytes().to_vec()),
                expect_status: entry.expect_status,
            });
        }
        let targets: Vec<Target> = targets.into_iter().map(|(_, t)| t).collect();
        let source_addrs = checked.source_addrs;
        for t in &targets {
            if let Some(bad) = source_addrs.iter().find(|ip| ip.is_ipv4() != t.addr.is_ipv4()) {
                return Err(ConfigError::new(
                    "source_addrs",
                    format!("{{source_addrs}} {bad} is not of the target's address family ({})", t.addr),
                ));
            }
        }
        let schedule = match (config.rate_rps, &checked.replay) {
            (_, Some(replay)) if replay.mode == ReplayMode::Timed => Schedule::timed(replay.speed),
            // With HTTP/2 each stream sends on its own schedule.
            (Some(rate), _) => Schedule::open_loop(rate, config.connections * config.streams.max(1)),
            _ => Schedule::closed_loop(checked.shared.think_time),
        };
        let weights: Vec<f64> = entries.iter().map(|e| e.weight).collect();
        // SPECweb99 draws its own requests: a table of one entry is never drawn from.
        let table = AliasTable::new(if weights.is_empty() { &[1.0] } else { &weights });
        Ok(Self {
            batch: requests.first().map_or_else(Vec::new, |r| r.bytes.repeat(config.pipeline as usize)),
            targets,
            requests,
            table,
            classes: checked.classes,
            pipeline: config.pipeline,
            keepalive: config.keepalive,
            connections: config.connections,
            threads: config.threads,
            connections_per_client: config.connections_per_client,
            duration: checked.shared.duration,
            max_requests: config.max_requests,
            window: checked.shared.window,
            schedule,
            client_start_delay: checked.shared.client_start_delay,
            drain: Duration::from_secs_f64(config.drain_s),
            seed: config.seed,
            selection: config.selection,
            timeout: checked.shared.timeout,
            insecure: config.insecure,
            tls_resumption: config.tls_resumption,
            nap: config.nap,
            source_addrs,
            read_buffer_bytes: config.read_buffer_bytes as usize,
            socket_rcvbuf_bytes: config.socket_rcvbuf_bytes,
            max_header_bytes: config.max_header_bytes as usize,
            max_body_bytes: config.max_body_bytes,
            start_at_unix_s: config.start_at_unix_s,
            report_part: config.report_part,
            line_speed_bps: config.line_speed_bps,
            keepalive_draw: config
                .keepalive_requests
                .map(|range| KeepaliveDraw::new(range, config.keepalive_request_share)),
            specweb99,
            http2: (config.http_version == HttpVersion::Http2).then_some(H2Plan {
                streams: config.streams,
                stream_window: config.h2_stream_window_bytes,
                connection_window: config.h2_connection_window_bytes,
            }),
            http3: (config.http_version == HttpVersion::Http3).then_some(H3Plan {
                streams: config.streams,
                stream_window: config.h2_stream_window_bytes,
                connection_window: config.h2_connection_window_bytes,
            }),
            body: config.body.as_deref().map_or_else(Vec::new, |b| b.as_bytes().to_vec()),
            replay: checked.replay,
            pages: config.pages.as_ref().map(super::page::plan),
            script,
        })
    }

    /// Whether any target speaks TLS.
    pub fn uses_tls(&self) -> bool {
        self.targets.iter().any(|t| t.tls_name.is_some())
    }

    /// The client that connection `index` belongs to.
    pub fn client_of(&self, connection: u32) -> u32 {
        connection / self.connections_per_client
    }

    /// Number of clients.
    pub fn clients(&self) -> u32 {
        self.connections.div_ceil(self.connections_per_client)
    }
}

/// Checks every rule of an HTTP `config` that needs no name resolution and
/// no socket (`crate::validate` picks this or the file runs' gate).
pub(crate) fn validate(config: &RunConfig) -> Result<(), ConfigError> {
    check(config).map(|_| ())
}

/// What validation found out on the way, so `Plan::new` does not parse twice.
struct Checked<'a> {
    shared: Shared,
    entries: std::borrow::Cow<'a, [RequestEntry]>,
    urls: Vec<ParsedUrl>,
    classes: Vec<String>,
    source_addrs: Vec<IpAddr>,
    replay: Option<ReplayPlan>,
    script: Option<Script>,
}

fn check(config: &RunConfig) -> Result<Checked<'_>, ConfigError> {
    let shared = gate::check(config)?;
    check_fields(config)?;
    check_client(config)?;
    if let Some(pages) = &config.pages {
        super::page::check(config, pages)?;
    }
    if let Some(script) = &config.script {
        return check_script(config, script, shared);
    }
    if let Some(replay) = &config.replay {
        return check_replay(config, replay, shared);
    }
    if let Some(sw) = &config.specweb99 {
        let urls = check_specweb99(config, sw)?;
        let source_addrs = gate::source_addrs(config)?;
        let entries = std::borrow::Cow::Owned(Vec::new());
        return Ok(Checked {
            shared,
            entries,
            urls,
            classes: specweb99::class_names(),
            source_addrs,
            replay: None,
            script: None,
        });
    }
    let entries: std::borrow::Cow<'_, [RequestEntry]> = if config.requests.is_empty() {
        std::borrow::Cow::Owned(vec![RequestEntry::to(config.url.clone())])
    } else {
        std::borrow::Cow::Borrowed(&config.requests)
    };
    let classes = if config.classes.is_empty() { vec!["all".to_string()] } else { config.classes.clone() };
    let table = !config.requests.is_empty();
    let mut urls = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        // A table's entries are named by index; a single URL is the `url` key.
        let at = |msg: String| {
            if table {
                ConfigError::new("requests", format!("{{requests}}[{i}]: {msg}"))
            } else {
                ConfigError::new("url", msg)
            }
        };
        if !(entry.weight.is_finite() && entry.weight > 0.0) {
            return Err(at(format!("weight must be > 0 (got {})", entry.weight)));
        }
        if entry.expect_body_prefix.as_ref().is_some_and(|p| p.len() > MAX_BODY_PREFIX) {
            return Err(at(format!("expect_body_prefix is longer than {MAX_BODY_PREFIX} bytes")));
        }
        if entry.method.as_deref().is_some_and(|m| !is_token(m)) {
            return Err(at(format!(
                "invalid method '{}': expected an HTTP token such as GET or POST",
                entry.method.as_deref().unwrap_or_default()
            )));
        }
        if entry.class as usize >= classes.len() {
            return Err(at(format!("class {} is not one of the {} classes", entry.class, classes.len())));
        }
        if entry.body.is_some() && config.body.is_some() {
            return Err(at("a body of its own and {body} conflict: give one of them".to_string()));
        }
        if entry.body.is_some() && matches!(config.http_version, HttpVersion::Http2 | HttpVersion::Http3) {
            return Err(at(
                "a body of its own is sent over HTTP/1.x only: drop it, or set {http_version} to 1.1".into()
            ));
        }
        let parsed = parse_url(&entry.url).map_err(at)?;
        if parsed.tls {
            tls_name(&parsed.host).map_err(at)?;
        }
        urls.push(parsed);
    }
    if config.pipeline > 1 && entries.len() > 1 {
        return Err(ConfigError::new("pipeline", "pipelining ({pipeline}) needs a single request, not a table"));
    }
    if matches!(config.http_version, HttpVersion::Http2 | HttpVersion::Http3) {
        if let Some(other) = urls.iter().find(|u| u.key != urls[0].key) {
            let field = if table { "requests" } else { "url" };
            return Err(ConfigError::new(
                field,
                format!(
                    "HTTP/{} runs send every request on one server's connections: {} and {} differ (scheme, host or port)",
                    version_name(config.http_version),
                    urls[0].key,
                    other.key
                ),
            ));
        }
    }
    if config.http_version == HttpVersion::Http3 {
        if let Some(plain) = urls.iter().find(|u| !u.tls) {
            let field = if table { "requests" } else { "url" };
            return Err(ConfigError::new(
                field,
                format!("HTTP/3 runs over QUIC, which is always encrypted: {} needs https://", plain.key),
            ));
        }
    }
    let source_addrs = gate::source_addrs(config)?;
    Ok(Checked { shared, entries, urls, classes, source_addrs, replay: None, script: None })
}

/// A replay's settings and its log, read (or taken from the reader's cache)
/// here: one prepared entry per distinct logged request, at the origin of
/// `url` (dynamic requests at `dynamic_url` when given).
fn check_replay<'a>(c: &'a RunConfig, r: &Replay, shared: Shared) -> Result<Checked<'a>, ConfigError> {
    let conflict = |field: &'static str, why: &str| {
        Err(ConfigError::new(field, format!("{{replay}} and {{{field}}} conflict: {why}; drop {{{field}}}")))
    };
    if !c.requests.is_empty() {
        return conflict("requests", "the log's requests are the table");
    }
    if c.specweb99.is_some() {
        return conflict("specweb99", "SPECweb99 writes its own requests");
    }
    if c.selection != Selection::Weighted {
        return conflict("selection", "the log says which requests go, in its order");
    }
    if c.rate_rps.is_some() {
        return conflict("rate_rps", "the log's times set the rate (use {replay} speed)");
    }
    if c.think_time_s > 0.0 {
        return conflict("think_time_s", "sessions think for the logged gaps and a timed replay is open loop");
    }
    if c.pipeline > 1 {
        return conflict("pipeline", "logged requests go one at a time");
    }
    if c.keepalive_requests.is_some() {
        return conflict("keepalive_requests", "a timed replay reuses free connections and a session keeps its own");
    }
    if c.line_speed_bps.is_some() {
        return conflict("line_speed_bps", "the log's times pace the requests");
    }
    if c.body.is_some() {
        return conflict("body", "a log holds no request bodies (logged POSTs are sent without one)");
    }
    let names: Vec<String> = crest_replay::CLASSES.iter().map(|c| (*c).to_string()).collect();
    if !c.classes.is_empty() && c.classes != names {
        return conflict("classes", "a replay's classes are the log's request classes");
    }
    if matches!(c.http_version, HttpVersion::Http2 | HttpVersion::Http3) {
        return Err(ConfigError::new(
            "http_version",
            "{replay} sends over HTTP/1.x for now: set {http_version} to 1.1 or 1.0",
        ));
    }
    let [k, n] = r.part;
    if n == 0 || k >= n {
        return Err(ConfigError::new("replay", format!("{{replay}} part [k, n] needs 0 <= k < n (got [{k}, {n}])")));
    }
    if !(r.speed.is_finite() && r.speed > 0.0) {
        return Err(ConfigError::new(
            "replay",
            format!("{{replay}} speed must be > 0 (got {}): 1 is the logged pace, 10 ten times as fast", r.speed),
        ));
    }
    let base = parse_url(&c.url).map_err(|msg| ConfigError::new("url", msg))?;
    if base.tls {
        tls_name(&base.host).map_err(|msg| ConfigError::new("url", msg))?;
    }
    let dynamic = match &r.dynamic_url {
        Some(raw) => {
            let at = |msg: String| ConfigError::new("replay", format!("{{replay}} dynamic_url: {msg}"));
            let parsed = parse_url(raw).map_err(at)?;
            if parsed.tls {
                tls_name(&parsed.host).map_err(at)?;
            }
            Some(parsed)
        }
        None => None,
    };
    let table = crest_replay::load(std::path::Path::new(&r.log), &r.options)
        .map_err(|e| ConfigError::new("replay", e.to_string()))?;
    let class_name = |class: u32| crest_replay::CLASSES.get(class as usize).copied().unwrap_or_default();
    let mut entries = Vec::with_capacity(table.entries.len());
    let mut urls = Vec::with_capacity(table.entries.len());
    for (i, e) in table.entries.iter().enumerate() {
        if !is_token(&e.method) {
            return Err(ConfigError::new(
                "replay",
                format!(
                    "{{replay}} {}: logged method '{}' of '{}' (entry {i}) is not an HTTP token",
                    r.log, e.method, e.target
                ),
            ));
        }
        let class = class_name(e.class);
        let entry = match &dynamic {
            // A site from the log has no programs and no redirects: the dynamic
            // page answers those with the logged size (as a mix of the log does).
            Some(d) if matches!(class, "dynamic" | "redirect" | "server-error") => {
                let sep = if d.path.contains('?') { '&' } else { '?' };
                urls.push(ParsedUrl { path: format!("{}{sep}size={}", d.path, e.body_bytes), ..d.clone() });
                RequestEntry {
                    class: e.class,
                    expect_body_bytes: r.expect_logged_status.then_some(e.body_bytes),
                    expect_status: r.expect_logged_status.then_some(200),
                    ..RequestEntry::to(String::new())
                }
            }
            _ => {
                urls.push(ParsedUrl { path: origin_form(&e.target), ..base.clone() });
                // Against a site from the log, a logged file must have its logged size.
                let sized = dynamic.is_some() && e.status == 200 && e.method == "GET" && class.starts_with("static-");
                RequestEntry {
                    class: e.class,
                    expect_body_bytes: (r.expect_logged_status && sized).then_some(e.body_bytes),
                    method: Some(e.method.clone()),
                    // A logged 304 answered a conditional request, which crest does not send.
                    expect_status: (r.expect_logged_status && e.status != 304).then_some(e.status),
                    ..RequestEntry::to(String::new())
                }
            }
        };
        entries.push(entry);
    }
    let source_addrs = gate::source_addrs(c)?;
    let replay = ReplayPlan { table, mode: r.mode, speed: r.speed, part: (k, n) };
    Ok(Checked {
        shared,
        entries: std::borrow::Cow::Owned(entries),
        urls,
        classes: names,
        source_addrs,
        replay: Some(replay),
        script: None,
    })
}

/// A script's settings: its steps compiled here (templates, regular
/// expressions, JSON pointers), all sent to `url`'s server over HTTP/1.x.
fn check_script<'a>(c: &'a RunConfig, s: &ScriptConfig, shared: Shared) -> Result<Checked<'a>, ConfigError> {
    let conflict = |field: &'static str, why: &str| {
        Err(ConfigError::new(field, format!("{{script}} and {{{field}}} conflict: {why}; drop {{{field}}}")))
    };
    if !c.requests.is_empty() {
        return conflict("requests", "a script writes its own requests, one per step");
    }
    if c.specweb99.is_some() {
        return conflict("specweb99", "SPECweb99 writes its own requests");
    }
    if c.replay.is_some() {
        return conflict("replay", "a replay sends the log's requests");
    }
    if c.selection != Selection::Weighted {
        return conflict("selection", "each virtual user plays the steps in order");
    }
    if c.pipeline > 1 {
        return conflict("pipeline", "a step waits for the previous one's response");
    }
    if c.body.is_some() {
        return conflict("body", "each step has its own body");
    }
    let names = Script::class_names(s);
    if !c.classes.is_empty() && c.classes != names {
        return conflict("classes", "a script's classes are its steps' names");
    }
    if matches!(c.http_version, HttpVersion::Http2 | HttpVersion::Http3) {
        return Err(ConfigError::new(
            "http_version",
            "a {script} is sent over HTTP/1.x for now: set {http_version} to 1.1 or 1.0",
        ));
    }
    let script =
        Script::compile(s, c.http_version).map_err(|e| ConfigError::new("script", format!("{{script}} {e}")))?;
    let base = parse_url(&c.url).map_err(|msg| ConfigError::new("url", msg))?;
    if base.tls {
        tls_name(&base.host).map_err(|msg| ConfigError::new("url", msg))?;
    }
    let source_addrs = gate::source_addrs(c)?;
    let entries = std::borrow::Cow::Owned(Vec::new());
    Ok(Checked { shared, entries, urls: vec![base], classes: names, source_addrs, replay: None, script: Some(script) })
}

/// A logged target as a request line's origin form: an absolute-form target
/// (a proxy's log) loses its scheme and authority, and any byte a request
/// line may not carry (controls, spaces, non-ASCII) is percent-encoded, so
/// what was logged is what is sent wherever the log allows it.
fn origin_form(target: &str) -> String {
    let rest = ["http://", "https://"]
        .iter()
        .find_map(|scheme| {
            target.get(..scheme.len()).filter(|head| head.eq_ignore_ascii_case(scheme)).map(|_| &target[scheme.len()..])
        })
        .map(|after| after.find('/').map_or("/", |slash| &after[slash..]));
    let target = rest.unwrap_or(target);
    let mut out = String::with_capacity(target.len());
    for b in target.bytes() {
        if (0x21..=0x7e).contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The client-emulation settings: line speed and keep-alive counts.
fn check_client(c: &RunConfig) -> Result<(), ConfigError> {
    let fail = |field: &'static str, msg: String| Err(ConfigError::new(field, msg));
    if let Some(bps) = c.line_speed_bps {
        if !(bps.is_finite() && bps >= 1.0) {
            return fail("line_speed_bps", format!("{{line_speed_bps}} must be at least 1 bit/s (got {bps})"));
        }
    }
    let share = c.keepalive_request_share;
    if !(0.0..=1.0).contains(&share) {
        return fail(
            "keepalive_request_share",
            format!("{{keepalive_request_share}} must be a share of requests in [0, 1] (got {share})"),
        );
    }
    let Some([min, max]) = c.keepalive_requests else {
        if share != 1.0 {
            return fail(
                "keepalive_request_share",
                "{keepalive_request_share} needs {keepalive_requests}: the requests per keep-alive connection".into(),
            );
        }
        return Ok(());
    };
    if min == 0 || min > max {
        return fail(
            "keepalive_requests",
            format!("{{keepalive_requests}} must be [min, max] requests with 1 <= min <= max (got [{min}, {max}])"),
        );
    }
    if !c.keepalive {
        return fail(
            "keepalive_requests",
            "{keepalive_requests} needs {keepalive}: without it every connection carries one request".into(),
        );
    }
    if c.pipeline > 1 {
        return fail(
            "keepalive_requests",
            "{keepalive_requests} and {pipeline} conflict: a connection's count is of requests one at a time".into(),
        );
    }
    Ok(())
}

/// The SPECweb99 settings; its three URLs parsed (base, dynamic, cgi).
fn check_specweb99(c: &RunConfig, sw: &Specweb99) -> Result<Vec<ParsedUrl>, ConfigError> {
    let fail = |field: &'static str, msg: &str| Err(ConfigError::new(field, msg.to_string()));
    let conflict = |field: &'static str, what: &str| {
        fail(field, &format!("{{specweb99}} writes its own requests: drop {{{field}}} ({what})"))
    };
    if !c.requests.is_empty() {
        return conflict("requests", "a request table");
    }
    if !c.classes.is_empty() {
        return conflict("classes", "the classes are SPECweb99's 20, op/classC");
    }
    if c.body.is_some() {
        return conflict("body", "POST bodies are SPECweb99's form");
    }
    if !c.headers.is_empty() {
        return conflict("headers", "extra request headers");
    }
    if c.method != "GET" {
        return conflict("method", "the method follows the request kind");
    }
    if c.pipeline > 1 {
        return conflict("pipeline", "requests go one at a time");
    }
    if c.selection != Selection::Weighted {
        return conflict("selection", "requests are drawn by SPECweb99's mix");
    }
    if c.connections_per_client != 1 {
        return fail(
            "connections_per_client",
            "{specweb99} scores each connection as a client: {connections_per_client} must be 1",
        );
    }
    if sw.dirs == 0 || sw.dirs > MAX_SPECWEB99_DIRS {
        return fail("specweb99", &format!("{{specweb99}} dirs must be 1 to {MAX_SPECWEB99_DIRS} (got {})", sw.dirs));
    }
    if sw.users == 0 {
        return fail("specweb99", "{specweb99} users must be at least 1 (got 0)");
    }
    let shares = |name: &str, mix: &[f64]| {
        if mix.iter().all(|w| w.is_finite() && *w >= 0.0) && mix.iter().sum::<f64>() > 0.0 {
            Ok(())
        } else {
            Err(ConfigError::new(
                "specweb99",
                format!("{{specweb99}} {name} must be shares >= 0 with a positive sum (got {mix:?})"),
            ))
        }
    };
    shares("request_mix", &sw.request_mix)?;
    shares("class_mix", &sw.class_mix)?;
    [("base_url", &sw.base_url), ("dynamic_url", &sw.dynamic_url), ("cgi_url", &sw.cgi_url)]
        .into_iter()
        .map(|(name, raw)| {
            let at = |msg: String| ConfigError::new("specweb99", format!("{{specweb99}} {name}: {msg}"));
            let parsed = parse_url(raw).map_err(at)?;
            if parsed.path.contains('?') {
                return Err(at(format!("'{raw}' has a query; give the path only")));
            }
            if parsed.tls {
                tls_name(&parsed.host).map_err(at)?;
            }
            Ok(parsed)
        })
        .collect()
}

#[derive(Clone)]
struct ParsedUrl {
    key: String,
    tls: bool,
    host: String,
    port: u16,
    host_header: String,
    path: String,
}

/// Messages without a field: the caller says which key the URL came from.
fn parse_url(raw: &str) -> Result<ParsedUrl, String> {
    let url =
        url::Url::parse(raw).map_err(|e| format!("invalid URL '{raw}' ({e}): expected http://host[:port]/path"))?;
    let tls = match url.scheme() {
        "http" => false,
        "https" => true,
        other => return Err(format!("unsupported URL scheme '{other}' in '{raw}': use http:// or https://")),
    };
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| format!("URL '{raw}' has no host: expected http://host[:port]/path"))?
        .to_string();
    let port = url.port_or_known_default().unwrap_or(if tls { 443 } else { 80 });
    let host_header = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.clone(),
    };
    let mut path = url.path().to_string();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    Ok(ParsedUrl { key: format!("{}://{host}:{port}", url.scheme()), tls, host, port, host_header, path })
}

fn tls_name(host: &str) -> Result<ServerName<'static>, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(bare.to_string()).map_err(|_| format!("invalid TLS server name '{bare}'"))
}

fn resolve_target(url: &ParsedUrl, field: &'static str) -> Result<Target, ConfigError> {
    let addr = resolve(&url.host, url.port).map_err(|msg| ConfigError::new(field, msg))?;
    let tls_name = match url.tls {
        true => Some(tls_name(&url.host).map_err(|msg| ConfigError::new(field, msg))?),
        false => None,
    };
    Ok(Target { addr, tls_name })
}

fn check_fields(c: &RunConfig) -> Result<(), ConfigError> {
    let fail = |field: &'static str, msg: String| Err(ConfigError::new(field, msg));
    if !is_token(&c.method) {
        return fail(
            "method",
            format!("invalid {{method}} '{}': expected an HTTP token such as GET or POST", c.method),
        );
    }
    for (name, value) in &c.headers {
        if !is_token(name) {
            return fail(
                "headers",
                format!("invalid {{headers}} name '{name}': expected 'Name: value', e.g. 'Accept: */*'"),
            );
        }
        if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return fail(
                "headers",
                format!("invalid {{headers}} value of '{name}': it must not contain CR, LF or NUL"),
            );
        }
    }
    if !(c.drain_s.is_finite() && (0.0..=3600.0).contains(&c.drain_s)) {
        return fail("drain_s", format!("{{drain_s}} must be 0 to 3600 s (got {})", c.drain_s));
    }
    if c.requests.is_empty() && c.url.is_empty() && c.specweb99.is_none() {
        return fail("url", "give {url} or {requests}".into());
    }
    check_http2(c)?;
    if let Some(rate) = c.rate_rps {
        if !(rate.is_finite() && rate > 0.0) {
            return fail("rate_rps", format!("{{rate_rps}} must be > 0 requests/s (got {rate})"));
        }
        // Each connection (stream) sends every `connections × streams / rate` seconds.
        let senders = f64::from(c.connections) * f64::from(c.streams.max(1));
        if senders / rate > crate::gate::MAX_SPAN_S {
            return fail(
                "rate_rps",
                format!("{{rate_rps}} must leave less than a year between a connection's requests (got {rate})"),
            );
        }
        if c.think_time_s > 0.0 {
            return fail(
                "think_time_s",
                "{rate_rps} and {think_time_s} conflict: think time is a closed-loop setting and a rate is \
                 open loop; drop one of them"
                    .into(),
            );
        }
        if c.pipeline > 1 {
            return fail(
                "pipeline",
                "{rate_rps} and {pipeline} conflict: pipelining is a closed-loop setting and a rate is open \
                 loop; drop one of them"
                    .into(),
            );
        }
    }
    if c.pipeline == 0 || c.pipeline > MAX_PIPELINE {
        return fail("pipeline", format!("{{pipeline}} must be 1 to {MAX_PIPELINE} (got {})", c.pipeline));
    }
    if c.pipeline > 1 && (c.http_version != HttpVersion::Http11 || !c.keepalive) {
        return fail(
            "pipeline",
            format!(
                "pipelining ({{pipeline}} {}) needs HTTP/1.1 with keep-alive: drop {{pipeline}} or use \
                 {{http_version}} 1.1 with {{keepalive}}",
                c.pipeline
            ),
        );
    }
    if c.read_buffer_bytes == 0 || c.read_buffer_bytes > MAX_READ_BUFFER_BYTES {
        return fail(
            "read_buffer_bytes",
            format!(
                "{{read_buffer_bytes}} must be 1 B to {MAX_READ_BUFFER_BYTES} B (16 MiB) (got {})",
                c.read_buffer_bytes
            ),
        );
    }
    if c.socket_rcvbuf_bytes == Some(0) {
        return fail(
            "socket_rcvbuf_bytes",
            "{socket_rcvbuf_bytes} must be at least 1 byte (got 0); leave it out for the kernel's default".into(),
        );
    }
    if c.max_header_bytes < 256 {
        return fail("max_header_bytes", format!("{{max_header_bytes}} must be >= 256 (got {})", c.max_header_bytes));
    }
    Ok(())
}

/// RFC 9110 token: what a method or a header name may be.
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let mut addrs =
        (bare, port).to_socket_addrs().map_err(|e| format!("cannot resolve host '{bare}': {e}; check the URL"))?;
    addrs.next().ok_or_else(|| format!("host '{bare}' has no address; check the URL"))
}

fn version_name(v: HttpVersion) -> &'static str {
    match v {
        HttpVersion::Http10 => "1.0",
        HttpVersion::Http11 => "1.1",
        HttpVersion::Http2 => "2",
        HttpVersion::Http3 => "3",
    }
}

/// The rules of HTTP/2 and HTTP/3 runs and of `streams`.
fn check_http2(c: &RunConfig) -> Result<(), ConfigError> {
    let fail = |field: &'static str, msg: String| Err(ConfigError::new(field, msg));
    if !matches!(c.http_version, HttpVersion::Http2 | HttpVersion::Http3) {
        if c.streams != 1 {
            return fail(
                "streams",
                format!(
                    "{{streams}} ({}) needs HTTP/2 or HTTP/3: set {{http_version}} to 2 or 3, or drop {{streams}}",
                    c.streams
                ),
            );
        }
        return Ok(());
    }
    let version = version_name(c.http_version);
    if c.streams == 0 || c.streams > MAX_STREAMS {
        return fail("streams", format!("{{streams}} must be 1 to {MAX_STREAMS} per connection (got {})", c.streams));
    }
    for (field, bytes) in [
        ("h2_stream_window_bytes", c.h2_stream_window_bytes),
        ("h2_connection_window_bytes", c.h2_connection_window_bytes),
    ] {
        if !(1..=crate::protocol::h2::frame::MAX_WINDOW).contains(&bytes) {
            return fail(field, format!("{{{field}}} must be 1 to 2^31-1 bytes (got {bytes})"));
        }
    }
    let conflict =
        |field: &'static str, why: &str| fail(field, format!("{{{field}}} does not apply to HTTP/{version}: {why}"));
    if c.pipeline > 1 {
        return conflict("pipeline", "use {streams} for concurrent requests on a connection");
    }
    if !c.keepalive {
        return conflict("keepalive", "its connections are persistent; drop it or use HTTP/1.1");
    }
    if c.keepalive_requests.is_some() {
        return conflict("keepalive_requests", "a connection carries streams until the run or the server ends it");
    }
    if c.line_speed_bps.is_some() {
        return conflict("line_speed_bps", "emulated line speeds pace HTTP/1.x connections only; use --network");
    }
    if c.specweb99.is_some() {
        return conflict("specweb99", "SPECweb99's client speaks HTTP/1.x; use HTTP/1.1");
    }
    Ok(())
}
