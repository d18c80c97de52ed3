//! HTTP runs: the `Plan` (the HTTP gate), one `mio` event loop per worker
//! thread (`worker`), and the connections it owns: HTTP/1 slots, HTTP/2 and
//! HTTP/3 slots with their lanes. Layering inside (dependencies point down):
//! `worker → {h1slot, h2slot, h3slot} → {lane, dial} → exchange → ctx → {select, validate, plan} → page`.
//! This module only starts a run; it must not know of file runs, and the
//! slots must not know of each other (what they share is in `ctx`).

pub mod plan;

mod ctx;
mod dial;
mod exchange;
mod h1slot;
mod h2slot;
mod h3slot;
mod lane;
mod page;
mod select;
mod validate;
mod worker;

use std::sync::Arc;
use std::thread;

use mio::{Poll, Waker};

use crate::config::{ReplayMode, RunConfig, Selection};
use crate::connection::{client_config, Alpn, TlsSettings};
use crate::error::StartError;
use crate::exec::live::LiveCounters;
use crate::exec::{start_instant, RunHandle, WAKE_TOKEN};
use crate::results::report::RunFacts;
use crate::schedule::Schedule;
use plan::Plan;
use worker::{Assignment, Crypto, Worker};

/// How long after `start` a timed replay's clock starts (without `start_at_unix_s`).
const REPLAY_LEAD: std::time::Duration = std::time::Duration::from_millis(20);

/// Validates an HTTP `config` and starts its workers. Nothing is sent when
/// this returns an error: `Config` for bad input, `Machine` when the
/// operating system refuses an event loop, a thread or the TLS setup.
pub(crate) fn start(config: &RunConfig) -> Result<RunHandle, StartError> {
    let plan = Arc::new(Plan::new(config)?);
    let origin = match &plan.replay {
        // A timed replay's first logged request is due at the start: the
        // workers are built and running by then, so it is not late for that
        // alone (on this 2-core VM that took about 2 ms).
        Some(replay) if replay.mode == ReplayMode::Timed && plan.start_at_unix_s.is_none() => {
            start_instant(None) + REPLAY_LEAD
        }
        _ => start_instant(plan.start_at_unix_s),
    };
    let (tx, mut handle) = RunHandle::new(facts(&plan), plan.duration, plan.report_part, origin);
    let cancel = handle.cancel_flag();
    let os = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| StartError::Machine(format!("cannot start the engine: {what}: {e}"))
    };
    let mut first_connection = 0;
    for (index, job) in assignments(&plan).into_iter().enumerate() {
        let poll = Poll::new().map_err(os("cannot create an event loop (epoll)"))?;
        let waker = Waker::new(poll.registry(), WAKE_TOKEN).map_err(os("cannot create an event loop waker"))?;
        let tls = match plan.uses_tls() {
            true => {
                let alpn = if plan.http3.is_some() {
                    Alpn::H3
                } else if plan.http2.is_some() {
                    Alpn::H2
                } else {
                    Alpn::Http11
                };
                let settings = TlsSettings { insecure: plan.insecure, resumption: plan.tls_resumption, alpn };
                Some(
                    client_config(settings)
                        .map_err(|e| StartError::Machine(format!("cannot start the engine: TLS setup failed: {e}")))?,
                )
            }
            false => None,
        };
        let quic = match (&tls, plan.http3) {
            (Some(tls), Some(_)) => Some(
                crate::protocol::h3::session::client_config(tls.clone(), &h3slot::session_settings(&plan))
                    .map_err(|e| StartError::Machine(format!("cannot start the engine: QUIC setup failed: {e}")))?,
            ),
            _ => None,
        };
        let live = Arc::new(LiveCounters::default());
        let job = Assignment { first_connection, ..job };
        first_connection += job.connections;
        let worker = Worker::new(poll, plan.clone(), Crypto { tls, quic }, origin, &job, cancel.clone(), live.clone())
            .map_err(os("cannot set up a worker's event loop"))?;
        let tx = tx.clone();
        thread::Builder::new()
            .name(format!("crest-worker-{index}"))
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker.run()));
                let _ = tx.send(outcome);
            })
            .map_err(os("cannot spawn a worker thread"))?;
        handle.add_worker(live, Some(waker));
    }
    Ok(handle)
}

/// The report's facts of a local HTTP run.
fn facts(plan: &Plan) -> RunFacts {
    RunFacts {
        classes: plan.classes.clone(),
        window: plan.window,
        duration: plan.duration,
        rate_rps: match plan.schedule {
            Schedule::OpenLoop { stagger, .. } => Some(1.0 / stagger.as_secs_f64()),
            Schedule::ClosedLoop { .. } | Schedule::Timed { .. } => None,
        },
        threads: plan.threads,
        connections: plan.connections,
    }
}

/// Splits connections and the request quota evenly; the first workers take
/// the remainders.
fn assignments(plan: &Plan) -> Vec<Assignment> {
    let threads = plan.threads;
    (0..threads)
        .map(|i| {
            // A page load's client shares its pages over its connections: clients are dealt whole.
            let unit = if plan.pages.is_some() { plan.connections_per_client.max(1) } else { 1 };
            let units = plan.connections / unit;
            let connections = (units / threads + u32::from(i < units % threads)) * unit;
            let quota =
                plan.max_requests.map(|n| n / u64::from(threads) + u64::from(u64::from(i) < n % u64::from(threads)));
            let quota = match plan.selection {
                // Worker i sends entries i, i+T, i+2T, …: its share, once each.
                Selection::Once => {
                    let share = (plan.requests.len() as u64).saturating_sub(u64::from(i)).div_ceil(u64::from(threads));
                    Some(quota.map_or(share, |q| q.min(share)))
                }
                Selection::Weighted => quota,
            };
            Assignment { index: i, first_connection: 0, connections, quota }
        })
        .collect()
}
