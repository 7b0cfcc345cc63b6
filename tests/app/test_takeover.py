"""A table taken over (app/cluster/node.py `_open`): read from the store once, and its
people let in without waiting for the bookkeeping around it (stand-ins for the store, the
rooms and Redis: no server, no sockets)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from app.cluster.node import ClusterNode
from app.ops.clock import ManualClock
from app.ops.config import Settings
from app.ops.metrics import Metrics
from app.stores.redis import RedisStore


async def test_a_table_taken_over_is_read_once_and_served_before_its_bookkeeping() -> None:
    settings = Settings(store="redis://127.0.0.1:1/0", node_id="node-1")
    node = ClusterNode(
        RedisStore(settings.store), settings, SimpleNamespace(), Metrics(), ManualClock()
    )
    record = {"schema": 1, "code": "ABCD", "version": 12}
    reads: list[str] = []
    answered = asyncio.Event()

    class Store:
        async def load(self, code: str) -> dict[str, Any]:
            reads.append(code)
            return record

    class Redis:
        async def waiting_opener(self, code: str) -> str | None:
            await answered.wait()  # a round trip that takes its time
            return None

    room = SimpleNamespace(code="ABCD", saver=None)

    class Rooms:
        async def restore(self, code: str) -> Any:  # Rooms.restore: reads, then opens
            return self.restore_loaded(code, await node.store.load(code))

        def restore_loaded(self, code: str, snapshot: Any) -> Any:
            assert snapshot is record
            return room

    node.store = Store()  # type: ignore[assignment]
    node.redis = Redis()  # type: ignore[assignment]
    node._rooms = Rooms()  # type: ignore[assignment]
    node.beside = SimpleNamespace(opens=lambda record: False)
    async with asyncio.timeout(5):
        opened: Any = await node._open("ABCD")
    assert opened is room
    assert reads == ["ABCD"]
    assert room.judge_gate is not None  # served from here
    answered.set()
    async with asyncio.timeout(5):
        while node._telling:
            await asyncio.sleep(0.001)
