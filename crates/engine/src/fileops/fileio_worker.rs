//! fileio runs: one thread per client, as dbench forks a process per
//! client, because file calls block; each thread keeps its own `Stats`,
//! merged exactly when the run ends. Owns the threads' loop (start delay,
//! pacing, the end, cleanup); executing is `fileio`'s, judging `client`'s.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use crate::error::StartError;
use crate::exec::live::LiveCounters;
use crate::exec::{start_instant, RunHandle};
use crate::exec::{thread_cpu_time, Outcome};
use crate::results::stats::Stats;

use super::client::Client;
use super::fileio::{Exec, Fileio};
use super::op::OpKind;
use super::plan::{Backend, FilePlan};

/// How often (in operations) a client publishes its live totals.
const PUBLISH_EVERY: u32 = 64;

pub(super) fn start(plan: Arc<FilePlan>) -> Result<RunHandle, StartError> {
    let origin = start_instant(plan.start_at_unix_s);
    let (tx, mut handle) =
        RunHandle::new(super::facts(&plan, plan.connections), plan.duration, plan.report_part, origin);
    let cancel = handle.cancel_flag();
    // Clients still working: the last one out removes the parent their trees share.
    let running = Arc::new(AtomicU32::new(plan.connections));
    for index in 0..plan.connections {
        let live = Arc::new(LiveCounters::default());
        handle.add_worker(live.clone(), None);
        let (plan, stop, tx, running) = (plan.clone(), cancel.clone(), tx.clone(), running.clone());
        thread::Builder::new()
            .name(format!("crest-worker-fileio-{index}"))
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run_client(&plan, index, origin, &stop, &live, &running)
                }));
                let _ = tx.send(outcome);
            })
            .map_err(|e| {
                // The clients already started stop at once; the caller gets one line.
                cancel.store(true, Ordering::Relaxed);
                StartError::Machine(format!("cannot start the engine: cannot spawn client thread {index}: {e}"))
            })?;
    }
    Ok(handle)
}

fn run_client(
    plan: &FilePlan,
    index: u32,
    origin: Instant,
    cancel: &AtomicBool,
    live: &LiveCounters,
    running: &AtomicU32,
) -> Outcome {
    let Backend::Fileio { dir } = &plan.backend else { unreachable!("invariant: a fileio plan") };
    let file = &*plan.loadfile;
    let cancelled = || cancel.load(Ordering::Relaxed);
    let end = plan.duration.map(|d| origin + d);
    let past_end = |now: Instant| end.is_some_and(|e| now >= e);
    let mut stats = Stats::new(plan.duration, OpKind::COUNT, plan.clients() as usize, plan.window);
    let id = plan.first_client + index; // dbench's id, in every path; `index` is this run's
    let mut fileio = Fileio::new(dir, id, plan.resolve_names);
    let first = super::first_start(plan, origin, index);
    let score = (index / plan.connections_per_client) as usize;
    let mut client = Client::new(id, score, first, super::quota(plan, index));
    super::sleep_until(first, cancelled);
    let mut since_publish = 0;
    loop {
        let now = Instant::now();
        if cancelled() || past_end(now) {
            break;
        }
        let Some((line, due)) = client.next(file, now) else {
            // Stopped (fatal) or out of quota: idle to the end, as a dbench client that exited.
            if plan.max_operations.is_some() {
                break;
            }
            super::sleep_until(end.unwrap_or(now), cancelled);
            break;
        };
        if due > now {
            super::sleep_until(end.map_or(due, |e| due.min(e)), cancelled);
            continue;
        }
        let began = now.saturating_duration_since(origin);
        let result = match fileio.execute(file, line) {
            Exec::Done(outcome) => Ok(outcome),
            Exec::Fatal(why) => Err(why),
        };
        let finished = Instant::now();
        client.record(&mut stats, line, result, began, finished.saturating_duration_since(origin));
        if let Some(wake) = client.advance(file, finished, plan.think_time) {
            super::sleep_until(end.map_or(wake, |e| wake.min(e)), cancelled);
        }
        since_publish += 1;
        if since_publish == PUBLISH_EVERY {
            live.publish(&stats);
            since_publish = 0;
        }
    }
    live.publish(&stats);
    let ended = Instant::now();
    fileio.close_all();
    if plan.cleanup {
        // NetBench's Save Workspace = No: the client's tree, then the shared parent once empty. Only the
        // last client out removes the parent: a client whose quota ran out first would otherwise remove
        // it between another's Mkdir "\clients" and its NTCreateX under it.
        let _ = std::fs::remove_dir_all(format!("{dir}/clients/client{id}"));
        if running.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _ = std::fs::remove_dir(format!("{dir}/clients"));
        }
    }
    Outcome { stats, cpu: thread_cpu_time(), ended }
}
