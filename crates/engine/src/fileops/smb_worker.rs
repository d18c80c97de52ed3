//! smb runs: each client one SMB2 session (crest-smb2, sans-IO) on one TCP
//! connection, many per worker thread on a `mio` event loop, one operation
//! in flight per client (closed loop). Sessions are set up before the run
//! starts, so a refused login or a missing share is bad input found before
//! any load; after the end each client deletes its tree when asked. Every
//! wait on the server has a deadline: a session's setup (connect, negotiate,
//! logon, tree connect) and each operation end by the run's timeout however
//! the server trickles its replies, and the cleanup by `CLEANUP_TIMEOUT`.
//! Owns the sockets, the mapping of loadfile lines to session calls and of
//! replies to outcomes; judging and recording are `client`'s.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crest_smb2::{Credentials, Event as SmbEvent, FileId, Session, SetupError};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::connection::connect_blocking;
use crate::error::{ConfigError, ErrorKind, StartError};
use crate::exec::live::LiveCounters;
use crate::exec::{start_instant, RunHandle};
use crate::exec::{thread_cpu_time, Outcome, WAKE_TOKEN};
use crate::results::stats::Stats;

use super::client::Client;
use super::handles::Handles;
use super::loadfile::{Line, Loadfile};
use super::op::{Expect, OpKind, Outcome as OpOutcome};
use super::plan::{Backend, FilePlan};

/// Reads land here (one per worker), large enough for a 64 KiB READ reply.
const READ_BUFFER_BYTES: usize = 256 * 1024;
/// How long the cleanup after the end may take.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Desired access for every open: whatever the server grants the user.
const MAXIMUM_ALLOWED: u32 = 0x0200_0000;
/// Share read, write and delete, as a Windows client opening office files does.
const SHARE_ALL: u32 = 0x7;
/// The create options SMB2 accepts from a loadfile (directory, write-through,
/// sequential, non-directory, no-EA, random access, delete-on-close).
const CREATE_OPTIONS_MASK: u32 = 0x1 | 0x2 | 0x4 | 0x40 | 0x200 | 0x800 | 0x1000;

/// A session that has connected and is ready, with its socket.
struct Ready {
    stream: TcpStream,
    session: Session,
}

/// Connects and sets up every client's session (blocking), then starts the workers.
pub(super) fn start(plan: Arc<FilePlan>) -> Result<RunHandle, StartError> {
    let Backend::Smb { host, port, share, user, domain, password } = &plan.backend else {
        unreachable!("invariant: an smb plan")
    };
    let addr = resolve(host, *port)?;
    let mut sessions = Vec::with_capacity(plan.connections as usize);
    for index in 0..plan.connections as usize {
        let credentials =
            Credentials { user: user.clone(), password: password.expose().to_string(), domain: domain.clone() };
        let source = (!plan.source_addrs.is_empty()).then(|| plan.source_addrs[index % plan.source_addrs.len()]);
        sessions.push(set_up(addr, source, host, share, credentials, plan.timeout)?);
    }
    let origin = start_instant(plan.start_at_unix_s);
    let (tx, mut handle) = RunHandle::new(super::facts(&plan, plan.threads), plan.duration, plan.report_part, origin);
    let cancel = handle.cancel_flag();
    let threads = plan.threads as usize;
    let mut first = 0u32;
    let mut sessions = sessions.into_iter();
    for index in 0..threads {
        let count = plan.connections as usize / threads + usize::from(index < plan.connections as usize % threads);
        let mine: Vec<Ready> = sessions.by_ref().take(count).collect();
        let poll = Poll::new().map_err(|e| machine("cannot create an event loop (epoll)", &e))?;
        let waker = Waker::new(poll.registry(), WAKE_TOKEN).map_err(|e| machine("cannot create a waker", &e))?;
        let live = Arc::new(LiveCounters::default());
        handle.add_worker(live.clone(), Some(waker));
        let (plan, stop, tx) = (plan.clone(), cancel.clone(), tx.clone());
        let first_id = first;
        first += count as u32;
        thread::Builder::new()
            .name(format!("crest-worker-smb-{index}"))
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    Worker::new(poll, &plan, mine, first_id, origin).run(&plan, &stop, &live)
                }));
                let _ = tx.send(outcome);
            })
            .map_err(|e| {
                cancel.store(true, Ordering::Relaxed);
                machine("cannot spawn a worker thread", &e)
            })?;
    }
    Ok(handle)
}

