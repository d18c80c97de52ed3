//! The `fileio` backend (reference §4.6): each operation executed with the
//! kernel's file calls on a directory, as dbench's fileio does, by one
//! client on its own thread (file calls block). Owns the per-client handle
//! table and the mapping of errors to NT statuses; it judges nothing (the
//! caller compares the outcome with the line) and records nothing.

use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};

use super::handles::Handles;
use super::loadfile::{Line, Loadfile};
use super::op::{OpKind, Outcome};

/// Bytes of the pattern every write sends (larger writes repeat it).
const PATTERN_BYTES: usize = 64 * 1024;

/// What executing a line came to.
#[derive(Debug)]
pub enum Exec {
    /// The operation ran (its outcome may still differ from the line's expectation).
    Done(Outcome),
    /// The client cannot go on: dbench exits it (an unknown handle, too many open handles).
    Fatal(String),
}

/// One client's fileio state.
pub struct Fileio {
    prefix: String,
    id: u32,
    handles: Handles<File>,
    path: String,
    path2: String,
    pattern: Box<[u8]>,
    buf: Box<[u8]>,
}

impl Fileio {
    /// Client `id` working under directory `dir`.
    pub fn new(dir: &str, id: u32) -> Self {
        Self {
            prefix: dir.trim_end_matches('/').to_string(),
            id,
            handles: Handles::default(),
            path: String::with_capacity(256),
            path2: String::with_capacity(256),
            pattern: (0..PATTERN_BYTES).map(|i| (i % 251) as u8).collect(),
            buf: vec![0; PATTERN_BYTES].into_boxed_slice(),
        }
    }

    /// Executes `line` of `file`.
    pub fn execute(&mut self, file: &Loadfile, line: &Line) -> Exec {
        let (want_paths, _) = line.kind.arity();
        if want_paths > 0 {
            file.resolve(line, 0, &self.prefix, self.id, &mut self.path);
        }
        if want_paths > 1 {
            file.resolve(line, 1, &self.prefix, self.id, &mut self.path2);
        }
        let n = line.numbers;
        let done = |r: io::Result<u64>| Exec::Done(outcome(r));
        match line.kind {
            OpKind::Deltree => {
                let _ = fs::remove_dir_all(&self.path);
                Exec::Done(outcome(Ok(0)))
            }
            OpKind::Mkdir => done(mkdir(&self.path, 0o777)),
            OpKind::Rmdir => done(fs::remove_dir(&self.path).map(|()| 0)),
            OpKind::NtCreateX => self.create(n[0], n[1], n[2], line.expect.met_by(true)),
            OpKind::Close => match self.handles.remove(n[0]) {
                Some(f) => {
                    drop(f);
                    done(Ok(0))
                }
                None => unknown_handle(line),
            },
            OpKind::ReadX => {
                let size = n[2].max(0) as u64;
                let Some(f) = self.handles.get(n[0]) else { return unknown_handle(line) };
                let r = read_at(f, &mut self.buf, n[1].max(0) as u64, size);
                // A short read is only a warning for dbench, and the size asked for counts.
                Exec::Done(Outcome { ok: r.is_ok(), status: r.err().map_or(0, |e| nt_status(&e)), bytes: size })
            }
            OpKind::WriteX => {
                let size = n[2].max(0) as u64;
                let Some(f) = self.handles.get(n[0]) else { return unknown_handle(line) };
                match write_at(f, &self.pattern, n[1].max(0) as u64, size) {
                    Ok(written) if written == n[3].max(0) as u64 => {
                        Exec::Done(Outcome { ok: true, status: 0, bytes: size })
                    }
                    Ok(written) => {
                        Exec::Fatal(format!("line {}: WriteX wrote {written} of {} bytes", line.number, n[3]))
                    }
                    Err(e) => Exec::Done(Outcome { ok: false, status: nt_status(&e), bytes: 0 }),
                }
            }
            OpKind::Flush => match self.handles.get(n[0]) {
                Some(f) => done(f.sync_all().map(|()| 0)),
                None => unknown_handle(line),
            },
            OpKind::LockX | OpKind::UnlockX => match self.handles.get(n[0]) {
                Some(f) => done(lock(f, n[1], n[2], line.kind == OpKind::LockX)),
                None => unknown_handle(line),
            },
            OpKind::Rename => done(fs::rename(&self.path, &self.path2).map(|()| 0)),
            OpKind::Unlink => done(fs::remove_file(&self.path).map(|()| 0)),
            OpKind::QueryPathInformation => done(stat_resolving(&self.path)),
            OpKind::QueryFileInformation => match self.handles.get(n[0]) {
                Some(f) => done(f.metadata().map(|_| 0)),
                None => unknown_handle(line),
            },
            OpKind::SetFileInformation => match self.handles.get(n[0]) {
                Some(f) => done(set_times(f)),
                None => unknown_handle(line),
            },
            OpKind::QueryFsInformation => done(statvfs(&self.prefix)),
            OpKind::FindFirst => done(find(&self.path, n[1])),
        }
    }

