//! When each connection sends its next request. Pure arithmetic on offsets
//! from the run's start: it never reads the clock, so it is tested exactly.
//!
//! Open loop at total rate R over C connections: connection i sends at
//! i/R + k·C/R for k = 0, 1, 2, … — each connection runs at R/C and the
//! union is evenly spaced at 1/R. Latency is measured from these intended
//! times, so a stalled target cannot hide its queueing (coordinated omission,
//! as wrk2 corrects it).

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

    /// Whether latency counts from intended send times.
    pub fn is_open_loop(&self) -> bool {
        matches!(self, Self::OpenLoop { .. })
    }

    /// Offset from the start at which connection `index` sends first.
    pub fn first_send(&self, index: u32) -> Duration {
        match *self {
            Self::ClosedLoop { .. } => Duration::ZERO,
            Self::OpenLoop { stagger, .. } => stagger * index,
        }
    }

    /// Offset of the send after one intended at `intended` whose response
    /// (or failure) came at `done`.
    pub fn next_send(&self, intended: Duration, done: Duration) -> Duration {
        match *self {
            Self::ClosedLoop { think } => done + think,
            Self::OpenLoop { interval, .. } => intended + interval,
        }
    }
}
