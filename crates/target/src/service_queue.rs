//! A fixed service time per request, served one request at a time in
//! arrival order: the built-in target as a single-server queue whose
//! capacity is known exactly (1 ÷ the service time), so a capacity search
//! has an answer to find. Owns only the admission arithmetic; the handler
//! holds the reply until its time. Off unless asked for.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The queue's one server: when it is next free.
pub(crate) struct ServiceQueue {
    service: Duration,
    free_at: Mutex<Instant>,
}

impl ServiceQueue {
    pub fn new(service: Duration) -> Self {
        Self { service, free_at: Mutex::new(Instant::now()) }
    }

    /// When a request arriving at `now` has been served: after every request
    /// admitted before it, plus its own service time.
    pub fn admit(&self, now: Instant) -> Instant {
        // A poisoned lock only means another request panicked mid-update of an Instant: still valid.
        let mut free_at = self.free_at.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let done = (*free_at).max(now) + self.service;
        *free_at = done;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_served_one_after_another() {
        let q = ServiceQueue::new(Duration::from_millis(10));
        let t0 = Instant::now() + Duration::from_secs(1);
        // Three at once: done at 10, 20, 30 ms.
        let done: Vec<_> = (0..3).map(|_| q.admit(t0) - t0).collect();
        assert_eq!(done, [10, 20, 30].map(Duration::from_millis));
        // One after the queue has emptied waits only for itself.
        let later = t0 + Duration::from_millis(100);
        assert_eq!(q.admit(later) - later, Duration::from_millis(10));
    }
}
