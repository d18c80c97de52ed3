//! Times N open/write/close cycles of one session against a private smbd on
//! loopback, on one thread, and reports cycles per second and CPU time per
//! cycle for this client and for smbd:
//!
//! ```text
//! cargo run -p crest-smb2 --release --example smb2_rate -- [cycles] [write bytes]
//! ```
//!
//! Needs /usr/sbin/smbd and root (like the live tests); exits 0 saying why
//! where it cannot run. Bounded: at most the cycles asked for, at most 60 s.

#[path = "../tests/support/mod.rs"]
mod support;

use crest_smb2::create::{access, attributes, disposition, options, share};
use crest_smb2::{status, Event};
use std::time::{Duration, Instant};
use support::smbd::{Smbd, PASSWORD, SHARE, USER};
use support::{credentials, Conn};

const WARMUP_CYCLES: u32 = 200;
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// CPU time of the calling thread (scheduler accounting, ns resolution).
fn thread_cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(s.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// CPU time (user + system) of every process in smbd's process group, in
/// clock ticks of 10 ms: coarse, so only meaningful over many cycles.
fn group_cpu_ticks(pgid: u32) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // Fields after the parenthesised command name; pgrp is the 3rd of
        // them, utime and stime the 12th and 13th.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { continue };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.get(2).and_then(|v| v.parse::<u32>().ok()) == Some(pgid) {
            total += f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
        }
    }
    total
}

fn cycle(conn: &mut Conn, i: u32, write_len: u32) {
    let path = format!("f{:03}.dat", i % 100);
    let Event::Done(d) = conn.run(|s| {
        s.open(
            &path,
            access::GENERIC_READ | access::GENERIC_WRITE,
            share::READ | share::WRITE,
            disposition::OVERWRITE_IF,
            options::NON_DIRECTORY_FILE,
            attributes::ARCHIVE,
        )
    }) else {
        panic!("open did not finish")
    };
    let fid = d.fid.unwrap_or_else(|| panic!("open: {}", status::name(d.status)));
    let wrote = conn.run(|s| s.write(fid, 0, write_len));
    assert!(matches!(wrote, Event::Done(d) if d.status == status::OK && d.bytes == u64::from(write_len)), "{wrote:?}");
    let closed = conn.run(|s| s.close(fid));
    assert!(matches!(closed, Event::Done(d) if d.status == status::OK), "{closed:?}");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let cycles: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5000);
    let write_len: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(4096);
    let Some(smbd) = Smbd::start("") else { return };
    let (mut conn, event) = Conn::open(smbd.port, SHARE, credentials(USER, PASSWORD));
    assert_eq!(event, Event::Connected);
    for i in 0..WARMUP_CYCLES {
        cycle(&mut conn, i, write_len);
    }

    conn.in_session = Duration::ZERO;
    let (start, cpu0, smbd0) = (Instant::now(), thread_cpu(), group_cpu_ticks(smbd.pgid()));
    let mut done = 0;
    while done < cycles && start.elapsed() < TIME_LIMIT {
        cycle(&mut conn, done, write_len);
        done += 1;
    }
    let (wall, cpu, smbd_ticks) = (start.elapsed(), thread_cpu() - cpu0, group_cpu_ticks(smbd.pgid()) - smbd0);

    let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(done);
    println!(
        "{done} cycles of open + write {write_len} B + close (3 requests each), one session, one thread, loopback"
    );
    println!(
        "  wall        {:.2} s: {:.0} cycles/s, {:.0} requests/s, {:.1} µs per cycle",
        wall.as_secs_f64(),
        f64::from(done) / wall.as_secs_f64(),
        3.0 * f64::from(done) / wall.as_secs_f64(),
        per(wall)
    );
    println!(
        "  client CPU  {:.1} µs per cycle ({:.1} µs per request, socket syscalls included)",
        per(cpu),
        per(cpu) / 3.0
    );
    println!(
        "  of which    {:.1} µs per cycle inside crest_smb2 (encode, parse, state; socket calls excluded)",
        per(conn.in_session)
    );
    println!("  smbd CPU    {:.1} µs per cycle (10 ms tick accounting)", per(Duration::from_millis(10 * smbd_ticks)));
}
