//! Replies captured from a real Samba (4.17), replayed into fresh sessions
//! with no network: every step's reply bytes give the expected event, and
//! give the same events however they are split.
//!
//! The bytes live in tests/data/<script>-<NN>-<step>.bin, one file per step
//! (all the frames the server sent for it: a stat's four replies, a
//! handshake's four). They replay because a session numbers its requests
//! deterministically: the same calls give the same MessageIds, and the server
//! chose the SessionId, TreeId and FileIds that the bytes carry. To capture
//! them again (after changing what a step sends), with smbd installed:
//!
//! ```text
//! CREST_SMB2_CAPTURE=1 cargo test -p crest-smb2 --release --test all capture -- --ignored
//! ```

use crate::support::smbd::{Smbd, PASSWORD, SHARE, USER};
use crate::support::{credentials, Conn};
use crest_smb2::create::{access, attributes, disposition, options, share};
use crest_smb2::{info, status, Done, Event, FileId, Session, SetupError};
use std::path::PathBuf;

/// What a step should end in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Connected,
    Failed(SetupError),
    Done { status: u32, has_fid: bool, bytes: u64, entries: u32 },
    Closed,
}

const fn ok() -> Want {
    Want::Done { status: status::OK, has_fid: false, bytes: 0, entries: 0 }
}
const fn fails(status: u32) -> Want {
    Want::Done { status, has_fid: false, bytes: 0, entries: 0 }
}

/// One step: starts an operation (the handshake step starts nothing), given
/// the handle of the last successful open.
struct Step {
    name: &'static str,
    start: fn(&mut Session, FileId),
    want: Want,
}

fn nothing(_: &mut Session, _: FileId) {}

fn create(s: &mut Session, path: &str) {
    let rw = access::GENERIC_READ | access::GENERIC_WRITE;
    s.open(
        path,
        rw,
        share::READ | share::WRITE,
        disposition::OVERWRITE_IF,
        options::NON_DIRECTORY_FILE,
        attributes::ARCHIVE,
    );
}

/// The scripts: a session's credentials and share, and its steps.
fn scripts() -> Vec<(&'static str, &'static str, &'static str, Vec<Step>)> {
    let step = |name, start, want| Step { name, start, want };
    let opened = Want::Done { status: status::OK, has_fid: true, bytes: 0, entries: 0 };
    let moved = |bytes| Want::Done { status: status::OK, has_fid: false, bytes, entries: 0 };
    let found = |entries| Want::Done { status: status::OK, has_fid: false, bytes: 0, entries };
    vec![
        ("badpw", "wrong password", SHARE, vec![step("connect", nothing, Want::Failed(SetupError::LogonFailure))]),
        ("badshare", PASSWORD, "no-such-share", vec![step("connect", nothing, Want::Failed(SetupError::BadShare))]),
        (
            "ops",
            PASSWORD,
            SHARE,
            vec![
                step("connect", nothing, Want::Connected),
                step("mkdir", |s, _| s.mkdir("/dir"), ok()),
                step("mkdir-again", |s, _| s.mkdir("/dir"), fails(status::OBJECT_NAME_COLLISION)),
                step("open", |s, _| create(s, "/dir/f.dat"), opened),
                step("write", |s, f| s.write(f, 0, 4096), moved(4096)),
                step("read", |s, f| s.read(f, 0, 4096), moved(4096)),
                step("read-past-eof", |s, f| s.read(f, 100_000, 10), fails(status::END_OF_FILE)),
                step("lock", |s, f| s.lock(f, 0, 10), ok()),
                step("unlock", |s, f| s.unlock(f, 0, 10), ok()),
                step("unlock-again", |s, f| s.unlock(f, 0, 10), fails(status::RANGE_NOT_LOCKED)),
                step("flush", |s, f| s.flush(f), ok()),
                step("query-all-info", |s, f| s.query_file_info(f, info::file::ALL), ok()),
                step("set-times", |s, f| s.set_file_times(f), ok()),
                step("close", |s, f| s.close(f), ok()),
                step("stat", |s, _| s.stat("dir\\f.dat"), ok()),
                step("stat-missing", |s, _| s.stat("/dir/missing"), fails(status::OBJECT_NAME_NOT_FOUND)),
                step("find", |s, _| s.find("/dir/*", 100), found(3)),
                step("find-none", |s, _| s.find("/dir/*.xyz", 100), fails(status::NO_SUCH_FILE)),
                step("fs-size", |s, _| s.query_fs_info(info::fs::SIZE), ok()),
                step("rename", |s, _| s.rename("/dir/f.dat", "/dir/g.dat"), ok()),
                step("unlink", |s, _| s.unlink("/dir/g.dat"), ok()),
                step("rmdir", |s, _| s.rmdir("/dir"), ok()),
                step("mkdir-tree", |s, _| s.mkdir("/t"), ok()),
                step("mkdir-subtree", |s, _| s.mkdir("/t/u"), ok()),
                step("open-in-tree", |s, _| create(s, "/t/u/x"), opened),
                step("close-in-tree", |s, f| s.close(f), ok()),
                step("deltree", |s, _| s.deltree("/t"), ok()),
                step("logoff", |s, _| s.logoff(), Want::Closed),
            ],
        ),
    ]
}

