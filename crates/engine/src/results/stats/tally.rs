//! The live tally: what a run in progress shows second by second (successes,
//! failures by kind, a coarse latency histogram), counted over the whole run,
//! ramps included, so a watcher sees the load rise. Not part of a report and
//! never merged: the windowed `Stats` fields are the results.
//!
//! The histogram has two buckets per power of two (about ±25% wide): enough
//! for a percentile a person watches, and 64 counters a worker can publish
//! with relaxed stores on every pass of its loop.

use crate::error::ErrorKind;

/// Latency buckets of the live histogram.
pub const LIVE_LATENCY_BUCKETS: usize = 64;

/// The bucket of a latency of `us` microseconds: 0 and 1 µs have their own;
/// above, bucket `2k` holds [2^k, 1.5·2^k) and `2k + 1` holds [1.5·2^k, 2^(k+1)).
pub fn live_latency_bucket(us: u64) -> usize {
    if us < 2 {
        return us as usize;
    }
    let k = 63 - us.leading_zeros() as usize;
    let upper_half = ((us >> (k - 1)) & 1) as usize;
    (2 * k + upper_half).min(LIVE_LATENCY_BUCKETS - 1)
}

/// Each bucket's lower bound in µs (the last bucket is open above).
pub fn live_latency_lower_us() -> [u64; LIVE_LATENCY_BUCKETS] {
    let mut lower = [0u64; LIVE_LATENCY_BUCKETS];
    lower[1] = 1;
    for (i, slot) in lower.iter_mut().enumerate().skip(2) {
        let k = i / 2;
        *slot = (1u64 << k) + if i % 2 == 1 { 1u64 << (k - 1) } else { 0 };
    }
    lower
}

/// One worker's live counts; sized once, so counting never allocates.
#[derive(Debug, Clone)]
pub struct LiveTally {
    /// Successes (2xx/3xx responses that passed validation, or file operations).
    pub requests: u64,
    /// Failures by `ErrorKind::index()`.
    pub errors: [u64; ErrorKind::COUNT],
    /// Bytes received.
    pub received: u64,
    /// Successes' latencies by `live_latency_bucket`.
    pub latency: [u64; LIVE_LATENCY_BUCKETS],
}

impl Default for LiveTally {
    fn default() -> Self {
        Self { requests: 0, errors: [0; ErrorKind::COUNT], received: 0, latency: [0; LIVE_LATENCY_BUCKETS] }
    }
}

impl LiveTally {
    pub(crate) fn success(&mut self, latency_us: u64) {
        self.requests += 1;
        self.latency[live_latency_bucket(latency_us)] += 1;
    }

    pub(crate) fn failure(&mut self, kind: ErrorKind) {
        self.errors[kind.index()] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_latency_falls_in_the_bucket_whose_bounds_hold_it() {
        let lower = live_latency_lower_us();
        for us in (0..5000u64).chain([1 << 20, (1 << 20) + (1 << 19), u64::MAX / 4, u64::MAX]) {
            let b = live_latency_bucket(us);
            assert!(lower[b] <= us, "{us} below bucket {b}");
            if b + 1 < LIVE_LATENCY_BUCKETS {
                assert!(us < lower[b + 1], "{us} above bucket {b}");
            }
        }
        assert!(lower.windows(2).all(|w| w[0] < w[1]));
    }
}
