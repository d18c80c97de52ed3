//! Request-path normalisation: percent-decoding, dot-segment handling and
//! traversal rejection, producing the canonical `/a/b/c` form that routing
//! and the file cache key on.
//!
//! It must not touch the filesystem; the result is a URL path that is
//! guaranteed to stay inside whatever root it is later joined onto.

use std::borrow::Cow;

use http::StatusCode;

/// Canonical request path: starts with `/`, has no empty, `.` or `..`
/// segments, no NUL, and ends with `/` only if the request did.
///
/// The common case (no `%`, no dot or empty segments) is returned borrowed so
/// the hot static path does not allocate.
pub(crate) fn normalize(raw: &str) -> Result<Cow<'_, str>, StatusCode> {
    if !raw.starts_with('/') {
        return Err(StatusCode::BAD_REQUEST);
    }
    if is_canonical(raw) {
        return Ok(Cow::Borrowed(raw));
    }
    let decoded = percent_decode(raw.as_bytes()).ok_or(StatusCode::BAD_REQUEST)?;
    // Non-UTF-8 names are legal on Unix, but nothing crest serves needs them,
    // and keeping paths as `str` keeps routing and cache keys simple.
    let decoded = String::from_utf8(decoded).map_err(|_| StatusCode::NOT_FOUND)?;
    let mut out = String::with_capacity(decoded.len());
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            // Refuse rather than resolve: a client asking for `..` is either
            // broken or probing, and nginx answers such requests the same way.
            ".." => return Err(StatusCode::FORBIDDEN),
            s if s.contains('\0') => return Err(StatusCode::BAD_REQUEST),
            s => {
                out.push('/');
                out.push_str(s);
            }
        }
    }
    if out.is_empty() || decoded.ends_with('/') {
        out.push('/');
    }
    Ok(Cow::Owned(out))
}

fn is_canonical(raw: &str) -> bool {
    if raw.bytes().any(|b| b == b'%' || b == b'\0') {
        return false;
    }
    let mut segments = raw[1..].split('/').peekable();
    while let Some(segment) = segments.next() {
        let last = segments.peek().is_none();
        if (segment.is_empty() && !last) || segment == "." || segment == ".." {
            return false;
        }
    }
    true
}

fn percent_decode(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            let hi = hex(*raw.get(i + 1)?)?;
            let lo = hex(*raw.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    Some(out)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> String {
        normalize(raw).expect(raw).into_owned()
    }

    #[test]
    fn canonical_paths_are_borrowed() {
        assert!(matches!(normalize("/a/b.txt"), Ok(Cow::Borrowed(_))));
        assert!(matches!(normalize("/"), Ok(Cow::Borrowed(_))));
        assert!(matches!(normalize("/dir/"), Ok(Cow::Borrowed(_))));
    }

    #[test]
    fn cleans_and_decodes() {
        assert_eq!(ok("//a/./b//c"), "/a/b/c");
        assert_eq!(ok("/a%20b"), "/a b");
        assert_eq!(ok("/d/./"), "/d/");
        assert_eq!(ok("/."), "/");
        assert_eq!(ok("/%63gi-bin/x"), "/cgi-bin/x");
    }

    #[test]
    fn rejects_traversal_and_garbage() {
        assert_eq!(normalize("/../etc/passwd"), Err(StatusCode::FORBIDDEN));
        assert_eq!(normalize("/a/.."), Err(StatusCode::FORBIDDEN));
        assert_eq!(normalize("/%2e%2e/x"), Err(StatusCode::FORBIDDEN));
        assert_eq!(normalize("/a%2f..%2fb"), Err(StatusCode::FORBIDDEN));
        assert_eq!(normalize("/a%00b"), Err(StatusCode::BAD_REQUEST));
        assert_eq!(normalize("/bad%zz"), Err(StatusCode::BAD_REQUEST));
        assert_eq!(normalize("/bad%4"), Err(StatusCode::BAD_REQUEST));
        assert_eq!(normalize("*"), Err(StatusCode::BAD_REQUEST));
    }
}
