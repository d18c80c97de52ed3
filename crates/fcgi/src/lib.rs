//! crest's FastCGI responder: the persistent counterpart of the CGI
//! programs in crates/dynamic (WebBench's ISAPI/in-process test, run beside
//! a real server). It answers `.../crest-env` (and `/dyn/env`) with
//! crest-env's 1024-byte environment page and `.../crest-bytes?size=N` with
//! crest-bytes' body, built by the same code, from the request's FastCGI
//! params instead of a process environment.
//!
//! Layers, each depending only on those below it:
//! - [`record`]: FastCGI records to and from bytes (sans-IO);
//! - [`params`]: a request's name-value pairs;
//! - [`connection`]: one connection's protocol state (sans-IO): requests,
//!   `FCGI_KEEP_CONN`, management records, aborts, unknown roles and types;
//! - [`reply`]: what to answer, as `FCGI_STDOUT` records;
//! - [`server`]: the tokio I/O loop; [`listen`]: opening the listener;
//!   [`limits`]: the open-file limit behind `FCGI_MAX_CONNS`;
//! - [`cli`]: the command line; `main.rs` wires them together.

pub mod cli;
pub mod connection;
pub mod error;
pub mod limits;
pub mod listen;
pub mod params;
pub mod record;
pub mod reply;
pub mod server;
