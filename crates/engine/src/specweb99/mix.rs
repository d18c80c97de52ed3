//! What a SPECweb99 request asks for (reference §1.4, §1.5, §2.1): the kind
//! by `request_mix`, the class by `class_mix`, the file within the class by
//! Zipf α=1 over 9 ranks mapped through `FILE_ORDER`, the directory by Zipf
//! α=1 over the directories (rank r → directory r−1). Each is an alias table
//! built once; a draw costs four O(1) picks on the worker's RNG.

use super::{FileId, Op};
use crate::rng::Rng;
use crate::table::AliasTable;

/// Zipf rank r (from 1) → file number: the most popular file is 4.
pub const FILE_ORDER: [u8; 9] = [4, 3, 5, 2, 6, 1, 7, 8, 0];

/// The four draws of a request.
#[derive(Debug, Clone)]
pub struct Mix {
    ops: AliasTable,
    classes: AliasTable,
    /// Over file numbers (not ranks): file FILE_ORDER[r−1] weighs 1/r.
    files: AliasTable,
    dirs: AliasTable,
}

impl Mix {
    /// Tables for the shares given (each normalised; the caller checks them) and `dirs` ≥ 1 directories.
    pub fn new(request_mix: &[f64; 5], class_mix: &[f64; 4], dirs: u32) -> Self {
        let mut files = [0.0; 9];
        for (rank, &file) in FILE_ORDER.iter().enumerate() {
            files[usize::from(file)] = 1.0 / (rank + 1) as f64;
        }
        let dirs: Vec<f64> = (1..=dirs).map(|rank| 1.0 / f64::from(rank)).collect();
        Self {
            ops: AliasTable::new(request_mix),
            classes: AliasTable::new(class_mix),
            files: AliasTable::new(&files),
            dirs: AliasTable::new(&dirs),
        }
    }

    /// The next request's kind and file.
    pub fn draw(&self, rng: &mut Rng) -> (Op, FileId) {
        let op = Op::ALL[self.ops.pick(rng)];
        let class = self.classes.pick(rng) as u8;
        let file = self.files.pick(rng) as u8;
        let dir = self.dirs.pick(rng) as u32;
        (op, FileId { dir, class, file })
    }

    /// Exact probability of each file number within a class.
    pub fn file_probabilities(&self) -> Vec<f64> {
        self.files.probabilities()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(F | class) from the reference's table (§1.5), in %.
    const REFERENCE: [f64; 9] = [3.928, 5.891, 8.837, 17.674, 35.349, 11.783, 7.070, 5.050, 4.419];

    #[test]
    fn file_probabilities_are_the_reference_table() {
        let mix = Mix::new(&[1.0, 0.0, 0.0, 0.0, 0.0], &[1.0, 0.0, 0.0, 0.0], 1);
        for (f, (p, want)) in mix.file_probabilities().iter().zip(REFERENCE).enumerate() {
            assert!((p * 100.0 - want).abs() < 0.001, "file {f}: {p} vs {want} %");
        }
    }

    #[test]
    fn draws_follow_the_mixes_the_zipf_order_and_the_directory_zipf() {
        let request_mix = [0.70, 0.1245, 0.0015, 0.126, 0.048];
        let class_mix = [0.35, 0.50, 0.14, 0.01];
        let dirs = 10u32;
        let mix = Mix::new(&request_mix, &class_mix, dirs);
        let mut rng = Rng::new(99);
        let n = 2_000_000u32;
        let (mut ops, mut classes, mut files, mut by_dir) = ([0u32; 5], [0u32; 4], [0u32; 9], [0u32; 10]);
        for _ in 0..n {
            let (op, f) = mix.draw(&mut rng);
            ops[op as usize] += 1;
            classes[usize::from(f.class)] += 1;
            files[usize::from(f.file)] += 1;
            by_dir[f.dir as usize] += 1;
        }
        let share = |c: u32| f64::from(c) / f64::from(n);
        // Within 5 standard errors (and at least a hair, for the rare kinds).
        let close = |got: f64, want: f64| (got - want).abs() < 5.0 * (want * (1.0 - want) / f64::from(n)).sqrt() + 1e-5;
        for (i, &want) in request_mix.iter().enumerate() {
            assert!(close(share(ops[i]), want), "op {i}: {} vs {want}", share(ops[i]));
        }
        for (i, &want) in class_mix.iter().enumerate() {
            assert!(close(share(classes[i]), want), "class {i}: {} vs {want}", share(classes[i]));
        }
        for (f, &want) in REFERENCE.iter().enumerate() {
            assert!(close(share(files[f]), want / 100.0), "file {f}: {} vs {want} %", share(files[f]));
        }
        // FILE_ORDER: each rank is drawn more often than the next.
        for pair in FILE_ORDER.windows(2) {
            assert!(files[usize::from(pair[0])] > files[usize::from(pair[1])], "{pair:?}: {files:?}");
        }
        let h: f64 = (1..=dirs).map(|r| 1.0 / f64::from(r)).sum();
        for (d, &c) in by_dir.iter().enumerate() {
            let want = 1.0 / (d as f64 + 1.0) / h;
            assert!(close(share(c), want), "dir {d}: {} vs {want}", share(c));
        }
    }
}
