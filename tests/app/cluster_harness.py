"""A cluster as the tests drive it (deploy/cluster.py): its settings, players whose pages
come back by themselves through nginx, and what the tests read of Redis and the logs."""

from __future__ import annotations

import asyncio
import contextlib
import json
from types import SimpleNamespace
from typing import Any

import httpx
import redis as sync_redis
import socketio
from app_harness import SHORT_COLLECT_SECONDS, Client, deal, settled, table_of, until

from app.tables.table import Table
from deploy.cluster import SCRIPTED, Cluster

LEASE_SECONDS = 3.0  # SLAPJACK_LEASE_SECONDS for these clusters: failover waits this long
NAMES = ("Ann", "Bob", "Cy", "Dot")
# Every cluster test plays its game to the end: with a short pause after each take.
RULES = {"collect_seconds": SHORT_COLLECT_SECONDS}
SETTINGS = {
    **SCRIPTED,
    "SLAPJACK_LEASE_SECONDS": str(LEASE_SECONDS),
    "SLAPJACK_SAVE_SECONDS": "0.5",
    "SLAPJACK_ROOMS_PER_MINUTE": "10000",
}


class Player(Client):
    """A page: connects through `url` with the room in the query, and whenever the server
    closes its connection (a hand-over, a process gone) comes back by itself with its
    token, as the browser's Socket.IO client does on a transport close."""

    def __init__(self, url: str, room: str, name: str, *, come_back: bool = True) -> None:
        super().__init__(SimpleNamespace(url=f"{url}/?room={room}"), room, name)  # type: ignore[arg-type]
        self.come_back = come_back
        self.leaving = False
        self.welcomes = 0
        self.drops = 0
        self.connection_starts = 0  # where this connection's messages begin
        self._fresh_connection()

    def _fresh_connection(self) -> None:
        self.sio = socketio.AsyncClient(reconnection=False)
        self.sio.on("welcome", self._on_welcome)
        self.sio.on("state", lambda data: self._record("state", data))
        self.sio.on("event", lambda data: self._record("event", data))
        self.sio.on("connect_error", self._on_refusal)
        self.sio.on("disconnect", self._on_drop)

    def _on_welcome(self, data: dict[str, Any]) -> None:
        self.welcomes += 1
        self.connection_starts = len(self.messages)
        super()._on_welcome(data)

    def messages_states_before(self, last: dict[str, Any]) -> list[dict[str, Any]]:
        """The states received up to (and with) `last`."""
        states = self.states
        return states[: next(i for i, s in enumerate(states) if s is last) + 1]

    @property
    def state(self) -> dict[str, Any]:
        """The newest state of this connection: after a move the table comes back as of its
        last save, whose versions may be below ones seen before (the page's store does the
        same: a welcome's first state is taken whatever its version)."""
        current = [
            data for kind, data in self.messages[self.connection_starts :] if kind == "state"
        ]
        return max(current or self.states, key=lambda s: s["version"])

    def _on_drop(self, *reason: Any) -> None:
        self.drops += 1
        self.disconnected.set()
        self._news.set()
        if self.come_back and not self.leaving:
            asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        while not self.leaving:
            await asyncio.sleep(0.3)  # the page's first reconnection delay is 200-600 ms
            self._fresh_connection()
            try:
                await self.connect()
                return
            except (socketio.exceptions.ConnectionError, TimeoutError):
                with contextlib.suppress(Exception):
                    await self.sio.disconnect()

    async def close(self) -> None:
        self.leaving = True
        await super().close()


def lease_holder(cluster: Cluster, code: str) -> str | None:
    with sync_redis.Redis(port=cluster.redis_port, decode_responses=True) as redis:
        holder: str | None = redis.hget(f"slapjack:lease:{code}", "node")
        return holder


def stored(cluster: Cluster, code: str) -> dict[str, Any]:
    """The table stored for `code`, as a whole snapshot (a journal's moves played again)."""
    with sync_redis.Redis(port=cluster.redis_port, decode_responses=True) as redis:
        snapshot: dict[str, Any] = json.loads(redis.hget(f"slapjack:table:{code}", "snapshot"))
    return Table.from_dict(snapshot, 0.0).to_dict(0.0)


async def saved(cluster: Cluster, code: str, players: list[Player]) -> None:
    """Once the table as the players last saw it is in Redis (a save is due at most
    SLAPJACK_SAVE_SECONDS after a change)."""
    version = (await settled(players))["version"]

    def has_it() -> bool:
        with sync_redis.Redis(port=cluster.redis_port, decode_responses=True) as redis:
            kept = redis.hexists(f"slapjack:table:{code}", "snapshot")
        return bool(kept) and stored(cluster, code)["version"] >= version

    await until(has_it, f"version {version} saved")


def index_of(node: str | None) -> int:
    assert node is not None and node.startswith("node-"), node
    return int(node.removeprefix("node-")) - 1


def logged(cluster: Cluster, index: int) -> list[dict[str, Any]]:
    lines = (cluster.workdir / f"app-{index + 1}.log").read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


async def metric(url: str, name: str) -> float:
    async with httpx.AsyncClient(base_url=url) as http:
        text = (await http.get("/metrics")).text
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} is not in {url}/metrics")


async def a_game_through_nginx(
    cluster: Cluster, rules: dict[str, Any] = RULES
) -> tuple[str, list[Player]]:
    """A table opened through nginx (any process) with `rules`, four players at it, dealt."""
    async with httpx.AsyncClient(base_url=cluster.url) as http:
        answer = await http.post("/api/rooms", json={"rules": rules})
        assert answer.status_code == 201, answer.text
        code: str = answer.json()["code"]
        # The page and the API work from any process: the table is in Redis.
        for index in range(len(cluster.app_ports)):
            summary = await http.get(f"{cluster.app_url(index)}/api/rooms/{code}")
            assert summary.status_code == 200 and summary.json()["phase"] == "lobby"
            assert (await http.get(f"{cluster.app_url(index)}/r/{code}")).status_code == 200
    players = [await Player(cluster.url, code, name).connect() for name in NAMES]
    await deal(players)
    return code, players


async def back_at_the_table(players: list[Player], before: list[dict[str, Any]]) -> None:
    """Every player reconnected (a new welcome) and sees the table as it was."""
    for player, was in zip(players, before, strict=True):
        await until(lambda p=player, w=was: back(p) and p.state["version"] > w["version"], "back")
        assert table_of(player.state) == table_of(was)


def back(player: Player, welcomes: int = 2) -> bool:
    """Connected again (polled: `connected` changes with no message of its own)."""
    return player.welcomes >= welcomes and player.sio.connected


async def close_all(players: list[Player]) -> None:
    await asyncio.gather(*(player.close() for player in players))


def notices(player: Player, kind: str) -> list[float]:
    """When `kind` notices (`event` messages of their own: paused, resumed) came."""
    return [
        when
        for (name, data), when in zip(player.messages, player.times, strict=True)
        if name == "event" and data.get("kind") == kind
    ]


def versions_only_grow(player: Player) -> None:
    versions = [state["version"] for state in player.states]
    assert versions == sorted(versions), versions
