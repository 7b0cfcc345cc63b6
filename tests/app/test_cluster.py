"""A cluster for real (deploy/cluster.py): redis-server, two `python -m app` processes and
nginx in front routing each room to one process (`hash $arg_room consistent`), with
Socket.IO clients that behave like the page: they connect with `?room=CODE` and come back by
themselves, with their token, whenever their connection closes.

A game played to its end through nginx; a table handed over when a connection reaches the
other process; a killed owner's tables taken over once the lease runs out; and a paused
owner fenced off: it cannot overwrite the new owner's table, and its connections are sent
away.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import redis as sync_redis
import socketio
import yaml
from app_harness import (
    Client,
    cards_held,
    deal,
    play,
    play_to_the_end,
    settled,
    table_of,
    until,
)

from app.tables.table import Table
from deploy.cluster import ROOT, Cluster

pytestmark = pytest.mark.cluster

LEASE_SECONDS = 3.0  # SLAPJACK_LEASE_SECONDS for these clusters: failover waits this long
NAMES = ("Ann", "Bob", "Cy", "Dot")
SETTINGS = {
    "SLAPJACK_LEASE_SECONDS": str(LEASE_SECONDS),
    "SLAPJACK_SAVE_SECONDS": "0.5",
    # Nobody's seat is flipped for them while the test looks at it.
    "SLAPJACK_IDLE_AUTOFLIP_SECONDS": "600",
    "SLAPJACK_DISCONNECTED_AUTOFLIP_SECONDS": "600",
    "SLAPJACK_HOST_HANDOVER_SECONDS": "600",
    "SLAPJACK_RATE_PER_SECOND": "10000",
    "SLAPJACK_RATE_BURST": "10000",
    "SLAPJACK_CONNECTS_PER_MINUTE": "100000",
    "SLAPJACK_ROOMS_PER_MINUTE": "10000",
    "SLAPJACK_LOG_LEVEL": "info",
}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with Cluster(processes=2, env=SETTINGS, workdir=tmp_path) as running:
        yield running


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


async def a_game_through_nginx(cluster: Cluster) -> tuple[str, list[Player]]:
    """A table opened through nginx (any process) and four players at it, dealt."""
    async with httpx.AsyncClient(base_url=cluster.url) as http:
        answer = await http.post("/api/rooms")
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


async def test_a_game_through_nginx_is_judged_by_one_process_to_its_end(cluster: Cluster) -> None:
    code, players = await a_game_through_nginx(cluster)
    owner = index_of(lease_holder(cluster, code))
    other = 1 - owner
    # Every connection of the room landed on its owner; the other process has no table open.
    assert await metric(cluster.app_url(owner), "slapjack_connected_players") == 4
    assert await metric(cluster.app_url(owner), "slapjack_tables_owned") == 1
    assert await metric(cluster.app_url(owner), "slapjack_restores_total") == 1
    assert await metric(cluster.app_url(other), "slapjack_rooms") == 0
    assert await metric(cluster.app_url(other), "slapjack_tables_owned") == 0

    await play_to_the_end(players, 180)
    assert all(player.welcomes == 1 for player in players)  # nobody was moved
    await close_all(players)


async def test_a_connection_at_the_other_process_moves_the_table_there(
    cluster: Cluster,
) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 10)
    await settled(players)
    before = [player.state for player in players]
    owner = index_of(lease_holder(cluster, code))
    other = 1 - owner

    # Someone reaches the other process directly (not through the router): the table moves.
    started = time.monotonic()
    newcomer = Player(cluster.app_url(other), code, "Eve", come_back=False)
    await newcomer.connect()
    assert index_of(lease_holder(cluster, code)) == other
    seen = table_of(newcomer.state)
    assert seen["seats"] == table_of(before[0])["seats"]  # the same cards, at the new owner
    assert seen["pile"] == before[0]["pile"]
    assert await metric(cluster.app_url(owner), "slapjack_hand_overs_total") == 1

    # Its players were sent away and are back, same seats, same cards, within 3 s. They
    # came through nginx, which routes the room to its first process: the table followed.
    await back_at_the_table(players, before)
    back_after = time.monotonic() - started
    assert back_after < 3.0, back_after
    assert index_of(lease_holder(cluster, code)) == owner
    assert await metric(cluster.app_url(other), "slapjack_hand_overs_total") == 1
    await newcomer.close()

    await play_to_the_end(players, 180)
    await close_all(players)


async def test_a_killed_owners_table_carries_on_at_the_other_process(cluster: Cluster) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 10)
    await asyncio.sleep(1.0)  # past SLAPJACK_SAVE_SECONDS: the sitting and the deal are saved
    await play(players, 4)  # and play goes on right up to the kill
    before = await settled(players)
    seats = [player.seat for player in players]
    owner = index_of(lease_holder(cluster, code))

    killed_at = time.monotonic()
    cluster.kill(owner, signal.SIGKILL)
    for player in players:
        await until(lambda p=player: back(p), f"{player.name} back")  # type: ignore[misc]
    back_after = time.monotonic() - killed_at
    assert back_after < LEASE_SECONDS + 3.0, back_after
    assert index_of(lease_holder(cluster, code)) == 1 - owner
    after = await settled(players)
    assert [player.seat for player in players] == seats
    assert cards_held(after) == 52
    # The table as of its last save (at most SLAPJACK_SAVE_SECONDS of play lost): cards as
    # the players saw them at some moment before the kill.
    seen = [table_of(s)["seats"] for s in players[0].messages_states_before(before)]
    assert table_of(after)["seats"] in seen

    await play_to_the_end(players, 180)
    await close_all(players)


async def test_a_paused_owner_cannot_overwrite_the_new_owners_table(cluster: Cluster) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 6)
    await settled(players)
    await asyncio.sleep(1.0)  # past SLAPJACK_SAVE_SECONDS: the game so far is saved
    owner = index_of(lease_holder(cluster, code))
    other = 1 - owner

    # A move, then the owner stops (a long GC, a VM paused) with that change maybe unsaved.
    await play(players, 1)
    cluster.kill(owner, signal.SIGSTOP)
    try:
        # Someone reaches the other process: the owner does not answer, its lease runs out,
        # and the other process takes the table from its last save.
        newcomer = Player(cluster.app_url(other), code, "Eve", come_back=False)
        await newcomer.connect()
        assert index_of(lease_holder(cluster, code)) == other
        await until(
            lambda: any(p["name"] == "Eve" for p in stored(cluster, code)["people"]),
            "the new owner's save of Eve's arrival",
        )
        newest = stored(cluster, code)["version"]
        drops = [player.drops for player in players]
    finally:
        cluster.kill(owner, signal.SIGCONT)

    # The old owner never writes its stale table over the new owner's: the stored version
    # only grows (every save of a table that moved carries a newer one)...
    async def stored_versions() -> None:
        nonlocal newest
        while True:
            version = stored(cluster, code)["version"]
            assert version >= newest, (version, newest)
            newest = version
            await asyncio.sleep(0.02)

    watching = asyncio.create_task(stored_versions())
    try:
        # ...it finds out it lost the table and sends its connections away...
        for player, dropped in zip(players, drops, strict=True):
            await until(lambda p=player, d=dropped: p.drops > d, "sent away")  # type: ignore[misc]
        events = [line["event"] for line in logged(cluster, owner)]
        assert "lease_lost" in events, events
        # ...and they come back through nginx, which moves the table back from the new
        # owner's save (Eve, sent away in turn, is gone from it by then).
        before = [player.state for player in players]
        for player in players:
            await until(lambda p=player: back(p), f"{player.name} back")  # type: ignore[misc]
        await asyncio.sleep(1.0)  # a stale save would have landed by now
        assert not watching.done()
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
    after = await settled(players)
    assert cards_held(after) == 52
    assert [table_of(p.state)["you"] for p in players] == [table_of(s)["you"] for s in before]
    await newcomer.close()

    await play_to_the_end(players, 180)
    await close_all(players)


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


@pytest.mark.parametrize("outage", ["stopped", "hung"])
async def test_a_redis_outage_is_a_pause_that_loses_nothing(cluster: Cluster, outage: str) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 8)
    before = await settled(players)
    owner = index_of(lease_holder(cluster, code))

    if outage == "stopped":
        await asyncio.to_thread(cluster.stop_redis)
    else:
        cluster.hang_redis()
    try:
        # Past the lease: the table pauses, everyone is told and stays connected...
        for player in players:
            await until(lambda p=player: notices(p, "paused"), f"{player.name} told")  # type: ignore[misc]
        mover = next(p for p in players if p.seat == before["next"])
        refused = await mover.call("flip", {})
        assert not refused["ok"] and refused["error"]["code"] == "paused", refused
        await asyncio.sleep(LEASE_SECONDS)  # paused, well past a lease, with Redis away
    finally:
        if outage == "stopped":
            await asyncio.to_thread(cluster.start_redis)
        else:
            cluster.wake_redis()
    answering = time.monotonic()
    for player in players:
        await until(lambda p=player: notices(p, "resumed"), f"{player.name} told it goes on")  # type: ignore[misc]
    resumed_after = max(notices(p, "resumed")[-1] for p in players) - answering
    assert resumed_after < 2.0, resumed_after  # the promise: within 2 s of Redis answering
    # ...nobody was dropped, the table is the one they left, judged by the same process.
    assert all(player.drops == 0 and player.welcomes == 1 for player in players)
    assert index_of(lease_holder(cluster, code)) == owner
    for player in players:  # every card where it was
        assert table_of(player.state)["seats"] == table_of(before)["seats"]
        assert player.state["pile"] == before["pile"]
    await play(players, 4)
    after = await settled(players)
    assert after["version"] > before["version"]
    for player in players:
        versions_only_grow(player)
    await play_to_the_end(players, 180)
    events = [line["event"] for line in logged(cluster, owner)]
    assert "lease_lost" not in events and "table_left" not in events
    await close_all(players)


async def test_after_an_outage_a_page_at_the_other_process_never_rolls_the_table_back(
    cluster: Cluster,
) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 6)
    await asyncio.sleep(1.0)  # the game so far is saved
    owner = index_of(lease_holder(cluster, code))
    await asyncio.to_thread(cluster.stop_redis)
    # Play goes on from memory (unsaved now) until the table pauses.
    accepted: list[int] = []
    while not notices(players[0], "paused"):
        state = await settled(players)
        by_seat = {p.seat: p for p in players}
        if state["slap_open"]:
            awake = [s for s in state["seats"] if not s["out"] and s["frozen_ms"] == 0]
            answer = await by_seat[awake[0]["seat"]].call("slap", {"pile_id": state["pile"]["id"]})
        else:
            answer = await by_seat[state["next"]].call("flip", {})
        if answer["ok"]:
            accepted.append(max(event["version"] for event in answer["events"]))
        await asyncio.sleep(0.05)
    assert accepted, "no move was made during the outage"
    newest = await settled(players)
    await asyncio.sleep(2.0)
    await asyncio.to_thread(cluster.start_redis)
    # A page (a TV, a misrouted request) reaches the other process the moment Redis is back.
    newcomer = Player(cluster.app_url(1 - owner), code, "Eve", come_back=False)
    with contextlib.suppress(Exception):
        await newcomer.connect()
    await asyncio.sleep(2.0)
    after = await settled(players)
    # Every move accepted during the outage is still there, and nobody ever saw the table's
    # version go backwards.
    assert after["version"] >= max(accepted) and after["version"] >= newest["version"]
    assert stored(cluster, code)["version"] >= newest["version"]
    for player in players:
        versions_only_grow(player)
    assert cards_held(after) == 52
    await newcomer.close()
    await play_to_the_end(players, 180)
    await close_all(players)


def leases_taken_since(cluster: Cluster, index: int, lines_before: int) -> int:
    return sum(
        1 for line in logged(cluster, index)[lines_before:] if line["event"] == "lease_taken"
    )


async def test_an_owner_that_dies_and_comes_back_moves_its_table_once_each_way(
    cluster: Cluster,
) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 6)
    await asyncio.sleep(1.0)  # saved
    owner = index_of(lease_holder(cluster, code))
    other = 1 - owner
    seen = [len(logged(cluster, index)) for index in (0, 1)]

    cluster.kill(owner, signal.SIGKILL)
    for player in players:
        await until(lambda p=player: back(p), f"{player.name} back")  # type: ignore[misc]
    assert index_of(lease_holder(cluster, code)) == other
    await asyncio.to_thread(cluster.start_app, owner)
    # One page refreshes: nginx sends it to the process that is back, and the table follows.
    refreshed = Player(cluster.url, code, players[0].name)
    refreshed.token = players[0].token
    await players[0].close()
    await refreshed.connect()
    players[0] = refreshed
    await until(lambda: lease_holder(cluster, code) == f"node-{owner + 1}", "the table back")
    for player in players[1:]:
        await until(lambda p=player: back(p, 3), f"{player.name} back again")  # type: ignore[misc]
    await asyncio.sleep(3.0)  # any further move would show by now
    # Taken by the other process when the owner died, taken back once when it returned.
    assert leases_taken_since(cluster, other, seen[other]) == 1
    assert leases_taken_since(cluster, owner, seen[owner]) == 1  # its log goes on after a restart
    assert all(player.drops <= 2 for player in players[1:]), [p.drops for p in players]
    after = await settled(players)
    assert cards_held(after) == 52
    await play_to_the_end(players, 180)
    await close_all(players)


async def test_stopping_the_cluster_saves_every_table_before_redis_stops(
    cluster: Cluster,
) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 6)
    last = await settled(players)
    owner = index_of(lease_holder(cluster, code))
    await close_all(players)
    await asyncio.to_thread(cluster.stop)  # the apps first, then nginx and Redis
    events = [line["event"] for line in logged(cluster, owner)]
    assert "tables_saved" in events and "tables_not_saved" not in events, events
    await asyncio.to_thread(cluster.start_redis)  # its append-only file read back
    try:
        assert stored(cluster, code)["version"] >= last["version"]
    finally:
        await asyncio.to_thread(cluster.stop_redis)


def test_compose_stops_the_apps_before_redis() -> None:
    # Compose stops a service's dependants before the service: every app depends on Redis
    # (started once it answers), so each writes its tables while Redis is still there.
    compose = yaml.safe_load((ROOT / "deploy" / "compose.cluster.yaml").read_text())
    apps = [name for name in compose["services"] if name.startswith("app")]
    assert apps
    for name in apps:
        depends = compose["services"][name]["depends_on"]
        assert depends["redis"]["condition"] == "service_healthy", depends
    assert "healthcheck" in compose["services"]["redis"]
