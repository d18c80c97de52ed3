//! `RunConfig`: what a caller asks of one run, exactly as it crosses the
//! binding (serde, unknown keys rejected). It holds plain values with units
//! in their names; `plan::Plan::new` is the single gate that validates it.

use serde::Deserialize;

/// A password as it crosses the binding: `{:?}` shows that one is there,
/// never what it is, so no debug print, panic message or log of a config
/// carries it (crest.secrets.Secret is its Python side).
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// The password itself, for the one place that needs it (NTLM's key).
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Self(s.to_string())
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<hidden>)")
    }
}

/// HTTP version spoken on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub enum HttpVersion {
    /// HTTP/1.0: close after each response unless keep-alive is negotiated.
    #[serde(rename = "1.0")]
    Http10,
    /// HTTP/1.1: persistent connections by default.
    #[serde(rename = "1.1")]
    #[default]
    Http11,
    /// HTTP/2: h2 by ALPN over TLS, h2c with prior knowledge over TCP;
    /// `streams` concurrent requests per connection.
    #[serde(rename = "2")]
    Http2,
    /// HTTP/3: QUIC (TLS 1.3, ALPN h3) over UDP, https URLs only;
    /// `streams` concurrent requests per connection.
    #[serde(rename = "3")]
    Http3,
}

/// How requests are drawn from the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// Independently by weight, with replacement.
    #[default]
    Weighted,
    /// Every entry exactly once, in a shuffled order (weights ignored); the
    /// run ends when all are sent (Zeus' non-cached test: nothing is
    /// requested twice, so nothing is served from a cache).
    Once,
}

/// One entry of a weighted request table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestEntry {
    /// Absolute URL; entries may name different targets (e.g. https for SSL classes).
    pub url: String,
    /// Relative share (> 0); shares are normalised over the table.
    pub weight: f64,
    /// Index into `RunConfig::classes`.
    #[serde(default)]
    pub class: u32,
    /// Expected body length of a successful response; a different length is a validation error.
    #[serde(default)]
    pub expect_body_bytes: Option<u64>,
    /// Expected first bytes of a successful response's body (a content
    /// check); a different start is a validation error.
    #[serde(default)]
    pub expect_body_prefix: Option<String>,
    /// This entry's method (None: the run's `method`).
    #[serde(default)]
    pub method: Option<String>,
    /// The response must have exactly this status, else it is a `status`
    /// error, whatever the status (a logged 404 answered 404 is a success);
    /// None: a 2xx or 3xx status is a success.
    #[serde(default)]
    pub expect_status: Option<u16>,
    /// This entry's request body, sent with its `Content-Length` (None: the
    /// run's `body`); HTTP/1.x only (a HAR's recorded POST bodies).
    #[serde(default)]
    pub body: Option<String>,
}

impl RequestEntry {
    /// An entry for `url` of weight 1 in class 0 that expects nothing in
    /// particular and sends the run's method and body; callers set the rest.
    pub fn to(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            weight: 1.0,
            class: 0,
            expect_body_bytes: None,
            expect_body_prefix: None,
            method: None,
            expect_status: None,
            body: None,
        }
    }
}

/// How a replay sends a log's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ReplayMode {
    /// Each logged request at its logged offset ÷ `speed` from the run's
    /// start, open loop: latency counts from that intended time, and the
    /// number of connections bounds how many are in flight.
    #[default]
    Timed,
    /// Each connection is a virtual user that plays whole sessions back to
    /// back (on a new connection each), with the logged gap to a session's
    /// next request (÷ `speed`) as think time after each response.
    Sessions,
}

/// A replay of an access log in place of `requests`: one prepared request
/// per distinct logged request, sent from the log's table (crest_replay).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// The log's path.
    pub log: String,
    /// How the log is read (format, sessions).
    #[serde(default)]
    pub options: crest_replay::Options,
    /// Timed or sessions.
    #[serde(default)]
    pub mode: ReplayMode,
    /// How many times faster than logged (10: ten times as fast); > 0.
    #[serde(default = "default_speed")]
    pub speed: f64,
    /// This engine's share `[k, n]` when a fan-out splits the log over n
    /// engines: timed takes logged requests i with i mod n = k, sessions
    /// takes sessions s with s mod n = k.
    #[serde(default = "default_part")]
    pub part: [u32; 2],
    /// Dynamic, redirect and server-error requests go to this URL with
    /// `?size=N` (the logged body size) instead of their logged target,
    /// expecting a 200 of N bytes: the dynamic page of a target serving a
    /// site `crest fileset from-log` wrote (which has no programs and no
    /// redirects); a logged static 200 must then have its logged size too.
    #[serde(default)]
    pub dynamic_url: Option<String>,
    /// Each response must have the status its request was logged with (a
    /// logged 304, the answer to a conditional request crest does not send,
    /// is judged by the usual rule).
    #[serde(default = "default_true")]
    pub expect_logged_status: bool,
}

