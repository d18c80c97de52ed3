//! When each connection sends its next request. Pure arithmetic on offsets
//! from the run's start: it never reads the clock, so it is tested exactly.
//!
//! Open loop at total rate R over C connections: connection i sends at
//! i/R + k·C/R for k = 0, 1, 2, … — each connection runs at R/C and the
//! union is evenly spaced at 1/R. Latency is measured from these intended
//! times, so a stalled target cannot hide its queueing (coordinated omission,
//! as wrk2 corrects it).
//!
//! A timed replay sends each logged request at its logged offset ÷ speed:
//! the intended times come from the log, and latency counts from them too.

use std::time::Duration;

/// The load model of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// Next request as soon as the previous response ends, plus think time.
    ClosedLoop {
        /// Pause between a response and the next request.
        think: Duration,
    },
    /// Requests at fixed intended times, whatever the responses do.
    OpenLoop {
        /// Gap between a connection's consecutive sends: C/R.
        interval: Duration,
        /// Gap between consecutive connections' first sends: 1/R.
        stagger: Duration,
    },
    /// A log replayed at its logged times ÷ `speed`: a connection takes the
    /// next logged request when free and sends it at its time.
    Timed {
        /// How many times faster than logged.
        speed: f64,
    },
}

impl Schedule {
    /// Closed loop with `think` between requests.
    pub fn closed_loop(think: Duration) -> Self {
        Self::ClosedLoop { think }
    }

    /// Open loop at `rate_rps` in total over `connections`.
    pub fn open_loop(rate_rps: f64, connections: u32) -> Self {
        Self::OpenLoop {
            interval: Duration::from_secs_f64(f64::from(connections) / rate_rps),
            stagger: Duration::from_secs_f64(1.0 / rate_rps),
        }
    }

    /// A timed replay at `speed` (finite, > 0).
    pub fn timed(speed: f64) -> Self {
        Self::Timed { speed }
    }

    /// Whether latency counts from intended send times.
    pub fn is_open_loop(&self) -> bool {
        matches!(self, Self::OpenLoop { .. } | Self::Timed { .. })
    }

    /// Offset from the start at which connection `index` sends first (a
    /// timed replay's connections take their first request at once).
    pub fn first_send(&self, index: u32) -> Duration {
        match *self {
            Self::ClosedLoop { .. } | Self::Timed { .. } => Duration::ZERO,
            Self::OpenLoop { stagger, .. } => stagger * index,
        }
    }

    /// Offset of the send after one intended at `intended` whose response
    /// (or failure) came at `done`.
    pub fn next_send(&self, intended: Duration, done: Duration) -> Duration {
        match *self {
            Self::ClosedLoop { think } => done + think,
            Self::OpenLoop { interval, .. } => intended + interval,
            // The next logged request says when it is due.
            Self::Timed { .. } => done,
        }
    }
}

/// Longest span `scaled` returns: a year, far inside what `Instant`
/// arithmetic holds, so a slow replay of a long log cannot overflow it.
pub const MAX_SCALED: Duration = Duration::from_secs(366 * 86_400);

/// A logged span of `us` µs replayed at `speed` times as fast (`speed` > 0),
/// at most `MAX_SCALED`.
pub fn scaled(us: u64, speed: f64) -> Duration {
    let ns = us as f64 * 1000.0 / speed;
    if ns.is_finite() && ns >= 0.0 && ns < MAX_SCALED.as_nanos() as f64 {
        Duration::from_nanos(ns as u64)
    } else {
        MAX_SCALED
    }
}
