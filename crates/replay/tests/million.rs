//! A million-line log's table: its memory (the issue asks for tens of MB) and
//! that reading it streams (the table is a fraction of the file). Prints the
//! figures; `cargo test --release -- --nocapture million` shows them.

use std::io::Write;
use std::time::Instant;

use crest_replay::{load, Options};

#[test]
fn a_million_lines_in_tens_of_mb() {
    const LINES: u64 = 1_000_000;
    const PATHS: u64 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..LINES {
        let p = (i * 7919) % PATHS;
        let us = 1_700_000_000_000_000 + i * 997;
        writeln!(
            out,
            "10.0.{}.{} [{}.{:06}] \"GET /dir{:03}/file{p}.html HTTP/1.1\" 200 {}",
            i % 4,
            i % 250,
            us / 1_000_000,
            us % 1_000_000,
            p % 100,
            (p * 37) % 200_000,
        )
        .unwrap();
    }
    out.flush().unwrap();
    drop(out);
    let file_bytes = std::fs::metadata(&path).unwrap().len();

    let started = Instant::now();
    let table = load(&path, &Options::default()).unwrap();
    let took_s = started.elapsed().as_secs_f64();
    let bytes = table.memory_bytes();
    println!(
        "a {LINES}-line log ({} MB, {PATHS} paths): table {:.1} MB, read in {took_s:.2} s ({:.2} M lines/s)",
        file_bytes >> 20,
        bytes as f64 / (1 << 20) as f64,
        LINES as f64 / took_s / 1e6
    );
    assert_eq!((table.len() as u64, table.entries.len() as u64, table.sessions()), (LINES, PATHS, 500));
    assert!(bytes < 64 << 20, "{bytes} bytes");
    assert!(bytes < file_bytes / 2, "the table is not the file: {bytes} of {file_bytes} bytes");
}
