//! The specweb99 directory: the files SPECweb99's dynamic set keeps between
//! requests, shared by every server side that answers it (the built-in
//! target, the CGI program, crest-fcgi), possibly at once:
//!
//! - `User.Personality` and `Custom.Ads`, written by Reset (into a temporary
//!   file, then renamed, so a reader sees the old table or the new one, never
//!   half of one) and parsed into a cache that is reloaded whenever a file's
//!   inode, length or mtime changes, so a Reset served by another process is
//!   seen on the next custom-ad GET;
//! - `post.log` (crest's name; the kit leaves it to the server): an 11-byte
//!   count header and 139-byte records, appended under an exclusive
//!   `flock(2)` on the log itself, so record numbers rise strictly in file
//!   order across processes and threads.
//!
//! Owns these files and nothing else; it must not read the docroot or know
//! about requests (`specweb99_answer` does).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::specweb99::{self, Ad, Choice, MyCookie, PostForm, Reset};

/// `User.Personality`'s name in the directory, as the kit names it.
pub const USERS_FILE: &str = "User.Personality";
/// `Custom.Ads`'s name in the directory, as the kit names it.
pub const ADS_FILE: &str = "Custom.Ads";
/// The POST log's name: crest's choice, the kit does not fix one.
pub const POST_LOG_FILE: &str = "post.log";
/// Users a Reset may ask for: 15 bytes each, so at most 15 MB of table.
pub const MAX_USERS: u32 = 1_000_000;

/// Mode of the files made here. The server's workers, the CGI programs and
/// crest-fcgi may run as different accounts in one group; the directory
/// itself (mode 0770 in a site) is what keeps others out.
const SHARED_MODE: u32 = 0o666;

/// Tells temporary files of concurrent Resets in one process apart.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// One specweb99 directory and the tables parsed from it.
#[derive(Debug)]
pub struct State {
    dir: PathBuf,
    tables: Mutex<Option<Tables>>,
}

/// The parsed tables and the identity of the files they were read from.
#[derive(Debug)]
struct Tables {
    users: Vec<u8>,
    ads: Vec<Ad>,
    stamps: [Stamp; 2],
}

/// What says a file was replaced or rewritten: inode, length, mtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp(u64, u64, i64, i64);

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp(meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec())
    }
}

impl State {
    /// The state in `dir`; nothing is read or made until a request needs it.
    pub fn new(dir: impl Into<PathBuf>) -> State {
        State { dir: dir.into(), tables: Mutex::new(None) }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes both tables for `reset` at `now_unix_s` and empties the POST log.
    pub fn reset(&self, reset: &Reset, now_unix_s: i64) -> io::Result<()> {
        let users = specweb99::user_personality(reset.maxload.max(reset.maxthread).min(MAX_USERS));
        self.replace(USERS_FILE, users.as_bytes())?;
        self.replace(ADS_FILE, specweb99::custom_ads(&specweb99::ads(reset, now_unix_s)).as_bytes())?;
        let log = self.open_log()?;
        log.set_len(0)?;
        log.write_all_at(specweb99::post_header(0).as_bytes(), 0)
    }

    /// The ad for `cookie` at `now_unix_s`; the error form when the tables
    /// are missing (no Reset yet) or unreadable, or the user is unknown.
    pub fn choose_ad(&self, cookie: Option<MyCookie>, now_unix_s: i64) -> Choice {
        let Some(cookie) = cookie else {
            return Choice::NONE;
        };
        let Ok(mut cached) = self.tables.lock() else {
            return Choice::NONE;
        };
        if self.refresh(&mut cached).is_err() {
            *cached = None;
        }
        let Some(tables) = cached.as_ref() else {
            return Choice::NONE;
        };
        let Some(user) = cookie.user_index().and_then(|i| specweb99::user_demographics(&tables.users, i)) else {
            return Choice::NONE;
        };
        specweb99::choose_ad(user, cookie.last_ad, &tables.ads, now_unix_s)
    }

    /// Appends one record for `form` from `user_id` and returns its number
    /// (from 1). The whole read-count, append, rewrite-header step holds the
    /// log's exclusive lock.
    pub fn append_post(&self, form: &PostForm, user_id: i64, now_unix_s: i64, pid: u32) -> io::Result<u64> {
        let log = self.open_log()?;
        let len = log.metadata()?.len();
        let header = specweb99::POST_HEADER_BYTES as u64;
        let record = specweb99::POST_RECORD_BYTES as u64;
        // As µserver does: the count follows from the size, so a record cut
        // short by a crash is overwritten rather than counted.
        let records = len.saturating_sub(header) / record;
        let recno = records + 1;
        log.write_all_at(
            specweb99::post_record(recno, now_unix_s, pid, form, user_id).as_bytes(),
            header + records * record,
        )?;
        log.set_len(header + recno * record)?;
        log.write_all_at(specweb99::post_header(recno).as_bytes(), 0)?;
        Ok(recno)
    }

    /// The whole POST log, read under its lock so no append is seen half done;
    /// a log that does not exist yet reads as its empty header.
    pub fn post_log(&self) -> io::Result<Vec<u8>> {
        let mut log = match File::open(self.dir.join(POST_LOG_FILE)) {
            Ok(log) => log,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(specweb99::post_header(0).into_bytes()),
            Err(e) => return Err(e),
        };
        log.lock_shared()?;
        let mut bytes = Vec::new();
        log.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Rereads the tables when either file changed since they were parsed.
    /// Each file's stamp is taken from the open file, so the stamp always
    /// belongs to the bytes read.
    fn refresh(&self, cached: &mut Option<Tables>) -> io::Result<()> {
        let mut users = File::open(self.dir.join(USERS_FILE))?;
        let mut ads = File::open(self.dir.join(ADS_FILE))?;
        let stamps = [Stamp::of(&users.metadata()?), Stamp::of(&ads.metadata()?)];
        if cached.as_ref().is_some_and(|t| t.stamps == stamps) {
            return Ok(());
        }
        let mut user_bytes = Vec::new();
        users.read_to_end(&mut user_bytes)?;
        let mut ad_bytes = Vec::new();
        ads.read_to_end(&mut ad_bytes)?;
        let ads = specweb99::parse_ads(&ad_bytes)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "Custom.Ads is malformed"))?;
        *cached = Some(Tables { users: user_bytes, ads, stamps });
        Ok(())
    }

