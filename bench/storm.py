"""How long the server stalls when all its connections go at once: a Wi-Fi blip at a
festival, a router restarting.

    .venv/bin/python -m bench.storm --tables 250,1000
    .venv/bin/python -m bench.storm --tables 1000 --against DIR   # another checkout's app too
    .venv/bin/python -m bench.storm --tables 500,2000 --lists      # the client lists alone

For each step, starts the app (`python -m app` through bench/serve.py, pinned with
`taskset` to the first core, every per-address limit lifted: bench/limits.py), seats
`--tables` tables of four players in their lobbies (raw WebSocket clients, bench/wire.py,
this process on the second core), then closes every player's connection at once. All along,
a probe asks the server for a small static file every 10 ms on a connection of its own.
Prints, per step: the connections dropped, the probe's slowest answer in the second before
the drop and in the `--seconds` from it (how long every table waited: a stalled loop moves
no table), and the server's CPU seconds in those (the probe's own answers take about a
quarter of a second of it a second). Then every player comes back with its token, 128
connecting at a time: how long until all are at their seats again, and the probe's slowest
answer meanwhile. With `--against DIR`, the app as checked out in DIR (`git worktree add
DIR COMMIT`) is measured the same way after each of ours.

With `--lists`, no server: the client lists alone, python-socketio's own and the app's
(app/realtime/clients.py), each given `--tables` tables of four clients, each client in its
table's room as in a cluster, then every client disconnected: the seconds that takes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import tempfile
import time
from pathlib import Path

import socketio

from app.realtime.clients import ClientList
from bench.load import (
    HOST,
    Player,
    Server,
    Stats,
    Table,
    Variant,
    connect,
    hang_up,
    open_all,
    steps,
)
from bench.wire import http

PROBE = "/static/css/base.css"  # served from disk by Starlette: no room is looked at
PROBE_EVERY = 0.01  # seconds
BACK_AT_ONCE = 128  # connections opened at once on the way back (a phone retries by itself)


class Probe:
    """Asks the server for PROBE every PROBE_EVERY seconds: its slowest answer since `reset`
    (a request still unanswered counts for as long as it has waited)."""

    def __init__(self, port: int) -> None:
        self.port, self.slowest, self.failed = port, 0.0, 0
        self._asked: float | None = None  # when the request on its way was sent
        self._task = asyncio.create_task(self._run())

    def reset(self) -> float:
        waiting = 0.0 if self._asked is None else time.perf_counter() - self._asked
        slowest, self.slowest = max(self.slowest, waiting), 0.0
        if self._asked is not None:
            self._asked = time.perf_counter()  # what it waits from here is the next one's
        return slowest

    async def _run(self) -> None:
        while True:
            self._asked = time.perf_counter()
            status, _ = await http(HOST, self.port, "GET", PROBE)
            self.failed += status != 200
            self.slowest = max(self.slowest, time.perf_counter() - self._asked)
            self._asked = None
            await asyncio.sleep(PROBE_EVERY)

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def storm(
    tables: int, seconds: float, core: int | None, log: Path, variant: Variant | None
) -> str:
    server = Server("app", core, log, gc_watch=False, variant=variant)
    try:
        await server.ready()
        seated = [Table("", Stats(), start=False) for _ in range(tables)]
        await open_all(seated, server.port)
        await asyncio.sleep(2)  # the last joins settled
        probe = Probe(server.port)
        await asyncio.sleep(1)
        before, cpu = probe.reset(), server.cpu_seconds()
        hang_up(seated)
        await asyncio.sleep(seconds)
        during, cpu = probe.reset(), server.cpu_seconds() - cpu
        took = await back(seated, server.port)
        returning = probe.reset()
        await probe.stop()
        failed = f", {probe.failed} probes not answered 200" if probe.failed else ""
        return (
            f"{server.label:<12} {4 * tables:>6} connections dropped at once: slowest answer "
            f"{during * 1000:.0f} ms (before the drop {before * 1000:.0f} ms); server CPU "
            f"{cpu:.2f} s in the {seconds:.0f} s from the drop (the probe's answers in it){failed}"
            f"\n{'':<12} {'':>6} all back at their seats in {took:.1f} s "
            f"({BACK_AT_ONCE} at a time), slowest answer meanwhile {returning * 1000:.0f} ms"
        )
    finally:
        server.stop()


async def back(tables: list[Table], port: int) -> float:
    """Every player connects again with its token, BACK_AT_ONCE at a time, and is back at
    its seat (its room's connect answered): the seconds that took."""
    gate = asyncio.Semaphore(BACK_AT_ONCE)

    async def one(table: Table, player: Player) -> None:
        async with gate:
            auth = {"room": table.code, "name": f"P{player.index}", "token": player.token}
            await connect(player, port, auth)

    started = time.perf_counter()
    await asyncio.gather(*(one(table, player) for table in tables for player in table.players))
    took = time.perf_counter() - started
    hang_up(tables)
    return took


async def disconnect_all(manager: socketio.AsyncManager, tables: int) -> float:
    """Seconds `manager` takes to disconnect `tables` tables of four clients, each client in
    its table's room."""
    socketio.AsyncServer(async_mode="asgi", client_manager=manager)
    sids = []
    for number in range(4 * tables):
        sid = await manager.pre_connect(f"eio{number}", "/")
        await manager.connect(sid, "/")
        await manager.enter_room(sid, "/", f"T{number // 4}")
        sids.append(sid)
    started = time.perf_counter()
    for sid in sids:
        await manager.disconnect(sid, "/")
    return time.perf_counter() - started


async def lists(tables: int) -> str:
    theirs = await disconnect_all(socketio.AsyncManager(), tables)
    ours = await disconnect_all(ClientList(), tables)
    return (
        f"{4 * tables:>6} clients at {tables} tables, every one disconnected: "
        f"python-socketio's list {theirs:.3f} s, the app's {ours:.3f} s"
    )


async def run(args: argparse.Namespace) -> None:
    if args.lists:
        for tables in args.tables:
            print(await lists(tables), flush=True)
        return
    log = Path(tempfile.gettempdir()) / "slapjack-storm.log"
    against = Path(args.against).resolve() if args.against else None
    for tables in args.tables:
        print(await storm(tables, args.seconds, args.core, log, None), flush=True)
        if against is not None:
            other = Variant(f"app@{against.name}", root=against)
            print(await storm(tables, args.seconds, args.core, log, other), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=steps, default=steps("250,1000"))
    parser.add_argument("--seconds", type=float, default=8.0, help="measured from the drop")
    parser.add_argument("--against", default="", metavar="DIR")
    parser.add_argument("--lists", action="store_true", help="the client lists alone, no server")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    args.core = cores[0] if len(cores) >= 2 else None
    if args.core is not None:
        os.sched_setaffinity(0, {cores[1]})  # the server is on the first core
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"load average {os.getloadavg()[0]:.1f} (other work on the machine skews every figure)")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
