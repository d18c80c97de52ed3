//! The CGI programs crest installs on targets, as library code the two thin
//! binaries in `src/bin/` call: `crest-env` (the WebBench-style 1024-byte
//! environment page, [`env_page`]) and `crest-bytes` (WebStone's `?size=N`
//! pseudo-random bytes, [`bytes`]), plus the CGI plumbing both share
//! ([`cgi`]). crest's FastCGI responder (crates/fcgi) answers with the same
//! pages through [`env_page`] and [`bytes`], so CGI and FastCGI mixes
//! transfer the same bytes.
//!
//! [`specweb99`] holds SPECweb99's dynamic workload (tables, ad choice, tag
//! substitution, POST log) as pure functions for every server side to share;
//! [`specweb99_state`] the files it keeps in a specweb99 directory,
//! [`specweb99_answer`] one request answered, and [`specweb99_cgi`] the CGI
//! program `crest-specweb99` built on them (the built-in target and
//! crest-fcgi answer through the same [`specweb99_answer`]).
//!
//! std only, no dependencies, no heap-heavy start-up: a target starts one of
//! these per request, so start-up cost is part of what a CGI mix measures.

pub mod bytes;
pub mod cgi;
pub mod env_page;
pub mod specweb99;
pub mod specweb99_answer;
pub mod specweb99_cgi;
pub mod specweb99_state;
#[cfg(test)]
mod test_support;
