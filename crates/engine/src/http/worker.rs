//! One worker thread: a `mio` event loop that owns its slots and its stats.
//! It waits for the start time, runs until the deadline, the quota or a
//! cancel, and returns its stats; in-flight requests at the end are dropped
//! uncounted (as wrk does), so every recorded request ended inside the run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Poll};
use rustls::ClientConfig;

use super::ctx::{Ctx, Event};
use super::h1slot::Slot;
use super::h2slot::H2Slot;
use super::h3slot::H3Slot;
use super::page::PageLoads;
use super::plan::Plan;
use super::select::Selector;
use crate::exec::fine_timer::{FineTimer, FINE_TOKEN};
use crate::exec::live::LiveCounters;
use crate::exec::nap::{self, Nap};
use crate::exec::{thread_cpu_time, Outcome, WAKE_TOKEN};
use crate::results::stats::Stats;
use crate::rng::Rng;

/// The part of the run one worker owns.
pub(crate) struct Assignment {
    /// Worker index.
    pub index: u32,
    /// Index of the first connection (for open-loop staggering).
    pub first_connection: u32,
    pub connections: u32,
    pub quota: Option<u64>,
}

/// A worker's client configurations for TLS and, in HTTP/3 runs, QUIC.
pub(crate) struct Crypto {
    pub tls: Option<Arc<ClientConfig>>,
    pub quic: Option<quinn_proto::ClientConfig>,
}

pub(crate) struct Worker {
    poll: Poll,
    /// The previous pass's ready list, swapped with `ctx.ready` (no allocation).
    draining: Vec<usize>,
    slots: Vec<Conn>,
    ctx: Ctx,
    end: Option<Instant>,
    /// `end` plus the drain time: in-flight exchanges may finish until then.
    stop: Option<Instant>,
    /// Set once the end has passed and idle slots were retired.
    ended: bool,
    cancel: Arc<AtomicBool>,
    live: Arc<LiveCounters>,
    /// Wakes `poll` to the µs when a slot's wake-up is the nearest deadline.
    fine: FineTimer,
}

impl Worker {
    pub fn new(
        poll: Poll,
        plan: Arc<Plan>,
        crypto: Crypto,
        origin: Instant,
        job: &Assignment,
        cancel: Arc<AtomicBool>,
        live: Arc<LiveCounters>,
    ) -> std::io::Result<Self> {
        let registry = poll.registry().try_clone()?;
        let fine = FineTimer::new(&registry)?;
        // Each client's start delay is drawn once and shared by its connections.
        let mut client_delay = (u32::MAX, Duration::ZERO);
        let slots: Vec<Conn> = (0..job.connections)
            .map(|i| {
                let index = job.first_connection + i;
                let client = plan.client_of(index);
                if client_delay.0 != client {
                    let mut client_rng =
                        Rng::new(plan.seed.wrapping_add(u64::from(client)).wrapping_mul(0xD1B5_4A32_D192_ED03));
                    client_delay = (client, plan.client_start_delay.mul_f64(client_rng.next_f64()));
                }
                let source = (!plan.source_addrs.is_empty())
                    .then(|| plan.source_addrs[index as usize % plan.source_addrs.len()]);
                let delay = client_delay.1;
                if plan.http3.is_some() {
                    let first = |lane: u32| origin + delay + plan.schedule.first_send(lane);
                    Conn::H3(Box::new(H3Slot::new(i as usize, index, client as usize, &plan, source, first)))
                } else if plan.http2.is_some() {
                    let first = |lane: u32| origin + delay + plan.schedule.first_send(lane);
                    Conn::H2(H2Slot::new(i as usize, index, client as usize, &plan, source, first))
                } else {
                    let first = origin + delay + plan.schedule.first_send(index);
                    Conn::H1(Slot::new(i as usize, index, client as usize, &plan, source, first))
                }
            })
            .collect();
        let lanes = plan.http2.map(|h2| h2.streams).or(plan.http3.map(|h3| h3.streams)).unwrap_or(1) as usize;
        let mut wakeups = BinaryHeap::with_capacity(slots.len() * lanes + 1);
        for (i, slot) in slots.iter().enumerate() {
            match slot {
                Conn::H1(s) => wakeups.extend(s.waiting_until().map(|at| Reverse((at, i)))),
                Conn::H2(s) => wakeups.extend(s.first_wakeups().map(|at| Reverse((at, i)))),
                Conn::H3(s) => wakeups.extend(s.first_wakeups().map(|at| Reverse((at, i)))),
            }
        }
        let ctx = Ctx {
            selector: Selector::new(&plan, job.index, job.first_connection, slots.len(), job.quota),
            stats: {
                let stats = Stats::new(plan.duration, plan.classes.len(), plan.clients() as usize, plan.window);
                if plan.specweb99.is_some() {
                    stats.with_client_classes()
                } else {
                    stats
                }
            },
            // One read buffer per worker, sized once: every read of every
            // slot goes into it and is parsed out at once.
            scratch: vec![0; plan.read_buffer_bytes].into_boxed_slice(),
            quic_buffers: match plan.http3 {
                Some(_) => crate::protocol::h3::Buffers::new(plan.requests.len()),
                None => crate::protocol::h3::Buffers::default(),
            },
            registry,
            tls: crypto.tls,
            quic: crypto.quic,
            origin,
            end: plan.duration.map(|d| origin + d),
            active: slots.len(),
            ready: Vec::with_capacity(slots.len()),
            wakeups,
            nap: Nap::new(plan.nap, origin),
            pages: plan.pages.as_ref().map(|pages| {
                let per_client = plan.connections_per_client.max(1);
                PageLoads::new(
                    pages,
                    (job.connections / per_client) as usize,
                    (job.first_connection / per_client) as usize,
                )
            }),
            plan: plan.clone(),
        };
        let draining = Vec::with_capacity(slots.len());
        let end = plan.duration.map(|d| origin + d);
        let stop = end.map(|e| e + plan.drain);
        Ok(Self { poll, draining, slots, ctx, end, stop, ended: false, cancel, live, fine })
    }

