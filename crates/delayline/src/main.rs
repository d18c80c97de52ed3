//! `crest-delayline`: crest's delay line as a process. Carries IP packets between pairs of TUN
//! devices (one in a subnet's namespace, one in the router's) through a DelayLine each way, where the
//! kernel has no netem. The TUN devices exist already (crest.network.topology made them); this only
//! attaches to them, relays, and writes its counters. It dies with its parent (PR_SET_PDEATHSIG), so a
//! killed crest leaves no delay line behind.
//!
//! One thread, one `ppoll` over every device (nanosecond timeouts: a millisecond-grained epoll_wait
//! would add up to a millisecond to a 1 ms delay). Each wake reads every readable device until EAGAIN
//! (at most READS_PER_WAKE packets, so one busy direction cannot starve the others' due packets), each
//! straight into its line's next slot, and writes each direction's due packets from the head of its
//! FIFO. The next wake is the earliest head over the directions (see line.rs). Packets are written
//! when due and never block the loop: a device that cannot take one now counts it dropped, as a full
//! NIC queue would. With --offload the devices carry a virtio_net_hdr before each packet and hand over
//! GSO packets of up to 64 KiB, which the line holds and writes back whole, header and all (slots of
//! 64 KiB: only the pages a packet fills become resident). Nothing is allocated per packet.
//!
//! It keeps crest's priority: raised (nice −10) it left packets 0.3 ms late instead of 1.1 ms where it
//! shares a core with the load engine, but took that core from the engine (0.61 of the rate the round
//! trip allows instead of 0.95; docs/networks.md).
//!
//! Every STATS_EVERY_NS it writes its stats file (JSON, replaced atomically): per pair and direction the
//! packets and bytes carried, those dropped (loss and devices that refused a write) and those the full
//! queue refused; for the whole line its CPU seconds, its peak RSS and how late packets left
//! (lateness.rs). Exit status: 0 when stopped by SIGTERM or SIGINT, 2 for a bad command line, 1 when a
//! device cannot be attached or fails; the reason is one line on stderr.

use std::io::Write;
use std::os::fd::RawFd;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use crest_delayline::cli::{self, Command, Config};
use crest_delayline::lateness::Lateness;
use crest_delayline::line::{Counters, DelayLine, Offered, Settings};

const STATS_EVERY_NS: u64 = 500_000_000;
const READS_PER_WAKE: usize = 256;
const NETNS_DIR: &str = "/run/netns";
const TUNSETIFF: libc::c_ulong = 0x4004_54CA;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54D0;
/// Checksums, TSO over IPv4 and IPv6: the offloads a Linux guest's virtio-net asks for.
const TUN_F_CSUM_TSO: libc::c_uint = 0x01 | 0x02 | 0x04;
/// struct virtio_net_hdr, before each packet with --offload (passed through untouched).
const VNET_HDR_BYTES: usize = 10;
/// The largest GSO packet a TUN device hands over (its default gso_max_size) and its header.
const GSO_SLOT_BYTES: usize = 65_536 + VNET_HDR_BYTES;
/// The smallest slot, whatever the devices' MTU says (IPv4's minimum reassembly size is 576).
const MIN_SLOT_BYTES: usize = 1_500;
/// Timer slack asked for (the default 50 µs would make every wake up to 50 µs late).
const TIMER_SLACK_NS: libc::c_ulong = 1_000;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Packets read from `src` go to `dst` through `line`.
struct Direction {
    src: RawFd,
    dst: RawFd,
    line: DelayLine,
    write_drops: u64,
}

fn main() -> ExitCode {
    let config = match cli::parse(std::env::args_os().skip(1)) {
        Ok(Command::Run(config)) => config,
        Ok(Command::Help) => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("crest-delayline: {message}\n{}", cli::USAGE.trim_end());
            return ExitCode::from(2);
        }
    };
    if die_with_parent() {
        return ExitCode::SUCCESS;
    }
    let unblocked = match catch_signals() {
        Ok(mask) => mask,
        Err(e) => return fail(&format!("cannot set up signals: {e}")),
    };
    match run(&config, &unblocked) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("crest delay line: {message}");
    ExitCode::from(1)
}

/// SIGTERM when the parent dies; true when it died already (nobody would stop us).
fn die_with_parent() -> bool {
    // SAFETY: prctl with integer arguments; getppid cannot fail.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0);
        libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0);
        libc::getppid() == 1
    }
}

/// SIGTERM and SIGINT set STOP; they are blocked except inside ppoll, so one arriving between a check
/// of STOP and the wait interrupts the wait instead of being missed. Returns the mask ppoll waits with.
fn catch_signals() -> std::io::Result<libc::sigset_t> {
    // SAFETY: plain sigaction/sigprocmask calls on zeroed, initialised structures.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut action.sa_mask);
        let mut block: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        for sig in [libc::SIGTERM, libc::SIGINT] {
            if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::sigaddset(&mut block, sig);
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        if libc::sigprocmask(libc::SIG_BLOCK, &block, &mut old) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for sig in [libc::SIGTERM, libc::SIGINT] {
            libc::sigdelset(&mut old, sig);
        }
        Ok(old)
    }
}

