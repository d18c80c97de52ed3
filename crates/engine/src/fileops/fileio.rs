//! The `fileio` backend (reference §4.6): each operation executed with the
//! kernel's file calls on a directory, as dbench's fileio does, by one
//! client on its own thread (file calls block). Owns the per-client handle
//! table, the name lookups dbench simulates (`ResolveNames`) and the mapping
//! of errors to NT statuses; it judges nothing (the caller compares the
//! outcome with the line) and records nothing. Executing a line allocates
//! nothing (but a Deltree's walk and a fatal line's message): paths, C paths
//! and directory entries go through buffers the client owns.

use std::ffi::{CStr, CString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};

use crate::config::ResolveNames;

use super::handles::Handles;
use super::loadfile::{Line, Loadfile};
use super::op::{OpKind, Outcome};

/// Bytes of the pattern every write sends (larger writes repeat it).
const PATTERN_BYTES: usize = 64 * 1024;
/// Bytes of directory entries one getdents64 call reads: glibc's readdir
/// buffer, so a scan makes the calls dbench's opendir/readdir make.
const DIRENT_BUF_BYTES: usize = 32 * 1024;
/// Offsets in a `linux_dirent64` record: its length (u16) and its name.
const DIRENT_RECLEN_AT: usize = 16;
const DIRENT_NAME_AT: usize = 19;

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
    resolve_names: ResolveNames,
    names: Names,
}

impl Fileio {
    /// Client `id` working under directory `dir`, looking names up as `resolve_names` says.
    pub fn new(dir: &str, id: u32, resolve_names: ResolveNames) -> Self {
        Self {
            prefix: dir.trim_end_matches('/').to_string(),
            id,
            handles: Handles::default(),
            path: String::with_capacity(256),
            path2: String::with_capacity(256),
            pattern: (0..PATTERN_BYTES).map(|i| (i % 251) as u8).collect(),
            buf: vec![0; PATTERN_BYTES].into_boxed_slice(),
            resolve_names,
            names: Names {
                cpath: Vec::with_capacity(512),
                dents: vec![0; DIRENT_BUF_BYTES].into_boxed_slice(),
                lookups: 0,
            },
        }
    }

