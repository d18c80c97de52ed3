//! One direction of an emulated link's delay, jitter and loss, sans-IO: a packet is read into the
//! line's receive buffer, offered with the time it arrived (nanoseconds of any monotonic clock), and
//! taken back when due. It never reads a clock, a socket or a device (main.rs does), so it is tested
//! on plain numbers.
//!
//! Departures never go backwards: a packet leaves no earlier than the one before it. netem reorders
//! packets when jitter exceeds the gap between them, which turns a delay test into a reordering test;
//! the seeds' links were wires and switches, which keep order. So the queue is a FIFO whose due times
//! rise, its head is always the next packet to leave, and the next wake of the whole line is the
//! minimum over the directions' heads: the job of a timer wheel, done with no wheel.
//!
//! No allocation per packet: the packets live in a slab of fixed-size slots made once (one per
//! packet the queue may hold, plus the one being read into), found through a ring of (due, length,
//! slot). Free slots are a stack, so the slot freed last is filled next: the pages touched, and the
//! resident memory, follow the deepest queue seen, not the limit.

use crate::rng::SplitMix64;

/// A deep queue, like a generous netem limit: beyond it packets are dropped.
pub const DEFAULT_LIMIT_PACKETS: usize = 10_000;

/// What became of an offered packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// Held until its due time.
    Queued,
    /// Dropped on purpose (the loss rate).
    Lost,
    /// Dropped because `limit_packets` were already held.
    Full,
}

/// How one direction behaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub delay_ns: u64,
    /// Each packet's delay is `delay_ns` ± up to this, uniform (never below zero).
    pub jitter_ns: u64,
    /// The share of packets lost, each independently, in [0, 1).
    pub loss: f64,
    pub seed: u64,
    pub limit_packets: usize,
    /// The largest packet the line holds (the devices' MTU, or a GSO packet); a longer one is cut to it.
    pub slot_bytes: usize,
    /// Bytes before each packet that are not the packet's (a virtio_net_hdr with offloads): not counted.
    pub header_bytes: usize,
}

impl Settings {
    pub fn check(&self) -> Result<(), String> {
        if !(0.0..1.0).contains(&self.loss) || self.limit_packets == 0 || self.slot_bytes == 0 {
            return Err(format!(
                "bad delay line: loss {}, limit {} packets, slots of {} bytes",
                self.loss, self.limit_packets, self.slot_bytes
            ));
        }
        Ok(())
    }
}

/// What the line carried and dropped since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Offered and not dropped.
    pub packets: u64,
    pub bytes: u64,
    /// Lost on purpose (loss).
    pub dropped: u64,
    /// Dropped because the queue was full.
    pub overflow: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Held {
    due_ns: u64,
    len: u32,
    slot: u32,
}

/// One direction: holds each packet for `delay_ns` ± `jitter_ns`, drops a share `loss`, keeps at most
/// `limit_packets`.
#[derive(Debug)]
pub struct DelayLine {
    settings: Settings,
    rng: SplitMix64,
    ring: Box<[Held]>,
    head: usize,
    held: usize,
    slab: Vec<u8>,
    free: Vec<u32>,
    receiving: u32,
    touched: usize,
    last_departure_ns: u64,
    counters: Counters,
}

