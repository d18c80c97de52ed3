//! The client against a real Samba: each test starts a private smbd (see
//! `support::smbd`) and is skipped, saying why, where /usr/sbin/smbd is
//! missing. Operations are checked by their statuses and by what they did
//! to the share's directory on disk.

use crate::support::smbd::{Smbd, PASSWORD, SHARE, USER};
use crate::support::{credentials, Conn};
use crest_smb2::create::{access, attributes, disposition, options, share};
use crest_smb2::{info, pattern_byte, status, Done, Event, FileId, SetupError};
use std::path::Path;
use std::time::{Duration, SystemTime};

fn connect(smbd: &Smbd) -> Conn {
    let (conn, event) = Conn::open(smbd.port, SHARE, credentials(USER, PASSWORD));
    assert_eq!(event, Event::Connected, "smbd log:\n{}", smbd.log());
    conn
}

fn done(event: Event) -> Done {
    match event {
        Event::Done(d) => d,
        other => panic!("expected Done, got {other:?}"),
    }
}

/// Runs one operation and checks its status by name, so a failure reads
/// `NT_STATUS_X != NT_STATUS_Y`.
fn expect(conn: &mut Conn, want: u32, start: impl FnOnce(&mut crest_smb2::Session)) -> Done {
    let d = done(conn.run(start));
    assert_eq!(status::name(d.status), status::name(want), "{d:?}");
    d
}

fn open_rw(conn: &mut Conn, path: &str, disp: u32) -> FileId {
    let d = expect(conn, status::OK, |s| {
        s.open(
            path,
            access::GENERIC_READ | access::GENERIC_WRITE,
            share::READ | share::WRITE,
            disp,
            options::NON_DIRECTORY_FILE,
            attributes::ARCHIVE,
        )
    });
    d.fid.expect("a successful open has a handle")
}

fn check_pattern(file: &Path, len: u64) {
    let data = std::fs::read(file).unwrap();
    assert_eq!(data.len() as u64, len, "{}", file.display());
    for (i, &b) in data.iter().enumerate() {
        assert_eq!(b, pattern_byte(i as u64), "byte {i} of {}", file.display());
    }
}

#[test]
fn handshake_outcomes() {
    let Some(smbd) = Smbd::start("") else { return };
    let (_, event) = Conn::open(smbd.port, SHARE, credentials(USER, "wrong password"));
    assert_eq!(event, Event::Failed(SetupError::LogonFailure));
    let (_, event) = Conn::open(smbd.port, SHARE, credentials("no-such-user", PASSWORD));
    assert_eq!(event, Event::Failed(SetupError::LogonFailure));
    let (_, event) = Conn::open(smbd.port, "no-such-share", credentials(USER, PASSWORD));
    assert_eq!(event, Event::Failed(SetupError::BadShare));
    let mut conn = connect(&smbd);
    assert_eq!(conn.session.dialect(), 0x0210);
    assert!(!conn.session.is_signing(), "signing is only used when the server requires it");
    assert_eq!(conn.run(|s| s.logoff()), Event::Closed);
}

