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
pub fn classify(method: &[u8], target: &[u8], status: u16, body_bytes: u64) -> u32 {
    let _ = (method, target, status, body_bytes);
    todo!()
}
