"""What saving tables costs the server: its CPU under the same game load with SLAPJACK_STORE
`memory` (no writes) and a SQLite file (not a test: no pass or fail).

    .venv/bin/python -m bench.saving [--rooms 30] [--people 4] [--pace 0.35]

`python -m app` runs in its own process; this one plays: in each room 4 seated players and
the rest watching, a flip or slap every `--pace` seconds per room (0.35 s: about the human
pace of the fan-out benchmark, bench/load.py), a rematch when a game ends. The server's CPU
time (user + system, every thread: the SQLite writer's too) is read from /proc over the same
wall-clock window for each store, the stores alternating `--rounds` times to even out the
machine's other load; the medians are compared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx

from app.stores.memory import MemoryStore
from app.stores.saver import Saver
from app.stores.sqlite import SqliteStore
from app.tables.registry import SAVE_BEATS
from app.tables.table import Table
from bench.harness import Client, close_all
from bench.limits import LIFTED_LIMITS

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")
BEAT = 0.5 / SAVE_BEATS  # the server's beats at its default SLAPJACK_SAVE_SECONDS


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and all its threads so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


async def start_server(store: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(port),
        "SLAPJACK_STORE": store,
        "SLAPJACK_LOG_LEVEL": "warning",
        "SLAPJACK_RATE_PER_SECOND": "10000",
        "SLAPJACK_RATE_BURST": "10000",
        **LIFTED_LIMITS,
        "SLAPJACK_IDLE_AUTOFLIP_SECONDS": "600",
    }
    process = subprocess.Popen([sys.executable, "-m", "app"], cwd=workdir, env=env)
    url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=url) as http:
        for _ in range(400):
            try:
                if (await http.get("/healthz")).status_code == 200:
                    return process, url
            except httpx.TransportError:
                await asyncio.sleep(0.05)
    raise RuntimeError("the server did not start")


async def a_room(url: str, people: int) -> list[Client]:
    async with httpx.AsyncClient(base_url=url) as http:
        code = (await http.post("/api/rooms", json={"rules": {"freeze_seconds": 0}})).json()["code"]
    server = SimpleNamespace(url=url)
    clients = [await Client(server, code, f"P{i}").connect() for i in range(people)]
    for client in clients[:4]:
        await client.ok("sit", {"seat": None})
    await clients[0].ok("start")
    await clients[0].wait_state(lambda s: s["phase"] == "playing")
    return clients


async def play(clients: list[Client], pace: float, until: float) -> int:
    """Plays the room at `pace` seconds per action until `until`; returns the actions."""
    host, actions = clients[0], 0
    by_seat = {c.seat: c for c in clients[:4]}
    next_at = time.monotonic()
    while time.monotonic() < until:
        state = host.state
        if state["phase"] == "over":
            reply = await host.call("rematch", {})
        elif state["slap_open"]:
            seat = next(s["seat"] for s in state["seats"] if not s["out"])
            reply = await by_seat[seat].call("slap", {"pile_id": state["pile"]["id"]})
        elif state["next"] is not None:
            reply = await by_seat[state["next"]].call("flip", {})
        else:
            reply = {"ok": False}
        if reply["ok"]:
            actions += 1
            version = max((e.get("version", 0) for e in reply.get("events", [])), default=0)
            await host.wait_state(lambda s, v=version: s["version"] >= v)
        next_at += pace  # on a fixed clock: the same load whatever the round trip
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    return actions


async def measure(store: str, args: argparse.Namespace, workdir: Path) -> tuple[float, int]:
    """The server's CPU seconds per wall second under the load, and the actions played."""
    process, url = await start_server(store, workdir)
    try:
        rooms = [await a_room(url, args.people) for _ in range(args.rooms)]
        warm = time.monotonic() + 2.0  # every room playing before the window opens
        await asyncio.gather(*(play(r, args.pace, warm) for r in rooms))
        began, cpu_before = time.monotonic(), cpu_seconds(process.pid)
        until = began + args.seconds
        actions = sum(await asyncio.gather(*(play(r, args.pace, until) for r in rooms)))
        cpu = cpu_seconds(process.pid) - cpu_before
        wall = time.monotonic() - began
        for clients in rooms:
            await close_all(clients)
        return cpu / wall, actions
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def snapshot_now(table: Table) -> dict[str, Any]:
    """What a room hands its saver: the table as of now."""
    return table.to_dict(time.monotonic())


