//! What a worker's next exchange sends: which table entry, and how many
//! requests of it (the pipeline depth, cut by what is left of the worker's
//! quota). Owns the worker's selection RNG and, for `Selection::Once`, its
//! shuffled share of the table. Knows nothing of sockets or time.

use super::plan::Plan;
use crate::config::Selection;
use crate::rng::Rng;

/// One worker's request selection.
pub(crate) struct Selector {
    rng: Rng,
    /// With `Selection::Once`: this worker's entries in sending order, and the next one.
    order: Vec<u32>,
    next: usize,
    /// Requests this worker may still issue (None: unbounded).
    quota: Option<u64>,
}

/// The next exchange: `requests` requests of table entry `entry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Batch {
    pub entry: usize,
    pub requests: u32,
}

impl Selector {
    /// Selection for worker `index`, whose first connection is `first_connection`.
    pub fn new(plan: &Plan, index: u32, first_connection: u32, quota: Option<u64>) -> Self {
        let mut rng = Rng::new(plan.seed ^ u64::from(first_connection).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        // One draw is discarded before any selection, as the engine always
        // has done: seeded runs keep selecting the same requests.
        rng.next_u64();
        let order = match plan.selection {
            Selection::Once => once_order(plan.requests.len(), index, plan.threads, &mut rng),
            Selection::Weighted => Vec::new(),
        };
        Self { rng, order, next: 0, quota }
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
        let requests = match &mut self.quota {
            Some(0) => return None,
            Some(left) => {
                let n = pipeline.min(*left);
                *left -= n;
                n
            }
            None => pipeline,
        };
        let entry = if !self.order.is_empty() {
            self.next += 1;
            self.order[self.next - 1] as usize
        } else if plan.table.len() > 1 {
            plan.table.pick(&mut self.rng)
        } else {
            0
        };
        // At most the pipeline depth, a u32.
        Some(Batch { entry, requests: requests as u32 })
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
