//! One dbench client's progress through the loadfile, common to every
//! backend: which line is next and when it is due (timestamps, think time
//! after each pass), and how an operation's outcome is recorded (judged
//! against the line, bytes counted, a fatal mismatch stopping the client).
//! Never executes an operation and never reads the clock itself: the
//! callers pass `now`.

use std::time::{Duration, Instant};

use crate::error::ErrorKind;
use crate::results::stats::Stats;

use super::loadfile::{Line, Loadfile};
use super::op::{judge, Outcome, Verdict};

/// Where one client stands.
#[derive(Debug)]
pub struct Client {
    /// dbench's client id (`client<id>` in paths): the global connection index.
    pub id: u32,
    /// Index of the scored client it belongs to (in this run's stats).
    pub score: usize,
    line: usize,
    pass_start: Instant,
    /// Operations it may still begin (a count-bounded run).
    quota: Option<u64>,
    /// Why it stopped early (a fatal mismatch), if it did.
    pub stopped: Option<String>,
}

impl Client {
    /// A client that starts its first pass at `first`.
    pub fn new(id: u32, score: usize, first: Instant, quota: Option<u64>) -> Self {
        Self { id, score, line: 0, pass_start: first, quota, stopped: None }
    }

    /// The next line, and when it may begin: at once, or at its timestamp
    /// into the pass. None once stopped or out of quota.
    pub fn next<'a>(&self, file: &'a Loadfile, now: Instant) -> Option<(&'a Line, Instant)> {
        if self.stopped.is_some() || self.quota == Some(0) {
            return None;
        }
        let line = &file.lines[self.line];
        let due = match line.timestamp_s {
            Some(t) => (self.pass_start + Duration::from_secs_f64(t)).max(now),
            None => now,
        };
        Some((line, due))
    }

    /// Index of the line `next` returns.
    pub fn line_index(&self) -> usize {
        self.line
    }

    /// Moves past the current line, which began at `began`; at the end of
    /// the loadfile the next pass begins after `think` (returned as the time
    /// the client is next due).
    pub fn advance(&mut self, file: &Loadfile, now: Instant, think: Duration) -> Option<Instant> {
        if let Some(q) = &mut self.quota {
            *q = q.saturating_sub(1);
        }
        self.line += 1;
        if self.line < file.lines.len() {
            return None;
        }
        self.line = 0;
        self.pass_start = now + think;
        (!think.is_zero()).then_some(self.pass_start)
    }

    /// Records what `line`'s operation did between `began` and `ended`
    /// (offsets from the run's start) and judges it; a fatal mismatch stops
    /// the client with `why`.
    pub fn record(
        &mut self,
        stats: &mut Stats,
        line: &Line,
        outcome: Result<Outcome, String>,
        began: Duration,
        ended: Duration,
    ) {
        let class = line.kind.index();
        stats.record_issued(class, 1);
        let outcome = match outcome {
            Ok(o) => o,
            Err(why) => {
                stats.record_error(ended, ErrorKind::Status, class, self.score, Some(&why));
                self.stopped = Some(why);
                return;
            }
        };
        match judge(line.kind, line.expect, &outcome) {
            Verdict::Met => {
                stats.record_operation(ended, class, self.score, ended.saturating_sub(began), outcome.bytes);
                if outcome.bytes > 0 {
                    stats.record_bytes(ended, outcome.bytes);
                }
            }
            verdict => {
                let why = format!(
                    "client {} line {}: {} {} where the loadfile expects {}",
                    self.id,
                    line.number,
                    line.kind.name(),
                    describe(&outcome),
                    match line.expect {
                        super::op::Expect::Success => "success",
                        _ => "a failure",
                    }
                );
                stats.record_error(ended, ErrorKind::Status, class, self.score, Some(&why));
                if verdict == Verdict::Fatal {
                    self.stopped = Some(why);
                }
            }
        }
    }
}

fn describe(o: &Outcome) -> String {
    if o.ok {
        "succeeded".into()
    } else {
        format!("failed with 0x{:08X}", o.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileops::op::OpKind;

    #[test]
    fn passes_wrap_with_think_time_and_timestamps_pace_lines() {
        let file = Loadfile::parse("0.5 Close 1 NT_STATUS_OK\n2.0 Close 2 NT_STATUS_OK\n").expect("parses");
        let t0 = Instant::now();
        let mut c = Client::new(3, 0, t0, None);
        let (line, due) = c.next(&file, t0).expect("first");
        assert_eq!((line.numbers[0], due), (1, t0 + Duration::from_millis(500)));
        assert_eq!(c.advance(&file, t0, Duration::from_secs(2)), None);
        let (_, due) = c.next(&file, t0 + Duration::from_secs(1)).expect("second");
        assert_eq!(due, t0 + Duration::from_secs(2));
        let end = t0 + Duration::from_secs(3);
        assert_eq!(c.advance(&file, end, Duration::from_secs(2)), Some(end + Duration::from_secs(2)));
        let (line, due) = c.next(&file, end).expect("next pass");
        assert_eq!((line.numbers[0], due), (1, end + Duration::from_millis(2500)));
    }

    #[test]
    fn recording_counts_met_ops_bytes_and_stops_on_fatal() {
        let file = Loadfile::parse(
            "ReadX 1 0 4096 4096 NT_STATUS_OK\nNTCreateX \"\\a\" 0x40 0x1 5 NT_STATUS_OK\nUnlink \"\\a\" 0x6 NT_STATUS_OK\n",
        )
        .expect("parses");
        let mut stats = Stats::new(None, OpKind::COUNT, 1, None);
        let t0 = Instant::now();
        let mut c = Client::new(0, 0, t0, Some(10));
        let ok = Outcome { ok: true, status: 0, bytes: 4096 };
        let failed = Outcome { ok: false, status: 0xC000_0034, bytes: 0 };
        let ms = Duration::from_millis;
        c.record(&mut stats, &file.lines[0], Ok(ok), ms(1), ms(3));
        c.record(&mut stats, &file.lines[1], Ok(failed), ms(3), ms(4));
        assert!(c.stopped.is_none(), "a failed NTCreateX is counted, not fatal");
        c.record(&mut stats, &file.lines[2], Ok(failed), ms(4), ms(5));
        assert!(c.stopped.as_deref().is_some_and(|w| w.contains("line 3: Unlink failed with 0xC0000034")));
        assert!(c.next(&file, t0).is_none());
        assert_eq!((stats.requests, stats.bytes, stats.error_total()), (1, 4096, 2));
        assert_eq!(stats.classes[OpKind::ReadX.index()].bytes, 4096);
        assert_eq!(stats.classes[OpKind::Unlink.index()].errors, 1);
        assert_eq!(stats.issued.iter().sum::<u64>(), 3);
        assert_eq!(stats.clients[0].bytes, 4096);
    }
}