    /// Name lookups made so far (a stat, and a directory scan when the name is missing).
    pub fn lookups(&self) -> u64 {
        self.names.lookups
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
        let every_path = self.resolve_names == ResolveNames::EveryPath;
        if every_path && line.kind.looks_up_in_dbench() {
            // dbench's fileio looks each path up before the call and ignores what it finds.
            let _ = self.names.resolve(&self.path);
            if want_paths > 1 {
                let _ = self.names.resolve(&self.path2);
            }
        }
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
            OpKind::QueryPathInformation => done(self.names.resolve(&self.path)),
            OpKind::QueryFileInformation => match self.handles.get(n[0]) {
                Some(f) => done(f.metadata().map(|_| 0)),
                None => unknown_handle(line),
            },
            OpKind::SetFileInformation => match self.handles.get(n[0]) {
                Some(f) => done(set_times(f)),
                None => unknown_handle(line),
            },
            OpKind::QueryFsInformation => done(statvfs(&self.prefix)),
            OpKind::FindFirst => done(self.names.find(&self.path, n[1], every_path)),
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
        if let (Ok(f), true) = (&result, success_expected && self.resolve_names == ResolveNames::EveryPath) {
            // dbench's NTCreateX also fstats what it opened (to choose its xattr hook).
            let _ = f.metadata();
        }
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

/// Name lookups and directory listings on buffers one client owns.
struct Names {
    /// The NUL-terminated path of the call being made.
    cpath: Vec<u8>,
    /// Directory entries as getdents64 returns them.
    dents: Box<[u8]>,
    lookups: u64,
}

impl Names {
    /// `path` as a C string in the client's buffer.
    fn c(&mut self, path: &str) -> io::Result<&CStr> {
        self.cpath.clear();
        self.cpath.extend_from_slice(path.as_bytes());
        self.cpath.push(0);
        CStr::from_bytes_with_nul(&self.cpath).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    /// A stat of `path`; a name the stat does not find is looked for without
    /// case in its directory, as Samba resolves names (and dbench's fileio
    /// simulates). Ok when either finds it, else the stat's error.
    fn resolve(&mut self, path: &str) -> io::Result<u64> {
        self.lookups += 1;
        let missing = match stat(self.c(path)?) {
            Ok(()) => return Ok(0),
            Err(e) => e,
        };
        let (dir, name) = split(path);
        let mut found = false;
        let _ = self.scan(dir, |entry| {
            found = entry.eq_ignore_ascii_case(name.as_bytes());
            found
        });
        if found {
            Ok(0)
        } else {
            Err(missing)
        }
    }

    /// FIND_FIRST: a wildcard pattern lists its directory (up to `max`
    /// entries), after looking the pattern itself up when `every_path` (as
    /// dbench does); a plain name is looked up.
    fn find(&mut self, pattern: &str, max: i64, every_path: bool) -> io::Result<u64> {
        let (dir, name) = split(pattern);
        if !name.contains(['<', '>', '*', '?', '"']) {
            return self.resolve(pattern);
        }
        if every_path {
            let _ = self.resolve(pattern);
        }
        let mut left = max.max(0);
        self.scan(dir, |_| {
            left -= 1;
            left <= 0
        })?;
        Ok(0)
    }

    /// Reads directory `dir` and gives each entry's name to `visit` until it returns true.
    fn scan(&mut self, dir: &str, mut visit: impl FnMut(&[u8]) -> bool) -> io::Result<()> {
        let path = self.c(dir)?.as_ptr();
        // SAFETY: a NUL-terminated path that lives in self.cpath for the call.
        let fd = unsafe { libc::open(path, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let result = read_entries(fd, &mut self.dents, &mut visit);
        // SAFETY: fd is ours, opened above and closed once.
        unsafe { libc::close(fd) };
        result
    }
}

/// The entries of open directory `fd`, read into `buf`, each name given to
/// `visit` until it returns true.
fn read_entries(fd: libc::c_int, buf: &mut [u8], visit: &mut impl FnMut(&[u8]) -> bool) -> io::Result<()> {
    loop {
        // SAFETY: getdents64 writes at most buf.len() bytes into buf.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(());
        }
        let records = &buf[..n as usize];
        let mut at = 0;
        while at + DIRENT_NAME_AT < records.len() {
            let reclen =
                usize::from(u16::from_ne_bytes([records[at + DIRENT_RECLEN_AT], records[at + DIRENT_RECLEN_AT + 1]]));
            if reclen <= DIRENT_NAME_AT || at + reclen > records.len() {
                return Err(io::Error::from(io::ErrorKind::InvalidData));
            }
            let field = &records[at + DIRENT_NAME_AT..at + reclen];
            let name = &field[..field.iter().position(|&b| b == 0).unwrap_or(field.len())];
            if visit(name) {
                return Ok(());
            }
            at += reclen;
        }
    }
}

/// A path's directory ("/" for the root, "." for none) and its last name.
fn split(path: &str) -> (&str, &str) {
    match path.rsplit_once('/') {
        Some(("", name)) => ("/", name),
        Some(parts) => parts,
        None => (".", path),
    }
}

fn stat(path: &CStr) -> io::Result<()> {
    // SAFETY: plain data, written by stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out-pointer.
    if unsafe { libc::stat(path.as_ptr(), &mut st) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
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
        let mut client = Fileio::new(&root, 4, ResolveNames::Queries);
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

    /// Every kind of path operation once, and the lookups each makes in dbench's fileio.
    const LOOKUPS_TEXT: &str = r#"Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\a.txt" 0x40 0x5 2 NT_STATUS_OK
WriteX 2 0 4096 4096 NT_STATUS_OK
ReadX 2 0 4096 4096 NT_STATUS_OK
Close 2 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\A.TXT" 1004 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\none" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
FIND_FIRST "\clients\client1\*.TXT" 260 1366 1 NT_STATUS_OK
FIND_FIRST "\clients\client1\a.txt" 260 1366 1 NT_STATUS_OK
Rename "\clients\client1\a.txt" "\clients\client1\b.txt" NT_STATUS_OK
Unlink "\clients\client1\b.txt" 0x6 NT_STATUS_OK
Rmdir "\clients\client1" NT_STATUS_OK
"#;

    #[test]
    fn every_path_looks_each_path_up_as_dbench_and_changes_no_outcome_or_byte() {
        let mut seen = Vec::new();
        for mode in [ResolveNames::Queries, ResolveNames::EveryPath] {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut client = Fileio::new(&dir.path().display().to_string(), 2, mode);
            let results = run(&mut client, LOOKUPS_TEXT);
            assert!(results.iter().all(|r| r.1 == Verdict::Met), "{mode:?}: {results:?}");
            seen.push((results, client.lookups()));
        }
        let (queries, every_path) = (&seen[0], &seen[1]);
        assert_eq!(queries.0, every_path.0, "the same verdicts and bytes in both modes");
        assert_eq!(queries.0.iter().map(|r| r.2).sum::<u64>(), 8192, "ReadX and WriteX sizes only");
        // Queries: the two QUERY_PATH_INFORMATION and the plain FIND_FIRST.
        assert_eq!(queries.1, 3);
        // dbench adds Mkdir, two NTCreateX, the wildcard FIND_FIRST's pattern,
        // Rename's two names, Unlink and Rmdir: 8 more.
        assert_eq!(every_path.1, 3 + 8);
    }

    #[test]
    fn a_scan_finds_a_name_in_any_case_among_many_entries() {
        let dir = tempfile::tempdir().expect("tempdir");
        // More entries than one getdents64 buffer holds, so the scan reads several.
        for i in 0..2000 {
            File::create(dir.path().join(format!("entry-with-a-long-name-{i:05}"))).expect("create");
        }
        let root = dir.path().display().to_string();
        let mut names = Fileio::new(&root, 0, ResolveNames::EveryPath).names;
        assert!(names.resolve(&format!("{root}/ENTRY-WITH-A-LONG-NAME-01999")).is_ok());
        let missing = names.resolve(&format!("{root}/entry-02000")).expect_err("absent");
        assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
        let mut listed = 0;
        names
            .scan(&root, |_| {
                listed += 1;
                false
            })
            .expect("scans");
        assert_eq!(listed, 2000 + 2, "every entry, with . and ..");
        assert_eq!(split("/x"), ("/", "x"));
        assert_eq!(split("x"), (".", "x"));
    }

    #[test]
    fn file_sizes_on_disk_follow_the_writes_and_mismatches_are_judged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().display().to_string();
        let mut client = Fileio::new(&root, 0, ResolveNames::Queries);
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
