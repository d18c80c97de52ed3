//! File-operation runs: dbench's NetBench-derived loadfile (reference
//! §4.5–4.6) replayed by each client against a directory (`fileio`) or an
//! SMB share (`smb`), recorded in the same `Stats` as HTTP runs, so a file
//! run's report, part and merge are the engine's usual ones: operations are
//! its requests, op kinds its classes, data bytes moved its bytes.
//!
//! Layering: `start → {fileio_worker, smb_worker} → client → {loadfile, op}`,
//! with `plan` the input gate. The backends (`fileio`, crest-smb2's
//! sessions) execute operations; `client` alone judges and records them.

pub mod client;
pub mod fileio;
mod fileio_worker;
pub mod handles;
pub mod loadfile;
pub mod op;
pub mod plan;
mod smb_worker;

pub use loadfile::{Line, Loadfile, LoadfileError};
pub use op::{Expect, OpKind, Outcome};
pub use plan::{Backend, FilePlan};

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::RunConfig;
use crate::error::StartError;
use crate::exec::RunHandle;
use crate::results::report::RunFacts;
use crate::rng::Rng;

/// Validates a loadfile `config` and starts its clients.
pub(crate) fn start(config: &RunConfig) -> Result<RunHandle, StartError> {
    let plan = Arc::new(FilePlan::new(config)?);
    match plan.backend {
        Backend::Fileio { .. } => fileio_worker::start(plan),
        Backend::Smb { .. } => smb_worker::start(plan),
    }
}

/// Checks a loadfile `config` as `start` would before any load, without
/// starting: the input (`FilePlan`), and for an SMB target that the server
/// answers and takes the user, the password and the share (one session set
/// up and dropped). ConfigError names the problem and the fix.
pub fn probe(config: &RunConfig) -> Result<(), crate::error::ConfigError> {
    let plan = FilePlan::new(config)?;
    smb_worker::probe(&plan)
}

/// The report's facts of a file run with `threads` threads.
fn facts(plan: &FilePlan, threads: u32) -> RunFacts {
    RunFacts {
        classes: FilePlan::classes(),
        window: plan.window,
        duration: plan.duration,
        rate_rps: None,
        threads,
        connections: plan.connections,
    }
}

/// When connection `index` begins: its client's random start delay (drawn
/// as HTTP runs draw it, one per scored client) after `origin`.
fn first_start(plan: &FilePlan, origin: Instant, index: u32) -> Instant {
    let client = index / plan.connections_per_client;
    let mut rng = Rng::new(plan.seed.wrapping_add(u64::from(client)).wrapping_mul(0xD1B5_4A32_D192_ED03));
    origin + plan.client_start_delay.mul_f64(rng.next_f64())
}

/// Connection `index`'s share of a count-bounded run.
fn quota(plan: &FilePlan, index: u32) -> Option<u64> {
    let n = u64::from(plan.connections);
    plan.max_operations.map(|total| total / n + u64::from(u64::from(index) < total % n))
}

/// Sleeps until `until`, waking every 50 ms to see whether the run was cancelled.
fn sleep_until(until: Instant, cancelled: impl Fn() -> bool) {
    loop {
        let now = Instant::now();
        if now >= until || cancelled() {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}
