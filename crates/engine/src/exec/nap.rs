//! A worker's choice, when it has nothing to do, between blocking on its
//! sockets and napping: this module owns that choice and its bounds; the
//! worker's loop does the sleeping.
//!
//! Why nap: a client blocked in `epoll_wait` is woken by each burst the server
//! writes, and the server pays for that wake-up (on a virtual machine an
//! inter-processor interrupt and an exit to the hypervisor on the server's
//! core): nginx spent 13.2 µs per HTTP/2 response under a blocking crest and
//! 8.2 µs under a napping one (docs/benchmarks.md). A napping worker waits on
//! no socket, so the server's writes wake nobody; the worker takes whatever
//! arrived when the nap ends.
//!
//! The price is that a response (or a connect, or a TLS handshake) can be
//! seen up to one nap late, so a nap is at most 1/`FRACTION` of the last
//! period's 5th percentile of all those timings: every percentile from p5 up
//! reads at most 2% long (only the fastest 5% can read longer, by at most one
//! nap). A run that connects as often as it requests thus never naps. Not the fastest response: under HTTP/2 load a
//! few percent of responses come back at once (a stream sent while the server
//! was reading that connection), and a nap bound by them is too short to pay.
//! A nap is taken only where enough responses come in per nap to pay for the
//! wake-ups; otherwise, and whenever responses stop coming, the worker blocks
//! as before.

use std::time::{Duration, Instant};

/// A nap is at most this fraction of the last period's p5 latency.
const FRACTION: u32 = 50;
/// The percentile that bounds the nap, in 1/1000.
const PERMILLE: u64 = 50;
/// Shorter naps are not worth their wake-up: block instead.
const SHORTEST: Duration = Duration::from_micros(10);
/// Longer naps would only save wake-ups that no longer cost anything.
const LONGEST: Duration = Duration::from_millis(1);
/// The window over which responses are counted and their latencies binned.
const PERIOD: Duration = Duration::from_millis(100);
/// Responses that must be due per nap on average (at the last period's rate).
const RESPONSES_PER_NAP: u64 = 2;
/// Latency bins: four per power of two of microseconds, up to 2^40 µs.
const BINS: usize = 160;

/// Bin of a latency in µs: exact below 4, then four bins per power of two
/// (a bin's lower bound is at most 25% below what it holds).
fn bin(us: u64) -> usize {
    if us < 4 {
        return us as usize;
    }
    let exp = 63 - u64::from(us.min((1 << 40) - 1).leading_zeros());
    let quarter = (us >> (exp - 2)) & 3;
    ((exp - 1) * 4 + quarter) as usize
}

/// The smallest latency in µs that bin `index` holds.
fn lower_us(index: usize) -> u64 {
    if index < 4 {
        return index as u64;
    }
    let (exp, quarter) = (index as u64 / 4 + 1, index as u64 % 4);
    (4 + quarter) << (exp - 2)
}

/// One worker's record of its recent responses, and from it the nap it may take.
#[derive(Debug)]
pub(crate) struct Nap {
    enabled: bool,
    /// The current period's latencies, binned (no allocation per response).
    bins: [u32; BINS],
    responses: u64,
    current_ends: Instant,
    /// The last whole period's response count and p5 latency.
    previous_responses: u64,
    previous_p5: Duration,
}

impl Nap {
    pub fn new(enabled: bool, now: Instant) -> Self {
        Self {
            enabled,
            bins: [0; BINS],
            responses: 0,
            current_ends: now + PERIOD,
            previous_responses: 0,
            previous_p5: Duration::ZERO,
        }
    }

    /// Something crest times (a response of any verdict, a connect, a TLS
    /// handshake) took `latency`, seen at `now`.
    pub fn observe(&mut self, latency: Duration, now: Instant) {
        self.roll(now);
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.bins[bin(us)] = self.bins[bin(us)].saturating_add(1);
        self.responses += 1;
    }

    /// How long to nap instead of blocking, at `now`; None: block.
    pub fn length(&mut self, now: Instant) -> Option<Duration> {
        if !self.enabled {
            return None;
        }
        self.roll(now);
        let nap = (self.previous_p5 / FRACTION).min(LONGEST);
        let due = u128::from(self.previous_responses) * nap.as_nanos() / PERIOD.as_nanos();
        (nap >= SHORTEST && due >= u128::from(RESPONSES_PER_NAP)).then_some(nap)
    }