fn now_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn monotonic_ns() -> u64 {
    now_ns(libc::CLOCK_MONOTONIC)
}

fn ifreq(dev: &str) -> Result<[u8; 40], String> {
    let mut req = [0u8; 40];
    if dev.is_empty() || dev.len() >= 16 {
        return Err(format!("bad device name {dev:?}"));
    }
    req[..dev.len()].copy_from_slice(dev.as_bytes());
    Ok(req)
}

/// An fd on the TUN device `dev` of namespace `ns`, non-blocking, and the device's MTU (the process
/// moves into `ns` to open it).
fn attach(ns: &str, dev: &str, offload: bool) -> Result<(RawFd, usize), String> {
    let path = std::ffi::CString::new(format!("{NETNS_DIR}/{ns}")).map_err(|e| e.to_string())?;
    let os = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    // SAFETY: open/setns/ioctl/socket/close on descriptors this function owns, with buffers of the
    // sizes the kernel expects (struct ifreq is 40 bytes on Linux).
    unsafe {
        let nsfd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if nsfd < 0 {
            return Err(os(&format!("network namespace {ns}")));
        }
        let joined = libc::setns(nsfd, libc::CLONE_NEWNET);
        libc::close(nsfd);
        if joined != 0 {
            return Err(os(&format!("setns into network namespace {ns}")));
        }
        let fd = libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC | libc::O_NONBLOCK);
        if fd < 0 {
            return Err(os("/dev/net/tun"));
        }
        let mut req = ifreq(dev)?;
        let flags = IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 };
        req[16..18].copy_from_slice(&flags.to_ne_bytes());
        if libc::ioctl(fd, TUNSETIFF as _, req.as_mut_ptr()) != 0 {
            let e = os(&format!("{ns}:{dev}"));
            libc::close(fd);
            return Err(e);
        }
        if offload && libc::ioctl(fd, TUNSETOFFLOAD as _, TUN_F_CSUM_TSO as libc::c_ulong) != 0 {
            let e = os(&format!("offloads on {ns}:{dev}"));
            libc::close(fd);
            return Err(e);
        }
        let mut mtu = 0usize;
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock >= 0 {
            let mut req = ifreq(dev)?;
            if libc::ioctl(sock, libc::SIOCGIFMTU as _, req.as_mut_ptr()) == 0 {
                mtu = i32::from_ne_bytes([req[16], req[17], req[18], req[19]]).max(0) as usize;
            }
            libc::close(sock);
        }
        Ok((fd, mtu))
    }
}

struct Usage {
    cpu_s: f64,
    max_rss_kib: u64,
}

fn usage() -> Usage {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    // VmHWM, not ru_maxrss: Linux keeps ru_maxrss across execve, so it would report crest's own peak.
    let max_rss_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().trim_end_matches("kB").trim().to_string()))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Usage { cpu_s: secs(ru.ru_utime) + secs(ru.ru_stime), max_rss_kib }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn direction_json(d: &Direction) -> String {
    let Counters { packets, bytes, dropped, overflow } = d.line.counters();
    format!(
        "{{\"packets\": {packets}, \"bytes\": {bytes}, \"dropped\": {}, \"overflow\": {overflow}}}",
        dropped + d.write_drops
    )
}

fn write_stats(config: &Config, directions: &[Direction], late: &Lateness) -> std::io::Result<()> {
    let mut doc = String::from("{\"pairs\": [");
    for (k, p) in config.pairs.iter().enumerate() {
        if k > 0 {
            doc.push_str(", ");
        }
        doc.push_str(&format!(
            "{{\"a\": {}, \"b\": {}, \"a_to_b\": {}, \"b_to_a\": {}}}",
            json_str(&format!("{}:{}", p.ns_a, p.dev_a)),
            json_str(&format!("{}:{}", p.ns_b, p.dev_b)),
            direction_json(&directions[2 * k]),
            direction_json(&directions[2 * k + 1]),
        ));
    }
    let u = usage();
    let held: usize = directions.iter().map(|d| d.line.len()).sum();
    let touched: usize = directions.iter().map(|d| d.line.slots_touched()).sum();
    let buckets: Vec<String> = late.counts.iter().map(u64::to_string).collect();
    doc.push_str(&format!(
        "], \"cpu_s\": {:.6}, \"max_rss_kib\": {}, \"held_packets\": {held}, \"slots_touched\": {touched}, \
         \"slot_bytes\": {}, \"limit_packets\": {}, \"late_us_buckets\": [{}], \"late_sum_ns\": {}, \"offload\": {}, \"written_at_unix_s\": {:.6}}}\n",
        u.cpu_s,
        u.max_rss_kib,
        directions.first().map_or(0, |d| d.line.settings().slot_bytes),
        config.limit_packets,
        buckets.join(", "),
        late.sum_ns,
        config.offload,
        now_ns(libc::CLOCK_REALTIME) as f64 / 1e9,
    ));
    let tmp = config.stats_file.with_extension("json.tmp");
    std::fs::File::create(&tmp)?.write_all(doc.as_bytes())?;
    std::fs::rename(&tmp, &config.stats_file)
}

