//! Fuzzing the line parser, format strings and whole logs: arbitrary bytes, and
//! real-looking lines mutated. Nothing may panic. 256 cases per target by
//! default; PROPTEST_CASES sets how many (as `make fuzz` does for the
//! engine's targets). A failing case's seed is kept in
//! tests/proptest-regressions/fuzz_line.txt, replayed first by every later run.

use crest_replay::{parse_line, Format, Options, Table};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;

use crate::formats::{
    APACHE_COMBINED, APACHE_COMMON, CADDY, CREST_APACHE, CREST_BUILTIN, CREST_LIGHTTPD, CREST_NGINX, H2O_DEFAULT,
    NGINX_COMBINED,
};

const SEEDS: &[&str] = &[
    NGINX_COMBINED,
    APACHE_COMBINED,
    APACHE_COMMON,
    H2O_DEFAULT,
    CADDY,
    CREST_NGINX,
    CREST_APACHE,
    CREST_LIGHTTPD,
    CREST_BUILTIN,
];

const FORMATS: &[&str] = &[
    "combined",
    "common",
    "crest",
    "caddy",
    r#"$remote_addr [$time_iso8601] "$request_method $uri$is_args$args" $status $bytes_sent $request_time "$http_cookie""#,
    r#"%h %{usec}t .%{msec_frac}t "%r" %>s %b %D "%{User-Agent}i""#,
];

/// Bytes the parsers branch on.
const INTERESTING: &[u8] = b" \"[]{}:,.-+\\x/0123456789ZT\t\r\x00\x7f\xff";

fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases);
    let path = format!("{}/tests/proptest-regressions/fuzz_line.txt", env!("CARGO_MANIFEST_DIR"));
    ProptestConfig {
        cases,
        // Leaked, once per test: proptest wants a 'static path.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(Box::leak(path.into_boxed_str())))),
        ..ProptestConfig::default()
    }
}

fn mutate(seed: &str, edits: &[(Index, u8, u8)]) -> Vec<u8> {
    let mut line = seed.as_bytes().to_vec();
    for (at, byte, op) in edits {
        let i = at.index(line.len() + 1);
        let b = if byte % 2 == 0 { INTERESTING[usize::from(*byte) % INTERESTING.len()] } else { *byte };
        match op % 4 {
            0 if i < line.len() => line[i] = b,
            1 => line.insert(i, b),
            2 if i < line.len() => {
                line.remove(i);
            }
            _ => line.truncate(i),
        }
    }
    line
}

fn every_format(line: &[u8]) {
    for spec in FORMATS {
        let _ = parse_line(line, &Format::parse(spec).unwrap());
    }
    let _ = Format::detect(line);
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn arbitrary_bytes(line in proptest::collection::vec(any::<u8>(), 0..300)) {
        every_format(&line);
    }

    #[test]
    fn mutated_lines(seed in 0..SEEDS.len(), edits in proptest::collection::vec((any::<Index>(), any::<u8>(), any::<u8>()), 1..6)) {
        every_format(&mutate(SEEDS[seed], &edits));
    }

    #[test]
    fn format_strings(spec in "[%$a-z{}<>!, \"\\\\\\[\\]]{0,40}") {
        let _ = Format::parse(&spec);
    }

    #[test]
    fn whole_logs(seeds in proptest::collection::vec((0..SEEDS.len(), proptest::collection::vec((any::<Index>(), any::<u8>(), any::<u8>()), 0..3)), 1..8)) {
        let mut log = Vec::new();
        for (seed, edits) in &seeds {
            log.extend(mutate(SEEDS[*seed], edits));
            log.push(b'\n');
        }
        for format in ["auto", "combined", "crest", "caddy"] {
            let options = Options { format: format.into(), max_bad_lines: u64::MAX, ..Options::default() };
            if let Ok(table) = Table::read(&log[..], "fuzz.log", &options) {
                prop_assert_eq!(table.session_order.len(), table.len());
                prop_assert!(table.offsets_us.windows(2).all(|w| w[0] <= w[1]));
                let _ = table.summary();
            }
        }
    }
}
