//! Access logs as workloads: which formats crest reads (`format`), one line
//! to one `Record` on bytes only (`line`), and the compact `Table` a whole log
//! becomes, read once as a stream (`table`), with the request classes a
//! logged request falls in (`class`). No sockets and no clock: the engine
//! sends from a `Table`; Python only ever sees its `Summary`.
//!
//! Layering (dependencies point down): `table → {line, class} → format → error`.
#![deny(missing_docs)]

pub mod class;
pub mod error;
pub mod format;
pub mod line;
pub mod table;

pub use class::{classify, CLASSES};
pub use error::ReplayError;
pub use format::Format;
pub use line::{parse_line, Record};
pub use table::{load, Entry, Options, SessionKey, Summary, Table};