fn default_speed() -> f64 {
    1.0
}

fn default_part() -> [u32; 2] {
    [0, 1]
}

fn default_true() -> bool {
    true
}

/// Page loads (a HAR recording): the pages every client loads in turn.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pages {
    /// The pages, in the order a client loads them (client c begins at page c mod pages).
    pub pages: Vec<PageEntry>,
    /// Pause after a page has loaded before the client loads the next.
    #[serde(default)]
    pub think_s: f64,
}

/// One page: its class (whose latency is the page load time) and its requests.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageEntry {
    /// The page's name (its class is named for it by the caller).
    pub name: String,
    /// Index into `RunConfig::classes`: each load is a completion of it.
    pub class: u32,
    /// Indices into `RunConfig::requests`, the document first, then in the order the browser started them.
    pub entries: Vec<u32>,
}

/// SPECweb99's client (reference specweb99.md §1.4–1.7, §2, §3.2–3.4): each
/// request is drawn and written by the engine (replacing `requests`), and each
/// response is checked against the file asked for. The 20 classes are fixed,
/// `"{op}/class{c}"` for op in static, dynamic, cgi, cad, post and c in 0..3
/// (index op×4 + c); one connection per client, so client scores are per
/// connection (what SPECweb99 judges for conformance).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Specweb99 {
    /// Static files are at `base_url + "/file_set/dirNNNNN/classC_F"`.
    pub base_url: String,
    /// Standard dynamic GET, custom-ad (CAD) GET and POST go here; GETs name
    /// the file as the query string (`?/file_set/...`).
    pub dynamic_url: String,
    /// The CGI variant of the standard dynamic GET.
    pub cgi_url: String,
    /// Directories in the file set (Zipf α=1 over them, directory 0 the most popular); ≥ 1.
    pub dirs: u32,
    /// Rows of the server's User.Personality (its `maxload`); cookies name
    /// user `10000 + (global connection index mod users)`; ≥ 1.
    pub users: u32,
    /// Global index of this engine's connection 0: a cluster splits the
    /// connections over machines, and POST's `client=` and the cookies
    /// number connections globally.
    #[serde(default)]
    pub first_connection: u32,
    /// Shares of static GET, dynamic GET, CGI GET, CAD GET and POST
    /// (normalised; SPECweb99's required mix by default).
    #[serde(default = "default_request_mix")]
    pub request_mix: [f64; 5],
    /// Shares of file classes 0–3 (normalised; SPECweb99's by default).
    #[serde(default = "default_class_mix")]
    pub class_mix: [f64; 4],
}

fn default_request_mix() -> [f64; 5] {
    [0.70, 0.1245, 0.0015, 0.126, 0.048]
}

fn default_class_mix() -> [f64; 4] {
    [0.35, 0.50, 0.14, 0.01]
}

/// The read buffer unless one is asked for: wrk's 8 KiB would cost several
/// reads per large response; 64 KiB takes most responses in one or two.
pub const DEFAULT_READ_BUFFER_BYTES: u32 = 64 * 1024;