/// Checks that the target takes the login and the share: one session set
/// up and dropped, as `start` would, before any load.
pub fn probe(plan: &FilePlan) -> Result<(), ConfigError> {
    let Backend::Smb { host, port, share, user, domain, password } = &plan.backend else { return Ok(()) };
    let credentials =
        Credentials { user: user.clone(), password: password.expose().to_string(), domain: domain.clone() };
    let source = plan.source_addrs.first().copied();
    set_up(resolve(host, *port)?, source, host, share, credentials, plan.timeout).map(drop)
}

fn machine(what: &str, e: &io::Error) -> StartError {
    StartError::Machine(format!("cannot start the engine: {what}: {e}"))
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, ConfigError> {
    (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| ConfigError::new("url", format!("cannot resolve SMB host '{host}': check the URL")))
}

/// One session set up over a blocking socket: negotiate, log on, connect the
/// tree, all of it by one deadline `timeout` away (the run's timeout: each
/// read and write waits only for what is left of it, so a server trickling
/// its replies cannot stretch it). Every failure is the target refusing or
/// missing: bad input (`ConfigError`), found before any load.
fn set_up(
    addr: SocketAddr,
    source: Option<IpAddr>,
    host: &str,
    share: &str,
    credentials: Credentials,
    timeout: Duration,
) -> Result<Ready, ConfigError> {
    let user = credentials.user.clone();
    let unreachable = |e: io::Error| -> ConfigError {
        ConfigError::new(
            "url",
            format!("cannot reach the SMB server at {addr}: {}: is it running?", super::fileio::io_reason(&e)),
        )
    };
    let late = || {
        ConfigError::new(
            "url",
            format!("the SMB server at {addr} did not finish the login within {timeout:?} ({{timeout_s}})"),
        )
    };
    let deadline = Instant::now() + timeout;
    let mut stream = connect_blocking(addr, source, timeout).map_err(|e| match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => late(),
        _ => unreachable(e),
    })?;
    stream.set_nodelay(true).map_err(unreachable)?;
    let mut session = Session::new(host, share, credentials);
    let mut buf = vec![0; 64 * 1024];
    loop {
        while let Some(event) = session.poll_event() {
            match event {
                SmbEvent::Connected => return Ok(Ready { stream, session }),
                SmbEvent::Failed(why) => return Err(refused(&why, &user, share, addr)),
                _ => {}
            }
        }
        // What is left of the deadline bounds the next wait (zero would mean no timeout at all).
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        let out = session.output();
        let writing = !out.is_empty();
        let done = if !writing {
            stream.set_read_timeout(Some(left)).map_err(unreachable)?;
            stream.read(&mut buf)
        } else {
            stream.set_write_timeout(Some(left)).map_err(unreachable)?;
            stream.write(out)
        };
        let n = match done {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) => return Err(late()),
            Err(e) => return Err(unreachable(e)),
        };
        if writing && n > 0 {
            session.consume_output(n);
            continue;
        }
        if n == 0 {
            return Err(ConfigError::new(
                "url",
                format!("the SMB server at {addr} closed the connection during the login"),
            ));
        }
        session.receive(&buf[..n]).map_err(|e| ConfigError::new("url", format!("SMB server at {addr}: {e}")))?;
    }
}

fn refused(why: &SetupError, user: &str, share: &str, addr: SocketAddr) -> ConfigError {
    match why {
        SetupError::LogonFailure => ConfigError::new(
            "password",
            format!("the SMB server at {addr} refused user {user}: wrong user or password"),
        ),
        SetupError::BadShare => ConfigError::new(
            "url",
            format!("the SMB server at {addr} has no share '{share}' for user {user}: check the share name"),
        ),
        other => ConfigError::new("url", format!("the SMB server at {addr} refused the session: {other}")),
    }
}

