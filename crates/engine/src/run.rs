//! Starting a run: validate, split connections and request quota over
//! worker threads, start them together, and hand back a `RunHandle` that
//! reports live totals, cancels, and merges the workers' stats at the end
//! into the report (with its part, when `report_part` asks).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mio::{Poll, Waker};

use crate::config::{RunConfig, Selection};
use crate::connection::{client_config, Alpn, TlsSettings};
use crate::error::StartError;
use crate::live::{LiveCounters, LiveSnapshot};
use crate::part::Part;
use crate::plan::Plan;
use crate::report::{RunFacts, RunReport};
use crate::worker::{Assignment, Crypto, Outcome, Worker, WAKE_TOKEN};

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

/// Validates `config` and starts its workers. Nothing is sent when this
/// returns an error: `Config` for bad input, `Machine` when the operating
/// system refuses an event loop, a thread or the TLS setup.
pub fn start(config: &RunConfig) -> Result<RunHandle, StartError> {
    if config.loadfile.is_some() {
        return crate::fileops::start(config);
    }
    let plan = Arc::new(Plan::new(config)?);
    let origin = start_instant(plan.start_at_unix_s);
    let (tx, mut handle) = RunHandle::new(RunFacts::from_plan(&plan), plan.duration, plan.report_part, origin);
    let cancel = handle.cancel.clone();
    let os = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| StartError::Machine(format!("cannot start the engine: {what}: {e}"))
    };
    let mut first_connection = 0;
    for (index, job) in assignments(&plan).into_iter().enumerate() {
        let poll = Poll::new().map_err(os("cannot create an event loop (epoll)"))?;
        handle.wakers.push(Waker::new(poll.registry(), WAKE_TOKEN).map_err(os("cannot create an event loop waker"))?);
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
                crate::protocol::h3::session::client_config(tls.clone(), &crate::h3slot::session_settings(&plan))
                    .map_err(|e| StartError::Machine(format!("cannot start the engine: QUIC setup failed: {e}")))?,
            ),
            _ => None,
        };
        let live = Arc::new(LiveCounters::default());
        handle.live.push(live.clone());
        let job = Assignment { first_connection, ..job };
        first_connection += job.connections;
        let worker = Worker::new(poll, plan.clone(), Crypto { tls, quic }, origin, &job, cancel.clone(), live)
            .map_err(os("cannot set up a worker's event loop"))?;
        let tx = tx.clone();
        thread::Builder::new()
            .name(format!("crest-worker-{index}"))
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker.run()));
                let _ = tx.send(outcome);
            })
            .map_err(os("cannot spawn a worker thread"))?;
        handle.workers += 1;
    }
    Ok(handle)
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

/// Splits connections and the request quota evenly; the first workers take
/// the remainders.
fn assignments(plan: &Plan) -> Vec<Assignment> {
    let threads = plan.threads;
    (0..threads)
        .map(|i| {
            let connections = plan.connections / threads + u32::from(i < plan.connections % threads);
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

pub(crate) fn start_instant(start_at_unix_s: Option<f64>) -> Instant {
    let now = Instant::now();
    let Some(at) = start_at_unix_s else { return now };
    let unix_now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    let ahead = (at - unix_now).clamp(0.0, 3600.0);
    now + Duration::from_secs_f64(ahead)
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