#[test]
fn file_operations() {
    let Some(smbd) = Smbd::start("") else { return };
    let disk = smbd.share_dir.clone();
    let mut c = connect(&smbd);

    // A tree that never existed is deleted fine.
    expect(&mut c, status::OK, |s| s.deltree("/clients"));
    expect(&mut c, status::OK, |s| s.mkdir("/clients"));
    expect(&mut c, status::OK, |s| s.mkdir("\\clients\\client1"));
    expect(&mut c, status::OBJECT_NAME_COLLISION, |s| s.mkdir("/clients/client1"));
    expect(&mut c, status::OBJECT_PATH_NOT_FOUND, |s| s.mkdir("/nowhere/x"));
    assert!(disk.join("clients/client1").is_dir());

    // Writes: 64 KiB, then 100000 bytes (two requests at 2.0.2's 64 KiB, one at 2.1).
    let f = open_rw(&mut c, "/clients/client1/FILE.DAT", disposition::OVERWRITE_IF);
    let file = disk.join("clients/client1/FILE.DAT");
    assert_eq!(expect(&mut c, status::OK, |s| s.write(f, 0, 65536)).bytes, 65536);
    assert_eq!(expect(&mut c, status::OK, |s| s.write(f, 65536, 100_000)).bytes, 100_000);
    check_pattern(&file, 165_536);

    // Reads: whole, short at the end, and past the end.
    assert_eq!(expect(&mut c, status::OK, |s| s.read(f, 0, 65536)).bytes, 65536);
    assert_eq!(expect(&mut c, status::OK, |s| s.read(f, 160_000, 65536)).bytes, 5536);
    assert_eq!(expect(&mut c, status::END_OF_FILE, |s| s.read(f, 200_000, 10)).bytes, 0);

    // Locks, against a second client.
    expect(&mut c, status::OK, |s| s.lock(f, 0, 100));
    let mut other = connect(&smbd);
    let g = open_rw(&mut other, "/clients/client1/FILE.DAT", disposition::OPEN);
    expect(&mut other, status::LOCK_NOT_GRANTED, |s| s.lock(g, 50, 10));
    expect(&mut c, status::OK, |s| s.unlock(f, 0, 100));
    expect(&mut other, status::OK, |s| s.lock(g, 50, 10));
    expect(&mut c, status::RANGE_NOT_LOCKED, |s| s.unlock(f, 0, 100));
    expect(&mut other, status::OK, |s| s.close(g));

    expect(&mut c, status::OK, |s| s.flush(f));
    for class in [info::file::BASIC, info::file::STANDARD, info::file::ALL, info::file::NETWORK_OPEN] {
        expect(&mut c, status::OK, |s| s.query_file_info(f, class));
    }
    expect(&mut c, status::INVALID_INFO_CLASS, |s| s.query_file_info(f, 99));
    expect(&mut c, status::OK, |s| s.set_file_times(f));
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let age = SystemTime::now().duration_since(mtime).unwrap_or_default();
    assert!(age >= Duration::from_secs(1) && age < Duration::from_secs(60), "mtime set {age:?} ago");
    expect(&mut c, status::OK, |s| s.close(f));
    expect(&mut c, status::FILE_CLOSED, |s| s.close(f));

    // Path queries.
    expect(&mut c, status::OK, |s| s.stat("/clients/client1/FILE.DAT"));
    expect(&mut c, status::OK, |s| s.stat("/clients/client1"));
    expect(&mut c, status::OBJECT_NAME_NOT_FOUND, |s| s.stat("/clients/client1/MISSING.DAT"));
    expect(&mut c, status::OBJECT_PATH_NOT_FOUND, |s| s.stat("/clients/nowhere/MISSING.DAT"));
    assert_eq!(expect(&mut c, status::OK, |s| s.find("/clients/client1/*", 1000)).entries, 3);
    assert_eq!(expect(&mut c, status::OK, |s| s.find("\\clients\\client1\\*.DAT", 1000)).entries, 1);
    assert_eq!(expect(&mut c, status::OK, |s| s.find("/clients/client1/*", 2)).entries, 2);
    expect(&mut c, status::NO_SUCH_FILE, |s| s.find("/clients/client1/*.XYZ", 1000));
    // Patterns from dbench's client.txt: DOS_STAR, and a name with a dot.
    expect(&mut c, status::NO_SUCH_FILE, |s| s.find("\\clients\\client1\\<.JNK", 1366));
    expect(&mut c, status::NO_SUCH_FILE, |s| s.find("\\clients\\client1\\FILLER.*", 1366));
    assert_eq!(expect(&mut c, status::OK, |s| s.find("\\clients\\client1\\<.DAT", 1366)).entries, 1);
    expect(&mut c, status::OK, |s| s.query_path_info("/clients/client1/FILE.DAT", info::file::ATTRIBUTE_TAG));
    expect(&mut c, status::OK, |s| s.query_path_info("/clients/client1", info::file::BASIC));
    expect(&mut c, status::OBJECT_NAME_NOT_FOUND, |s| s.query_path_info("/clients/client1/NONE", info::file::BASIC));
    // A class no server knows fails in the QUERY_INFO, after a good open:
    // proof the middle step is sent, and that its status is the one reported.
    expect(&mut c, status::INVALID_INFO_CLASS, |s| s.query_path_info("/clients/client1", 99));
    expect(&mut c, status::INVALID_INFO_CLASS, |s| s.query_fs_info(99));
    expect(&mut c, status::OBJECT_NAME_NOT_FOUND, |s| s.find("/clients/nowhere/*", 1000));
    expect(&mut c, status::OK, |s| s.query_fs_info(info::fs::SIZE));
    expect(&mut c, status::OK, |s| s.query_fs_info(info::fs::ATTRIBUTE));
    expect(&mut c, status::OK, |s| s.query_fs_info(info::fs::FULL_SIZE));

    // Rename, unlink, rmdir.
    expect(&mut c, status::OK, |s| s.rename("/clients/client1/FILE.DAT", "/clients/client1/NEW.DAT"));
    assert!(!file.exists());
    check_pattern(&disk.join("clients/client1/NEW.DAT"), 165_536);
    let other_file = open_rw(&mut c, "/clients/client1/OTHER.DAT", disposition::CREATE);
    expect(&mut c, status::OK, |s| s.close(other_file));
    expect(&mut c, status::OBJECT_NAME_COLLISION, |s| {
        s.rename("/clients/client1/NEW.DAT", "/clients/client1/OTHER.DAT")
    });
    expect(&mut c, status::OBJECT_NAME_NOT_FOUND, |s| s.rename("/clients/client1/GONE.DAT", "/clients/client1/X.DAT"));
    expect(&mut c, status::OK, |s| s.unlink("/clients/client1/NEW.DAT"));
    assert!(!disk.join("clients/client1/NEW.DAT").exists());
    expect(&mut c, status::OBJECT_NAME_NOT_FOUND, |s| s.unlink("/clients/client1/NEW.DAT"));
    expect(&mut c, status::FILE_IS_A_DIRECTORY, |s| s.unlink("/clients/client1"));
    expect(&mut c, status::DIRECTORY_NOT_EMPTY, |s| s.rmdir("/clients/client1"));
    expect(&mut c, status::NOT_A_DIRECTORY, |s| s.rmdir("/clients/client1/OTHER.DAT"));
    expect(&mut c, status::OK, |s| s.unlink("/clients/client1/OTHER.DAT"));
    expect(&mut c, status::OK, |s| s.rmdir("/clients/client1"));
    assert!(!disk.join("clients/client1").exists());
    expect(&mut c, status::OBJECT_NAME_NOT_FOUND, |s| s.rmdir("/clients/client1"));

    // Deltree of a tree with files at several depths, more entries than
    // one QUERY_DIRECTORY reply holds.
    for dir in ["/clients/a", "/clients/a/b", "/clients/a/b/c", "/clients/d"] {
        expect(&mut c, status::OK, |s| s.mkdir(dir));
    }
    for i in 0..600 {
        let f = open_rw(&mut c, &format!("/clients/a/b/file-with-a-longish-name-{i:04}.txt"), disposition::CREATE);
        expect(&mut c, status::OK, |s| s.close(f));
    }
    let f = open_rw(&mut c, "/clients/a/b/c/deep.txt", disposition::CREATE);
    expect(&mut c, status::OK, |s| s.write(f, 0, 10));
    expect(&mut c, status::OK, |s| s.close(f));
    assert_eq!(std::fs::read_dir(disk.join("clients/a/b")).unwrap().count(), 601);
    let lone = open_rw(&mut c, "/clients/d/lone.txt", disposition::CREATE);
    expect(&mut c, status::OK, |s| s.close(lone));
    // A tree that is a plain file is deleted as one.
    expect(&mut c, status::OK, |s| s.deltree("/clients/d/lone.txt"));
    assert!(!disk.join("clients/d/lone.txt").exists());
    expect(&mut c, status::OK, |s| s.deltree("clients"));
    assert!(!disk.join("clients").exists());
    assert_eq!(std::fs::read_dir(&disk).unwrap().count(), 0);

    assert_eq!(c.run(|s| s.logoff()), Event::Closed);
}

