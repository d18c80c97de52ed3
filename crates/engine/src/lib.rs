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
//! Layering (dependencies point down):
//! `run → worker → {slot, h2slot} → {dial, select, validate, specweb99, keepalive, schedule, connection, protocol, stats}`, with
//! `config` and `error` as leaves; at the end, `run → part → report → stats`.
//! `protocol` never touches a socket, `connection` never parses HTTP,
//! `schedule` never reads the clock.
#![deny(missing_docs)]

pub mod config;
pub mod connection;
mod dial;
pub mod error;
pub mod fileops;
mod h2slot;
mod h3slot;
pub mod keepalive;
mod lane;
mod live;
mod nap;
pub mod part;
pub mod plan;
pub mod protocol;
pub mod report;
pub mod rng;
mod run;
pub mod schedule;
mod select;
mod slot;
pub mod specweb99;
pub mod stats;
pub mod table;
mod validate;
mod worker;

pub use config::{HttpVersion, Loadfile, RequestEntry, RunConfig, Selection, Specweb99};
pub use error::{ConfigError, ErrorKind, StartError};
pub use fileops::probe as probe_file_target;
pub use live::LiveSnapshot;
pub use part::{merge_parts, MergeError, Part};
pub use plan::validate;
pub use report::{LatencySummary, RunFacts, RunReport};
pub use run::{start, RunHandle};
pub use stats::Stats;
