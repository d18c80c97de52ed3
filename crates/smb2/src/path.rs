//! Share-relative paths as SMB2 names: UTF-16LE, `\` separators, no leading
//! or trailing separator ([MS-SMB2] 2.2.13: a CREATE name must not start with
//! a backslash).
//!
//! Callers give paths as loadfiles write them: `/` or `\`, a leading
//! separator, even doubled ones (`\\clients\\client1` in dbench's files). A
//! run of separators becomes one `\`. Encodes straight into the caller's
//! buffer, so no operation allocates a name.

/// Is `c` a path separator in the caller's spelling?
fn is_separator(c: char) -> bool {
    c == '/' || c == '\\'
}

/// Appends `s` as UTF-16LE, unchanged; returns the bytes written.
pub(crate) fn put_utf16(out: &mut Vec<u8>, s: &str) -> usize {
    let start = out.len();
    for unit in s.encode_utf16() {
        out.extend_from_slice(&unit.to_le_bytes());
    }
    out.len() - start
}

/// Appends `path` as an SMB2 name (see the module comment); returns the
/// bytes written (0 for the share root).
pub(crate) fn put_path(out: &mut Vec<u8>, path: &str) -> usize {
    let start = out.len();
    for (i, component) in components(path).enumerate() {
        if i > 0 {
            out.extend_from_slice(&u16::from(b'\\').to_le_bytes());
        }
        put_utf16(out, component);
    }
    out.len() - start
}

/// The non-empty components of `path`.
pub(crate) fn components(path: &str) -> impl Iterator<Item = &str> {
    path.split(is_separator).filter(|c| !c.is_empty())
}

/// Splits `path` into its parent and its last component: `a/b/*.txt` gives
/// (`a/b`, `*.txt`); `x` gives (``, `x`); the root gives (``, ``).
pub(crate) fn split_last(path: &str) -> (&str, &str) {
    let trimmed = path.trim_end_matches(is_separator);
    match trimmed.rfind(is_separator) {
        Some(at) => (&trimmed[..at], &trimmed[at + 1..]),
        None => ("", trimmed),
    }
}

/// Joins a share-relative directory and an entry name into `out` with `\`;
/// for the deltree walk, which is allowed to allocate.
pub(crate) fn join(dir: &str, name: &str) -> String {
    let mut out = String::with_capacity(dir.len() + 1 + name.len());
    for c in components(dir) {
        out.push_str(c);
        out.push('\\');
    }
    out.push_str(name);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn loadfile_paths_become_smb2_names() {
        for (given, want) in [
            ("/clients/client3/~dmtmp/WORD/CHAP10.DOC", "clients\\client3\\~dmtmp\\WORD\\CHAP10.DOC"),
            ("\\\\clients\\\\client1\\\\~dmtmp", "clients\\client1\\~dmtmp"),
            ("a\\b/c/", "a\\b\\c"),
            ("plain", "plain"),
            ("/", ""),
            ("", ""),
            ("dir/é€𝄞", "dir\\é€𝄞"),
        ] {
            let mut out = vec![0xEE];
            let n = put_path(&mut out, given);
            assert_eq!(&out[1..], utf16(want), "{given}");
            assert_eq!(n, out.len() - 1);
        }
    }

    #[test]
    fn split_last_component() {
        assert_eq!(split_last("\\a\\b\\*.txt"), ("\\a\\b", "*.txt"));
        assert_eq!(split_last("a/b/"), ("a", "b"));
        assert_eq!(split_last("x"), ("", "x"));
        assert_eq!(split_last("/x"), ("", "x"));
        assert_eq!(split_last("/"), ("", ""));
    }

    #[test]
    fn join_normalises_the_directory() {
        assert_eq!(join("/a//b/", "c"), "a\\b\\c");
        assert_eq!(join("", "c"), "c");
    }
}