#[test]
fn signing_when_the_server_requires_it() {
    let Some(smbd) = Smbd::start("  server signing = mandatory") else { return };
    let mut c = connect(&smbd);
    assert!(c.session.is_signing());
    let f = open_rw(&mut c, "signed.dat", disposition::CREATE);
    assert_eq!(expect(&mut c, status::OK, |s| s.write(f, 0, 65536)).bytes, 65536);
    assert_eq!(expect(&mut c, status::OK, |s| s.read(f, 0, 65536)).bytes, 65536);
    expect(&mut c, status::OK, |s| s.close(f));
    check_pattern(&smbd.share_dir.join("signed.dat"), 65536);
    assert_eq!(c.run(|s| s.logoff()), Event::Closed);
}

#[test]
fn dialect_2_0_2_splits_large_io() {
    let Some(smbd) = Smbd::start("  server max protocol = SMB2_02") else { return };
    let mut c = connect(&smbd);
    assert_eq!(c.session.dialect(), 0x0202);
    let f = open_rw(&mut c, "big.dat", disposition::CREATE);
    assert_eq!(expect(&mut c, status::OK, |s| s.write(f, 0, 200_000)).bytes, 200_000);
    assert_eq!(expect(&mut c, status::OK, |s| s.read(f, 0, 300_000)).bytes, 200_000);
    expect(&mut c, status::OK, |s| s.close(f));
    check_pattern(&smbd.share_dir.join("big.dat"), 200_000);
}

