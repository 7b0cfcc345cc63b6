"""Events in a cluster: an event's record is held by lease like a table's (one process runs it,
and it moves where the router sends its connections: app/cluster/node.py `Beside`), while its
tables may live on any process, each under its own lease.

A table of an event is opened, under a fresh lease, by the process that runs the event; the
router then moves it to wherever its players' phones connect, as any table moves. The event
reads a table it does not hold from the store (its last write, at most SLAPJACK_SAVE_SECONDS
old), and hears at once only of the tables in its own process; it pauses only those
(`HeatTables.hold`): a table elsewhere plays on while the event holds back its next round.
"""

from __future__ import annotations

from app.cluster.node import ClusterNode
from app.tournaments.heats import LocalHeats
from app.tournaments.registry import Tournaments
from app.tournaments.values import Dealt
from engine import Rules


class ClusterHeats(LocalHeats):
    """An event's tables on a cluster node: each opened here under its own lease."""

    def __init__(self, node: ClusterNode) -> None:
        super().__init__(node.rooms)
        self.node = node

    async def open(self, dealt: Dealt, rules: Rules, lag_fair: bool, false_starts: bool) -> None:
        room = await self.node.open_new(self.table(dealt, rules, lag_fair, false_starts))
        if room.saver is not None:
            room.saver.changed(urgent=True)


def serve_in_cluster(events: Tournaments, node: ClusterNode) -> None:
    """The node's events: their records held by lease (`Beside`), their tables opened here
    under leases of their own."""
    ownership = node.ownership
    events.heats = ClusterHeats(node)
    events.claim = ownership.take_if_free
    events.gate = ownership.holds
    events.on_lease_lost = lambda code: ownership.lost(code, "fenced")
    node.beside = events
