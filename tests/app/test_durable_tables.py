"""Durable tables, end to end: `python -m app` with a real store (a SQLite file, a
redis-server), a game in progress with real Socket.IO clients, the process stopped (SIGTERM)
or killed (SIGKILL), started again, every client back with its token, and the game played on
to its end with every card kept.

Real time throughout (marked realtime): a separate process, real signals, a real store.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from app_harness import (
    SHORT_COLLECT_SECONDS,
    START_WAIT,
    Client,
    cards_held,
    close_all,
    deal,
    play,
    play_to_the_end,
    settled,
    table_of,
)

from deploy.cluster import SCRIPTED
from deploy.redis import RedisServer

pytestmark = pytest.mark.realtime

ROOT = Path(__file__).resolve().parents[2]
FREEZE_SECONDS = 10.0  # the longest the protocol allows: the freeze must outlive a restart
SHORT_FREEZE_SECONDS = 1.0
SAVE_SECONDS = 0.5  # SLAPJACK_SAVE_SECONDS's default, named so the SIGKILL bound reads it
# A SIGKILL loses at most SAVE_SECONDS of play; the clients measure it through a loaded
# machine's event loops (theirs and the server's), so they allow this much more.
SCHEDULING_SLACK_SECONDS = 2.0
# Between the old process's end and the new one's start: long enough that a restored freeze
# or turn that counted the downtime would show it.
DOWNTIME_SECONDS = 1.0
SHUTDOWN_BOUND = 30  # drain (2 s) + closing connections (5 s) + exit, generously


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class App:
    """`python -m app` on a fixed loopback port, its JSON log lines in a file."""

    def __init__(self, workdir: Path, store: str) -> None:
        self.workdir, self.port = workdir, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SLAPJACK_HOST": "127.0.0.1",
            "SLAPJACK_PORT": str(self.port),
            "SLAPJACK_STORE": store,
            "SLAPJACK_SAVE_SECONDS": str(SAVE_SECONDS),
            "SLAPJACK_DRAIN_SECONDS": "2",
            "SLAPJACK_SHUTDOWN_SECONDS": "5",
            **SCRIPTED,
        }
        self.runs = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0

    @property
    def log_path(self) -> Path:
        return self.workdir / f"app-{self.runs}.log"

    async def start(self) -> None:
        self.runs += 1
        self.started_at = time.monotonic()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app"],
                cwd=self.workdir,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        async with httpx.AsyncClient(base_url=self.url) as http, asyncio.timeout(START_WAIT):
            while self.process.poll() is None:
                try:
                    if (await http.get("/healthz")).status_code == 200:
                        return
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
        raise AssertionError(f"the server exited at start:\n{self.log_path.read_text()}")

    def signal(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)

    async def exited(self) -> int:
        assert self.process is not None
        code = await asyncio.to_thread(self.process.wait, SHUTDOWN_BOUND)
        return code

    def logged(self, run: int | None = None) -> list[dict[str, Any]]:
        path = self.workdir / f"app-{run or self.runs}.log"
        lines = path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=SHUTDOWN_BOUND)


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/tables.db"  # an absolute path: four slashes in all
        return
    with RedisServer(tmp_path / "redis") as redis:
        yield redis.url


async def a_game_in_play(app: App, freeze_seconds: float) -> tuple[str, list[Client]]:
    """Ann (host), Bob and Cy sit down and deal, `freeze_seconds` for a wrong slap."""
    async with httpx.AsyncClient(base_url=app.url) as http:
        rules = {"freeze_seconds": freeze_seconds, "collect_seconds": SHORT_COLLECT_SECONDS}
        answer = await http.post("/api/rooms", json={"rules": rules})
    code = answer.json()["code"]
    server = SimpleNamespace(url=app.url)
    clients = [await Client(server, code, name).connect() for name in ("Ann", "Bob", "Cy")]
    await deal(clients)
    return code, clients


async def wrong_slap(bob: Client, clients: list[Client]) -> tuple[float, float]:
    """Bob slaps a pile with no trigger showing and is frozen; returns when the slap left
    and when its answer came back (monotonic seconds). A slap just after a take is only
    late (no penalty): then a card is flipped and Bob tries again."""
    for _ in range(10):
        await settled(clients)
        await bob.wait_state(lambda s: s["collect_ms"] == 0)  # a take's collect pause: over
        state = await settled(clients)
        if state["slap_open"] or state["pile"]["count"] == 0:
            await play(clients, 1)  # a trigger is taken, or a first card goes down
            continue
        sent = time.monotonic()
        reply = await bob.call("slap", {"pile_id": state["pile"]["id"]})
        answered = time.monotonic()
        assert reply["ok"], reply
        if any(e["kind"] == "false_slap" for e in reply["events"]):
            return sent, answered
        await play(clients, 1)
    raise AssertionError("Bob never slapped a plain pile")


async def back_with_tokens(app: App, code: str, clients: list[Client]) -> list[Client]:
    server = SimpleNamespace(url=app.url)
    again = []
    for old in clients:
        await old.close()
        again.append(await Client(server, code, old.name, token=old.token).connect())
    return again


def seat_named(state: dict[str, Any], name: str) -> dict[str, Any]:
    seat: dict[str, Any] = next(s for s in state["seats"] if s["name"] == name)
    return seat


async def test_a_deploy_sigterm_then_start_loses_nothing(tmp_path: Path, store: str) -> None:
    app = App(tmp_path, store)
    await app.start()
    try:
        code, clients = await a_game_in_play(app, FREEZE_SECONDS)
        await play(clients, 12)
        bob = clients[1]
        slap_sent, slap_answered = await wrong_slap(bob, clients)
        before = await settled(clients)
        assert seat_named(before, "Bob")["frozen_ms"] > 0
        await asyncio.sleep(1.0)  # a second of the freeze goes by before the stop

        stopped_at = time.monotonic()
        app.signal(signal.SIGTERM)
        for client in clients:
            await client.wait_for(lambda c=client: any(e["kind"] == "restart" for e in c.events))
        told_at = time.monotonic()
        restart = next(e for e in clients[0].events if e["kind"] == "restart")
        assert "version" not in restart and "back in a moment" in restart["message"]
        assert await app.exited() in (0, -signal.SIGTERM)
        drained = [line["event"] for line in app.logged()]
        assert "draining" in drained and "tables_saved" in drained

        await asyncio.sleep(DOWNTIME_SECONDS)
        await app.start()
        again = await back_with_tokens(app, code, clients)
        after = await settled(again)
        # Restored from the store once: at the start, as people came back, or (on Redis,
        # where a process leaves the tables it let go for others a moment) just after.
        restored = [line for line in app.logged() if line["event"] == "room_restored"]
        assert [line["room"] for line in restored] == [code]

        for old, new in zip(clients, again, strict=True):
            assert new.player == old.player and new.token == old.token
            assert table_of(new.state) == table_of(old.state)  # seats, cards, pile, next
            assert new.state["version"] > max(s["version"] for s in old.states)
        # The freeze goes on with the time it had left when the server stopped: no less
        # (the downtime does not count), no more (it does not start again).
        frozen_ms = seat_named(after, "Bob")["frozen_ms"]
        most = (FREEZE_SECONDS - (stopped_at - slap_answered)) * 1000 + 1
        least = (FREEZE_SECONDS - (told_at - slap_sent)) * 1000 - 1
        assert least <= frozen_ms <= most, (least, frozen_ms, most)
        refused = await again[1].call("slap", {"pile_id": after["pile"]["id"]})
        assert not refused["ok"] and refused["error"]["code"] == "frozen"

        await play_to_the_end(again)
        await close_all(again)
    finally:
        app.kill()


async def test_a_crash_sigkill_loses_at_most_the_save_delay(tmp_path: Path, store: str) -> None:
    app = App(tmp_path, store)
    await app.start()
    try:
        # A frozen seat in the table the crash interrupts; the freeze is not what this test
        # looks at, so a short one does not hold up the game afterwards.
        code, clients = await a_game_in_play(app, SHORT_FREEZE_SECONDS)
        await play(clients, 12)
        await wrong_slap(clients[1], clients)
        await play(clients, 4)  # play goes on right up to the crash
        last_seen = await settled(clients)
        killed_at = time.monotonic()
        app.signal(signal.SIGKILL)
        assert await app.exited() == -signal.SIGKILL

        await asyncio.sleep(DOWNTIME_SECONDS)
        await app.start()
        again = await back_with_tokens(app, code, clients)
        after = await settled(again)

        # The table as it was at its last save: one of the states the clients saw, and none
        # they saw more than SAVE_SECONDS (plus scheduling) before the crash is newer.
        # The version moved on from the saved one (everyone's connection dropped).
        states = received(clients[0])
        same = [(s, at) for s, at in states if without_you(s) == without_you(after)]
        assert same, "the restored table is none the clients saw"
        saved, _ = same[-1]
        assert after["version"] > saved["version"]
        lost_since = killed_at - SAVE_SECONDS - SCHEDULING_SLACK_SECONDS
        newer_long_before = [
            s["version"] for s, at in states if s["version"] > saved["version"] and at < lost_since
        ]
        assert not newer_long_before, (saved["version"], newer_long_before)
        assert saved["version"] <= last_seen["version"]
        for old, new in zip(clients, again, strict=True):
            assert new.player == old.player and new.seat == old.seat
        assert cards_held(after) == 52

        await play_to_the_end(again)
        await close_all(again)
    finally:
        app.kill()


def without_you(state: dict[str, Any]) -> dict[str, Any]:
    return table_of(state) | {"you": None}


def received(client: Client) -> list[tuple[dict[str, Any], float]]:
    """Each state the client got, with when it got it (monotonic seconds)."""
    return [
        (state, at)
        for (kind, state), at in zip(client.messages, client.times, strict=True)
        if kind == "state"
    ]
