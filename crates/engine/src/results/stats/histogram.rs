//! HDR histograms in µs with 3 significant digits, all with the same bounds
//! so any two merge exactly, their summary percentiles, and adding one in
//! HdrHistogram V2 encoding straight into another (how parts merge).

use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest trackable value: one hour in µs; larger values saturate.
const MAX_US: u64 = 3_600_000_000;

/// Significant digits kept.
const DIGITS: u8 = 3;

/// A histogram with crest's standard bounds.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, DIGITS).expect("invariant: valid static bounds")
}

/// HdrHistogram V2's cookie (uncompressed).
const V2_COOKIE: u32 = 0x1c84_9313;

/// Bytes of a V2 header: cookie, payload length, normalizing offset, digits, low, high, ratio.
const V2_HEADER_BYTES: usize = 40;

/// log2 of half the sub-buckets at `DIGITS` digits (2·10³ values need 2¹¹ sub-buckets).
const SUB_BUCKET_HALF_MAGNITUDE: u32 = 10;

/// Slots of a histogram with crest's bounds: 1024 per power of two above
/// 2048 up to `MAX_US`, plus 2048 below (HdrHistogram's counts array).
pub(crate) const SLOTS: usize = {
    let (mut buckets, mut untrackable) = (1usize, 2u64 << SUB_BUCKET_HALF_MAGNITUDE);
    while untrackable <= MAX_US {
        untrackable <<= 1;
        buckets += 1;
    }
    (buckets + 1) << SUB_BUCKET_HALF_MAGNITUDE
};

/// Counts per slot of histograms with crest's bounds: a sum that adds each
/// HdrHistogram V2 encoding in one pass over its bytes, then goes into a
/// histogram once.
#[derive(Debug, Default)]
pub(crate) struct SlotCounts(Vec<u64>);

impl SlotCounts {
    /// Adds `bytes`, a histogram with crest's bounds in HdrHistogram V2
    /// encoding (uncompressed, as `V2Serializer` writes it). An encoding that
    /// is malformed or has other bounds is an error (and may be added in part).
    pub(crate) fn add_v2(&mut self, bytes: &[u8]) -> Result<(), String> {
        let Some((header, payload)) = bytes.split_first_chunk::<V2_HEADER_BYTES>() else {
            return Err("not an HdrHistogram V2 histogram (truncated header)".into());
        };
        let u32_at = |i: usize| u32::from_be_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
        let u64_at = |i: usize| (u64::from(u32_at(i)) << 32) | u64::from(u32_at(i + 4));
        if u32_at(0) != V2_COOKIE {
            return Err(format!("not an uncompressed HdrHistogram V2 histogram (cookie {:#x})", u32_at(0)));
        }
        if u32_at(4) as usize != payload.len() {
            return Err(format!("HdrHistogram V2 payload of {} bytes, not {}", payload.len(), u32_at(4)));
        }
        let bounds = (u32_at(8), u32_at(12), u64_at(16), u64_at(24), f64::from_bits(u64_at(32)));
        if bounds != (0, u32::from(DIGITS), 1, MAX_US, 1.0) {
            return Err(format!(
                "histogram bounds {}..{} at {} digits (offset {}, ratio {}) are not crest's",
                bounds.2, bounds.3, bounds.1, bounds.0, bounds.4
            ));
        }
        if self.0.is_empty() {
            self.0 = vec![0; SLOTS];
        }
        let (mut index, mut at) = (0usize, 0usize);
        while at < payload.len() {
            let (zigzag, used) = varint(&payload[at..]).ok_or("HdrHistogram V2 payload ends inside a number")?;
            at += used;
            // Zig-zag: a count, or minus a run of empty slots.
            let count_or_zeros = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
            match u64::try_from(count_or_zeros) {
                Ok(count) => {
                    if index >= SLOTS {
                        return Err(format!("HdrHistogram V2 payload has more than {SLOTS} counts"));
                    }
                    self.0[index] = self.0[index].saturating_add(count);
                    index += 1;
                }
                Err(_) => index = index.saturating_add(count_or_zeros.unsigned_abs() as usize),
            }
        }
        Ok(())
    }

