"""The figures counted on every message (app/ops/metrics.py CountBy, Timings) are exported
exactly as prometheus_client's own Counter and Histogram export the same observations."""

from __future__ import annotations

import random

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from app.ops.metrics import LOCK_BUCKETS, SLAP_BUCKETS, CountBy, Metrics, Timings


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, but the `_created` times (which differ by nature)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not sample.name.endswith("_created"):
                found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_counts_and_timings_export_what_prometheus_clients_own_would() -> None:
    rng = random.Random(4)
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    count = CountBy("x_events", "Events", "event")
    ours.register(count)
    reference = Counter("x_events", "Events", ["event"], registry=theirs)
    timings = {
        bounds: Timings(f"x_{i}_seconds", "Took", bounds)
        for i, bounds in enumerate((LOCK_BUCKETS, SLAP_BUCKETS))
    }
    references = {}
    for i, (bounds, timing) in enumerate(timings.items()):
        ours.register(timing)
        references[bounds] = Histogram(f"x_{i}_seconds", "Took", buckets=bounds, registry=theirs)
    for _ in range(5000):
        event = rng.choice(["flip", "slap", "sit", "unknown"])
        count.inc(event)
        reference.labels(event).inc()
        # Each bound itself, just below and above it, and anything from 0 to 10 s.
        bounds = rng.choice(list(timings))
        seconds = rng.choice(
            [rng.choice(bounds) * rng.choice([1.0, 0.999999, 1.000001]), rng.uniform(0, 10)]
        )
        timings[bounds].observe(seconds)
        references[bounds].observe(seconds)
    mine, wanted = (
        samples(generate_latest(ours).decode()),
        samples(generate_latest(theirs).decode()),
    )
    assert mine.keys() == wanted.keys() and len(mine) > 20
    for key, value in wanted.items():
        assert abs(mine[key] - value) <= 1e-9 * max(1.0, abs(value)), key
    assert sum(sum(t.counts) for t in timings.values()) == 5000


def test_the_app_counts_every_message_and_lock_hold() -> None:
    metrics = Metrics()
    metrics.handled("flip")
    metrics.handled("flip")
    metrics.refused("game_over")
    metrics.lock_released(0.002)
    text = metrics.render().decode()
    assert 'slapjack_events_handled_total{event="flip"} 2.0' in text
    assert 'slapjack_events_rejected_total{code="game_over"} 1.0' in text
    assert 'slapjack_room_lock_held_seconds_bucket{le="0.01"} 1.0' in text
    assert 'slapjack_room_lock_held_seconds_bucket{le="0.001"} 0.0' in text
    assert "slapjack_room_lock_held_max_seconds 0.002" in text
