//! Page loads (`RunConfig.pages`, a HAR recording): each client of a worker
//! is a browser whose connections load the pages in turn. The document
//! goes first and alone; once it is answered, each free connection of the
//! client takes the page's next request; when every request of the page is
//! answered (or failed), the page's load time (the document's begin to the
//! last response) is one completion of the page's class, and after the think
//! time the client loads the next page. A connection with nothing to send
//! parks until a sibling's answer gives it work. Sans-IO: the slots tell it
//! (through `Ctx`'s page methods) what they begin and what ends, and it says
//! what to send and whom to wake; it reads no clock and allocates only when
//! the worker starts.

use std::time::{Duration, Instant};

use crate::config::{HttpVersion, Pages, RunConfig, Selection};
use crate::error::ConfigError;
use crate::results::stats::Stats;

/// The most connections a browser (client) has: a parked set is one `u64`.
pub const MAX_PAGE_CONNECTIONS: u32 = 64;

/// One page of the plan: its class and its requests (indices into the
/// run's request table), the document first.
#[derive(Debug, Clone)]
pub(crate) struct PagePlan {
    pub class: usize,
    pub entries: Box<[u32]>,
}

/// The pages every client loads in turn, and the pause after each.
#[derive(Debug, Clone)]
pub(crate) struct PagesPlan {
    pub pages: Vec<PagePlan>,
    pub think: Duration,
}

/// What a connection does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Send this table entry now.
    Send(usize),
    /// Nothing for it yet: wait until a sibling's answer wakes it.
    Park,
    /// The client is thinking: ask again at this time.
    At(Instant),
}

/// A page loaded (every request answered or failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Loaded {
    pub class: usize,
    pub load_time: Duration,
    /// Every request of the page succeeded.
    pub ok: bool,
}

/// What an answer changed: the page it completed, and the parked places
/// of the client (bit i: its connection or lane i) to wake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Answered {
    pub loaded: Option<Loaded>,
    pub wake: u64,
}

impl Answered {
    /// The places to wake.
    pub fn woken(&self) -> impl Iterator<Item = usize> {
        let wake = self.wake;
        (0..64).filter(move |bit| wake & (1 << bit) != 0)
    }
}

/// One browser's place in its pages.
#[derive(Debug, Clone, Default)]
struct Browser {
    page: usize,
    /// The page's next request to hand out (0: the page has not begun).
    next: usize,
    /// Requests sent and not yet answered.
    outstanding: u32,
    document_answered: bool,
    started: Option<Instant>,
    failed: bool,
    /// After a page: thinking until then.
    resume_at: Option<Instant>,
    /// Parked connections, by their place in the client.
    parked: u64,
}

/// A worker's browsers, one per client. A client's places are its
/// connections over HTTP/1.x (the worker's connections are whole clients)
/// or its connection's lanes over HTTP/2; the caller numbers both.
pub(crate) struct PageLoads {
    browsers: Vec<Browser>,
}

impl PageLoads {
    /// The browsers of a worker's `clients` clients, whose first is the run's
    /// client `first_client`: client c begins at page c mod pages, so clients
    /// do not load in step.
    pub fn new(plan: &PagesPlan, clients: usize, first_client: usize) -> Self {
        let pages = plan.pages.len().max(1);
        let browsers =
            (0..clients).map(|c| Browser { page: (first_client + c) % pages, ..Browser::default() }).collect();
        Self { browsers }
    }

    /// What place `place` (< 64) of the worker's client `client` sends next.
    pub fn next(&mut self, plan: &PagesPlan, client: usize, place: usize, now: Instant) -> Next {
        let b = &mut self.browsers[client];
        let page = &plan.pages[b.page];
        if let Some(at) = b.resume_at {
            if now < at {
                return Next::At(at);
            }
            b.resume_at = None;
        }
        if b.next == 0 {
            (b.next, b.outstanding, b.document_answered, b.failed, b.started) = (1, 1, false, false, Some(now));
            return Next::Send(page.entries[0] as usize);
        }
        if !b.document_answered || b.next >= page.entries.len() {
            b.parked |= 1 << place;
            return Next::Park;
        }
        b.next += 1;
        b.outstanding += 1;
        Next::Send(page.entries[b.next - 1] as usize)
    }