def a_table_in_play(code: str) -> Table:
    """A 4-player table 30 moves into a game, as the rooms above would hold."""
    table = Table(code)
    for i in range(4):
        joined = table.join(f"P{i}", None, 0.0)
        table.sit(joined.person.id, None, 0.0)
    assert table.host is not None
    table.start(table.host, 0.0, seed=7)
    now = 0.0
    for _ in range(30):
        game = table.game
        assert game is not None
        now += 1.1  # past the collect pause (1 s by default) after a take
        if game.slap_open:
            seat = next(s for s in range(game.players) if not game.is_out(s))
            table.play(seat, "slap", game.pile_id, now)
        elif game.next_to_play is not None:
            table.play(game.next_to_play, "flip", None, now)
    return table


async def saving_alone(args: argparse.Namespace, workdir: Path) -> float:
    """The CPU seconds per wall second that saving `--rooms` tables costs, each changed every
    `--pace` seconds, in this process alone (snapshots, encoding, the SQLite thread): the
    same Savers and store the server runs, without the game around them (`--alone-store
    memory`: the same without SQLite's own work, to tell the two apart)."""
    store = MemoryStore() if args.alone_store == "memory" else SqliteStore(workdir / "alone.db")
    await store.open()
    tables = [a_table_in_play(f"ROOM{i:02d}") for i in range(args.rooms)]
    savers = [Saver(store, t.code, partial(snapshot_now, t), delay=0.5, beat=BEAT) for t in tables]

    async def changes(changed: Callable[[], None], until: float) -> None:
        await asyncio.sleep(random.uniform(0, args.pace))
        while time.monotonic() < until:
            changed()
            await asyncio.sleep(args.pace)

    async def share(changed: list[Callable[[], None]]) -> float:
        began, cpu_before = time.monotonic(), time.process_time()
        until = began + args.seconds
        await asyncio.gather(*(changes(c, until) for c in changed))
        await asyncio.gather(*(saver.flush() for saver in savers))
        return (time.process_time() - cpu_before) / (time.monotonic() - began)

    idle = await share([lambda: None] * len(savers))  # the changes' own loop, nothing saved
    saving = await share([saver.changed for saver in savers]) - idle
    writes = sum(saver.saves for saver in savers) / args.seconds
    await store.close()
    print(
        f"saving alone: {writes:.0f} writes/s cost {saving * 100:.2f}% of a core "
        f"({saving / writes * 1000:.3f} ms each: snapshot, JSON, "
        f"the {args.alone_store} store, the Saver)"
    )
    return saving


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=30)
    parser.add_argument("--people", type=int, default=4)
    parser.add_argument("--pace", type=float, default=0.35, help="seconds between actions")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--alone", action="store_true", help="only the saving, in-process")
    parser.add_argument("--alone-store", choices=("sqlite", "memory"), default="sqlite")
    args = parser.parse_args()
    if args.alone:
        with tempfile.TemporaryDirectory() as scratch:
            await saving_alone(args, Path(scratch))
        return
    results: dict[str, list[tuple[float, int]]] = {"memory": [], "sqlite": []}
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        for _ in range(args.rounds):
            for kind in ("memory", "sqlite"):
                store = "memory" if kind == "memory" else f"sqlite:///{workdir}/tables.db"
                results[kind].append(await measure(store, args, workdir))
                share, actions = results[kind][-1]
                rate = actions / args.seconds
                print(f"{kind:7} server CPU {share * 100:5.1f}% of a core, {rate:.0f} actions/s")
    memory = statistics.median(s for s, _ in results["memory"])
    sqlite = statistics.median(s for s, _ in results["sqlite"])
    print(
        f"{args.rooms} rooms x {args.people} people, an action every {args.pace}s per room: "
        f"server CPU (median) memory {memory * 100:.1f}%, sqlite {sqlite * 100:.1f}% of a core; "
        f"sqlite/memory = {sqlite / memory:.3f} (saving costs {(sqlite / memory - 1) * 100:+.1f}%)"
    )


if __name__ == "__main__":
    asyncio.run(main())
