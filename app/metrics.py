"""Prometheus metrics, served at /metrics. The names are the contract with dashboards.

Each app has its own registry, so two apps in one process (tests) count apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
LOCK_BUCKETS = (0.0001, 0.001, 0.01, 0.1, 0.5, 1.0, 5.0)
SLAP_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.longest_hold = 0.0  # seconds: what lock_held_max shows
        self._children: dict[tuple[Any, str], Any] = {}  # labelled counters, by label
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
        self.events = Counter(
            "slapjack_events_handled",
            "Client events handled, by event name",
            ["event"],
            registry=self.registry,
        )
        self.rejected = Counter(
            "slapjack_events_rejected",
            "Client events refused, by error code",
            ["code"],
            registry=self.registry,
        )
        self.slap_judging = Histogram(
            "slapjack_slap_judging_seconds",
            "From a slap's arrival to its judgement applied and sent, room lock wait included",
            buckets=SLAP_BUCKETS,
            registry=self.registry,
        )
        # A cluster (app/ownership.py, app/cluster.py): this process's share of the tables.
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

        self.frames_refused = Counter(
            "slapjack_frames_refused",
            "Incoming frames refused at the transport (binary, malformed, over budget), by why",
            ["why"],
            registry=self.registry,
        )
        self.lock_held = Histogram(
            "slapjack_room_lock_held_seconds",
            "How long a room's lock was held, each time",
            buckets=LOCK_BUCKETS,
            registry=self.registry,
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

    def handled(self, event: str) -> None:
        """A client event handled (`event`: a name of protocol.CLIENT_EVENTS, or unknown)."""
        self._child(self.events, event).inc()

    def refused(self, code: str) -> None:
        """A client event refused with the error `code`."""
        self._child(self.rejected, code).inc()

    def _child(self, metric: Any, label: str) -> Any:
        """`metric.labels(label)`, looked up once: prometheus_client takes a lock and
        checks the label on every `labels` call, and these count every message."""
        key = (metric, label)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(label)
        return child

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

    def watch_tables_owned(self, owned: Callable[[], int]) -> None:
        self.tables_owned.set_function(owned)

    def render(self) -> bytes:
        return generate_latest(self.registry)