    /// Records the counts into `h` (crest's bounds): the same counts, minimum
    /// and maximum as adding each summed histogram with `Histogram::add`.
    pub(crate) fn record_into(&self, h: &mut Histogram<u64>) {
        for (index, &count) in self.0.iter().enumerate().filter(|(_, &count)| count > 0) {
            h.saturating_record_n(value_at(index), count);
        }
    }
}

/// The lowest value counted in slot `index` of a histogram with crest's bounds
/// (HdrHistogram's `value_for`, at unit magnitude 0).
fn value_at(index: usize) -> u64 {
    let half = 1usize << SUB_BUCKET_HALF_MAGNITUDE;
    if index < 2 * half {
        return index as u64;
    }
    let bucket = (index >> SUB_BUCKET_HALF_MAGNITUDE) - 1;
    let sub_bucket = (index & (half - 1)) + half;
    (sub_bucket as u64) << bucket
}

/// One LEB128 number as HdrHistogram writes it (at most 9 bytes, the 9th
/// whole), and the bytes it took; None when `bytes` ends inside it.
#[inline]
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    // Most counts take one byte.
    if let Some(&b) = bytes.first().filter(|&&b| b < 0x80) {
        return Some((u64::from(b), 1));
    }
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            return Some((value | (u64::from(b) << 56), 9));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
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

#[cfg(test)]
mod tests {
    use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer, V2Serializer};

    use super::*;

    fn v2(h: &Histogram<u64>) -> Vec<u8> {
        let mut bytes = Vec::new();
        V2Serializer::new().serialize(h, &mut bytes).expect("serializes");
        bytes
    }

    #[test]
    fn slots_and_their_values_are_hdrhistograms() {
        let mut every = new_histogram();
        assert_eq!(SLOTS, every.distinct_values());
        for index in 0..SLOTS {
            every.record(value_at(index)).expect("in range");
        }
        // One count per slot: value_at is one-to-one onto the slots, each its slot's lowest value.
        for index in 0..SLOTS {
            let v = value_at(index);
            assert_eq!((every.count_at(v), every.lowest_equivalent(v)), (1, v), "slot {index}");
        }
    }

    #[test]
    fn summed_encodings_equal_deserialized_and_added_histograms() {
        let mut rng = crate::rng::Rng::new(7);
        let (mut sum, mut added) = (SlotCounts::default(), new_histogram());
        for n in [0, 1, 50, 20_000] {
            let mut h = new_histogram();
            for _ in 0..n {
                h.saturating_record_n(1e7f64.powf(rng.next_f64()) as u64, 1 + rng.below(3) as u64);
            }
            if n > 1 {
                h.saturating_record(MAX_US * 2); // counts in the top slot
            }
            let bytes = v2(&h);
            sum.add_v2(&bytes).expect("adds");
            let back: Histogram<u64> = Deserializer::new().deserialize(&mut bytes.as_slice()).expect("deserializes");
            added.add(&back).expect("same bounds");
        }
        let mut recorded = new_histogram();
        sum.record_into(&mut recorded);
        assert_eq!(recorded, added);
        assert_eq!((recorded.min(), recorded.max(), recorded.len()), (added.min(), added.max(), added.len()));
        assert_eq!(summarize(&recorded), summarize(&added));
    }

    #[test]
    fn other_bounds_compression_and_truncation_are_refused() {
        let mut h = new_histogram();
        h.record(1000).expect("in range");
        let bytes = v2(&h);
        let add = |b: &[u8]| SlotCounts::default().add_v2(b);
        assert!(add(&bytes).is_ok());
        assert!(add(&bytes[..bytes.len() - 1]).is_err());
        assert!(add(&bytes[..20]).is_err());
        assert!(add(&[]).is_err());
        let mut other = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("bounds");
        other.record(1000).expect("in range");
        assert!(add(&v2(&other)).unwrap_err().contains("not crest's"));
        let mut deflated = Vec::new();
        V2DeflateSerializer::new().serialize(&h, &mut deflated).expect("serializes");
        assert!(add(&deflated).unwrap_err().contains("cookie"));
        // Counts past the last slot.
        let mut long = bytes[..V2_HEADER_BYTES].to_vec();
        long.extend(std::iter::repeat_n(2u8, SLOTS + 1)); // zig-zag 2 = a count of 1
        long[4..8].copy_from_slice(&((SLOTS + 1) as u32).to_be_bytes());
        assert!(add(&long).unwrap_err().contains("more than"));
    }
}
