//! The one place that decides "loadfile or HTTP": a `RunConfig` with a
//! `loadfile` is a file run (`fileops`), any other an HTTP run (`http`).
//! Above both kinds of run and below nothing but the crate root; neither
//! kind calls into the other, and this module checks nothing itself.

use crate::config::RunConfig;
use crate::error::{ConfigError, StartError};
use crate::exec::RunHandle;

/// Checks every rule of `config` that needs no name resolution and no
/// socket: the whole gate for bad input except resolving host names (and,
/// for an SMB target, reaching the server: see `probe_file_target`).
/// Errors name the `RunConfig` key at fault (`ConfigError::field`).
pub fn validate(config: &RunConfig) -> Result<(), ConfigError> {
    match config.loadfile {
        Some(_) => crate::fileops::plan::FilePlan::new(config).map(|_| ()),
        None => crate::http::plan::validate(config),
    }
}

/// Validates `config` and starts its workers. Nothing is sent when this
/// returns an error: `Config` for bad input, `Machine` when the operating
/// system refuses an event loop, a thread or the TLS setup.
pub fn start(config: &RunConfig) -> Result<RunHandle, StartError> {
    match config.loadfile {
        Some(_) => crate::fileops::start(config),
        None => crate::http::start(config),
    }
}
