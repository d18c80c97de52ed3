//! crest's load engine: one `RunConfig` in, one `RunReport` out.
//!
//! Each worker thread owns one `mio` event loop and its share of the run's
//! connections (like wrk). Nothing is shared between workers on the hot path
//! but relaxed atomic stores of live counters; every result is kept per
//! worker and merged exactly at the end (counters add, HDR histograms merge),
//! which is also what lets runs on several machines be merged later: each
//! reports a `part` (lossless JSON of its stats) and `merge_parts` merges
//! them with the same code into the report of all their stats.
//!
//! Layering (dependencies point down; `make lint` checks there is no cycle):
//! - `dispatch`: loadfile or HTTP, for `validate` and `start`;
//! - `http` (plan, worker, slots, lanes) and `fileops` (file runs);
//! - `gate`: the input rules both kinds share, checked once;
//! - `exec`: the run handle, live counters and thread helpers both use;
//! - `results`: stats, part, report;
//! - `specweb99` and `script` (scripted sessions), `connection`, `protocol`, and the leaves `config`,
//!   `error`, `schedule`, `keepalive`, `table`, `rng`.
//!
//! `protocol` never touches a socket, `connection` never parses HTTP,
//! `schedule` never reads the clock.
#![deny(missing_docs)]

pub mod config;
pub mod connection;
mod dispatch;
pub mod error;
mod exec;
pub mod fileops;
mod gate;
mod http;
pub mod keepalive;
pub mod protocol;
mod results;
pub mod rng;
pub mod schedule;
pub mod script;
pub mod specweb99;
pub mod table;

pub use config::{
    HttpVersion, Loadfile, Replay, ReplayMode, RequestEntry, ResolveNames, RunConfig, Selection, Specweb99,
};
pub use dispatch::{start, validate};
pub use error::{ConfigError, ErrorKind, StartError};
pub use exec::{LiveSnapshot, RunHandle};
pub use fileops::probe as probe_file_target;
pub use http::plan;
pub use results::part::{merge_parts, MergeError, Part};
pub use results::report::{LatencySummary, RunFacts, RunReport};
pub use results::stats::Stats;
pub use results::{part, report, stats};