    /// dbench's NTCreateX on fileio: O_RDWR; FILE_CREATE adds O_CREAT,
    /// OVERWRITE(_IF) O_CREAT|O_TRUNC, the others (OPEN_IF too) plain open;
    /// the directory option mkdirs then opens the directory.
    fn create(&mut self, options: i64, disposition: i64, handle: i64, success_expected: bool) -> Exec {
        let directory = options & 0x1 != 0;
        let mut open = OpenOptions::new();
        let result = if directory {
            let _ = mkdir(&self.path, 0o700);
            open_dir(&self.path)
        } else {
            open.read(true).write(true);
            match disposition {
                2 => {
                    open.create(true);
                }
                4 | 5 => {
                    open.create(true).truncate(true);
                }
                _ => {}
            }
            match open.open(&self.path) {
                Err(e) if e.raw_os_error() == Some(libc::EISDIR) => open_dir(&self.path),
                other => other,
            }
        };
        match result {
            Ok(f) if success_expected => match self.handles.insert(handle, f) {
                Ok(()) => Exec::Done(Outcome { ok: true, status: 0, bytes: 0 }),
                Err(_) => Exec::Fatal(format!(
                    "more than {} open handles: the loadfile never closes them",
                    super::handles::MAX_HANDLES
                )),
            },
            // Opened although failure was expected: closed again; the mismatch is the caller's to judge.
            Ok(_) => Exec::Done(Outcome { ok: true, status: 0, bytes: 0 }),
            Err(e) => Exec::Done(Outcome { ok: false, status: nt_status(&e), bytes: 0 }),
        }
    }

    /// Closes every handle still open (at the end of the client's run).
    pub fn close_all(&mut self) {
        self.handles.drain().for_each(drop);
    }
}

fn unknown_handle(line: &Line) -> Exec {
    Exec::Fatal(format!("line {}: {} of handle {}, which is not open", line.number, line.kind.name(), line.numbers[0]))
}

fn outcome(r: io::Result<u64>) -> Outcome {
    match r {
        Ok(bytes) => Outcome { ok: true, status: 0, bytes },
        Err(e) => Outcome { ok: false, status: nt_status(&e), bytes: 0 },
    }
}

fn mkdir(path: &str, mode: u32) -> io::Result<u64> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().mode(mode).create(path).map(|()| 0)
}

fn open_dir(path: &str) -> io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(path)
}

fn read_at(f: &File, buf: &mut [u8], mut offset: u64, size: u64) -> io::Result<u64> {
    let mut left = size;
    let mut got = 0;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        let r = f.read_at(&mut buf[..n], offset)?;
        if r == 0 {
            break;
        }
        got += r as u64;
        left -= r as u64;
        offset += r as u64;
    }
    Ok(got)
}

fn write_at(f: &File, pattern: &[u8], mut offset: u64, size: u64) -> io::Result<u64> {
    let mut left = size;
    while left > 0 {
        let n = left.min(pattern.len() as u64) as usize;
        f.write_all_at(&pattern[..n], offset)?;
        left -= n as u64;
        offset += n as u64;
    }
    Ok(size)
}