    pub fn run(mut self) -> Outcome {
        let now = Instant::now();
        if self.ctx.origin > now {
            std::thread::sleep(self.ctx.origin - now);
        }
        let mut events = Events::with_capacity(1024);
        if self.ctx.plan.nap {
            nap::tighten_timer_slack();
        }
        let sweep_every = (self.ctx.plan.timeout / 20).clamp(Duration::from_millis(1), Duration::from_millis(50));
        let mut next_sweep = Instant::now() + sweep_every;
        loop {
            let now = Instant::now();
            self.fire_timers(now);
            self.begin_queued();
            if now >= next_sweep {
                for slot in &mut self.slots {
                    slot.handle(&mut self.ctx, Event::Sweep, now);
                }
                next_sweep = now + sweep_every;
            }
            self.live.publish(&self.ctx.stats);
            if !self.ended && self.end.is_some_and(|end| now >= end) {
                self.ended = true;
                for slot in &mut self.slots {
                    slot.handle(&mut self.ctx, Event::RunEnded, now);
                }
            }
            if self.finished(now) {
                break;
            }
            let mut wait = next_sweep - now;
            let mut wake_up = None;
            if let Some(Reverse((at, _))) = self.ctx.wakeups.peek() {
                let until = at.saturating_duration_since(now);
                if until < wait {
                    (wait, wake_up) = (until, Some(until));
                }
            }
            if let Some(end) = if self.ended { self.stop } else { self.end } {
                wait = wait.min(end.saturating_duration_since(now));
            }
            if !self.ctx.ready.is_empty() {
                wait = Duration::ZERO;
            }
            // Napping: look without waiting, and sleep on no socket if nothing is there.
            let nap = if wait.is_zero() { None } else { self.ctx.nap.length(now) };
            // A slot's wake-up to the µs: epoll alone would round it up to the next ms.
            if nap.is_none() && wake_up == Some(wait) && wait.subsec_nanos() % 1_000_000 != 0 {
                self.fine.arm(wait);
            }
            match self.poll.poll(&mut events, Some(if nap.is_some() { Duration::ZERO } else { wait })) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => panic!("event loop failed: {e}"),
            }
            if let Some(nap) = nap.filter(|_| events.is_empty()) {
                self.ctx.stats.naps += 1;
                std::thread::sleep(nap.min(wait));
                continue;
            }
            // What arrives after the end (and the drain) is not part of the run.
            let now = Instant::now();
            if self.stop.is_some_and(|stop| now >= stop) {
                break;
            }
            for event in &events {
                if event.token() == WAKE_TOKEN {
                    continue;
                }
                if event.token() == FINE_TOKEN {
                    self.fine.clear();
                    continue;
                }
                let io = Event::Io {
                    readable: event.is_readable() || event.is_read_closed() || event.is_error(),
                    writable: event.is_writable() || event.is_write_closed() || event.is_error(),
                    read_closed: event.is_read_closed() || event.is_error(),
                };
                self.slots[event.token().0].handle(&mut self.ctx, io, Instant::now());
            }
            self.begin_queued();
        }
        self.live.publish(&self.ctx.stats);
        Outcome { stats: self.ctx.stats, cpu: thread_cpu_time(), ended: Instant::now() }
    }

    /// Begins the exchanges queued while handling events. Slots queued by
    /// these begins (instant failures) wait for the next pass.
    fn begin_queued(&mut self) {
        std::mem::swap(&mut self.draining, &mut self.ctx.ready);
        let now = Instant::now();
        for &index in &self.draining {
            self.slots[index].handle(&mut self.ctx, Event::Dequeued, now);
        }
        self.draining.clear();
    }

    fn finished(&self, now: Instant) -> bool {
        self.ctx.active == 0 || self.stop.is_some_and(|stop| now >= stop) || self.cancel.load(Ordering::Relaxed)
    }

    fn fire_timers(&mut self, now: Instant) {
        while let Some(&Reverse((at, index))) = self.ctx.wakeups.peek() {
            if at > now {
                break;
            }
            self.ctx.wakeups.pop();
            self.slots[index].handle(&mut self.ctx, Event::Timer(at), now);
        }
    }
}

/// A connection of either protocol, behind the slot's one entry point.
enum Conn {
    H1(Slot),
    H2(H2Slot),
    /// Boxed: a QUIC connection's state is far larger than the others'.
    H3(Box<H3Slot>),
}

impl Conn {
    fn handle(&mut self, ctx: &mut Ctx, event: Event, now: Instant) {
        match self {
            Self::H1(s) => s.handle(ctx, event, now),
            Self::H2(s) => s.handle(ctx, event, now),
            Self::H3(s) => s.handle(ctx, event, now),
        }
    }
}
