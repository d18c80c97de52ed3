//! A timer the event loop waits on beside its sockets, to the µs. epoll's
//! timeout is whole milliseconds (mio rounds a wait up), so a wake-up a slot
//! asked for could come up to 1 ms late: a timed replay's logged times, an
//! open loop's schedule and think times would all carry it. A timerfd armed
//! for the exact wait wakes the same `poll` that the sockets wake, so no
//! response waits behind a sleep. Armed only when a slot's wake-up is the
//! nearest deadline (one syscall per such wait), never on the request path.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

/// Token of the fine timer's wake-ups (next to the waker's).
pub(crate) const FINE_TOKEN: Token = Token(usize::MAX - 1);

/// A non-blocking monotonic timerfd registered with a worker's poll.
pub(crate) struct FineTimer {
    fd: OwnedFd,
}

impl FineTimer {
    /// Creates the timer and registers it for readability under `FINE_TOKEN`.
    pub fn new(registry: &Registry) -> io::Result<Self> {
        // SAFETY: timerfd_create takes no pointers; a negative return is an error.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor this value now owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        registry.register(&mut SourceFd(&fd.as_raw_fd()), FINE_TOKEN, Interest::READABLE)?;
        Ok(Self { fd })
    }

    /// Fires once after `after` (re-arming replaces the previous expiry and
    /// clears its count). A zero wait is not armed: it would disarm.
    pub fn arm(&self, after: Duration) {
        if after.is_zero() {
            return;
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: after.as_secs().try_into().unwrap_or(libc::time_t::MAX),
                tv_nsec: after.subsec_nanos().into(),
            },
        };
        // SAFETY: the spec is a valid itimerspec on our stack; old value not wanted.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
    }

    /// Takes a fired expiry, so the descriptor is not left readable.
    pub fn clear(&self) {
        let mut ticks = [0u8; 8];
        // SAFETY: reads at most 8 bytes into our buffer; EAGAIN when nothing fired.
        unsafe { libc::read(self.fd.as_raw_fd(), ticks.as_mut_ptr().cast(), ticks.len()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll};
    use std::time::Instant;

    #[test]
    fn wakes_the_poll_within_a_millisecond_wait() {
        let mut poll = Poll::new().unwrap();
        let timer = FineTimer::new(poll.registry()).unwrap();
        let mut events = Events::with_capacity(4);
        let asked = Duration::from_micros(300);
        let started = Instant::now();
        timer.arm(asked);
        // A 50 ms timeout: only the timer can end this wait early.
        poll.poll(&mut events, Some(Duration::from_millis(50))).unwrap();
        assert!(started.elapsed() >= asked);
        assert!(events.iter().any(|e| e.token() == FINE_TOKEN));
        timer.clear();
    }
}
