"""A process that returns gets back the tables taken from it while it was away
(app/cluster/node.py `_node_back`): their connections are closed a batch at a time, on the
node's clock (a ManualClock here, no Redis and no sockets: the node's ownership and its
transport are stand-ins)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from app.cluster.node import (
    SEND_HOME_BATCH,
    SEND_HOME_DELAY_SECONDS,
    SEND_HOME_SECONDS,
    ClusterNode,
)
from app.ops.clock import ManualClock
from app.ops.config import Settings
from app.ops.metrics import Metrics
from app.stores.redis import RedisStore

AWAY_SINCE = 1_000.0
TABLES = 25  # from node-2, taken while it was away: three batches


class Watching:
    """What the node's ownership says of node-2 (`quiet`) and of the tables it holds."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.quiet_seconds: float | None = 0.2
        self.origins = {f"T{i:03d}": ("node-2", AWAY_SINCE + 1) for i in range(TABLES)}
        self.origins["MINE01"] = ("node-3", AWAY_SINCE + 1)  # another process's: stays

    def held(self) -> list[str]:
        return [*sorted(self.origins), "HOME01"]

    def came_from(self, code: str) -> tuple[str, float] | None:
        return self.origins.get(code)

    def settled(self, code: str) -> None:
        self.origins.pop(code, None)

    def quiet(self, node: str) -> float | None:
        return self.quiet_seconds

    def alive(self, node: str) -> bool:
        return self.quiet_seconds is not None and self.quiet_seconds < 2.0

    def giving(self, code: str) -> bool:
        return False


class Transport:
    """The Socket.IO server as `_send_home` uses it: each table has one connection."""

    def __init__(self) -> None:
        self.closed: list[str] = []
        self.manager = SimpleNamespace(get_participants=lambda ns, code: [(code, code)])

    def start_background_task(self, work: Any, sid: str) -> None:
        assert work == self.hang_up  # at the transport: a page on a websocket comes back at once
        self.closed.append(sid)

    async def hang_up(self, sid: str) -> None: ...


async def test_a_returning_process_gets_its_tables_in_batches_and_a_quiet_turn_waits() -> None:
    clock = ManualClock()
    settings = Settings(store="redis://127.0.0.1:1/0", node_id="node-1", lease_seconds=5.0)
    transport = Transport()
    node = ClusterNode(RedisStore(settings.store), settings, transport, Metrics(), clock)
    watching = Watching(clock)
    node.ownership = watching  # type: ignore[assignment]
    node._rooms = SimpleNamespace(  # type: ignore[assignment]
        get=lambda code: SimpleNamespace(closed=False)
    )
    going = asyncio.create_task(node._node_back("node-2", AWAY_SINCE))
    await clock.advance(SEND_HOME_DELAY_SECONDS)
    assert len(transport.closed) == SEND_HOME_BATCH  # the first batch at once
    watching.quiet_seconds = None  # a busy moment: nobody can tell whether node-2 renews
    await clock.advance(SEND_HOME_SECONDS)
    assert len(transport.closed) == SEND_HOME_BATCH  # that turn waits
    watching.quiet_seconds = 0.3  # it renews again
    await clock.advance(SEND_HOME_SECONDS * 3)
    assert sorted(transport.closed) == [f"T{i:03d}" for i in range(TABLES)]  # each once
    await asyncio.wait_for(going, 1)
    assert "MINE01" in watching.origins  # another process's table stays where it is
