"""The delay line on numbers and bytes: delay, jitter within bounds and order kept, loss at its rate,
a bounded queue, and the same packets for the same seed."""

from __future__ import annotations

import math

import pytest

from crest.network.delayline import DelayLine


def test_each_packet_leaves_after_the_delay_in_order() -> None:
    line = DelayLine(0.025)
    for i in range(5):
        assert line.offer(bytes([i]), now=1.0 + i * 0.001)
    assert line.next_due() == pytest.approx(1.025)
    assert line.pop_due(1.0249) == []
    assert line.pop_due(1.027) == [b"\x00", b"\x01", b"\x02"]
    assert line.pop_due(2.0) == [b"\x03", b"\x04"] and line.next_due() is None
    assert line.counters() == {"packets": 5, "bytes": 5, "dropped": 0, "overflow": 0}


def test_jitter_stays_within_its_bounds_and_never_reorders() -> None:
    line = DelayLine(0.050, jitter_s=0.010, seed=7)
    sent = [(i * 0.0005, i.to_bytes(4, "big")) for i in range(2000)]
    departures = []
    for now, packet in sent:
        line.offer(packet, now)
        departures.append(line._queue[-1][0] - now)
    assert min(departures) >= 0.040 - 1e-9 and max(departures) <= 0.060 + 0.010
    out = line.pop_due(10.0)
    assert out == [p for _, p in sent]


def test_loss_drops_its_share_and_a_seed_repeats_it() -> None:
    n, p = 100_000, 0.05
    line = DelayLine(0.0, loss=p, seed=3)
    kept = [line.offer(b"x", 0.0) for _ in range(n)]
    sd = math.sqrt(n * p * (1 - p))
    assert abs(line.dropped - n * p) < 5 * sd
    again = DelayLine(0.0, loss=p, seed=3)
    assert [again.offer(b"x", 0.0) for _ in range(n)] == kept


def test_a_full_queue_drops_and_counts() -> None:
    line = DelayLine(1.0, limit_packets=3)
    assert [line.offer(b"x", 0.0) for _ in range(5)] == [True, True, True, False, False]
    assert line.overflow == 2 and line.packets == 3


def test_bad_settings_are_refused() -> None:
    for kwargs in ({"delay_s": -1.0}, {"delay_s": 0.0, "loss": 1.0}, {"delay_s": 0.0, "limit_packets": 0}):
        with pytest.raises(ValueError):
            DelayLine(**kwargs)  # type: ignore[arg-type]
