//! How late packets left: each written packet's time past its due time, counted in power-of-two
//! buckets of microseconds. A line that keeps up writes a packet within its wake-up latency of its
//! due time (tens of microseconds); one that has run out of CPU writes packets late by its backlog.
//! The counts only grow; a reader takes two readings and subtracts (crest.network.counters).

/// Bucket 0 counts lateness under 1 µs, bucket i (1 ≤ i < BUCKETS − 1) under 2^i µs, the last
/// everything from 2^(BUCKETS−2) µs (about 4.2 s) up.
pub const BUCKETS: usize = 24;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lateness {
    pub counts: [u64; BUCKETS],
    /// Every packet's lateness added up (for the mean, which the buckets only bound).
    pub sum_ns: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Self { counts: [0; BUCKETS], sum_ns: 0 }
    }
}

impl Lateness {
    pub fn bucket(late_ns: u64) -> usize {
        let us = late_ns / 1000;
        if us == 0 {
            0
        } else {
            ((u64::BITS - us.leading_zeros()) as usize).min(BUCKETS - 1)
        }
    }

    pub fn record(&mut self, late_ns: u64) {
        self.counts[Self::bucket(late_ns)] += 1;
        self.sum_ns = self.sum_ns.saturating_add(late_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two_of_microseconds() {
        let cases = [(0, 0), (999, 0), (1_000, 1), (1_999, 1), (2_000, 2), (3_999, 2), (4_000, 3), (1_000_000, 10)];
        for (ns, bucket) in cases {
            assert_eq!(Lateness::bucket(ns), bucket, "{ns} ns");
        }
        assert_eq!(Lateness::bucket(u64::MAX), BUCKETS - 1);
        assert_eq!(Lateness::bucket(5_000_000_000), BUCKETS - 1);
        assert_eq!(Lateness::bucket(4_000_000_000), BUCKETS - 2);
    }

    #[test]
    fn recording_counts_each_packet_once() {
        let mut l = Lateness::default();
        for ns in [0, 500, 1_500, 3_000_000] {
            l.record(ns);
        }
        assert_eq!(l.counts.iter().sum::<u64>(), 4);
        assert_eq!((l.counts[0], l.counts[1], l.counts[12]), (2, 1, 1));
        assert_eq!(l.sum_ns, 3_002_000);
    }
}
