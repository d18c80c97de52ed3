//! Content-Type by file extension: a deliberately small table covering what
//! benchmarks serve. Unknown extensions are `application/octet-stream`.
//! Must stay allocation-free: values are static header values.

use std::path::Path;

use http::HeaderValue;

const TABLE: &[(&str, &str)] = &[
    ("html", "text/html; charset=utf-8"),
    ("htm", "text/html; charset=utf-8"),
    ("txt", "text/plain; charset=utf-8"),
    ("css", "text/css; charset=utf-8"),
    ("js", "text/javascript; charset=utf-8"),
    ("mjs", "text/javascript; charset=utf-8"),
    ("json", "application/json"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("svg", "image/svg+xml"),
    ("ico", "image/x-icon"),
    ("webp", "image/webp"),
    ("wasm", "application/wasm"),
    ("xml", "application/xml"),
    ("pdf", "application/pdf"),
];

const DEFAULT: &str = "application/octet-stream";

pub(crate) fn content_type(path: &Path) -> HeaderValue {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let mime = TABLE.iter().find(|(known, _)| known.eq_ignore_ascii_case(ext)).map_or(DEFAULT, |&(_, mime)| mime);
    HeaderValue::from_static(mime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown() {
        assert_eq!(content_type(Path::new("a/index.HTML")), "text/html; charset=utf-8");
        assert_eq!(content_type(Path::new("x.bin")), "application/octet-stream");
        assert_eq!(content_type(Path::new("noext")), "application/octet-stream");
        assert_eq!(content_type(Path::new("p.png")), "image/png");
    }
}
