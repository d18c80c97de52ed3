//! What a worker's next exchange sends: which table entry, and how many
//! requests of it (the pipeline depth, cut by what is left of the worker's
//! quota). Owns the worker's selection RNG and, for `Selection::Once`, its
//! shuffled share of the table; for a replay, its place in its share of the
//! log and each slot's place in its session, with when each logged request
//! is due (offsets from the log, not from the clock). Knows nothing of
//! sockets and reads no clock.

use std::time::Duration;

use super::plan::Plan;
use crate::config::{ReplayMode, Selection};
use crate::rng::Rng;
use crate::schedule::scaled;

/// One worker's request selection.
pub(crate) struct Selector {
    rng: Rng,
    /// With `Selection::Once`: this worker's entries in sending order, and the next one.
    order: Vec<u32>,
    next: usize,
    /// Requests this worker may still issue (None: unbounded).
    quota: Option<u64>,
    /// A replay: where this worker is in its share of the log.
    replay: Option<Cursor>,
}

/// A worker's place in its share of a log. Its i-th item (a logged request
/// when timed, a session otherwise) is `first + step·i`: the engine's part
/// takes items k, k+n, k+2n, … and its workers take those round-robin.
struct Cursor {
    first: usize,
    step: usize,
    /// Items taken so far.
    taken: usize,
    /// Sessions: each slot's session (None before its first) and the index of its next request.
    sessions: Vec<(Option<usize>, usize)>,
}

/// When an exchange is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// As the run's schedule says (at once, once the slot was ready).
    Now,
    /// At this offset from the run's start (a timed replay's logged time).
    At(Duration),
    /// This long after the slot's previous response (a session's logged gap).
    After(Duration),
}

/// The next exchange: `requests` requests of table entry `entry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Batch {
    pub entry: usize,
    pub requests: u32,
    pub due: Due,
    /// The first request of a session: it goes on a new connection (a new user).
    pub new_session: bool,
    /// The last request of a session: its connection closes after it.
    pub session_ends: bool,
}

impl Selector {
    /// Selection for worker `index` with `slots` connections, whose first is `first_connection`.
    pub fn new(plan: &Plan, index: u32, first_connection: u32, slots: usize, quota: Option<u64>) -> Self {
        let mut rng = Rng::new(plan.seed ^ u64::from(first_connection).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        // One draw is discarded before any selection, as the engine always
        // has done: seeded runs keep selecting the same requests.
        rng.next_u64();
        let order = match plan.selection {
            Selection::Once => once_order(plan.requests.len(), index, plan.threads, &mut rng),
            Selection::Weighted => Vec::new(),
        };
        let replay = plan.replay.as_ref().map(|r| {
            let (k, n) = (r.part.0 as usize, r.part.1 as usize);
            let sessions = match r.mode {
                ReplayMode::Sessions => vec![(None, 0); slots],
                ReplayMode::Timed => Vec::new(),
            };
            Cursor { first: k + n * index as usize, step: n * plan.threads as usize, taken: 0, sessions }
        });
        Self { rng, order, next: 0, quota, replay }
    }

    /// The worker's RNG, for the draws a slot makes itself (SPECweb99's
    /// requests, keep-alive counts): one stream per worker, no locking.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// The next exchange, or None once the quota is used up. With
    /// `Selection::Once` the quota equals this worker's share of the table,
    /// so the order never runs out first.
    pub fn next(&mut self, plan: &Plan) -> Option<Batch> {
        let pipeline = u64::from(plan.pipeline);
        let requests = self.take(pipeline)?;
        let entry = if !self.order.is_empty() {
            self.next += 1;
            self.order[self.next - 1] as usize
        } else if plan.table.len() > 1 {
            plan.table.pick(&mut self.rng)
        } else {
            0
        };
        // At most the pipeline depth, a u32.
        Some(Batch { entry, requests: requests as u32, due: Due::Now, new_session: false, session_ends: false })
    }

    /// The next exchange of connection `slot` (its index in the worker):
    /// with a replay, the next logged request of the worker's share (timed)
    /// or of the slot's session; else as `next`.
    pub fn next_for(&mut self, plan: &Plan, slot: usize) -> Option<Batch> {
        let (Some(cursor), Some(replay)) = (&mut self.replay, &plan.replay) else {
            return self.next(plan);
        };
        let table = &replay.table;
        let (position, due, new_session, session_ends) = match cursor.sessions.get_mut(slot) {
            None => {
                let position = cursor.first + cursor.step * cursor.taken;
                if position >= table.len() {
                    return None;
                }
                (position, Due::At(scaled(table.offsets_us[position], replay.speed)), false, false)
            }
            Some((Some(session), next)) if *next < table.session(*session).len() => {
                let requests = table.session(*session);
                let (previous, position) = (requests[*next - 1] as usize, requests[*next] as usize);
                *next += 1;
                let gap = table.offsets_us[position].saturating_sub(table.offsets_us[previous]);
                (position, Due::After(scaled(gap, replay.speed)), false, *next == requests.len())
            }
            Some(place) => {
                let session = cursor.first + cursor.step * cursor.taken;
                if session >= table.sessions() {
                    return None;
                }
                *place = (Some(session), 1);
                let requests = table.session(session);
                (requests[0] as usize, Due::Now, true, requests.len() == 1)
            }
        };
        self.take(1)?;
        if let Some(cursor) = &mut self.replay {
            // A session's later requests are not items of the share.
            if new_session || cursor.sessions.is_empty() {
                cursor.taken += 1;
            }
        }
        Some(Batch { entry: table.requests[position] as usize, requests: 1, due, new_session, session_ends })
    }

    /// Takes up to `want` requests from the quota: None once it is used up.
    fn take(&mut self, want: u64) -> Option<u64> {
        match &mut self.quota {
            Some(0) => None,
            Some(left) => {
                let n = want.min(*left);
                *left -= n;
                Some(n)
            }
            None => Some(want),
        }
    }
}

/// This worker's share of the table (entries `worker`, `worker + threads`, …)
/// in a shuffled order (Fisher–Yates).
fn once_order(entries: usize, worker: u32, threads: u32, rng: &mut Rng) -> Vec<u32> {
    let mut order: Vec<u32> = (worker as usize..entries).step_by(threads as usize).map(|i| i as u32).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}
