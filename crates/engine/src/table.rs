//! What to send: the weighted request table of a run. Selection uses
//! Walker's alias method (Vose's construction), so every entry is drawn with
//! exactly its normalised weight in O(1) per pick, whatever the table size —
//! SPECweb99's Zipf × class × Zipf products become one flat table.

use crate::rng::Rng;

/// Alias table over weights.
#[derive(Debug, Clone)]
pub struct AliasTable {
    /// Probability of keeping column i (else take `alias[i]`).
    keep: Vec<f64>,
    alias: Vec<u32>,
}

impl AliasTable {
    /// Builds the table; `weights` must be finite, ≥ 0, with a positive sum.
    pub fn new(weights: &[f64]) -> Self {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut keep = vec![1.0; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            keep[s] = scaled[s];
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Leftovers are 1 up to rounding: they keep themselves.
        Self { keep, alias }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.keep.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.keep.is_empty()
    }

    /// Draws an index with probability weight / Σ weights.
    pub fn pick(&self, rng: &mut Rng) -> usize {
        if self.keep.len() == 1 {
            return 0;
        }
        let column = rng.below(self.keep.len());
        if rng.next_f64() < self.keep[column] {
            column
        } else {
            self.alias[column] as usize
        }
    }

    /// The exact probability of each index (for tests and reports).
    pub fn probabilities(&self) -> Vec<f64> {
        let n = self.keep.len() as f64;
        let mut p = vec![0.0; self.keep.len()];
        for (i, (&k, &a)) in self.keep.iter().zip(&self.alias).enumerate() {
            p[i] += k / n;
            p[a as usize] += (1.0 - k) / n;
        }
        p
    }
}
