//! The integration tests as one test binary: each file below is one module, so `cargo test`
//! links one binary for this crate instead of one per file (linking dominates a clean test build).

#[path = "cgi.rs"]
mod cgi;
#[path = "serve.rs"]
mod serve;
#[path = "specweb99.rs"]
mod specweb99;
#[path = "tls.rs"]
mod tls;

mod common;