/// One run of the engine. Defaults follow wrk where wrk has one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// `http://` or `https://` URL every request goes to.
    pub url: String,
    /// Request method, sent as given (upper-case it yourself).
    pub method: String,
    /// Extra request headers, in order.
    pub headers: Vec<(String, String)>,
    /// Request body; `Content-Length` is added when present.
    pub body: Option<String>,
    /// Wire version.
    pub http_version: HttpVersion,
    /// Reuse connections; false opens a new TCP connection per request.
    pub keepalive: bool,
    /// Requests written back to back on a connection before reading (1.1 keep-alive only).
    pub pipeline: u32,
    /// HTTP/2 and HTTP/3: concurrent streams per connection (h2load's -m); each
    /// stream is one closed-loop user (or one open-loop sender). 1 with HTTP/1.x.
    pub streams: u32,
    /// HTTP/2: the receive window of each stream (SETTINGS_INITIAL_WINDOW_SIZE);
    /// HTTP/3: QUIC's stream receive window.
    pub h2_stream_window_bytes: u32,
    /// HTTP/2: the receive window of each connection; HTTP/3: QUIC's connection receive window.
    pub h2_connection_window_bytes: u32,
    /// Concurrent connections (closed loop: virtual users).
    pub connections: u32,
    /// Worker threads, each with its own event loop; at most `connections`.
    pub threads: u32,
    /// Stop after this many seconds (None: stop by `max_requests` only).
    pub duration_s: Option<f64>,
    /// Stop after issuing this many requests in total.
    pub max_requests: Option<u64>,
    /// Open loop at this total rate; None is a closed loop.
    pub rate_rps: Option<f64>,
    /// Closed loop: pause after each response before the next request.
    pub think_time_s: f64,
    /// Per request, from its start (including connect and TLS) to the last byte.
    pub timeout_s: f64,
    /// Accept any TLS certificate (self-signed targets).
    pub insecure: bool,
    /// Offer TLS session resumption on new connections.
    pub tls_resumption: bool,
    /// Under load, a worker with nothing to do naps briefly instead of
    /// blocking on its sockets, so the server is not made to wake it for each
    /// burst it writes; a timing then reads at most 2% long from p5 up (see `nap`).
    /// False: always block.
    pub nap: bool,
    /// Local addresses to bind outgoing connections to, round-robin.
    pub source_addrs: Vec<String>,
    /// Most bytes taken from a connection by one read (WebBench's "receive
    /// buffer": the buffer the client reads into). Each worker holds one
    /// buffer of this size; responses are parsed out of it at once.
    pub read_buffer_bytes: u32,
    /// SO_RCVBUF for each connection, the kernel's socket receive buffer
    /// (None: left to the kernel, which sizes and auto-tunes it).
    pub socket_rcvbuf_bytes: Option<u32>,
    /// Largest response head accepted before it counts as a parse error.
    pub max_header_bytes: u32,
    /// Largest response body accepted before it counts as a parse error.
    pub max_body_bytes: u64,
    /// Start at this Unix time (seconds) instead of at once; lets separate
    /// engines start together.
    pub start_at_unix_s: Option<f64>,
    /// Weighted request table; empty means every request goes to `url`.
    pub requests: Vec<RequestEntry>,
    /// Names of request classes, indexed by `RequestEntry::class`.
    pub classes: Vec<String>,
    /// Connections per client (WebBench's threads per client); client i owns
    /// connections i·k … i·k+k−1 and gets its own score.
    pub connections_per_client: u32,
    /// Count responses, bytes, latency and scores only when they complete in
    /// [start, end) seconds from the start; the timeline counts everything.
    pub window_s: Option<[f64; 2]>,
    /// Each client waits a random time up to this before its first request.
    pub client_start_delay_s: f64,
    /// After `duration_s`, wait up to this long for the exchanges still in
    /// flight (nothing new is sent); they count when the window reaches past
    /// the end. 0 drops them, as wrk does.
    pub drain_s: f64,
    /// Seed for request selection and start delays.
    pub seed: u64,
    /// How requests are drawn from the table.
    pub selection: Selection,
    /// Add the run's results to the report as a part (`RunReport::part`):
    /// what `merge_parts` merges exactly with other machines' parts.
    pub report_part: bool,
    /// Emulated line speed of each connection, bits/s (SPECweb99's
    /// USER_LINE_SPEED): a connection begins its next exchange no earlier
    /// than its first begin + 8 × (bytes it has received so far) / this.
    /// Combined with think time or an open loop by taking the later time.
    pub line_speed_bps: Option<f64>,
    /// [min, max] requests per keep-alive connection (inclusive, uniform):
    /// each new connection draws whether it is kept alive (see
    /// `keepalive_request_share`) and if so how many requests it carries;
    /// otherwise it carries one. After its count the client closes it
    /// gracefully. Needs `keepalive`.
    pub keepalive_requests: Option<[u32; 2]>,
    /// Share of requests (not connections) that travel on keep-alive
    /// connections, in [0, 1]: a connection is kept alive with probability
    /// s / (m(1−s) + s) for mean count m (SPECweb99: 0.70 with 5–15 requests,
    /// so about 19 % of connections).
    pub keepalive_request_share: f64,
    /// SPECweb99's request generator and response checks in place of `requests`.
    pub specweb99: Option<Specweb99>,
    /// A file-operation run in place of HTTP: each connection is one dbench
    /// client replaying this loadfile against `url`, `file:///DIR` (a local
    /// or mounted directory, dbench's fileio) or `smb://USER@HOST[:PORT]/SHARE`.
    pub loadfile: Option<Loadfile>,
    /// Replay an access log in place of `requests` (HTTP/1.x).
    pub replay: Option<Replay>,
    /// A HAR's page loads: each client (its `connections_per_client`
    /// connections, or one connection's streams) loads these pages of
    /// `requests` in turn, as a browser does (`http::page`).
    pub pages: Option<Pages>,
    /// Scripted sessions in place of `requests` (HTTP/1.x): each connection
    /// a virtual user playing the steps in order (`crate::script`).
    pub script: Option<ScriptConfig>,
}