fn data_file(script: &str, i: usize, step: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(format!("{script}-{i:02}-{step}.bin"))
}

fn check(got: &[Event], want: Want, what: &str) {
    assert_eq!(got.len(), 1, "{what}: exactly one event, got {got:?}");
    let ok = match (&got[0], want) {
        (Event::Connected, Want::Connected) | (Event::Closed, Want::Closed) => true,
        (Event::Failed(e), Want::Failed(w)) => *e == w,
        (
            Event::Done(Done { status, fid, bytes, entries }),
            Want::Done { status: s, has_fid, bytes: b, entries: e },
        ) => (*status, fid.is_some(), *bytes, *entries) == (s, has_fid, b, e),
        _ => false,
    };
    assert!(ok, "{what}: got {:?}, want {want:?}", got[0]);
}

/// Feeds `pieces` and collects the events they produce.
fn feed(session: &mut Session, pieces: &[&[u8]]) -> Vec<Event> {
    for p in pieces {
        session.receive(p).expect("captured replies are valid");
    }
    std::iter::from_fn(|| session.poll_event()).collect()
}

fn last_fid(events: &[Event], fid: &mut FileId) {
    if let Some(Event::Done(Done { fid: Some(f), .. })) = events.last() {
        *fid = *f;
    }
}

#[test]
fn captured_replies_give_the_expected_events_however_split() {
    for (script, _, share_name, steps) in scripts() {
        let mut session = Session::new("127.0.0.1", share_name, credentials(USER, "any"));
        let mut fid = FileId([0; 16]);
        for (i, step) in steps.iter().enumerate() {
            let what = format!("{script} step {i} ({})", step.name);
            let file = data_file(script, i, step.name);
            let bytes = std::fs::read(&file)
                .unwrap_or_else(|e| panic!("{}: {e} (capture it, see the module comment)", file.display()));
            (step.start)(&mut session, fid);
            session.consume_output(session.output().len());
            let before = session.clone();

            let whole = feed(&mut session, &[&bytes]);
            check(&whole, step.want, &what);
            for cut in 0..=bytes.len() {
                let got = feed(&mut before.clone(), &[&bytes[..cut], &bytes[cut..]]);
                assert_eq!(got, whole, "{what}: split at byte {cut}");
            }
            let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
            assert_eq!(feed(&mut before.clone(), &bytewise), whole, "{what}: byte by byte");
            last_fid(&whole, &mut fid);
        }
    }
}

/// Runs the scripts against a private smbd and stores what it answered.
#[test]
#[ignore = "rewrites tests/data from a live smbd; run with CREST_SMB2_CAPTURE=1"]
fn capture() {
    assert!(std::env::var_os("CREST_SMB2_CAPTURE").is_some(), "set CREST_SMB2_CAPTURE=1 to rewrite tests/data");
    let Some(smbd) = Smbd::start("") else { return };
    for (script, password, share_name, steps) in scripts() {
        let (mut conn, event) = Conn::open(smbd.port, share_name, credentials(USER, password));
        let mut fid = FileId([0; 16]);
        for (i, step) in steps.iter().enumerate() {
            let event = if i == 0 { event.clone() } else { conn.run(|s| (step.start)(s, fid)) };
            let events = [event];
            check(&events, step.want, &format!("live {script} step {i} ({})", step.name));
            last_fid(&events, &mut fid);
            std::fs::write(data_file(script, i, step.name), conn.take_received()).unwrap();
        }
    }
}
