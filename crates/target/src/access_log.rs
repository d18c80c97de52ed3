//! Optional access log in crest's own format, written by a dedicated thread:
//! `127.0.0.1 [1700000000.123456] "GET /x HTTP/1.1" 200 1024`, one line per
//! response, stamped with the Unix time (µs) the request ARRIVED (its head
//! parsed), so a replay's accuracy can be read from it (crest_replay reads
//! it as the `crest` format).
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
    /// `request_line` is `METHOD URI VERSION` as received, `arrived` when its head was parsed.
    pub(crate) fn record(
        &self,
        conn: &ConnInfo,
        arrived: SystemTime,
        request_line: &str,
        status: StatusCode,
        body_bytes: u64,
    ) {
        let line = format_line(&conn.peer.ip(), arrived, request_line, status.as_u16(), body_bytes);
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

/// One line: `{peer} [{unix_s}.{micros:06}] "{request_line}" {status} {body_bytes}`.
fn format_line(
    peer: &std::net::IpAddr,
    arrived: SystemTime,
    request_line: &str,
    status: u16,
    body_bytes: u64,
) -> String {
    let since = arrived.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (secs, micros) = (since.as_secs(), since.subsec_micros());
    format!("{peer} [{secs}.{micros:06}] \"{request_line}\" {status} {body_bytes}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_the_arrival_time_in_microseconds() {
        let ip: std::net::IpAddr = "127.0.0.1".parse().unwrap();
        let t = UNIX_EPOCH + Duration::from_micros(1_700_000_000_000_042);
        assert_eq!(
            format_line(&ip, t, "GET /x HTTP/1.1", 200, 1024),
            "127.0.0.1 [1700000000.000042] \"GET /x HTTP/1.1\" 200 1024\n"
        );
        let v6: std::net::IpAddr = "::1".parse().unwrap();
        assert_eq!(
            format_line(&v6, UNIX_EPOCH, "HEAD / HTTP/1.0", 404, 0),
            "::1 [0.000000] \"HEAD / HTTP/1.0\" 404 0\n"
        );
    }
}
