//! Per-second buckets from the run's start, so a caller can cut a window
//! exactly at ramp boundaries. Preallocated for the expected length; a run
//! that goes longer grows it once a second at most.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Counts for one second of the run.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Bucket {
    /// Successful responses completed in this second.
    pub requests: u64,
    /// Failed requests in this second.
    pub errors: u64,
    /// Bytes received in this second.
    pub bytes: u64,
}

/// Buckets indexed by whole seconds since the start.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    buckets: Vec<Bucket>,
}

impl Timeline {
    /// Room for `expected` plus slack.
    pub fn new(expected: Option<Duration>) -> Self {
        let seconds = expected.map_or(60, |d| d.as_secs() as usize + 2);
        Self { buckets: Vec::with_capacity(seconds) }
    }

    /// A timeline holding `buckets`, second 0 first.
    pub fn from_buckets(buckets: Vec<Bucket>) -> Self {
        Self { buckets }
    }

    /// The bucket of `second`, created on first use.
    pub fn at(&mut self, second: usize) -> &mut Bucket {
        if second >= self.buckets.len() {
            self.buckets.resize(second + 1, Bucket::default());
        }
        &mut self.buckets[second]
    }

    /// All buckets in order.
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    /// Adds `other` bucket by bucket.
    pub fn merge(&mut self, other: &Timeline) {
        for (second, b) in other.buckets.iter().enumerate() {
            let mine = self.at(second);
            mine.requests += b.requests;
            mine.errors += b.errors;
            mine.bytes += b.bytes;
        }
    }
}
