//! crest-target: the built-in target server ("system under test") for crest.
//!
//! It serves static files from a docroot (small files from an in-memory cache,
//! large ones from mmap), an in-process dynamic page at `/dyn/env`, SPECweb99's
//! dynamic set at `/specweb99/dynamic`, real CGI/1.1 programs under `/cgi-bin/`,
//! over plain HTTP/1.x and/or TLS.
//!
//! Threading model: `threads` OS threads, each running its own current-thread
//! tokio runtime and accepting from a shared listening socket (nginx's
//! worker model). A connection lives and dies on the thread that accepted
//! it, so the hot static path never crosses threads, takes no lock, and can
//! use a per-thread file cache; a work-stealing runtime would add cross-thread
//! wake-ups for no gain on short requests. One shared socket (not
//! SO_REUSEPORT) keeps "port already in use" detectable.
//!
//! This file only wires modules together and re-exports the public API.

mod access_log;
mod cgi;
mod cgi_response;
mod config;
mod conn_info;
mod dynamic;
mod error;
mod h3;
mod handler;
mod listener;
mod mime;
mod path;
mod request_body;
mod responses;
mod server;
mod service_queue;
mod specweb99;
mod static_files;
mod tls;

pub use config::ServeConfig;
pub use error::ServeError;
pub use server::Server;