/// A blocking write lock (dbench: F_SETLKW) or an unlock of the range.
fn lock(f: &File, offset: i64, len: i64, exclusive: bool) -> io::Result<u64> {
    // SAFETY: flock is plain data; fcntl reads it and touches nothing else.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = if exclusive { libc::F_WRLCK } else { libc::F_UNLCK } as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = offset as _;
    fl.l_len = len as _;
    // SAFETY: a valid fd and a valid flock pointer.
    let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLKW, &fl) };
    if r == 0 {
        Ok(0)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// dbench's SET_FILE_INFORMATION: the times set back a little.
fn set_times(f: &File) -> io::Result<u64> {
    let meta = f.metadata()?;
    use std::os::unix::fs::MetadataExt;
    let times = [
        libc::timespec { tv_sec: (meta.atime() - 10) as _, tv_nsec: 0 },
        libc::timespec { tv_sec: (meta.mtime() - 12) as _, tv_nsec: 0 },
    ];
    // SAFETY: a valid fd and a two-element timespec array.
    let r = unsafe { libc::futimens(f.as_raw_fd(), times.as_ptr()) };
    if r == 0 {
        Ok(0)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn statvfs(dir: &str) -> io::Result<u64> {
    let c = CString::new(dir).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: statvfs writes into the zeroed struct we own.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0 {
        Ok(0)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// stat; a missing name is looked for without case in its directory, as Samba resolves names.
fn stat_resolving(path: &str) -> io::Result<u64> {
    match fs::metadata(path) {
        Ok(_) => Ok(0),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let (dir, name) = path.rsplit_once('/').unwrap_or((".", path));
            let found = fs::read_dir(if dir.is_empty() { "/" } else { dir })
                .map_err(|_| io::Error::from_raw_os_error(libc::ENOENT))?
                .filter_map(Result::ok)
                .any(|entry| entry.file_name().to_string_lossy().eq_ignore_ascii_case(name));
            if found {
                Ok(0)
            } else {
                Err(e)
            }
        }
        Err(e) => Err(e),
    }
}

/// FIND_FIRST: a wildcard pattern lists its directory (up to `max` entries), a plain name is resolved.
fn find(pattern: &str, max: i64) -> io::Result<u64> {
    let (dir, name) = pattern.rsplit_once('/').unwrap_or((".", pattern));
    if !name.contains(['<', '>', '*', '?', '"']) {
        return stat_resolving(pattern);
    }
    let entries = fs::read_dir(if dir.is_empty() { "/" } else { dir })?;
    let _listed = entries.take(max.max(0) as usize).filter_map(Result::ok).count();
    Ok(0)
}

/// The NTSTATUS a Windows server would give for an errno (what matters is success or failure).
pub fn nt_status(e: &io::Error) -> u32 {
    match e.raw_os_error() {
        Some(libc::ENOENT) => 0xC000_0034,                 // OBJECT_NAME_NOT_FOUND
        Some(libc::ENOTDIR) => 0xC000_003A,                // OBJECT_PATH_NOT_FOUND
        Some(libc::EEXIST) => 0xC000_0035,                 // OBJECT_NAME_COLLISION
        Some(libc::EISDIR) => 0xC000_00BA,                 // FILE_IS_A_DIRECTORY
        Some(libc::EACCES | libc::EPERM) => 0xC000_0022,   // ACCESS_DENIED
        Some(libc::ENOTEMPTY) => 0xC000_0101,              // DIRECTORY_NOT_EMPTY
        Some(libc::EAGAIN | libc::EDEADLK) => 0xC000_0054, // FILE_LOCK_CONFLICT
        Some(libc::ENOSPC) => 0xC000_007F,                 // DISK_FULL
        _ => 0xC000_0001,                                  // UNSUCCESSFUL
    }
}

/// An I/O error as one phrase ("No such file or directory"), without Rust's "(os error N)".
pub fn io_reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(at) => s[..at].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileops::op::{judge, Verdict};

    fn run(fileio: &mut Fileio, text: &str) -> Vec<(OpKind, Verdict, u64)> {
        let file = Loadfile::parse(text).expect("parses");
        file.lines
            .iter()
            .map(|line| match fileio.execute(&file, line) {
                Exec::Done(o) => (line.kind, judge(line.kind, line.expect, &o), o.bytes),
                Exec::Fatal(why) => panic!("fatal: {why}"),
            })
            .collect()
    }

    #[test]
    fn a_client_works_in_its_own_tree_and_counts_read_and_write_sizes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().display().to_string();
        let mut client = Fileio::new(&root, 4);
        let text = r#"Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 16385 NT_STATUS_OK
Close 16385 NT_STATUS_OK
NTCreateX "\clients\client1\mixfile" 0x40 0x1 9935 NT_STATUS_OBJECT_NAME_NOT_FOUND
NTCreateX "\clients\client1\filler.000" 0x40 0x2 9938 NT_STATUS_OK
WriteX 9938 0 65536 65536 NT_STATUS_OK
WriteX 9938 65536 1000 1000 NT_STATUS_OK
QUERY_FILE_INFORMATION 9938 258 NT_STATUS_OK
SET_FILE_INFORMATION 9938 1004 NT_STATUS_OK
LockX 9938 2147483538 1 NT_STATUS_OK
UnlockX 9938 2147483538 1 NT_STATUS_OK
Flush 9938 NT_STATUS_OK
ReadX 9938 0 4096 4096 NT_STATUS_OK
ReadX 9938 66000 4096 536 NT_STATUS_OK
Close 9938 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\FILLER.000" 1004 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\nothing" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
QUERY_FS_INFORMATION 259 NT_STATUS_OK
FIND_FIRST "\clients\client1\*" 260 1366 1 NT_STATUS_OK
Rename "\clients\client1\filler.000" "\clients\client1\filler.001" NT_STATUS_OK
Unlink "\clients\client1\filler.001" 0x6 NT_STATUS_OK
Rmdir "\clients\client1" NT_STATUS_OK
"#;
        let results = run(&mut client, text);
        assert!(results.iter().all(|r| r.1 == Verdict::Met), "{results:?}");
        let bytes: u64 = results.iter().map(|r| r.2).sum();
        assert_eq!(bytes, 65536 + 1000 + 4096 + 4096, "ReadX counts its size asked for, short or not");
        assert!(dir.path().join("clients").is_dir());
        assert!(!dir.path().join("clients/client4").exists());
    }

    #[test]
    fn file_sizes_on_disk_follow_the_writes_and_mismatches_are_judged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().display().to_string();
        let mut client = Fileio::new(&root, 0);
        let results = run(
            &mut client,
            r#"Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
NTCreateX "\clients\client1\f" 0x40 0x5 2 NT_STATUS_OK
WriteX 2 100 50 50 NT_STATUS_OK
NTCreateX "\clients\client1\missing" 0x40 0x1 3 NT_STATUS_OK
NTCreateX "\clients\client1\f" 0x40 0x1 4 NT_STATUS_OBJECT_NAME_NOT_FOUND
"#,
        );
        let verdicts: Vec<Verdict> = results.iter().map(|r| r.1).collect();
        assert_eq!(verdicts[..4], [Verdict::Met; 4]);
        assert_eq!(verdicts[4..], [Verdict::Missed, Verdict::Missed]);
        assert_eq!(fs::metadata(dir.path().join("clients/client0/f")).expect("written").len(), 150);
        // The unexpected success was closed again, not mapped: handle 4 is unknown.
        let file = Loadfile::parse("Close 4 NT_STATUS_OK").expect("parses");
        assert!(matches!(client.execute(&file, &file.lines[0]), Exec::Fatal(why) if why.contains("handle 4")));
        let file = Loadfile::parse("Unlink \"\\clients\\client1\\nope\" 0x6 NT_STATUS_OK").expect("parses");
        let Exec::Done(o) = client.execute(&file, &file.lines[0]) else { panic!("runs") };
        assert_eq!((o.ok, o.status), (false, 0xC000_0034));
        assert_eq!(judge(OpKind::Unlink, file.lines[0].expect, &o), Verdict::Fatal);
    }
}
