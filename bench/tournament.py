"""An event of 64 players (16 tables of four) on one process: how long from the organiser's
Start until every phone shows its table, and the fan-out while the heats play.

    .venv/bin/python -m bench.tournament                     # 64 players, three runs
    .venv/bin/python -m bench.tournament --players 64 --runs 5 --seconds 20

Starts the app as `python -m app` serves it (bench/serve.py, SQLite in a file of the run's
own) pinned to core 0 with `taskset`, pins itself to core 1, and plays the event over the
real wire protocol with bench/wire.py's cheap clients:

1. the organiser opens the event (POST /api/events, tables of `--size`) and connects with
   its token; `--players` phones join it (`auth.room` the event's code), as from the QR;
2. the organiser sends `event_start`. Each phone, on the `event_state` naming its table
   (`you.table`), leaves the event and connects to that table with the token the event
   knows it by, as the page does (it keeps the token for the table and opens /r/CODE);
   it "shows its table" when that table's first `state` arrives. Printed: the time from
   sending Start to the last phone's table state (and the median phone's), and to the last
   phone's `event_state` naming its table (the event's own fan-out). The page's load of
   /r/CODE is not in it: that is the browser's, the same as for any table;
3. each table deals once its four are there, and they play as bench/load.py's players do
   (a flip 300-500 ms after their turn, a Jack slapped 150-450 ms after it shows, a 1% slip
   on a card that is no Jack). After a warm-up, for `--seconds`: the fan-out (a flip's send
   to the last of the four holding the state it made) and the flip ack's round trip,
   p50/p95/p99/max, the server's CPU (% of one core) and the load average.

Each run is a fresh server and event; the figures of every run are printed, then the median
and the spread (min-max) of each across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.load import HOST, Player, Server, Stats, Table, connect, now, percentiles
from bench.wire import Wire, http

YOU = b'"you":'


class Phone:
    """A player's phone on the event's page: it joins, then, sent to its table, goes."""

    def __init__(self, run: EventRun, index: int) -> None:
        self.run, self.index = run, index
        self.name = f"Player {index}"
        self.token: str | None = None
        self.wire: Wire | None = None
        self.table: str | None = None
        self.sent_at: float | None = None  # when the event_state naming its table came
        self.shown_at: float | None = None  # when its table's first state came

    def on_packet(self, packet: bytes) -> None:
        if packet.startswith(b'2["welcome"'):
            self.token = json.loads(packet[1:])[1]["token"]
        elif packet.startswith(b'2["event_state"') and self.table is None:
            at = packet.rfind(YOU)
            you = json.loads(packet[at + len(YOU) : -2])
            if you["table"] is not None and you["status"] == "playing":
                self.table, self.sent_at = you["table"], now()
                self.run.sent_to_table(self)

    async def join(self, port: int, code: str) -> None:
        loop = asyncio.get_running_loop()

        def protocol() -> Wire:
            wire = Wire(HOST, port, {"room": code, "name": self.name})
            wire.on_packet = self.on_packet
            self.wire = wire
            return wire

        await loop.create_connection(protocol, HOST, port)
        assert self.wire is not None
        await asyncio.wait_for(self.wire.connected, 60)


class Heat(Table):
    """One table of the event, its four players as bench/load.py plays a table (no host:
    the event deals its games)."""

    def __init__(self, code: str, stats: Stats, run: EventRun) -> None:
        super().__init__(code, stats, start=False)
        self.players = []
        self.run = run

    def on_state(self, player: Player, packet: bytes) -> None:
        phone = self.run.phone_of.get(id(player))
        if phone is not None and phone.shown_at is None:
            phone.shown_at = now()
            self.run.shown(phone)
        super().on_state(player, packet)


class EventRun:
    def __init__(self, args: argparse.Namespace, server: Any) -> None:
        """`server`: where the app listens (`port`) and what its CPU is (`cpu_seconds()`)."""
        self.args, self.server = args, server
        self.phones: list[Phone] = []
        self.heats: dict[str, Heat] = {}
        self.phone_of: dict[int, Phone] = {}  # id(Player) -> the phone it is
        self.stats = Stats()
        self.started_at = 0.0
        self.all_shown = asyncio.get_running_loop().create_future()
        self.moving: set[asyncio.Task[None]] = set()

    def core_busy(self) -> float:
        busy = getattr(self.server, "core_busy_seconds", None)
        return busy() if busy is not None else 0.0

    def sent_to_table(self, phone: Phone) -> None:
        task = asyncio.get_running_loop().create_task(self.go_to_table(phone))
        self.moving.add(task)
        task.add_done_callback(self.moving.discard)

    async def go_to_table(self, phone: Phone) -> None:
        assert phone.table is not None and phone.token is not None
        if phone.wire is not None:
            phone.wire.close()  # the page leaves the event for the table
        heat = self.heats.get(phone.table)
        if heat is None:
            heat = self.heats[phone.table] = Heat(phone.table, self.stats, self)
        player = Player(heat, len(heat.players), self.stats)
        heat.players.append(player)
        self.phone_of[id(player)] = phone
        auth = {"room": phone.table, "name": phone.name, "token": phone.token}
        await connect(player, self.server.port, auth)

    def shown(self, phone: Phone) -> None:
        if all(p.shown_at is not None for p in self.phones) and not self.all_shown.done():
            self.all_shown.set_result(None)

    async def play(self) -> dict[str, Any]:
        port, args = self.server.port, self.args
        body = json.dumps({"name": "Bench", "size": args.size}).encode()
        status, opened = await http(HOST, port, "POST", "/api/events", body)
        if status != 201:
            raise RuntimeError(f"POST /api/events answered {status}: {opened}")
        code, token = opened["code"], opened["token"]
        organiser = Player(Table(code, Stats(), start=False), 0, Stats())
        await connect(organiser, port, {"room": code, "name": "Organiser", "token": token})
        self.phones = [Phone(self, i) for i in range(args.players)]
        gate = asyncio.Semaphore(16)

        async def join(phone: Phone) -> None:
            async with gate:
                await phone.join(port, code)

        await asyncio.gather(*(join(p) for p in self.phones))
        await asyncio.sleep(1.0)  # every join's event_state delivered: Start starts quiet
        self.started_at = now()
        answer = await organiser.call(b'["event_start",{}]')
        assert answer["ok"], answer
        await asyncio.wait_for(self.all_shown, 120)
        to_table = [(p.shown_at or 0) - self.started_at for p in self.phones]
        told = [(p.sent_at or 0) - self.started_at for p in self.phones]
        await asyncio.sleep(args.warmup)
        self.stats = fresh = Stats()
        for heat in self.heats.values():
            heat.stats = fresh
            for player in heat.players:
                player.stats = fresh
        cpu_before, busy_before, began = self.server.cpu_seconds(), self.core_busy(), now()
        await asyncio.sleep(args.seconds)
        took = now() - began
        cpu = (self.server.cpu_seconds() - cpu_before) / took * 100
        # The share of the server's core that other processes took: the run's noise.
        others = (self.core_busy() - busy_before) / took * 100 - cpu
        games = sum(h.game for h in self.heats.values())
        for heat in self.heats.values():
            for player in heat.players:
                if player.wire is not None:
                    player.wire.close()
        if organiser.wire is not None:
            organiser.wire.close()
        return {
            "tables": len(self.heats),
            "shown_last_ms": max(to_table) * 1000,
            "shown_median_ms": statistics.median(to_table) * 1000,
            "told_last_ms": max(told) * 1000,
            "fanout": percentiles(fresh.fanouts),
            "flip_ack": percentiles(fresh.flip_acks),
            "flips": len(fresh.fanouts),
            "in_per_s": fresh.inbound / took,
            "out_per_s": fresh.outbound / took,
            "cpu": cpu,
            "others": others,
            "games": games,
            "load": os.getloadavg()[0],
        }


def show(run: int, figures: dict[str, Any]) -> None:
    fan, ack = figures["fanout"], figures["flip_ack"]
    print(
        f"run {run}: {figures['tables']} tables; Start to every table shown "
        f"{figures['shown_last_ms']:.0f} ms (median phone {figures['shown_median_ms']:.0f} ms,"
        f" last told its table {figures['told_last_ms']:.0f} ms); heats: "
        f"{figures['in_per_s']:.0f} in/s {figures['out_per_s']:.0f} out/s, "
        f"CPU {figures['cpu']:.0f}% (others on its core {figures['others']:.0f}%), "
        f"fan-out p50/p95/p99/max "
        f"{fan[0]:.1f}/{fan[1]:.1f}/{fan[2]:.1f}/{fan[3]:.1f} ms over {figures['flips']} "
        f"flips, flip ack p99 {ack[2]:.1f} ms; load average {figures['load']:.1f}",
        flush=True,
    )


def summary(runs: list[dict[str, Any]]) -> None:
    def spread(name: str, values: list[float]) -> str:
        return f"{name} {statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"

    print(
        "median (min-max) of",
        len(runs),
        "runs:",
        spread("Start to every table shown ms", [r["shown_last_ms"] for r in runs]) + ";",
        spread("fan-out p99 ms", [r["fanout"][2] for r in runs]) + ";",
        spread("fan-out p50 ms", [r["fanout"][0] for r in runs]) + ";",
        spread("CPU %", [r["cpu"] for r in runs]) + ";",
        spread("others %", [r["others"] for r in runs]) + ";",
        spread("load average", [r["load"] for r in runs]),
    )


async def main_async(args: argparse.Namespace) -> None:
    runs = []
    log = Path(args.log)
    for number in range(1, args.runs + 1):
        server = Server("app", args.server_core if args.pin else None, log)
        try:
            await server.ready()
            runs.append(await EventRun(args, server).play())
            show(number, runs[-1])
        finally:
            server.stop()
    summary(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=64)
    parser.add_argument("--size", type=int, default=4, help="players a table (3-6)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="heats measured")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--log", default="/tmp/slapjack-bench-tournament.log")
    parser.add_argument("--no-pin", dest="pin", action="store_false", help="no taskset")
    args = parser.parse_args()
    args.server_core = 0
    cores = sorted(os.sched_getaffinity(0))
    if args.pin and len(cores) >= 2:
        args.server_core = cores[0]
        os.sched_setaffinity(0, {cores[1]})  # the generator: the other core
    else:
        args.pin = False
    started = time.monotonic()
    asyncio.run(main_async(args))
    print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