    fn roll(&mut self, now: Instant) {
        if now < self.current_ends {
            return;
        }
        // A period with nothing in it between: the older one says nothing of now.
        let whole = now < self.current_ends + PERIOD;
        self.previous_responses = if whole { self.responses } else { 0 };
        self.previous_p5 = if whole { self.p5() } else { Duration::ZERO };
        self.bins = [0; BINS];
        self.responses = 0;
        self.current_ends = now + PERIOD;
    }

    /// The current period's 5th-percentile latency, rounded down to its bin.
    fn p5(&self) -> Duration {
        let rank = (self.responses * PERMILLE).div_ceil(1000).max(1);
        let mut seen = 0;
        for (index, &count) in self.bins.iter().enumerate() {
            seen += u64::from(count);
            if seen >= rank {
                return Duration::from_micros(lower_us(index));
            }
        }
        Duration::ZERO
    }
}

/// Timer slack of the calling thread: naps are this much longer at most
/// (Linux's default, 50 µs, would be longer than most naps).
pub(crate) fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and touches only this thread's setting.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(nap: &mut Nap, start: Instant, latency: Duration, responses: u32) {
        for i in 0..responses {
            nap.observe(latency, start + PERIOD * i / responses);
        }
    }

    #[test]
    fn bins_hold_their_lower_bounds() {
        for us in [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 1000, 4096, 5000, 1 << 30, (1 << 40) - 1] {
            let lower = lower_us(bin(us));
            assert!(lower <= us && us < lower + lower / 4 + 1, "{us}: bin lower bound {lower}");
            assert_eq!(bin(lower), bin(us));
        }
        assert!(bin(u64::MAX) < BINS);
    }

    #[test]
    fn blocks_until_a_whole_period_is_seen() {
        let t0 = Instant::now();
        let mut nap = Nap::new(true, t0);
        busy(&mut nap, t0, Duration::from_micros(3_000), 10_000);
        assert_eq!(nap.length(t0 + PERIOD / 2), None);
        // 3,000 µs falls in the bin from 2,560 µs: naps of 51 µs.
        assert_eq!(nap.length(t0 + PERIOD), Some(Duration::from_nanos(51_200)));
    }

    #[test]
    fn the_fifth_percentile_bounds_the_nap() {
        let t0 = Instant::now();
        let mixed = |fast_every: u32, fast_us: u64| {
            let mut nap = Nap::new(true, t0);
            for i in 0..10_000 {
                let us = if i % fast_every == 0 { fast_us } else { 5_000 };
                nap.observe(Duration::from_micros(us), t0 + PERIOD * i / 10_000);
            }
            nap.length(t0 + PERIOD)
        };
        // 2% of responses at 150 µs (as under HTTP/2 load), the rest at 5 ms: naps of 1/50 of 4,096 µs.
        assert_eq!(mixed(50, 150), Some(Duration::from_nanos(81_920)));
        // 10% at 1,024 µs: naps of 1/50 of 1,024 µs.
        assert_eq!(mixed(10, 1_024), Some(Duration::from_nanos(20_480)));
        // 10% at 400 µs: naps would be too short to pay, so block.
        assert_eq!(mixed(10, 400), None);
    }

    #[test]
    fn few_responses_per_nap_block() {
        let t0 = Instant::now();
        let mut nap = Nap::new(true, t0);
        // 3 ms responses, 1,000 a period: one due per 51 µs nap, fewer than two.
        busy(&mut nap, t0, Duration::from_millis(3), 1_000);
        assert_eq!(nap.length(t0 + PERIOD), None);
        // Slow responses: naps stop at the longest.
        let mut nap = Nap::new(true, t0);
        busy(&mut nap, t0, Duration::from_secs(1), 1_000);
        assert_eq!(nap.length(t0 + PERIOD), Some(LONGEST));
    }

    #[test]
    fn silence_blocks_and_disabled_never_naps() {
        let t0 = Instant::now();
        let mut nap = Nap::new(true, t0);
        busy(&mut nap, t0, Duration::from_millis(3), 10_000);
        assert!(nap.length(t0 + PERIOD).is_some());
        // A whole period without a response: block.
        assert_eq!(nap.length(t0 + PERIOD * 5 / 2), None);
        let mut off = Nap::new(false, t0);
        busy(&mut off, t0, Duration::from_millis(3), 10_000);
        assert_eq!(off.length(t0 + PERIOD), None);
    }
}
