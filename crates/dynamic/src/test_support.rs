//! Test helpers: temporary directories (this crate has no dependencies, not
//! even for tests) and fileset files in the kit's format.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A temporary directory, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub(crate) fn tempdir() -> TempDir {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("crest-dynamic-{}-{n}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("temp dir");
    TempDir(dir)
}

/// One ad tag as the fileset writes it.
pub(crate) const TAG: &str = "<!WEB99CAD><IMG SRC=\"/file_set/dir00000/class0_0\"><!/WEB99CAD>";

/// Writes `<docroot>/file_set/dirNNNNN/classC_F` in the kit's shape: the
/// `"%9d file_set/dirNNNNN/classC_F\n"` line, then (class 1 and 2) ad tags
/// among filler, `size` bytes in all. Returns its bytes.
pub(crate) fn write_file(docroot: &Path, dir: u32, class: u32, file: u32, size: usize) -> Vec<u8> {
    let name = format!("file_set/dir{dir:05}/class{class}_{file}");
    let mut body = format!("{size:9} {name}\n").into_bytes();
    let mut i = 0;
    while body.len() < size {
        if (class == 1 || class == 2) && body.len() + TAG.len() < size {
            body.extend_from_slice(TAG.as_bytes());
            body.push(b'\n');
        }
        body.push(b'a' + (i % 26) as u8);
        i += 1;
    }
    body.truncate(size);
    let path = docroot.join(&name);
    fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    fs::write(&path, &body).expect("write");
    body
}
