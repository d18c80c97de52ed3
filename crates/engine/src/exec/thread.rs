//! What every kind of worker thread needs from the machine, the same for
//! HTTP workers and file clients: when the run starts, the waker's token,
//! the thread's CPU time, and the `Outcome` it hands back. Holds no run
//! state and knows no protocol.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mio::Token;

use crate::results::stats::Stats;

/// Token of the waker that interrupts `poll` on cancel.
pub(crate) const WAKE_TOKEN: Token = Token(usize::MAX);

/// What a worker hands back.
pub(crate) struct Outcome {
    pub stats: Stats,
    pub cpu: Duration,
    pub ended: Instant,
}

/// The instant of `start_at_unix_s` (now if none or past); at most an hour
/// ahead, so a wrong clock cannot park a run for days.
pub(crate) fn start_instant(start_at_unix_s: Option<f64>) -> Instant {
    let now = Instant::now();
    let Some(at) = start_at_unix_s else { return now };
    let unix_now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    let ahead = (at - unix_now).clamp(0.0, 3600.0);
    now + Duration::from_secs_f64(ahead)
}

/// CPU time (user + system) of the calling thread.
pub(crate) fn thread_cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
