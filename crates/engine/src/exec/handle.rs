//! `RunHandle`: a run in progress, whichever kind started it (HTTP
//! workers or file clients). It reports live totals, cancels, and merges
//! the workers' outcomes into the report (with its part, when
//! `report_part` asks). It knows nothing of what the workers do: a starter
//! registers each worker and sends its `Outcome` on the channel it is given.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mio::Waker;

use super::live::{LiveCounters, LiveSnapshot};
use super::thread::Outcome;
use crate::results::part::Part;
use crate::results::report::{RunFacts, RunReport};

/// A run in progress.
pub struct RunHandle {
    facts: RunFacts,
    duration: Option<Duration>,
    report_part: bool,
    /// Worker threads started; the run ends when each has sent its outcome.
    workers: usize,
    origin: Instant,
    cancel: Arc<AtomicBool>,
    wakers: Vec<Waker>,
    live: Vec<Arc<LiveCounters>>,
    results: Receiver<thread::Result<Outcome>>,
    outcomes: Vec<Outcome>,
    failure: Option<String>,
    report: Option<RunReport>,
}

impl RunHandle {
    /// A handle with no workers yet, and the sender each worker's thread
    /// sends its outcome (or panic) on; a starter counts each worker it
    /// spawns in `workers`, pushes its live counters, and its waker if it has one.
    pub(crate) fn new(
        facts: RunFacts,
        duration: Option<Duration>,
        report_part: bool,
        origin: Instant,
    ) -> (mpsc::Sender<thread::Result<Outcome>>, Self) {
        let (tx, results) = mpsc::channel();
        let handle = RunHandle {
            facts,
            duration,
            report_part,
            workers: 0,
            origin,
            cancel: Arc::new(AtomicBool::new(false)),
            wakers: Vec::new(),
            live: Vec::new(),
            results,
            outcomes: Vec::new(),
            failure: None,
            report: None,
        };
        (tx, handle)
    }

    /// The flag workers poll to stop early.
    pub(crate) fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    /// Registers a worker's live counters and, for an event loop, its waker.
    pub(crate) fn add_worker(&mut self, live: Arc<LiveCounters>, waker: Option<Waker>) {
        self.live.push(live);
        self.wakers.extend(waker);
        self.workers += 1;
    }

    /// Totals so far.
    pub fn live(&self) -> LiveSnapshot {
        let elapsed = Instant::now().saturating_duration_since(self.origin).as_secs_f64();
        LiveSnapshot::sum(elapsed, self.live.iter().map(Arc::as_ref))
    }

    /// Asks every worker to stop now; `wait` then returns the partial report.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        for waker in &self.wakers {
            let _ = waker.wake();
        }
    }

    /// Waits up to `timeout` for the run to end. `Ok(Some)` once it has
    /// (again on later calls), `Ok(None)` while it goes on, `Err` when a
    /// worker crashed.
    pub fn wait(&mut self, timeout: Duration) -> Result<Option<&RunReport>, String> {
        let now = Instant::now();
        let deadline = now.checked_add(timeout).unwrap_or(now + Duration::from_secs(86_400 * 365));
        while self.report.is_none() && self.failure.is_none() {
            if self.outcomes.len() == self.workers {
                self.report = Some(self.build_report());
                break;
            }
            match self.results.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Ok(outcome)) => self.outcomes.push(outcome),
                Ok(Err(panic)) => {
                    self.failure =
                        Some(format!("an engine worker panicked ({}): please report this", panic_message(&*panic)));
                    // The other workers would run on to the end of a run that has already failed.
                    self.cancel();
                }
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => self.failure = Some("an engine worker thread vanished".into()),
            }
        }
        match &self.failure {
            Some(why) => Err(why.clone()),
            None => Ok(self.report.as_ref()),
        }
    }

    /// Blocks until the run ends.
    pub fn join(mut self) -> Result<RunReport, String> {
        self.wait(Duration::MAX)?;
        Ok(self.report.take().expect("invariant: wait returned after the report"))
    }

    fn build_report(&mut self) -> RunReport {
        let mut outcomes = std::mem::take(&mut self.outcomes).into_iter();
        let first = outcomes.next().expect("invariant: at least one worker");
        let mut stats = first.stats;
        let mut cpu = first.cpu;
        let mut ended = first.ended;
        for o in outcomes {
            stats.merge(&o.stats);
            cpu += o.cpu;
            ended = ended.max(o.ended);
        }
        let mut elapsed = ended.saturating_duration_since(self.origin);
        if let Some(d) = self.duration {
            // Workers stop a hair after the deadline; the run lasted `d`.
            elapsed = elapsed.min(d);
        }
        let part =
            Part { stats, facts: self.facts.clone(), elapsed, cpu, cancelled: self.cancel.load(Ordering::Relaxed) };
        let json = self.report_part.then(|| part.to_json());
        RunReport { part: json, ..part.into_report() }
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        if self.report.is_none() {
            self.cancel();
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".into()
    }
}
