"""Prometheus metrics, served at /metrics. The names are the contract with dashboards.

Each app has its own registry, so two apps in one process (tests) count apart.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

CONTENT_TYPE = CONTENT_TYPE_LATEST
LOCK_BUCKETS = (0.0001, 0.001, 0.01, 0.1, 0.5, 1.0, 5.0)
SLAP_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25)


_C = TypeVar("_C", bound=Collector)


class CountBy(Collector):
    """A counter by one label, bumped on every message: plain numbers, read by
    prometheus_client when /metrics is scraped (a custom collector, its documented way to
    export figures kept elsewhere). Its own Counter takes a lock for every increment. Only
    the event loop's thread bumps it, and scrapes are answered there too."""

    def __init__(self, name: str, documentation: str, label: str) -> None:
        self.name, self.documentation, self.label = name, documentation, label
        self.counts: dict[str, int] = {}

    def inc(self, value: str) -> None:
        counts = self.counts
        counts[value] = counts.get(value, 0) + 1

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=[self.label])
        for value, count in sorted(self.counts.items()):
            family.add_metric([value], count)
        yield family


class Timings(Collector):
    """A histogram of seconds observed on every message, kept as a count per bucket (found
    by bisection) and a sum, and exported as prometheus_client's Histogram would (buckets
    counting what is at most their bound, cumulative, and +Inf): that one takes two locks
    and walks its buckets on every observation. Event-loop thread only, as CountBy."""

    def __init__(self, name: str, documentation: str, buckets: tuple[float, ...]) -> None:
        self.name, self.documentation = name, documentation
        self.bounds = tuple(sorted(buckets))
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds

    def collect(self) -> Iterator[Metric]:
        buckets, total = [], 0
        for bound, count in zip((*self.bounds, math.inf), self.counts, strict=True):
            total += count
            buckets.append((floatToGoString(bound), total))  # type: ignore[no-untyped-call]
        yield HistogramMetricFamily(
            self.name, self.documentation, buckets=buckets, sum_value=self.sum
        )


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.longest_hold = 0.0  # seconds: what lock_held_max shows
        self.rooms = Gauge("slapjack_rooms", "Rooms open now", registry=self.registry)
        self.connected = Gauge(
            "slapjack_connected_players", "People connected to a room now", registry=self.registry
        )
        self.games_started = Counter(
            "slapjack_games_started", "Games started", registry=self.registry
        )
        self.games_finished = Counter(
            "slapjack_games_finished", "Games played to a winner", registry=self.registry
        )
        # Counted on every message: plain numbers, exported when scraped (CountBy, Timings).
        self.events = self._collected(
            CountBy("slapjack_events_handled", "Client events handled, by event name", "event")
        )
        self.rejected = self._collected(
            CountBy("slapjack_events_rejected", "Client events refused, by error code", "code")
        )
        self.slap_judging = self._collected(
            Timings(
                "slapjack_slap_judging_seconds",
                "From a slap's arrival to its judgement applied and sent, room lock wait included",
                SLAP_BUCKETS,
            )
        )
        # A cluster (app/cluster/ownership.py, app/cluster/node.py): this process's share
        # of the tables.
        self.tables_owned = Gauge(
            "slapjack_tables_owned",
            "Tables whose lease this process holds now (cluster only)",
            registry=self.registry,
        )
        self.leases_taken = Counter(
            "slapjack_leases_taken", "Table leases this process took", registry=self.registry
        )
        self.leases_lost = Counter(
            "slapjack_leases_lost",
            "Table leases lost while serving the table (taken by another process, or not "
            "confirmed in time)",
            registry=self.registry,
        )
        self.hand_overs = Counter(
            "slapjack_hand_overs",
            "Tables this process handed over to another that asked for them",
            registry=self.registry,
        )
        self.restores = Counter(
            "slapjack_restores",
            "Tables this process brought back from the store",
            registry=self.registry,
        )

        # The store (app/stores/saver.py): writes that failed, tables whose writes are failing
        # now, and how old the oldest change not written yet is.
        self.saves_failed = Counter(
            "slapjack_saves_failed",
            "Table writes to the store that failed (each is retried while the game goes on)",
            registry=self.registry,
        )
        self.saves_failing = Gauge(
            "slapjack_tables_saves_failing",
            "Tables whose last write failed and none has landed since",
            registry=self.registry,
        )
        self.unsaved_seconds = Gauge(
            "slapjack_unsaved_seconds",
            "Age of the oldest change to any table that the store does not hold yet",
            registry=self.registry,
        )

        self.frames_refused = Counter(
            "slapjack_frames_refused",
            "Incoming frames refused at the transport (binary, malformed, over budget), by why",
            ["why"],
            registry=self.registry,
        )
        self.lock_held = self._collected(
            Timings(
                "slapjack_room_lock_held_seconds",
                "How long a room's lock was held, each time",
                LOCK_BUCKETS,
            )
        )
        self.lock_held_max = Gauge(
            "slapjack_room_lock_held_max_seconds",
            "The longest any room's lock was held since start (a stuck room shows here)",
            registry=self.registry,
        )
        self.lock_held_long = Counter(
            "slapjack_room_lock_held_long",
            "Times a room's lock was still held past the watchdog's limit",
            registry=self.registry,
        )

        self._strangers()

    def _strangers(self) -> None:
        """What people who are not welcome try: room codes tested (and refused), the cost of
        a wrong one while a wave of them is on, false starts."""
        self.code_lookups = self._collected(
            CountBy(
                "slapjack_code_lookups",
                "Room codes tested (API, pages, QR, Socket.IO), by result: found, missing, or "
                "refused (the address past its budget of wrong codes)",
                "result",
            )
        )
        self.wrong_code_cost = Gauge(
            "slapjack_wrong_code_cost",
            "What the last wrong room code cost its address (1: no wave of wrong codes on)",
            registry=self.registry,
        )
        self.wrong_code_cost.set(1)
        self.false_starts = Counter(
            "slapjack_false_starts",
            "Slaps sooner after the trigger reached the slapper than a person can react",
            registry=self.registry,
        )

    def _collected(self, collector: _C) -> _C:
        self.registry.register(collector)
        return collector

    def handled(self, event: str) -> None:
        """A client event handled (`event`: a name of protocol.CLIENT_EVENTS, or unknown)."""
        self.events.inc(event)

    def refused(self, code: str) -> None:
        """A client event refused with the error `code`."""
        self.rejected.inc(code)

    def lock_released(self, held: float) -> None:
        """A room's lock was held `held` seconds."""
        self.lock_held.observe(held)
        if held > self.longest_hold:
            self.longest_hold = held
            self.lock_held_max.set(held)

    def watch(self, rooms: Callable[[], int], connected: Callable[[], int]) -> None:
        """Gauges read at scrape time, so they can never drift from the truth."""
        self.rooms.set_function(rooms)
        self.connected.set_function(connected)

    def watch_saving(self, failing: Callable[[], int], unsaved: Callable[[], float]) -> None:
        """The store's health, read at scrape time."""
        self.saves_failing.set_function(failing)
        self.unsaved_seconds.set_function(unsaved)

    def watch_tables_owned(self, owned: Callable[[], int]) -> None:
        self.tables_owned.set_function(owned)

    def render(self) -> bytes:
        return generate_latest(self.registry)
