//! What the fuzz targets (fuzz_*.rs) share: proptest's configuration, the
//! three kinds of input (arbitrary bytes, captured bytes mutated, and
//! protocol tokens strung together so the parsers get past their first
//! check), and cutting an input the way a socket might.
//!
//! Cases: 256 per target by default, so `cargo test` stays quick; `make fuzz`
//! sets PROPTEST_CASES for a long run. A failing case is shrunk and its seed
//! written to tests/proptest-regressions/<target>.txt, which every later run
//! replays first: commit that file with the fix.

#![allow(dead_code)]

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;

/// The configuration of fuzz target `name`: `cases` cases (PROPTEST_CASES, when set, says
/// how many instead), failures persisted to tests/proptest-regressions/<name>.txt. The path
/// is absolute: cargo runs a test binary in its crate's directory while file!() is relative
/// to the workspace, so proptest's own choice of place would depend on where it runs.
pub fn config(name: &str, cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases);
    let path = format!("{}/tests/proptest-regressions/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    ProptestConfig {
        cases,
        // Leaked, once per test: proptest wants a 'static path.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(Box::leak(path.into_boxed_str())))),
        ..ProptestConfig::default()
    }
}

/// Bytes a mutation likes to put in: the separators and digits the parsers branch on.
const INTERESTING: &[u8] = b"\r\n\t :;,\"=/0179aAfFzZ\x00\x7f\x80\xff";

/// One edit of an input.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// Flip one bit of the byte at the index.
    Flip(Index, u8),
    /// Overwrite the byte at the index with an interesting one (or the given byte).
    Set(Index, u8),
    /// Insert a byte.
    Insert(Index, u8),
    /// Delete up to `len` bytes from the index.
    Delete(Index, u8),
    /// Copy up to `len` bytes from the first index to the second.
    Duplicate(Index, Index, u8),
    /// Cut the input at the index.
    Truncate(Index),
    /// Insert one of the target's tokens.
    Token(Index, Index),
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, n)| Mutation::Delete(i, n)),
        1 => (any::<Index>(), any::<Index>(), any::<u8>()).prop_map(|(i, j, n)| Mutation::Duplicate(i, j, n)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(i, t)| Mutation::Token(i, t)),
    ]
}

/// Applies `edits` to `input`; `tokens` are what `Mutation::Token` inserts.
pub fn mutate(mut input: Vec<u8>, edits: &[Mutation], tokens: &[&[u8]]) -> Vec<u8> {
    for edit in edits {
        let len = input.len();
        // An index into the input, or at its end (for insertions).
        let at = |i: &Index| i.index(len + 1);
        match edit {
            Mutation::Flip(i, b) if len > 0 => input[i.index(len)] ^= 1 << (b % 8),
            Mutation::Set(i, b) if len > 0 => {
                let b = if b % 4 == 0 { *b } else { INTERESTING[usize::from(*b) % INTERESTING.len()] };
                input[i.index(len)] = b;
            }
            Mutation::Insert(i, b) => input.insert(at(i), *b),
            Mutation::Delete(i, n) if len > 0 => {
                let from = i.index(len);
                let to = (from + 1 + usize::from(n % 16)).min(len);
                input.drain(from..to);
            }
            Mutation::Duplicate(i, j, n) if len > 0 => {
                let from = i.index(len);
                let to = (from + 1 + usize::from(*n)).min(len);
                let copy = input[from..to].to_vec();
                let into = at(j);
                input.splice(into..into, copy);
            }
            Mutation::Truncate(i) => input.truncate(at(i)),
            Mutation::Token(i, t) if !tokens.is_empty() => {
                let token = tokens[t.index(tokens.len())];
                let into = at(i);
                input.splice(into..into, token.iter().copied());
            }
            _ => {}
        }
    }
    input
}

/// Inputs for a parser: arbitrary bytes, a seed mutated, or tokens strung together.
pub fn input(seeds: Vec<Vec<u8>>, tokens: &'static [&'static [u8]], max_len: usize) -> BoxedStrategy<Vec<u8>> {
    let arbitrary = prop::collection::vec(any::<u8>(), 0..max_len);
    let mutated = (prop::sample::select(seeds), prop::collection::vec(mutation(), 0..8))
        .prop_map(move |(seed, edits)| mutate(seed, &edits, tokens));
    let strung = prop::collection::vec(prop::sample::select(tokens), 0..32).prop_map(|t| t.concat());
    prop_oneof![1 => arbitrary, 4 => mutated, 2 => strung].boxed()
}

/// Inputs built by `structured` (frames of a protocol, say), as they are, mutated, or
/// replaced by arbitrary bytes.
pub fn structured_input(
    structured: impl Strategy<Value = Vec<u8>> + Clone + 'static,
    tokens: &'static [&'static [u8]],
    max_len: usize,
) -> BoxedStrategy<Vec<u8>> {
    let mutated = (structured.clone(), prop::collection::vec(mutation(), 1..6))
        .prop_map(move |(bytes, edits)| mutate(bytes, &edits, tokens));
    prop_oneof![4 => structured, 3 => mutated, 1 => prop::collection::vec(any::<u8>(), 0..max_len)].boxed()
}

/// Where an input is cut into reads.
#[derive(Debug, Clone)]
pub enum Split {
    /// At a few places.
    Cuts(Vec<Index>),
    /// One byte a read.
    Bytewise,
}

pub fn split() -> impl Strategy<Value = Split> {
    prop_oneof![6 => prop::collection::vec(any::<Index>(), 1..6).prop_map(Split::Cuts), 1 => Just(Split::Bytewise)]
}

/// `bytes` cut as `split` says; the pieces, in order, are `bytes` again (some may be empty).
pub fn parts<'a>(bytes: &'a [u8], split: &Split) -> Vec<&'a [u8]> {
    match split {
        Split::Bytewise => bytes.chunks(1).collect(),
        Split::Cuts(cuts) => {
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut out = Vec::with_capacity(at.len() + 1);
            let mut from = 0;
            for to in at {
                out.push(&bytes[from..to]);
                from = to;
            }
            out.push(&bytes[from..]);
            out
        }
    }
}