/// What a client is doing.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Waiting until this time (start delay, timestamp, think time).
    Waiting(Instant),
    /// An operation of line `line` is in flight since `began`.
    InFlight { line: usize, class: usize, began: Instant },
    /// Closing a handle opened although the line expected a failure; its outcome is recorded already.
    ClosingStray { since: Instant },
    /// Deleting its tree after the end.
    Cleaning,
    /// Done (ended, stopped, or its connection died).
    Idle,
}

struct Slot {
    stream: mio::net::TcpStream,
    session: Session,
    client: Client,
    handles: Handles<FileId>,
    state: State,
    writable_wanted: bool,
    dead: bool,
    /// Cleanup steps sent after the end: 1 its tree's deletion, 2 then `/clients`'.
    cleaned: u8,
    path: String,
    path2: String,
}

struct Worker {
    poll: Poll,
    slots: Vec<Slot>,
    stats: Stats,
    origin: Instant,
    scratch: Box<[u8]>,
}

impl Worker {
    fn new(poll: Poll, plan: &FilePlan, ready: Vec<Ready>, first_id: u32, origin: Instant) -> Self {
        let slots = ready
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let id = first_id + i as u32;
                r.stream.set_nonblocking(true).expect("invariant: a connected socket can be made nonblocking");
                let mut stream = mio::net::TcpStream::from_std(r.stream);
                poll.registry()
                    .register(&mut stream, Token(i), Interest::READABLE)
                    .expect("invariant: a fresh socket registers");
                let first = super::first_start(plan, origin, id);
                let score = (id / plan.connections_per_client) as usize;
                Slot {
                    stream,
                    session: r.session,
                    // dbench's id (in every path) is global; quotas and scores are this run's.
                    client: Client::new(plan.first_client + id, score, first, super::quota(plan, id)),
                    handles: Handles::default(),
                    state: State::Waiting(first),
                    writable_wanted: false,
                    dead: false,
                    cleaned: 0,
                    path: String::with_capacity(256),
                    path2: String::with_capacity(256),
                }
            })
            .collect();
        Self {
            poll,
            slots,
            stats: Stats::new(plan.duration, OpKind::COUNT, plan.clients() as usize, plan.window),
            origin,
            scratch: vec![0; READ_BUFFER_BYTES].into_boxed_slice(),
        }
    }

    fn run(mut self, plan: &FilePlan, cancel: &AtomicBool, live: &LiveCounters) -> Outcome {
        let file = plan.loadfile.clone();
        let end = plan.duration.map(|d| self.origin + d);
        let mut events = Events::with_capacity(1024);
        let mut ended_at = None;
        let mut cleanup_deadline = None;
        loop {
            let now = Instant::now();
            let cancelled = cancel.load(Ordering::Relaxed);
            // A count-bounded run ends when every client is out of quota; otherwise stopped clients stay
            // stopped to the end, as dbench's exited clients do.
            let spent = plan.max_operations.is_some() && self.all_idle();
            if ended_at.is_none() && (cancelled || end.is_some_and(|e| now >= e) || spent) {
                ended_at = Some(now);
                // In-flight operations at the end are dropped uncounted, as HTTP runs drop theirs.
                if plan.cleanup && !cancelled {
                    cleanup_deadline = Some(now + CLEANUP_TIMEOUT);
                    for i in 0..self.slots.len() {
                        self.begin_cleanup(i);
                    }
                } else {
                    break;
                }
            }
            if let Some(deadline) = cleanup_deadline {
                if cancelled || now >= deadline || self.slots.iter().all(|s| s.dead || s.state == State::Idle) {
                    break;
                }
            } else {
                for i in 0..self.slots.len() {
                    self.step(i, &file, plan, now);
                }
            }
            live.publish(&self.stats);
            let mut wait = Duration::from_millis(50);
            for slot in &self.slots {
                if let State::Waiting(at) = slot.state {
                    wait = wait.min(at.saturating_duration_since(now));
                }
            }
            if let (None, Some(e)) = (ended_at, end) {
                wait = wait.min(e.saturating_duration_since(now));
            }
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => panic!("event loop failed: {e}"),
            }
            for event in &events {
                if event.token() == WAKE_TOKEN {
                    continue;
                }
                let i = event.token().0;
                if event.is_writable() {
                    self.flush(i);
                }
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    self.read(i, &file, plan);
                }
            }
            self.check_timeouts(plan, Instant::now());
        }
        live.publish(&self.stats);
        Outcome { stats: self.stats, cpu: thread_cpu_time(), ended: ended_at.unwrap_or_else(Instant::now) }
    }

    fn all_idle(&self) -> bool {
        self.slots.iter().all(|s| s.dead || s.state == State::Idle)
    }

    /// Begins the next operation of client `i` when it is due.
    fn step(&mut self, i: usize, file: &Loadfile, plan: &FilePlan, now: Instant) {
        let slot = &mut self.slots[i];
        if slot.dead {
            return;
        }
        match slot.state {
            State::Waiting(at) if at <= now => {}
            _ => return,
        }
        let Some((line, due)) = slot.client.next(file, now) else {
            slot.state = State::Idle;
            return;
        };
        if due > now {
            slot.state = State::Waiting(due);
            return;
        }
        let line_index = slot.client.line_index();
        match issue(slot, file, line) {
            Ok(()) => {
                slot.state = State::InFlight { line: line_index, class: line.kind.index(), began: now };
                self.flush(i);
            }
            Err(why) => {
                let at = now.saturating_duration_since(self.origin);
                slot.client.record(&mut self.stats, line, Err(why), at, at);
                let next = slot.client.advance(file, now, plan.think_time);
                slot.state = State::Waiting(next.unwrap_or(now));
            }
        }
    }

    fn begin_cleanup(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        if slot.dead {
            return;
        }
        // A client still waiting for a reply cleans up once it arrives (the session takes one at a time).
        if matches!(slot.state, State::InFlight { .. } | State::ClosingStray { .. }) {
            slot.state = State::Cleaning;
            return;
        }
        slot.state = State::Cleaning;
        if slot.session.is_ready() {
            cleanup_step(slot);
            self.flush(i);
        } else {
            slot.state = State::Idle;
        }
    }

    fn flush(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        while !slot.dead {
            let out = slot.session.output();
            if out.is_empty() {
                break;
            }
            match slot.stream.write(out) {
                Ok(0) => {
                    self.lose(i, "the server closed the connection");
                    return;
                }
                Ok(n) => slot.session.consume_output(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let why = format!("writing to the server failed: {}", super::fileio::io_reason(&e));
                    self.lose(i, &why);
                    return;
                }
            }
        }
        let slot = &mut self.slots[i];
        let want = !slot.dead && !slot.session.output().is_empty();
        if want != slot.writable_wanted {
            let interest = if want { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
            let _ = self.poll.registry().reregister(&mut slot.stream, Token(i), interest);
            slot.writable_wanted = want;
        }
    }

    fn read(&mut self, i: usize, file: &Loadfile, plan: &FilePlan) {
        loop {
            let slot = &mut self.slots[i];
            if slot.dead {
                break;
            }
            match slot.stream.read(&mut self.scratch) {
                Ok(0) => {
                    self.lose(i, "the server closed the connection");
                    break;
                }
                Ok(n) => {
                    if let Err(e) = slot.session.receive(&self.scratch[..n]) {
                        let why = format!("SMB protocol error: {e}");
                        self.lose(i, &why);
                        break;
                    }
                    self.drain_events(i, file, plan);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let why = format!("reading from the server failed: {}", super::fileio::io_reason(&e));
                    self.lose(i, &why);
                    break;
                }
            }
        }
        self.flush(i);
    }

    fn drain_events(&mut self, i: usize, file: &Loadfile, plan: &FilePlan) {
        while let Some(event) = self.slots[i].session.poll_event() {
            let now = Instant::now();
            let slot = &mut self.slots[i];
            let done = match event {
                SmbEvent::Done(done) => done,
                SmbEvent::Failed(why) => {
                    let why = format!("the session failed: {why}");
                    self.lose(i, &why);
                    return;
                }
                SmbEvent::Connected | SmbEvent::Closed => continue,
            };
            match slot.state {
                State::InFlight { line, began, .. } => {
                    let line = &file.lines[line];
                    let (outcome, stray) = outcome_of(slot, line, &done);
                    let at = |t: Instant| t.saturating_duration_since(self.origin);
                    slot.client.record(&mut self.stats, line, outcome, at(began), at(now));
                    let next = slot.client.advance(file, now, plan.think_time);
                    slot.state = State::Waiting(next.unwrap_or(now));
                    if let Some(fid) = stray {
                        slot.session.close(fid);
                        slot.state = State::ClosingStray { since: now };
                    }
                }
                State::ClosingStray { .. } => slot.state = State::Waiting(now),
                // The reply of the operation in flight at the end, or of a cleanup step: the next step. An
                // open that succeeded after the end is closed first: its handle, held by no one, would keep
                // its file, and so the client's tree, from being deleted.
                State::Cleaning if slot.session.is_ready() => match done.fid {
                    Some(fid) if done.status == 0 => slot.session.close(fid),
                    _ => cleanup_step(slot),
                },
                State::Cleaning => slot.state = State::Idle,
                State::Waiting(_) | State::Idle => {}
            }
        }
    }

    /// Fails the slot's connection: the operation in flight is an error, the client stops.
    fn lose(&mut self, i: usize, why: &str) {
        let slot = &mut self.slots[i];
        if slot.dead {
            return;
        }
        slot.dead = true;
        let _ = self.poll.registry().deregister(&mut slot.stream);
        if let State::InFlight { class, .. } = slot.state {
            let at = Instant::now().saturating_duration_since(self.origin);
            self.stats.record_issued(class, 1);
            self.stats.record_error(at, ErrorKind::Read, class, slot.client.score, Some(&why));
        }
        slot.client.stopped = Some(why.to_string());
        slot.state = State::Idle;
    }

    fn check_timeouts(&mut self, plan: &FilePlan, now: Instant) {
        for i in 0..self.slots.len() {
            let slot = &self.slots[i];
            let (since, class) = match slot.state {
                State::InFlight { began, class, .. } => (began, class),
                State::ClosingStray { since } => (since, OpKind::Close.index()),
                _ => continue,
            };
            if !slot.dead && now.saturating_duration_since(since) > plan.timeout {
                let why = format!("no reply within {:?}", plan.timeout);
                let at = now.saturating_duration_since(self.origin);
                let score = slot.client.score;
                self.stats.record_issued(class, 1);
                self.stats.record_error(at, ErrorKind::Timeout, class, score, Some(&why));
                let slot = &mut self.slots[i];
                slot.state = State::Idle;
                slot.dead = true;
                slot.client.stopped = Some(why);
                let _ = self.poll.registry().deregister(&mut slot.stream);
            }
        }
    }
}

