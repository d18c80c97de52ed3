//! Static files under the docroot: URL path to file resolution, the file
//! cache, and mmap for large files.
//!
//! Caching scheme, chosen so the hot path takes no lock and no syscall:
//! - Each worker thread keeps its own map from URL path to a ready response
//!   (body `Bytes` plus precomputed header values). Connections never leave
//!   the thread that accepted them, so this map is only touched by its owner.
//! - A shared store behind a `Mutex`, keyed by file path, holds the loaded
//!   bytes so N threads share one copy instead of N. It is consulted only on
//!   a per-thread miss, so the lock is off the hot path.
//! - An entry is re-checked against the file's size and mtime at most once
//!   per `REVALIDATE_AFTER`, so edits show up within a second.
//!
//! Files up to `max_mem_file` bytes are read into memory; larger ones are
//! mmap'd once and shared, so a 10 MB file is never copied per request.
//!
//! This module must not parse HTTP or decide routes; it gets a normalised
//! URL path (see `path.rs`) and returns bytes or a status.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::{self, File as FsFile};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use memmap2::Mmap;

use crate::mime;

const REVALIDATE_AFTER: Duration = Duration::from_secs(1);
/// Bounds on the shared store (and so on every per-thread map), so a client
/// walking millions of distinct files cannot grow memory without limit.
const MAX_ENTRIES: usize = 65_536;
const MAX_HEAP_BYTES: u64 = 512 * 1024 * 1024;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static LOCAL: RefCell<LocalCache> = RefCell::new(LocalCache { owner: 0, slots: HashMap::new() });
}

/// A file ready to be sent.
#[derive(Clone)]
pub(crate) struct File {
    pub body: Bytes,
    pub content_type: HeaderValue,
    pub content_length: HeaderValue,
}

pub(crate) struct StaticFiles {
    /// Distinguishes servers sharing a thread (only possible in tests that
    /// call in from odd places); a thread's cache belongs to one server.
    id: u64,
    docroot: PathBuf,
    max_mem_file: u64,
    store: Mutex<Store>,
}

struct LocalCache {
    owner: u64,
    slots: HashMap<Box<str>, Slot>,
}

struct Slot {
    file: File,
    path: Arc<Path>,
    stamp: Stamp,
    checked: Instant,
}

/// What identifies a version of a file on disk.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp { len: meta.len(), modified: meta.modified().ok() }
    }
}

#[derive(Default)]
struct Store {
    map: HashMap<Arc<Path>, Stored>,
    heap_bytes: u64,
}

struct Stored {
    body: Bytes,
    stamp: Stamp,
    heap_bytes: u64,
}

impl StaticFiles {
    pub(crate) fn new(docroot: PathBuf, max_mem_file: u64) -> StaticFiles {
        StaticFiles {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            docroot,
            max_mem_file,
            store: Mutex::new(Store::default()),
        }
    }

    /// The file for a normalised URL path, or the status to answer with.
    pub(crate) fn get(&self, url_path: &str) -> Result<File, StatusCode> {
        let now = Instant::now();
        let hit = LOCAL.with_borrow_mut(|local| {
            if local.owner != self.id {
                local.owner = self.id;
                local.slots.clear();
            }
            let slot = local.slots.get_mut(url_path)?;
            if now.duration_since(slot.checked) < REVALIDATE_AFTER {
                return Some(slot.file.clone());
            }
            if fs::metadata(&slot.path).is_ok_and(|m| Stamp::of(&m) == slot.stamp) {
                slot.checked = now;
                return Some(slot.file.clone());
            }
            local.slots.remove(url_path);
            None
        });
        match hit {
            Some(file) => Ok(file),
            None => self.miss(url_path, now),
        }
    }

    fn miss(&self, url_path: &str, now: Instant) -> Result<File, StatusCode> {
        let path = self.resolve(url_path)?;
        let (body, stamp, cached) = self.load(&path)?;
        let file =
            File { content_type: mime::content_type(&path), content_length: HeaderValue::from(body.len()), body };
        if cached {
            LOCAL.with_borrow_mut(|local| {
                if local.slots.len() >= MAX_ENTRIES {
                    local.slots.clear();
                }
                let slot = Slot { file: file.clone(), path, stamp, checked: now };
                local.slots.insert(url_path.into(), slot);
            });
        }
        Ok(file)
    }

    /// Maps the URL path onto a regular file under the docroot. `url_path`
    /// is already free of `..` (see `path::normalize`), so joining it cannot
    /// escape; symlinks inside the docroot are followed, like nginx does.
    fn resolve(&self, url_path: &str) -> Result<Arc<Path>, StatusCode> {
        let mut path = self.docroot.join(url_path.trim_start_matches('/'));
        let mut meta = fs::metadata(&path).map_err(status_of)?;
        if meta.is_dir() {
            path.push("index.html");
            meta = fs::metadata(&path).map_err(status_of)?;
        }
        if meta.is_dir() {
            return Err(StatusCode::NOT_FOUND);
        }
        // FIFOs and devices would block or never end; refuse them.
        if !meta.is_file() {
            return Err(StatusCode::FORBIDDEN);
        }
        Ok(path.into())
    }

    /// Bytes of the file, shared with other threads through the store when
    /// possible. Returns whether the result may be cached per thread.
    fn load(&self, path: &Arc<Path>) -> Result<(Bytes, Stamp, bool), StatusCode> {
        let file = FsFile::open(path).map_err(status_of)?;
        let stamp = Stamp::of(&file.metadata().map_err(status_of)?);
        if let Some(stored) = self.lock().map.get(path) {
            if stored.stamp == stamp {
                return Ok((stored.body.clone(), stamp, true));
            }
        }
        let in_heap = stamp.len <= self.max_mem_file;
        let body = if in_heap { read_small(file, stamp.len) } else { map_large(&file) }
            .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
        let heap_bytes = if in_heap { body.len() as u64 } else { 0 };
        let mut store = self.lock();
        let replaced = store.map.get(path).map_or(0, |old| old.heap_bytes);
        let fits = store.map.len() < MAX_ENTRIES && store.heap_bytes - replaced + heap_bytes <= MAX_HEAP_BYTES;
        if fits {
            store.heap_bytes = store.heap_bytes - replaced + heap_bytes;
            store.map.insert(path.clone(), Stored { body: body.clone(), stamp, heap_bytes });
        }
        Ok((body, stamp, fits))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        // The store only holds plain data; a panic elsewhere cannot leave it
        // half-updated in a way that matters, so poisoning is ignored.
        self.store.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Reads at most `len` bytes (the size fstat reported), so a file growing
/// underneath us cannot make one request read without bound.
fn read_small(file: FsFile, len: u64) -> io::Result<Bytes> {
    let mut buf = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut buf)?;
    Ok(Bytes::from(buf))
}

fn map_large(file: &FsFile) -> io::Result<Bytes> {
    // SAFETY: the mapping is read-only and private to this process. Like any
    // server that serves files via mmap, a concurrent in-place truncation of
    // the file can fault; replacing files by rename (the normal way to
    // deploy) is safe, since the old inode stays mapped.
    let map = unsafe { Mmap::map(file)? };
    let _ = map.advise(memmap2::Advice::Sequential);
    Ok(Bytes::from_owner(map))
}

fn status_of(err: io::Error) -> StatusCode {
    match err.kind() {
        io::ErrorKind::PermissionDenied => StatusCode::FORBIDDEN,
        _ => StatusCode::NOT_FOUND,
    }
}
