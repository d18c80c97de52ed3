//! Which request class a logged request falls in. One list for every way a
//! log is used (timed, mix, sessions) and for the site `crest fileset
//! from-log` writes, so their per-class results compare.

/// Class names, indexed by `classify`'s result (the engine's `classes`).
/// Static files by the logged body size, as SPECweb's classes cut them
/// (under 1 KiB, 10 KiB, 100 KiB, larger), then dynamic requests (a query
/// string, or a method other than GET and HEAD), redirects and not-modified
/// (3xx), client errors (4xx: a logged 404 stays a 404) and server errors (5xx).
pub const CLASSES: &[&str] =
    &["static-1k", "static-10k", "static-100k", "static-big", "dynamic", "redirect", "client-error", "server-error"];

/// The class index of a logged request.
/// The status decides first (a 404 for `/a.html` is a client error, not a
/// small static file), then what was asked (a query string or a method other
/// than GET and HEAD is dynamic), then the body size.
pub fn classify(method: &[u8], target: &[u8], status: u16, body_bytes: u64) -> u32 {
    match status {
        500..=599 => 7,
        400..=499 => 6,
        300..=399 => 5,
        _ if target.contains(&b'?') || !(method == b"GET" || method == b"HEAD") => 4,
        _ if body_bytes < 1024 => 0,
        _ if body_bytes < 10 * 1024 => 1,
        _ if body_bytes < 100 * 1024 => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_then_method_and_query_then_size() {
        let class = |m: &str, t: &str, s, b| CLASSES[classify(m.as_bytes(), t.as_bytes(), s, b) as usize];
        assert_eq!(class("GET", "/a.html", 200, 0), "static-1k");
        assert_eq!(class("GET", "/a.html", 200, 1023), "static-1k");
        assert_eq!(class("GET", "/a.html", 200, 1024), "static-10k");
        assert_eq!(class("HEAD", "/a.html", 200, 10 * 1024), "static-100k");
        assert_eq!(class("GET", "/a.iso", 200, 100 * 1024), "static-big");
        assert_eq!(class("GET", "/search?q=x", 200, 10), "dynamic");
        assert_eq!(class("POST", "/form", 200, 10), "dynamic");
        assert_eq!(class("GET", "/old", 301, 0), "redirect");
        assert_eq!(class("GET", "/a.html", 304, 0), "redirect");
        assert_eq!(class("GET", "/missing?x", 404, 150), "client-error");
        assert_eq!(class("POST", "/cgi", 502, 150), "server-error");
    }
}
