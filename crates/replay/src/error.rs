//! The reader's one error type. Each is one line that names the problem and
//! the fix (crest prints it as is, exit 2); a line's error names its number.

use thiserror::Error;

/// Why a log cannot be read.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// The file cannot be opened or read.
    #[error("cannot read {path}: {why}")]
    Read {
        /// The log's path as given.
        path: String,
        /// The operating system's reason.
        why: String,
    },
    /// The format name or format string is not one crest reads.
    #[error("{0}")]
    Format(String),
    /// A line does not parse in the log's format.
    #[error("{path} line {line}: {why}")]
    Line {
        /// The log's path as given.
        path: String,
        /// 1-based line number.
        line: u64,
        /// What is wrong and the fix, with a short excerpt of the line.
        why: String,
    },
    /// The log holds no request that can be replayed.
    #[error("{path} has no request to replay: {why}")]
    Empty {
        /// The log's path as given.
        path: String,
        /// What was found instead.
        why: String,
    },
}
