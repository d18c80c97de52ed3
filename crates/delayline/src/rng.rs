//! The line's seeded generator: SplitMix64 (Steele, Lea and Flood, 2014). Loss and jitter need a
//! fast, deterministic stream per direction, not a cryptographic one; a seed repeats a run's draws.

/// SplitMix64: one u64 of state, a new value per call.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_its_stream_and_another_differs() {
        let a: Vec<u64> = (0..8)
            .map({
                let mut r = SplitMix64::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let mut again = SplitMix64::new(7);
        let mut other = SplitMix64::new(8);
        assert!(a.iter().all(|&x| x == again.next_u64()));
        assert!(a.iter().any(|&x| x != other.next_u64()));
    }

    #[test]
    fn floats_stay_in_the_unit_interval_with_a_mean_near_half() {
        let mut r = SplitMix64::new(1);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
            sum += x;
        }
        assert!((sum / n as f64 - 0.5).abs() < 0.01);
    }
}