    /// Writes `name` whole through a temporary file and a rename.
    fn replace(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let temp = self.dir.join(format!(".{name}.{}.{seq}", std::process::id()));
        let written = File::create(&temp).and_then(|mut f| {
            f.write_all(bytes)?;
            f.set_permissions(fs::Permissions::from_mode(SHARED_MODE))
        });
        match written.and_then(|()| fs::rename(&temp, self.dir.join(name))) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = fs::remove_file(&temp);
                Err(e)
            }
        }
    }

    /// The POST log opened for writing and locked exclusively, made with its
    /// header when it does not exist yet. The lock is `flock(2)`'s, held by
    /// this open file: closing it (dropping the `File`) releases it on every
    /// path out, errors included.
    fn open_log(&self) -> io::Result<File> {
        let log = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.dir.join(POST_LOG_FILE))?;
        log.lock()?;
        let meta = log.metadata()?;
        if meta.permissions().mode() & 0o777 != SHARED_MODE {
            // Only its owner may change it; another account's log stays as it is.
            let _ = log.set_permissions(fs::Permissions::from_mode(SHARED_MODE));
        }
        if meta.len() < specweb99::POST_HEADER_BYTES as u64 {
            log.set_len(0)?;
            log.write_all_at(specweb99::post_header(0).as_bytes(), 0)?;
        }
        Ok(log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::tempdir;

    fn form() -> PostForm {
        specweb99::parse_post("class=1&client=2&dir=00004&num=3&urlroot=/file_set/").expect("valid form")
    }

    #[test]
    fn appends_count_from_one_and_reset_empties_the_log() {
        let dir = tempdir();
        let state = State::new(dir.path());
        assert_eq!(state.post_log().unwrap(), b"         0\n");
        assert_eq!(state.append_post(&form(), 10_001, 5, 7).unwrap(), 1);
        assert_eq!(state.append_post(&form(), 10_002, 6, 7).unwrap(), 2);
        let log = state.post_log().unwrap();
        assert_eq!(log.len(), 11 + 2 * 139);
        assert_eq!(&log[..11], b"         2\n");
        assert_eq!(&log[11..150], specweb99::post_record(1, 5, 7, &form(), 10_001).as_bytes());
        let reset = Reset { maxload: 10, pttime: 100, maxthread: 5, expired: (1, 100) };
        state.reset(&reset, 1_000).unwrap();
        assert_eq!(state.post_log().unwrap(), b"         0\n");
    }

    #[test]
    fn a_reset_by_another_writer_is_seen_and_missing_tables_are_the_error_form() {
        let dir = tempdir();
        let (a, b) = (State::new(dir.path()), State::new(dir.path()));
        let cookie = Some(MyCookie { user_id: 10_001, last_ad: 20 });
        assert_eq!(a.choose_ad(cookie, 0), Choice::NONE);
        let reset = Reset { maxload: 10, pttime: 100, maxthread: 100, expired: (1, 100) };
        b.reset(&reset, 1_000).unwrap();
        assert_eq!(a.choose_ad(cookie, 1_000).ad, 28);
        // Another Reset with the easy ads elsewhere (maxthread 101 → 5, 29, …) is seen too.
        b.reset(&Reset { maxthread: 101, ..reset }, 1_000).unwrap();
        assert_eq!(a.choose_ad(cookie, 1_000).ad, 29);
        assert_eq!(a.choose_ad(Some(MyCookie { user_id: 10_000 + 101, last_ad: 0 }), 1_000), Choice::NONE);
    }
}
