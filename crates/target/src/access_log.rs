//! Optional access log in Common Log Format, written by a dedicated thread.
//!
//! Workers only format a line and hand it over a bounded channel, so disk
//! latency never stalls a runtime thread unless the channel is full (then
//! the worker waits: backpressure instead of unbounded memory). When the log
//! is off none of this exists and the request path only checks an `Option`.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::StatusCode;

use crate::conn_info::ConnInfo;
use crate::error::ServeError;

const QUEUE_LINES: usize = 16 * 1024;
const POLL: Duration = Duration::from_millis(100);

/// The workers' end: formats and queues lines.
pub(crate) struct AccessLog {
    tx: SyncSender<String>,
}

/// The server's end: owns the writer thread.
pub(crate) struct LogWriter {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

pub(crate) fn open(path: &Path) -> Result<(AccessLog, LogWriter), ServeError> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| ServeError::AccessLog { path: path.to_owned(), source })?;
    let (tx, rx) = mpsc::sync_channel::<String>(QUEUE_LINES);
    let stop = Arc::new(AtomicBool::new(false));
    let stop_seen = stop.clone();
    let thread = std::thread::Builder::new()
        .name("crest-target-log".into())
        .spawn(move || {
            let mut out = BufWriter::new(file);
            loop {
                match rx.recv_timeout(POLL) {
                    Ok(line) => {
                        let _ = out.write_all(line.as_bytes());
                        // Drain what is queued, then flush once per burst.
                        while let Ok(line) = rx.try_recv() {
                            let _ = out.write_all(line.as_bytes());
                        }
                        let _ = out.flush();
                    }
                    Err(RecvTimeoutError::Timeout) if !stop_seen.load(Ordering::Acquire) => {}
                    Err(_) => break,
                }
            }
            let _ = out.flush();
        })
        .map_err(ServeError::Threads)?;
    Ok((AccessLog { tx }, LogWriter { stop, thread }))
}

impl AccessLog {
    /// `request_line` is `METHOD URI VERSION` as received.
    pub(crate) fn record(&self, conn: &ConnInfo, request_line: &str, status: StatusCode, bytes: u64) {
        let when = clf_time(SystemTime::now());
        let size = if bytes == 0 { "-".to_owned() } else { bytes.to_string() };
        let line = format!("{} - - [{when}] \"{request_line}\" {} {size}\n", conn.peer.ip(), status.as_u16());
        let _ = self.tx.send(line);
    }
}

impl LogWriter {
    /// Call after the workers are gone: writes what is queued and stops.
    pub(crate) fn finish(self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.thread.join();
    }
}

/// `10/Oct/2000:13:55:36 +0000` (always UTC, so no timezone database needed).
fn clf_time(t: SystemTime) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{d:02}/{}/{y}:{:02}:{:02}:{:02} +0000", MONTHS[(m - 1) as usize], rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 to (year, month 1-12, day 1-31); Howard Hinnant's
/// algorithm, exact for the whole proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_clf_dates() {
        assert_eq!(clf_time(UNIX_EPOCH), "01/Jan/1970:00:00:00 +0000");
        let t = UNIX_EPOCH + Duration::from_secs(971_185_336);
        assert_eq!(clf_time(t), "10/Oct/2000:13:42:16 +0000");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(clf_time(leap), "29/Feb/2000:00:00:00 +0000");
    }
}