/// After one warm-up round (buffers grow to their working size), a second
/// round of every hot-path operation allocates nothing inside the session.
#[test]
fn hot_path_does_not_allocate() {
    use crate::support::alloc;
    let Some(smbd) = Smbd::start("") else { return };
    let mut c = connect(&smbd);
    expect(&mut c, status::OK, |s| s.mkdir("/d"));
    let mut allocations = Vec::new();
    for round in 0..3 {
        let before = alloc::count();
        let f = open_rw(&mut c, "/d/FILE.DAT", disposition::OVERWRITE_IF);
        expect(&mut c, status::OK, |s| s.write(f, 0, 65536));
        expect(&mut c, status::OK, |s| s.read(f, 0, 65536));
        expect(&mut c, status::END_OF_FILE, |s| s.read(f, 1 << 20, 10));
        expect(&mut c, status::OK, |s| s.lock(f, 0, 10));
        expect(&mut c, status::OK, |s| s.unlock(f, 0, 10));
        expect(&mut c, status::OK, |s| s.flush(f));
        expect(&mut c, status::OK, |s| s.query_file_info(f, info::file::ALL));
        expect(&mut c, status::OK, |s| s.set_file_times(f));
        expect(&mut c, status::OK, |s| s.close(f));
        expect(&mut c, status::OK, |s| s.stat("/d/FILE.DAT"));
        expect(&mut c, status::OBJECT_NAME_NOT_FOUND, |s| s.stat("/d/NONE.DAT"));
        expect(&mut c, status::OK, |s| s.find("/d/*.DAT", 100));
        expect(&mut c, status::NO_SUCH_FILE, |s| s.find("/d/*.XYZ", 100));
        expect(&mut c, status::OK, |s| s.query_fs_info(info::fs::SIZE));
        expect(&mut c, status::OK, |s| s.mkdir("/d/sub"));
        expect(&mut c, status::OK, |s| s.rmdir("/d/sub"));
        expect(&mut c, status::OK, |s| s.rename("/d/FILE.DAT", "/d/MOVED.DAT"));
        expect(&mut c, status::OK, |s| s.unlink("/d/MOVED.DAT"));
        allocations.push(alloc::count() - before);
        if round == 0 {
            assert!(allocations[0] > 0, "the counting allocator is installed and the first round grows buffers");
        }
    }
    assert_eq!(allocations[1..], [0, 0], "allocations per round: {allocations:?}");
}