    /// A request of the worker's client `client` ended at `now`: answered as
    /// expected (`ok`) or not.
    pub fn answered(&mut self, plan: &PagesPlan, client: usize, ok: bool, now: Instant) -> Answered {
        let b = &mut self.browsers[client];
        let mut done = Answered { loaded: None, wake: 0 };
        if b.outstanding == 0 {
            return done; // not a page's request (none is outstanding)
        }
        b.outstanding -= 1;
        b.failed |= !ok;
        let mut wake = false;
        if !b.document_answered {
            // Before the document's answer it is the only request out.
            b.document_answered = true;
            wake = true;
        }
        let page = &plan.pages[b.page];
        if b.next >= page.entries.len() && b.outstanding == 0 {
            let started = b.started.take().unwrap_or(now);
            done.loaded = Some(Loaded { class: page.class, load_time: now - started, ok: !b.failed });
            b.page = (b.page + 1) % plan.pages.len();
            b.next = 0;
            b.resume_at = (!plan.think.is_zero()).then(|| now + plan.think);
            wake = true;
        }
        if wake {
            done.wake = std::mem::take(&mut b.parked);
        }
        done
    }
}

/// Checks `config.pages` against the rest of the run: `{pages}` needs a
/// request table to index, whole clients of at most 64 connections, each
/// client in one thread, and a closed loop of its own.
pub(crate) fn check(config: &RunConfig, pages: &Pages) -> Result<(), ConfigError> {
    let conflict = |field: &'static str, why: &str| {
        Err(ConfigError::new(field, format!("{{pages}} and {{{field}}} conflict: {why}; drop {{{field}}}")))
    };
    if config.requests.is_empty() {
        return Err(ConfigError::new("pages", "{pages} index the request table: give {requests}"));
    }
    if config.replay.is_some() {
        return conflict("replay", "a page load sends its pages' requests, not a log");
    }
    if config.specweb99.is_some() {
        return conflict("specweb99", "SPECweb99 writes its own requests");
    }
    if config.selection != Selection::Weighted {
        return conflict("selection", "each client loads the pages in turn");
    }
    if config.rate_rps.is_some() {
        return conflict("rate_rps", "a browser loads a page as fast as it is answered");
    }
    if config.pipeline > 1 {
        return conflict("pipeline", "a browser sends one request per connection at a time");
    }
    if config.think_time_s > 0.0 {
        return conflict("think_time_s", "a browser pauses between pages ({pages} think_s), not between requests");
    }
    if config.max_requests.is_some() {
        return conflict("max_requests", "page loads run for a duration");
    }
    if config.keepalive_requests.is_some() {
        return conflict("keepalive_requests", "a browser keeps its connections open from page to page");
    }
    if !config.keepalive {
        return Err(ConfigError::new("keepalive", "{pages}: a browser keeps its connections open: set {keepalive}"));
    }
    if matches!(config.http_version, HttpVersion::Http10) {
        return Err(ConfigError::new("pages", "{pages} are loaded over HTTP/1.1, 2 or 3: set {http_version}"));
    }
    let per_client = config.connections_per_client;
    let places = if matches!(config.http_version, HttpVersion::Http2 | HttpVersion::Http3) {
        if per_client != 1 {
            return Err(ConfigError::new(
                "connections_per_client",
                "{pages} over HTTP/2 or 3: a client is one connection ({connections_per_client} must be 1)",
            ));
        }
        config.streams
    } else {
        per_client
    };
    if places == 0 || places > MAX_PAGE_CONNECTIONS {
        return Err(ConfigError::new(
            "pages",
            format!("{{pages}}: a client loads over 1 to {MAX_PAGE_CONNECTIONS} connections or streams (got {places})"),
        ));
    }
    if per_client == 0 || config.connections % per_client != 0 {
        return Err(ConfigError::new(
            "connections",
            "{pages}: {connections} must be whole clients of {connections_per_client}",
        ));
    }
    if config.threads > config.connections / per_client {
        return Err(ConfigError::new(
            "threads",
            "{pages}: a client's connections share its pages in one thread: {threads} must be at most the clients",
        ));
    }
    if !(pages.think_s.is_finite() && pages.think_s >= 0.0) {
        return Err(ConfigError::new("pages", format!("{{pages}} think_s must be >= 0 (got {})", pages.think_s)));
    }
    if pages.pages.is_empty() {
        return Err(ConfigError::new("pages", "{pages} lists no page: give at least one"));
    }
    let classes = config.classes.len().max(1);
    for (i, page) in pages.pages.iter().enumerate() {
        let at = |msg: String| Err(ConfigError::new("pages", format!("{{pages}} page {i} ({}): {msg}", page.name)));
        if page.entries.is_empty() {
            return at("no request: its document comes first".into());
        }
        if let Some(e) = page.entries.iter().find(|&&e| e as usize >= config.requests.len()) {
            return at(format!("entry {e} is not one of the {} requests", config.requests.len()));
        }
        if page.class as usize >= classes {
            return at(format!("class {} is not one of the {classes} classes", page.class));
        }
    }
    Ok(())
}

