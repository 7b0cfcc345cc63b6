"""Hundreds of tables on one cluster node at once, against a real redis-server: opened,
restored, saved and handed over together, every Redis command queued rather than refused
(app/stores/redis.py's blocking pools, the beat's saves in one pipelined round)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from app_harness import Logged, Server, serving

from app.cluster.node import ClusterNode
from deploy.redis import RedisServer
from engine import Rules

pytestmark = pytest.mark.redis

TABLES = 500
WAIT_SECONDS = 240.0  # generous: the machine is shared; the waits end once the tables are there
# Events that mean a command was refused or a table left unserved.
FAILURES = {
    "save_failed",
    "table_unreachable",
    "hand_over_failed",
    "hand_over_unsaved",
    "table_write_failed",
    "lease_busy",
    "lease_release_failed",
}
CLUSTER = {
    # A claim waits a lease and a second: long enough on a starved machine for 500 hand-overs
    # at once (over 30 s seen beside another test run and a soak).
    "lease_seconds": 90.0,
    "max_rooms": 2 * TABLES,
    "redis_connections": 8,  # few: far more commands at once than connections
}


@pytest.fixture
async def redis_url(tmp_path: Path) -> AsyncIterator[str]:
    with RedisServer(tmp_path / "redis") as server:
        yield server.url


def node(server: Server) -> ClusterNode:
    cluster: ClusterNode | None = server.app.other_asgi_app.state.cluster
    assert cluster is not None
    return cluster


@pytest.mark.timeout(WAIT_SECONDS + 60)
async def test_hundreds_of_tables_open_restore_save_and_move_at_once(
    redis_url: str, logged: Logged, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What is promised here is that nothing is refused, not how fast a starved machine is:
    # the hand-over's deadlines (a save 2 s, the whole 10 s) are raised with the lease, so
    # that two cores shared with other test runs make this test slow, never a table refused.
    monkeypatch.setattr("app.cluster.node.HAND_OVER_SAVE_SECONDS", 60.0)
    monkeypatch.setattr("app.cluster.ownership.HAND_OVER_SECONDS", 60.0)
    async with (
        serving(store=redis_url, node_id="node-1", **CLUSTER) as one,
        serving(store=redis_url, node_id="node-2", **CLUSTER) as two,
    ):
        first, second = node(one), node(two)
        async with asyncio.timeout(WAIT_SECONDS):
            codes = await asyncio.gather(*(first.open_table(Rules()) for _ in range(TABLES)))
            # Their people's connections come to node-1 together: 500 restores at once.
            rooms = await asyncio.gather(*(first.room_for(code) for code in codes))
            assert all(room is not None for room in rooms)
            # Every table changes at once: the beat's saves, then every table written now.
            for room in rooms:
                assert room is not None and room.saver is not None
                room.saver.changed()
            await one.rooms.flush()
            # Their people are sent to node-2 together: 500 hand-overs at once.
            moved = await asyncio.gather(*(second.room_for(code) for code in codes))
        assert all(room is not None for room in moved)
        assert sorted(second.ownership.held()) == sorted(codes)
        assert first.ownership.held() == []
        assert len(one.rooms) == 0 and len(two.rooms) == TABLES
        refused = [event for event in logged.events if event in FAILURES]
        assert refused == [], refused[:5]