impl DelayLine {
    pub fn new(settings: Settings) -> Result<Self, String> {
        settings.check()?;
        let slots = settings.limit_packets + 1;
        // vec![0; n] is a zeroed allocation (calloc): its pages are not resident until a slot is written.
        // Where the machine refuses to reserve it (strict overcommit) the process stops with Rust's one
        // line "memory allocation of N bytes failed", which crest shows as why the line did not start.
        let slab = vec![0u8; slots * settings.slot_bytes];
        let mut free: Vec<u32> = (0..slots as u32).rev().collect();
        let receiving = free.pop().expect("at least two slots");
        Ok(Self {
            settings,
            rng: SplitMix64::new(settings.seed),
            ring: vec![Held::default(); settings.limit_packets].into_boxed_slice(),
            head: 0,
            held: 0,
            slab,
            free,
            receiving,
            touched: receiving as usize + 1,
            last_departure_ns: 0,
            counters: Counters::default(),
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Packets held now.
    pub fn len(&self) -> usize {
        self.held
    }

    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// Where the next packet is read into; `offer` then keeps or discards what was read.
    pub fn receive_buf(&mut self) -> &mut [u8] {
        let at = self.receiving as usize * self.settings.slot_bytes;
        &mut self.slab[at..at + self.settings.slot_bytes]
    }

    /// Take the `len` bytes just read into `receive_buf()`, which arrived at `now_ns`.
    pub fn offer(&mut self, len: usize, now_ns: u64) -> Offered {
        let s = self.settings;
        if s.loss > 0.0 && self.rng.next_f64() < s.loss {
            self.counters.dropped += 1;
            return Offered::Lost;
        }
        if self.held >= s.limit_packets {
            self.counters.overflow += 1;
            return Offered::Full;
        }
        let mut delay = s.delay_ns;
        if s.jitter_ns > 0 {
            let offset = (self.rng.next_f64() * 2.0 - 1.0) * s.jitter_ns as f64;
            delay = (s.delay_ns as f64 + offset).max(0.0) as u64;
        }
        let due = now_ns.saturating_add(delay).max(self.last_departure_ns);
        self.last_departure_ns = due;
        let len = len.min(s.slot_bytes);
        let tail = (self.head + self.held) % s.limit_packets;
        self.ring[tail] = Held { due_ns: due, len: len as u32, slot: self.receiving };
        self.held += 1;
        // Held ≤ limit, slots = limit + 1: a free slot is always left to read into.
        self.receiving = self.free.pop().expect("a free slot beside the held ones");
        self.touched = self.touched.max(self.receiving as usize + 1);
        self.counters.packets += 1;
        self.counters.bytes += len.saturating_sub(s.header_bytes) as u64;
        Offered::Queued
    }

    /// When the next packet leaves; None when none is held.
    pub fn next_due(&self) -> Option<u64> {
        (self.held > 0).then(|| self.ring[self.head].due_ns)
    }

    /// The next packet and its due time if it is due by `now_ns` (the oldest first); `release` it
    /// once written.
    pub fn due(&self, now_ns: u64) -> Option<(u64, &[u8])> {
        if self.held == 0 {
            return None;
        }
        let h = self.ring[self.head];
        if h.due_ns > now_ns {
            return None;
        }
        let at = h.slot as usize * self.settings.slot_bytes;
        Some((h.due_ns, &self.slab[at..at + h.len as usize]))
    }

    /// Let go of the head packet (written, or given up).
    pub fn release(&mut self) {
        if self.held == 0 {
            return;
        }
        self.free.push(self.ring[self.head].slot);
        self.head = (self.head + 1) % self.settings.limit_packets;
        self.held -= 1;
    }

    /// The packets due by `now_ns`, in order, as lengths (for tests and callers that only count).
    pub fn pop_due(&mut self, now_ns: u64) -> Vec<usize> {
        let mut out = Vec::new();
        while let Some((_, packet)) = self.due(now_ns) {
            out.push(packet.len());
            self.release();
        }
        out
    }

    /// How many slots have ever been read into: the part of the slab that is resident.
    pub fn slots_touched(&self) -> usize {
        self.touched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn line(delay_ns: u64, jitter_ns: u64, loss: f64, seed: u64, limit_packets: usize) -> DelayLine {
        DelayLine::new(Settings { delay_ns, jitter_ns, loss, seed, limit_packets, slot_bytes: 64, header_bytes: 0 })
            .unwrap()
    }

    /// Offer `bytes` as one packet at `now_ns`.
    fn put(l: &mut DelayLine, bytes: &[u8], now_ns: u64) -> Offered {
        l.receive_buf()[..bytes.len()].copy_from_slice(bytes);
        l.offer(bytes.len(), now_ns)
    }

    /// Every packet due by `now_ns`, as bytes.
    fn take(l: &mut DelayLine, now_ns: u64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some((_, p)) = l.due(now_ns) {
            out.push(p.to_vec());
            l.release();
        }
        out
    }

    #[test]
    fn each_packet_leaves_after_the_delay_in_order() {
        let mut l = line(25 * MS, 0, 0.0, 0, DEFAULT_LIMIT_PACKETS);
        for i in 0..5u8 {
            assert_eq!(put(&mut l, &[i], 1000 * MS + u64::from(i) * MS), Offered::Queued);
        }
        assert_eq!(l.next_due(), Some(1025 * MS));
        assert!(take(&mut l, 1025 * MS - 1).is_empty(), "one nanosecond early is early");
        assert_eq!(take(&mut l, 1027 * MS), vec![vec![0], vec![1], vec![2]]);
        assert_eq!(take(&mut l, 2000 * MS), vec![vec![3], vec![4]]);
        assert_eq!(l.next_due(), None);
        assert_eq!(l.counters(), Counters { packets: 5, bytes: 5, dropped: 0, overflow: 0 });
    }

    #[test]
    fn a_packet_due_exactly_now_leaves_and_no_delay_means_at_once() {
        let mut l = line(0, 0, 0.0, 0, 4);
        put(&mut l, b"a", 7);
        assert_eq!(l.due(7).map(|(due, p)| (due, p.to_vec())), Some((7, b"a".to_vec())));
        assert_eq!(l.pop_due(7), vec![1]);
        assert!(l.is_empty() && l.due(u64::MAX).is_none());
        l.release(); // nothing held: nothing happens
        assert!(l.is_empty());
    }

    #[test]
    fn jitter_stays_within_its_bounds_and_never_reorders() {
        let mut l = line(50 * MS, 10 * MS, 0.0, 7, DEFAULT_LIMIT_PACKETS);
        let mut last = 0;
        for i in 0..2000u32 {
            let now = u64::from(i) * MS / 2;
            put(&mut l, &i.to_be_bytes(), now);
            let due = l.ring[(l.head + l.held - 1) % l.settings.limit_packets].due_ns;
            assert!(due >= now + 40 * MS && due <= now + 60 * MS + 10 * MS, "packet {i}: {due} at {now}");
            assert!(due >= last, "departures never go backwards");
            last = due;
        }
        let out = take(&mut l, u64::MAX);
        assert_eq!(out, (0..2000u32).map(|i| i.to_be_bytes().to_vec()).collect::<Vec<_>>());
    }

    #[test]
    fn jitter_wider_than_the_delay_never_sends_before_arrival() {
        let mut l = line(MS, 5 * MS, 0.0, 3, DEFAULT_LIMIT_PACKETS);
        for i in 0..1000u64 {
            let now = 1_000 * MS + i * 10 * MS; // far apart: each packet's own delay decides
            put(&mut l, b"x", now);
            let due = l.next_due().unwrap();
            assert!(due >= now && due <= now + 6 * MS);
            l.pop_due(u64::MAX);
        }
    }

    #[test]
    fn loss_drops_its_share_and_a_seed_repeats_it() {
        let (n, p) = (100_000u32, 0.05);
        let mut l = line(0, 0, p, 3, DEFAULT_LIMIT_PACKETS);
        let kept: Vec<Offered> = (0..n)
            .map(|_| {
                let o = put(&mut l, b"x", 0);
                l.pop_due(0);
                o
            })
            .collect();
        let sd = (f64::from(n) * p * (1.0 - p)).sqrt();
        assert!((l.counters().dropped as f64 - f64::from(n) * p).abs() < 5.0 * sd);
        assert_eq!(l.counters().dropped + l.counters().packets, u64::from(n));
        let mut again = line(0, 0, p, 3, DEFAULT_LIMIT_PACKETS);
        let again: Vec<Offered> = (0..n)
            .map(|_| {
                let o = put(&mut again, b"x", 0);
                again.pop_due(0);
                o
            })
            .collect();
        assert_eq!(again, kept);
        let mut other = line(0, 0, p, 4, DEFAULT_LIMIT_PACKETS);
        let other: Vec<Offered> = (0..n)
            .map(|_| {
                let o = put(&mut other, b"x", 0);
                other.pop_due(0);
                o
            })
            .collect();
        assert_ne!(other, kept);
    }

    #[test]
    fn a_full_queue_drops_and_counts_and_keeps_what_it_holds() {
        let mut l = line(1000 * MS, 0, 0.0, 0, 3);
        let offered: Vec<Offered> = (0..5u8).map(|i| put(&mut l, &[i; 3], 0)).collect();
        assert_eq!(offered, [Offered::Queued, Offered::Queued, Offered::Queued, Offered::Full, Offered::Full]);
        assert_eq!((l.counters().overflow, l.counters().packets, l.len()), (2, 3, 3));
        // What was read for the refused packets went to the spare slot, not over a held one.
        assert_eq!(take(&mut l, u64::MAX), vec![vec![0; 3], vec![1; 3], vec![2; 3]]);
    }

    #[test]
    fn the_ring_wraps_many_times_and_keeps_every_packet_whole() {
        let mut l = line(3, 0, 0.0, 0, 5);
        let mut sent = Vec::new();
        let mut got = Vec::new();
        for i in 0..1000u32 {
            let p: Vec<u8> = i.to_le_bytes().iter().cycle().take(1 + (i as usize % 60)).copied().collect();
            assert_eq!(put(&mut l, &p, u64::from(i)), Offered::Queued);
            sent.push(p);
            got.extend(take(&mut l, u64::from(i)));
        }
        got.extend(take(&mut l, u64::MAX));
        assert_eq!(got, sent);
        assert!(l.slots_touched() <= 5, "slots reused, not walked: {}", l.slots_touched());
    }

    #[test]
    fn a_packet_longer_than_a_slot_is_cut_to_it() {
        let mut l = line(0, 0, 0.0, 0, 2);
        l.receive_buf().fill(9);
        assert_eq!(l.offer(10_000, 0), Offered::Queued);
        assert_eq!(l.pop_due(0), vec![64]);
        assert_eq!(l.counters().bytes, 64);
    }

    #[test]
    fn a_header_before_each_packet_is_carried_but_not_counted() {
        let mut l = DelayLine::new(Settings {
            delay_ns: 0,
            jitter_ns: 0,
            loss: 0.0,
            seed: 0,
            limit_packets: 2,
            slot_bytes: 64,
            header_bytes: 10,
        })
        .unwrap();
        let packet: Vec<u8> = (0..50).collect();
        put(&mut l, &packet, 0);
        assert_eq!(take(&mut l, 0), vec![packet]);
        assert_eq!(l.counters().bytes, 40);
    }

    #[test]
    fn resident_slots_follow_the_deepest_queue_not_the_limit() {
        let mut l = line(10, 0, 0.0, 0, 10_000);
        for round in 0..100u64 {
            for k in 0..20 {
                put(&mut l, b"abc", round * 100 + k);
            }
            l.pop_due(u64::MAX);
        }
        assert_eq!(l.slots_touched(), 21, "20 held at most, and the one read into");
    }

    #[test]
    fn bad_settings_are_refused() {
        let good = Settings {
            delay_ns: 0,
            jitter_ns: 0,
            loss: 0.0,
            seed: 0,
            limit_packets: 1,
            slot_bytes: 1,
            header_bytes: 0,
        };
        assert!(DelayLine::new(good).is_ok());
        for bad in [
            Settings { loss: 1.0, ..good },
            Settings { loss: -0.1, ..good },
            Settings { loss: f64::NAN, ..good },
            Settings { limit_packets: 0, ..good },
            Settings { slot_bytes: 0, ..good },
        ] {
            assert!(DelayLine::new(bad).is_err(), "{bad:?}");
        }
    }
}
