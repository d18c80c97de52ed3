//! HDR histograms in µs with 3 significant digits, all with the same bounds
//! so any two merge exactly, and their summary percentiles.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest trackable value: one hour in µs; larger values saturate.
const MAX_US: u64 = 3_600_000_000;

/// A histogram with crest's standard bounds.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 3).expect("invariant: valid static bounds")
}

/// Percentiles of a latency distribution, µs.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct LatencySummary {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest value.
    pub max: u64,
    /// Smallest value.
    pub min: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
}

/// Summarizes `h` (all zero when empty).
pub fn summarize(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    LatencySummary {
        p50: h.value_at_quantile(0.50),
        p90: h.value_at_quantile(0.90),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max: h.max(),
        min: h.min(),
        mean: h.mean(),
        stdev: h.stdev(),
    }
}
