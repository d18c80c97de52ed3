//! How many connections this process can hold: the open-file limit, raised
//! to its hard maximum at start-up (as servers do, nginx's
//! `worker_rlimit_nofile`), less the descriptors the process itself needs.
//! Feeds `FCGI_MAX_CONNS`; must not decide anything else.

/// Most descriptors asked for: Linux's default `nr_open`, above which
/// raising fails even when the hard limit is unlimited.
const MOST_OPEN_FILES: u64 = 1 << 20;

/// Descriptors kept for the process itself: stdio, the listener, the
/// runtime's epoll and wake-up descriptors, with room to spare.
const RESERVED_FDS: u64 = 32;

/// Raises the soft open-file limit to the hard one and returns how many
/// connections fit under it. A limit that cannot be read or raised leaves
/// things as they are (the answer is then the current limit's).
pub fn raise_open_files() -> u32 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit through a valid pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        // The classic default: better a modest answer than none.
        return connections_under(1024);
    }
    let wanted = limit.rlim_max.min(MOST_OPEN_FILES);
    if limit.rlim_cur < wanted {
        let raised = libc::rlimit { rlim_cur: wanted, rlim_max: limit.rlim_max };
        // SAFETY: setrlimit reads one rlimit through a valid pointer.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    connections_under(limit.rlim_cur)
}

fn connections_under(open_files: u64) -> u32 {
    u32::try_from(open_files.saturating_sub(RESERVED_FDS).max(1)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_room_for_the_process() {
        assert_eq!(connections_under(1024), 992);
        assert_eq!(connections_under(10), 1);
        assert_eq!(connections_under(u64::MAX), u32::MAX);
        assert!(raise_open_files() >= 1);
    }
}