/// The next step of a client's cleanup after the end (NetBench's Save Workspace = No): close what it
/// still holds open, one reply at a time, then delete its tree, then `/clients` if it is empty.
fn cleanup_step(slot: &mut Slot) {
    if let Some(fid) = slot.handles.pop() {
        slot.session.close(fid);
    } else if slot.cleaned == 0 {
        let tree = format!("/clients/client{}", slot.client.id);
        slot.session.deltree(&tree);
        slot.cleaned = 1;
    } else if slot.cleaned == 1 {
        slot.session.rmdir("/clients");
        slot.cleaned = 2;
    } else {
        slot.state = State::Idle;
    }
}

/// Starts `line`'s operation on the slot's session. Err: the client must
/// stop (an unknown handle), recorded by the caller.
fn issue(slot: &mut Slot, file: &Loadfile, line: &Line) -> Result<(), String> {
    let (paths, _) = line.kind.arity();
    if paths > 0 {
        file.resolve(line, 0, "", slot.client.id, &mut slot.path);
    }
    if paths > 1 {
        file.resolve(line, 1, "", slot.client.id, &mut slot.path2);
    }
    let n = line.numbers;
    // Every handle-using operation names its handle first: one lookup, fatal when it is not open.
    let fid = match line.kind.uses_handle() {
        true => Some(slot.handles.get(n[0]).copied().ok_or_else(|| {
            format!("line {}: {} of handle {}, which is not open", line.number, line.kind.name(), n[0])
        })?),
        false => None,
    };
    let f = || fid.expect("invariant: a handle-using operation");
    let s = &mut slot.session;
    match line.kind {
        OpKind::NtCreateX => {
            let options = (n[0] as u32) & CREATE_OPTIONS_MASK;
            s.open(&slot.path, MAXIMUM_ALLOWED, SHARE_ALL, n[1] as u32, options, 0);
        }
        OpKind::Close => {
            slot.handles.remove(n[0]);
            s.close(f());
        }
        OpKind::ReadX => s.read(f(), n[1].max(0) as u64, n[2].max(0) as u32),
        OpKind::WriteX => s.write(f(), n[1].max(0) as u64, n[2].max(0) as u32),
        OpKind::Flush => s.flush(f()),
        OpKind::LockX => s.lock(f(), n[1].max(0) as u64, n[2].max(0) as u64),
        OpKind::UnlockX => s.unlock(f(), n[1].max(0) as u64, n[2].max(0) as u64),
        OpKind::QueryFileInformation => s.query_file_info(f(), file_class(n[1])),
        OpKind::SetFileInformation => s.set_file_times(f()),
        OpKind::Rename => s.rename(&slot.path, &slot.path2),
        OpKind::Unlink => s.unlink(&slot.path),
        OpKind::Deltree => s.deltree(&slot.path),
        OpKind::Mkdir => s.mkdir(&slot.path),
        OpKind::Rmdir => s.rmdir(&slot.path),
        OpKind::QueryPathInformation => s.query_path_info(&slot.path, file_class(n[0])),
        OpKind::QueryFsInformation => s.query_fs_info(fs_class(n[0])),
        OpKind::FindFirst => s.find(&slot.path, n[1].clamp(1, 65_535) as u32),
    }
    Ok(())
}