fn run(config: &Config, unblocked: &libc::sigset_t) -> Result<(), String> {
    let mut ends = Vec::with_capacity(config.pairs.len());
    for p in &config.pairs {
        let a = attach(&p.ns_a, &p.dev_a, config.offload).map_err(|e| format!("cannot attach to a TUN device: {e}"))?;
        let b = attach(&p.ns_b, &p.dev_b, config.offload).map_err(|e| format!("cannot attach to a TUN device: {e}"))?;
        ends.push((a, b));
    }
    let mtu = ends.iter().flat_map(|&((_, a), (_, b))| [a, b]).max().unwrap_or(0);
    let slot_bytes = if config.offload { GSO_SLOT_BYTES } else { mtu.clamp(MIN_SLOT_BYTES, 65_535) };
    let ns = |ms: f64| (ms * 1e6).round() as u64;
    let mut directions = Vec::with_capacity(2 * ends.len());
    for (k, &((fd_a, _), (fd_b, _))) in ends.iter().enumerate() {
        for (src, dst, which) in [(fd_a, fd_b, 0u64), (fd_b, fd_a, 1)] {
            let settings = Settings {
                delay_ns: ns(config.delay_ms),
                jitter_ns: ns(config.jitter_ms),
                loss: config.loss_pct / 100.0,
                seed: config.seed.wrapping_mul(2).wrapping_add(2 * k as u64 + which),
                limit_packets: config.limit_packets,
                slot_bytes,
                header_bytes: if config.offload { VNET_HDR_BYTES } else { 0 },
            };
            let line = DelayLine::new(settings)?;
            directions.push(Direction { src, dst, line, write_drops: 0 });
        }
    }
    let mut late = Lateness::default();
    let stats = |directions: &[Direction], late: &Lateness| {
        write_stats(config, directions, late).map_err(|e| format!("cannot write {}: {e}", config.stats_file.display()))
    };
    stats(&directions, &late)?;
    std::fs::write(&config.ready_file, "ready")
        .map_err(|e| format!("cannot write {}: {e}", config.ready_file.display()))?;
    // Direction i reads pollfd i.
    let mut pollfds: Vec<libc::pollfd> =
        directions.iter().map(|d| libc::pollfd { fd: d.src, events: libc::POLLIN, revents: 0 }).collect();
    let mut next_stats = monotonic_ns() + STATS_EVERY_NS;
    while !STOP.load(Ordering::Relaxed) {
        let now = monotonic_ns();
        let wake = directions.iter().filter_map(|d| d.line.next_due()).fold(next_stats, u64::min);
        let wait = wake.saturating_sub(now);
        let timeout = libc::timespec { tv_sec: (wait / 1_000_000_000) as _, tv_nsec: (wait % 1_000_000_000) as _ };
        // SAFETY: pollfds is a live, correctly sized array; the timespec and mask outlive the call.
        let ready = unsafe { libc::ppoll(pollfds.as_mut_ptr(), pollfds.len() as _, &timeout, unblocked) };
        if ready < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(format!("poll: {e}"));
        }
        if ready > 0 {
            for i in 0..directions.len() {
                let revents = pollfds[i].revents;
                if revents == 0 {
                    continue;
                }
                if revents & libc::POLLIN == 0 {
                    pollfds[i].events = 0; // a device gone (its namespace removed at close): stop polling it
                    continue;
                }
                read_batch(&mut directions[i])?;
                send_due(&mut directions, &mut late)?;
            }
        }
        send_due(&mut directions, &mut late)?;
        let now = monotonic_ns();
        if now >= next_stats {
            stats(&directions, &late)?;
            next_stats = now + STATS_EVERY_NS;
        }
    }
    stats(&directions, &late)
}

/// Read packets from a direction's device into its line until EAGAIN or READS_PER_WAKE.
fn read_batch(d: &mut Direction) -> Result<(), String> {
    for _ in 0..READS_PER_WAKE {
        let buf = d.line.receive_buf();
        // SAFETY: reads at most buf.len() bytes into buf.
        let n = unsafe { libc::read(d.src, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) => return Ok(()),
                Some(libc::EINTR) => continue,
                _ => return Err(format!("reading a TUN device: {e}")),
            }
        }
        let _: Offered = d.line.offer(n as usize, monotonic_ns());
    }
    Ok(())
}

/// Write every direction's packets that are due now, counting how late each left.
fn send_due(directions: &mut [Direction], late: &mut Lateness) -> Result<(), String> {
    let now = monotonic_ns();
    for d in directions.iter_mut() {
        while let Some((due, packet)) = d.line.due(now) {
            // SAFETY: writes the packet's bytes, which stay borrowed for the call.
            let n = unsafe { libc::write(d.dst, packet.as_ptr().cast(), packet.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN | libc::ENOBUFS | libc::EIO | libc::EINVAL) => d.write_drops += 1,
                    Some(libc::EINTR) => continue,
                    _ => return Err(format!("writing a TUN device: {e}")),
                }
            } else {
                late.record(now.saturating_sub(due));
            }
            d.line.release();
        }
    }
    Ok(())
}