/// The checked pages as the plan keeps them.
pub(crate) fn plan(pages: &Pages) -> PagesPlan {
    PagesPlan {
        pages: pages
            .pages
            .iter()
            .map(|p| PagePlan { class: p.class as usize, entries: p.entries.clone().into_boxed_slice() })
            .collect(),
        think: Duration::from_secs_f64(pages.think_s),
    }
}

/// How long a parked place waits when nothing wakes it: its wake-up time
/// is a sentinel, never reached in a run (`Ctx::parked_at`).
pub(crate) const PARKED_FOR: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Whether a response is what its request expects (the rule of
/// `Exchange::complete`): the expected status, else any 2xx or 3xx.
pub(crate) fn as_expected(valid: bool, status: u16, expect_status: Option<u16>) -> bool {
    valid && expect_status.map_or((200..400).contains(&status), |expected| status == expected)
}

/// A loaded page in `stats`: its load time as a completion of its class
/// when every request succeeded, else an error of its class; neither counts
/// in the run's requests, responses or latency (its requests already did).
pub(crate) fn record(stats: &mut Stats, window: Option<(Duration, Duration)>, at: Duration, loaded: Loaded) {
    if window.is_some_and(|(start, end)| at < start || at >= end) {
        return;
    }
    let class = &mut stats.classes[loaded.class];
    if loaded.ok {
        class.requests += 1;
        class.latency_us.saturating_record(u64::try_from(loaded.load_time.as_micros()).unwrap_or(u64::MAX));
    } else {
        class.errors += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(think_ms: u64) -> PagesPlan {
        PagesPlan {
            pages: vec![
                PagePlan { class: 7, entries: vec![0, 1, 2, 3].into() },
                PagePlan { class: 8, entries: vec![4].into() },
            ],
            think: Duration::from_millis(think_ms),
        }
    }

    #[test]
    fn the_document_goes_alone_then_free_connections_take_the_rest() {
        let plan = plan(0);
        let mut loads = PageLoads::new(&plan, 1, 0);
        let t0 = Instant::now();
        assert_eq!(loads.next(&plan, 0, 0, t0), Next::Send(0));
        assert_eq!(loads.next(&plan, 0, 1, t0), Next::Park);
        assert_eq!(loads.next(&plan, 0, 2, t0), Next::Park);
        let doc = loads.answered(&plan, 0, true, t0 + Duration::from_millis(5));
        assert_eq!(doc.loaded, None);
        assert_eq!(doc.woken().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(loads.next(&plan, 0, 0, t0), Next::Send(1));
        assert_eq!(loads.next(&plan, 0, 1, t0), Next::Send(2));
        assert_eq!(loads.next(&plan, 0, 2, t0), Next::Send(3));
        assert_eq!(loads.answered(&plan, 0, true, t0).loaded, None);
        assert_eq!(loads.next(&plan, 0, 1, t0), Next::Park);
        assert_eq!(loads.answered(&plan, 0, true, t0).loaded, None);
        let last = loads.answered(&plan, 0, false, t0 + Duration::from_millis(20));
        assert_eq!(last.loaded, Some(Loaded { class: 7, load_time: Duration::from_millis(20), ok: false }));
        assert_eq!(last.woken().collect::<Vec<_>>(), vec![1]);
        // The next page: its document alone again.
        assert_eq!(loads.next(&plan, 0, 1, t0), Next::Send(4));
    }

    #[test]
    fn a_client_thinks_after_a_page_and_clients_begin_at_different_pages() {
        let plan = plan(100);
        let mut loads = PageLoads::new(&plan, 2, 1);
        let t0 = Instant::now();
        // The worker's first client is the run's client 1: it begins at page 1.
        assert_eq!(loads.next(&plan, 0, 0, t0), Next::Send(4));
        assert_eq!(loads.next(&plan, 1, 0, t0), Next::Send(0));
        let done = loads.answered(&plan, 0, true, t0 + Duration::from_millis(3));
        assert_eq!(done.loaded.map(|l| (l.class, l.ok)), Some((8, true)));
        let at = t0 + Duration::from_millis(103);
        assert_eq!(loads.next(&plan, 0, 1, t0 + Duration::from_millis(50)), Next::At(at));
        assert_eq!(loads.next(&plan, 0, 1, at), Next::Send(0));
    }
}