/// A script as it crosses the binding (`RunConfig::script`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptConfig {
    /// The steps, in the order each virtual user plays them.
    pub steps: Vec<StepConfig>,
    /// Names of the CSV's columns (its header row).
    #[serde(default)]
    pub variables: Vec<String>,
    /// The CSV's rows: virtual user i (the run's connection i, counted from
    /// `first_user`) takes row i mod rows.
    #[serde(default)]
    pub users: Vec<Vec<String>>,
    /// Global index of this engine's connection 0, when a fan-out splits the
    /// connections over engines (each user keeps its own row).
    #[serde(default)]
    pub first_user: u32,
}

/// One step as it crosses the binding.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// Its class name in the results.
    pub name: String,
    /// Request method.
    #[serde(default = "default_method")]
    pub method: String,
    /// Origin-form target (template), starting with `/`.
    pub path: String,
    /// Extra request headers (templates for the values).
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Request body (template); sent with `Content-Length`.
    #[serde(default)]
    pub body: Option<String>,
    /// Pause after its response before the next step.
    #[serde(default)]
    pub think_s: f64,
    /// The response must have exactly this status (None: any 2xx or 3xx).
    #[serde(default)]
    pub expect_status: Option<u16>,
    /// Values taken from its response for later steps.
    #[serde(default)]
    pub extract: Vec<ExtractConfig>,
}

fn default_method() -> String {
    "GET".into()
}

/// One extraction as it crosses the binding: exactly one of `regex` and `json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractConfig {
    /// The variable it sets.
    pub name: String,
    /// A regular expression over the body: its first group, or the whole match.
    #[serde(default)]
    pub regex: Option<String>,
    /// A JSON pointer into the body.
    #[serde(default)]
    pub json: Option<String>,
}

/// A file-operation run (dbench's loadfile, reference §4.5–4.6).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Loadfile {
    /// Path of the loadfile (dbench 4's format; Debian's dbench installs
    /// /usr/share/dbench/client.txt).
    pub path: String,
    /// The SMB user's password (smb:// only); it never appears in a report.
    #[serde(default)]
    pub password: Option<Secret>,
    /// At the end, delete each client's workspace (`clients/client<id>`) and
    /// then `clients` if empty: NetBench's Save Workspace = No.
    #[serde(default)]
    pub cleanup: bool,
    /// dbench id of this engine's connection 0: a cluster or a client
    /// network splits the clients over engines, and every client keeps its
    /// own `clients/client<id>` tree on the shared target.
    #[serde(default)]
    pub first_client: u32,
    /// Which operations of a `file:///` run look their path up first.
    #[serde(default)]
    pub resolve_names: ResolveNames,
}

/// Which fileio operations look their path up before they run. dbench's
/// fileio simulates the name resolution a Samba server does for every path
/// it is sent (a stat, and when the name is missing a case-insensitive scan
/// of its directory); that work is part of what dbench's MB/s measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResolveNames {
    /// Only the operations that are a lookup (QUERY_PATH_INFORMATION, a
    /// FIND_FIRST of a plain name); the others make the kernel's call alone.
    #[default]
    Queries,
    /// As dbench: NTCreateX, Unlink, Mkdir, Rmdir, both names of a Rename
    /// and FIND_FIRST look their path up too.
    EveryPath,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            url: String::new(),
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
            http_version: HttpVersion::Http11,
            keepalive: true,
            pipeline: 1,
            streams: 1,
            // h2load's defaults (2^30 − 1): flow control never holds a response back unless asked.
            h2_stream_window_bytes: (1 << 30) - 1,
            h2_connection_window_bytes: (1 << 30) - 1,
            connections: 10,
            threads: 1,
            duration_s: None,
            max_requests: None,
            rate_rps: None,
            think_time_s: 0.0,
            timeout_s: 10.0,
            insecure: false,
            tls_resumption: true,
            nap: true,
            source_addrs: Vec::new(),
            read_buffer_bytes: DEFAULT_READ_BUFFER_BYTES,
            socket_rcvbuf_bytes: None,
            max_header_bytes: 64 * 1024,
            max_body_bytes: 1 << 30,
            start_at_unix_s: None,
            requests: Vec::new(),
            classes: Vec::new(),
            connections_per_client: 1,
            window_s: None,
            client_start_delay_s: 0.0,
            drain_s: 0.0,
            seed: 0,
            selection: Selection::Weighted,
            report_part: false,
            line_speed_bps: None,
            keepalive_requests: None,
            keepalive_request_share: 1.0,
            specweb99: None,
            loadfile: None,
            replay: None,
            pages: None,
            script: None,
        }
    }
}