/// The outcome of a reply, and a handle to close again when an open
/// succeeded although the line expected it to fail.
fn outcome_of(slot: &mut Slot, line: &Line, done: &crest_smb2::Done) -> (Result<OpOutcome, String>, Option<FileId>) {
    let ok = done.status == 0;
    let n = line.numbers;
    let bytes = match line.kind {
        // dbench counts the size asked for, short read or not (reference §4.6).
        OpKind::ReadX if ok => n[2].max(0) as u64,
        OpKind::WriteX if ok => n[2].max(0) as u64,
        _ => 0,
    };
    let outcome = OpOutcome { ok, status: done.status, bytes };
    if line.kind == OpKind::WriteX && ok && done.bytes != n[3].max(0) as u64 {
        return (Err(format!("line {}: WriteX wrote {} of {} bytes", line.number, done.bytes, n[3])), None);
    }
    if line.kind == OpKind::NtCreateX && ok {
        if let Some(fid) = done.fid {
            if line.expect == Expect::Success || line.expect == Expect::Any {
                if slot.handles.insert(n[2], fid).is_err() {
                    let why = format!("more than {} open handles", super::handles::MAX_HANDLES);
                    return (Err(why), Some(fid));
                }
            } else {
                return (Ok(outcome), Some(fid));
            }
        }
    }
    (Ok(outcome), None)
}

/// SMB1 query-file levels as the loadfile writes them → SMB2 FileInformationClass.
fn file_class(level: i64) -> u8 {
    match level {
        l if l >= 1000 => (l - 1000).clamp(1, 255) as u8,
        0x101 => 4,  // basic
        0x102 => 5,  // standard
        0x107 => 18, // all
        _ => 18,
    }
}

/// SMB1 query-FS levels → SMB2 FsInformationClass.
fn fs_class(level: i64) -> u8 {
    match level {
        l if l >= 1000 => (l - 1000).clamp(1, 255) as u8,
        0x105 => 5, // attribute
        0x102 => 1, // volume
        _ => 3,     // size (SMB_INFO_ALLOCATION, SMB_QUERY_FS_SIZE_INFO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadfile_levels_map_to_smb2_classes() {
        assert_eq!(file_class(1004), 4);
        assert_eq!(file_class(1005), 5);
        assert_eq!(file_class(258), 5);
        assert_eq!(fs_class(259), 3);
        assert_eq!(fs_class(1), 3);
        assert_eq!(fs_class(1007), 7);
    }
}
