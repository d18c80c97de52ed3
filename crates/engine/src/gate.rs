//! The input rules every run shares, HTTP or file: connections, threads,
//! clients, the stop condition, durations, the window, the start time and
//! the timeout, each checked once here with one wording and turned into a
//! `Duration` here, so no later `Duration::from_secs_f64` can panic on a
//! config value. Each kind's own gate (`http::plan`, `fileops::plan`) calls
//! `check` first and adds its own rules; this module knows neither kind.
//!
//! Messages are templates whose `{key}` placeholders name `RunConfig` keys
//! (the Python side rewords them as the flag or setting its user wrote).

use std::net::IpAddr;
use std::time::Duration;

use crate::config::{RunConfig, Selection};
use crate::error::ConfigError;

/// Longest run (`duration_s`): long enough for any published test.
pub const MAX_DURATION_S: f64 = 7.0 * 86_400.0;
/// Longest per-request (per-operation) timeout (`timeout_s`).
pub const MAX_TIMEOUT_S: f64 = 3600.0;
/// Longest of the other spans (think time, start delay, window bounds): a
/// year, far past any sensible value and far inside what `Duration` and
/// `Instant` arithmetic hold.
pub const MAX_SPAN_S: f64 = 366.0 * 86_400.0;

/// The shared settings, checked and in `Duration`s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shared {
    /// Run length, if bounded by time.
    pub duration: Option<Duration>,
    /// Offsets from the start between which completions are counted.
    pub window: Option<(Duration, Duration)>,
    /// Pause between a client's exchanges (closed loop) or loadfile passes.
    pub think_time: Duration,
    /// Largest random wait of a client before its first request.
    pub client_start_delay: Duration,
    /// Per request (per operation), from its start to its reply.
    pub timeout: Duration,
}

/// Checks the rules every run shares. The order is the order a user reads
/// them in: how much load, how long, then the timings.
pub(crate) fn check(c: &RunConfig) -> Result<Shared, ConfigError> {
    let fail = |field: &'static str, msg: String| Err(ConfigError::new(field, msg));
    if c.connections == 0 {
        return fail("connections", "{connections} must be at least 1 (got 0)".into());
    }
    if c.threads == 0 {
        return fail("threads", "{threads} must be at least 1 (got 0)".into());
    }
    // An error, not a silent clamp: a run with fewer threads than asked is
    // another configuration, and the report would say so only in passing.
    if c.threads > c.connections {
        return fail(
            "threads",
            format!(
                "{{connections}} ({}) must be >= {{threads}} ({}): each thread needs a connection; \
                 raise {{connections}} or lower {{threads}}",
                c.connections, c.threads
            ),
        );
    }
    if c.connections_per_client == 0 {
        return fail("connections_per_client", "{connections_per_client} must be at least 1 (got 0)".into());
    }
    // An HTTP run that sends each entry once, or a log's requests, ends by
    // itself; a loadfile run loops.
    let ends_by_itself = c.loadfile.is_none() && (c.selection == Selection::Once || c.replay.is_some());
    if c.duration_s.is_none() && c.max_requests.is_none() && !ends_by_itself {
        return fail("duration_s", "no stop condition: give {duration_s} or {max_requests}".into());
    }
    let duration = match c.duration_s {
        Some(d) if !(d.is_finite() && d > 0.0 && d <= MAX_DURATION_S) => {
            return fail("duration_s", format!("{{duration_s}} must be > 0 and at most a week (got {d} s)"));
        }
        d => d.map(Duration::from_secs_f64),
    };
    if c.max_requests == Some(0) {
        return fail("max_requests", "{max_requests} must be at least 1 (got 0)".into());
    }
    let window = match c.window_s {
        Some([a, b]) if !(a.is_finite() && b.is_finite() && a >= 0.0 && b > a) => {
            return fail(
                "window_s",
                format!("{{window_s}} must be [start, end) seconds with 0 <= start < end (got [{a}, {b}])"),
            );
        }
        Some([a, b]) if b > MAX_SPAN_S => {
            return fail("window_s", format!("{{window_s}} must end within a year (got [{a}, {b}])"));
        }
        w => w.map(|[a, b]| (Duration::from_secs_f64(a), Duration::from_secs_f64(b))),
    };
    let think_time = span("think_time_s", "{think_time_s}", c.think_time_s)?;
    let client_start_delay = span("client_start_delay_s", "{client_start_delay_s}", c.client_start_delay_s)?;
    if !(c.timeout_s.is_finite() && c.timeout_s > 0.0 && c.timeout_s <= MAX_TIMEOUT_S) {
        return fail("timeout_s", format!("{{timeout_s}} must be > 0 and at most 1 h (got {} s)", c.timeout_s));
    }
    if let Some(at) = c.start_at_unix_s {
        if !at.is_finite() {
            return fail("start_at_unix_s", format!("{{start_at_unix_s}} must be a Unix time in seconds (got {at})"));
        }
    }
    Ok(Shared { duration, window, think_time, client_start_delay, timeout: Duration::from_secs_f64(c.timeout_s) })
}

/// A span of `0..=MAX_SPAN_S` seconds.
fn span(field: &'static str, key: &str, v: f64) -> Result<Duration, ConfigError> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(ConfigError::new(field, format!("{key} must be >= 0 s (got {v})")));
    }
    if v > MAX_SPAN_S {
        return Err(ConfigError::new(field, format!("{key} must be at most a year (got {v} s)")));
    }
    Ok(Duration::from_secs_f64(v))
}

/// The local addresses connections are made from (round-robin by
/// connection index), for HTTP and SMB alike.
pub(crate) fn source_addrs(config: &RunConfig) -> Result<Vec<IpAddr>, ConfigError> {
    config
        .source_addrs
        .iter()
        .map(|s| {
            s.parse::<IpAddr>().map_err(|_| {
                ConfigError::new(
                    "source_addrs",
                    format!("invalid {{source_addrs}} '{s}': not an IP address (e.g. 127.0.0.2)"),
                )
            })
        })
        .collect()
}
