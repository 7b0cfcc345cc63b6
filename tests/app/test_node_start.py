"""A process starting and stopping (app/cluster/node.py). At its start it opens every table
nobody serves, but not at once those it let go itself as it stopped: their people went to
another process meanwhile, which takes them as it lets them in; a lease later, those nobody
took open here. As it stops, its tables' leases are let go as its own to come back to, never
as tables closed for good (stand-ins for the store, the ownership and the rooms, on a
ManualClock: no Redis)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from app.cluster.leasing import QUIET_SECONDS
from app.cluster.node import TELLING_ALIVE_SECONDS, ClusterNode
from app.ops.clock import ManualClock
from app.ops.config import Settings
from app.ops.metrics import Metrics
from app.stores.redis import NodeCounts, RedisStore

LEASE = 5.0


class Store:
    """The cluster's store as a start reads it: three tables, two of them let go as their
    process stopped (one by the process starting now)."""

    async def open(self) -> None:
        pass

    async def purge_expired(self, older_than_seconds: float) -> list[str]:
        return []

    async def codes(self) -> list[str]:
        return ["AAAA", "BBBB", "CCCC"]

    async def left_by(self, codes: list[str]) -> dict[str, str]:
        return {"BBBB": "node-1", "CCCC": "node-2"}


class Ownership:
    """Leases: `taken` by this process, in order; BBBB's is taken elsewhere once `elsewhere`."""

    def __init__(self, alive: bool = True) -> None:
        self.others_alive = alive  # node-2's renewals, as this process watches them
        self.taken: list[str] = []
        self.elsewhere: set[str] = set()
        self.holding: list[str] = []
        self.released: list[tuple[str, bool]] = []

        async def node_counts() -> NodeCounts:  # the processes the cluster ever had
            return NodeCounts({"node-1": 3, "node-2": 9}, {"node-1": 2, "node-2": 1})

        self.store = SimpleNamespace(node_counts=node_counts)

    async def start(self) -> None:
        pass

    def held(self) -> list[str]:
        return list(self.holding)

    def alive(self, node: str) -> bool:
        return node == "node-2" and self.others_alive

    async def release(self, code: str, *, leaving: bool = False) -> None:
        self.released.append((code, leaving))

    async def take_if_free(self, code: str) -> bool:
        if code in self.elsewhere:
            return False
        self.taken.append(code)
        return True


async def started(alive: bool = True) -> tuple[ManualClock, Ownership, ClusterNode]:
    """A process started among the stand-ins (node-2 `alive` or not), on a ManualClock."""
    clock, ownership = ManualClock(), Ownership(alive)
    settings = Settings(store="redis://127.0.0.1:1/0", node_id="node-1", lease_seconds=LEASE)
    node = ClusterNode(RedisStore(settings.store), settings, SimpleNamespace(), Metrics(), clock)

    async def open_(code: str) -> Any:
        return SimpleNamespace(code=code)

    async def no_unopened(unused: float) -> list[str]:
        return []

    node.store = Store()  # type: ignore[assignment]
    node.ownership = ownership  # type: ignore[assignment]
    node.redis = SimpleNamespace(close_unopened=no_unopened)  # type: ignore[assignment]
    node._rooms = SimpleNamespace(get=lambda code: None, draining=False)  # type: ignore[assignment]
    node._open = open_  # type: ignore[method-assign]
    await node.start()
    return clock, ownership, node


async def test_the_tables_a_process_let_go_as_it_stopped_wait_a_lease_at_its_start() -> None:
    clock, ownership, node = await started()
    assert ownership.taken == ["AAAA", "CCCC"]  # BBBB's people may be at another process now
    await clock.advance(LEASE - 0.1)
    assert ownership.taken == ["AAAA", "CCCC"]
    await clock.advance(0.2)
    assert ownership.taken == ["AAAA", "CCCC", "BBBB"]  # nobody took it: opened here
    await node.close()


async def test_a_table_another_process_took_meanwhile_stays_there() -> None:
    clock, ownership, node = await started()
    ownership.elsewhere.add("BBBB")  # its people reached the other process first
    await clock.advance(LEASE + 0.1)
    assert ownership.taken == ["AAAA", "CCCC"]
    await node.close()


async def test_with_no_other_process_alive_they_open_once_that_shows() -> None:
    """Nobody else is letting their people in: they open as soon as the other processes'
    renewal counters were watched long enough to tell (QUIET_SECONDS and a margin)."""
    clock, ownership, node = await started(alive=False)
    await clock.advance(TELLING_ALIVE_SECONDS - 0.1)
    assert ownership.taken == ["AAAA", "CCCC"]
    await clock.advance(0.2)
    assert ownership.taken == ["AAAA", "CCCC", "BBBB"]
    assert TELLING_ALIVE_SECONDS > QUIET_SECONDS < LEASE
    await node.close()


async def test_a_process_stopping_before_then_opens_none() -> None:
    clock, ownership, node = await started()
    node.rooms.draining = True  # a second deploy right after the first
    await clock.advance(LEASE + 0.1)
    assert ownership.taken == ["AAAA", "CCCC"]
    await node.close()


async def test_a_draining_process_leaves_its_leases_to_its_stop() -> None:
    """Its rooms are let go as it stops: the saving round must not release their leases as
    closed for good, or the process that takes them would never send them back."""
    clock, ownership, node = await started()
    ownership.holding = ["AAAA"]  # held, its room gone from the rooms
    node.rooms.draining = True
    await clock.advance(node.settings.save_seconds + 0.01)
    assert ownership.released == []
    node.rooms.draining = False  # while the process runs, such a room expired: let go
    await clock.advance(node.settings.save_seconds + 0.01)
    assert ownership.released == [("AAAA", False)]
    await node.close()
