"""Faults against a real cluster, measured: for each, the play gap, the moves lost and the
owner changes.

    .venv/bin/python -m bench.faults                         # every fault, 10 s outages
    .venv/bin/python -m bench.faults --outage 30 --faults redis-hung,redis-stopped

Starts deploy/cluster.py's cluster (redis-server with its append-only file, two app
processes, nginx with `hash $arg_room consistent`) and one table of four players who play on
as fast as a quick table does (a move every MOVE_SECONDS), connected through nginx and coming
back by themselves 0.5-1 s after a drop, as the page does. Every step that waits for a
process (a start, a stop) runs off the event loop, so the players' connections go on
meanwhile. Then each fault, on a table in
full play:

- redis-stopped / redis-hung: Redis stopped (SIGTERM, then started again on its append-only
  file) or hung (SIGSTOP, then SIGCONT) for `--outage` seconds;
- redis-stopped-direct: as redis-stopped, and a fifth page reaches the process that does not
  own the table straight at its port the moment Redis is back (a TV, a misrouted request),
  once: the table moves there, and back with the players, whom nginx sends to its owner;
- owner-killed / owner-stopped: the owner SIGKILLed and started again / SIGSTOPped for
  `--outage` seconds, then a page refreshes;

and prints, per fault:
- play gap: the longest time between two moves the server accepted, around the fault (s);
- again: from Redis (or the process) being back to the first move accepted after it (s);
- moves lost: moves the server accepted (an ok ack) that the table does not have any more
  (its version went back below them);
- versions back: the most any page saw the table's version go backwards;
- owner changes: leases taken (`lease_taken` in the processes' logs) during the fault;
- drops: connections the players saw closed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import random
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import socketio

from deploy.cluster import SCRIPTED, Cluster

MOVE_SECONDS = 0.15  # between one player's moves: a quick table
COME_BACK_SECONDS = (0.5, 1.0)  # the page reconnects this long after a drop
SETTINGS = {
    **SCRIPTED,
    "SLAPJACK_LEASE_SECONDS": "3",
    "SLAPJACK_SAVE_SECONDS": "0.5",
    "SLAPJACK_ROOMS_PER_MINUTE": "10000",
}
FAULTS = ("redis-stopped", "redis-hung", "redis-stopped-direct", "owner-killed", "owner-stopped")


@dataclass
class Page:
    """One player's page: connects with `?room=CODE`, comes back by itself after a drop."""

    url: str
    room: str
    name: str
    token: str | None = None
    states: list[tuple[float, int, dict[str, Any]]] = field(default_factory=list)
    accepted: list[tuple[float, int]] = field(default_factory=list)  # (when, version) of ok acks
    refused: list[tuple[float, str]] = field(default_factory=list)
    notices: list[tuple[float, str]] = field(default_factory=list)  # paused / resumed / restart
    drops: int = 0
    come_back: bool = True  # False: a page that is not opened again (a misrouted one)
    leaving: bool = False
    sio: Any = None

    async def connect(self) -> None:
        while not self.leaving:
            self.sio = socketio.AsyncClient(reconnection=False)
            self.sio.on("welcome", self._welcome)
            self.sio.on("state", self._state)
            self.sio.on("event", self._event)
            self.sio.on("disconnect", self._dropped)
            auth = {"room": self.room, "name": self.name}
            if self.token:
                auth["token"] = self.token
            try:
                await self.sio.connect(
                    f"{self.url}/?room={self.room}",
                    auth=auth,
                    transports=["websocket"],
                    wait_timeout=10,
                )
                return
            except (socketio.exceptions.ConnectionError, TimeoutError):
                with contextlib.suppress(Exception):
                    await self.sio.disconnect()
                await asyncio.sleep(random.uniform(*COME_BACK_SECONDS))

    def _welcome(self, data: dict[str, Any]) -> None:
        self.token = data["token"]

    def _state(self, data: dict[str, Any]) -> None:
        self.states.append((time.monotonic(), data["version"], data))

    def _event(self, data: dict[str, Any]) -> None:
        self.notices.append((time.monotonic(), data.get("kind", "")))

    def _dropped(self, *reason: Any) -> None:
        self.drops += 1
        if self.come_back and not self.leaving:
            asyncio.get_running_loop().create_task(self._come_back())

    async def _come_back(self) -> None:
        await asyncio.sleep(random.uniform(*COME_BACK_SECONDS))
        await self.connect()

    @property
    def state(self) -> dict[str, Any] | None:
        return self.states[-1][2] if self.states else None

    async def call(self, event: str, data: Any = None) -> dict[str, Any]:
        try:
            reply: dict[str, Any] = await self.sio.call(event, data or {}, timeout=5)
        except Exception as error:  # not connected, or no answer: the page retries later
            return {"ok": False, "error": {"code": type(error).__name__}}
        now = time.monotonic()
        if reply.get("ok"):
            versions = [e.get("version", 0) for e in reply.get("events", [])]
            self.accepted.append((now, max(versions, default=0)))
        else:
            self.refused.append((now, reply["error"]["code"]))
        return reply

    async def close(self) -> None:
        self.leaving = True
        with contextlib.suppress(Exception):
            await self.sio.disconnect()


async def open_table(cluster: Cluster, names: tuple[str, ...]) -> tuple[str, list[Page]]:
    async with httpx.AsyncClient(base_url=cluster.url) as http:
        answer = await http.post("/api/rooms")
        answer.raise_for_status()
        code: str = answer.json()["code"]
    pages = [Page(cluster.url, code, name) for name in names]
    for page in pages:
        await page.connect()
    for page in pages:
        await page.call("sit", {"seat": None})
    await pages[0].call("start")
    return code, pages


async def play_on(pages: list[Page], stop: asyncio.Event) -> None:
    """The table plays on: the seat to play flips, a trigger is slapped by the first awake
    player, a finished game is followed by a rematch. Refusals are met as a page meets
    them: look again and go on."""
    while not stop.is_set():
        await asyncio.sleep(MOVE_SECONDS)
        states = [p.state for p in pages if p.state is not None and p.sio and p.sio.connected]
        if not states:
            continue
        state = max(states, key=lambda s: s["version"])
        by_seat = {p.state["you"]["seat"]: p for p in pages if p.state and p.state.get("you")}
        if state["phase"] == "over":
            await pages[0].call("rematch")
        elif state["phase"] != "playing":
            continue
        elif state["slap_open"] and not state.get("trigger_lapsed"):
            awake = [s for s in state["seats"] if s and not s["out"] and s["frozen_ms"] == 0]
            if awake and awake[0]["seat"] in by_seat:
                await by_seat[awake[0]["seat"]].call("slap", {"pile_id": state["pile"]["id"]})
        elif state["next"] in by_seat:
            await by_seat[state["next"]].call("flip")


def leases_taken(cluster: Cluster, since: float) -> int:
    """`lease_taken` lines logged since `since` (wall clock) by every app process."""
    count = 0
    for log in cluster.workdir.glob("app-*.log"):
        for line in log.read_text().splitlines():
            if '"lease_taken"' not in line:
                continue
            entry = json.loads(line)
            stamp = time.mktime(time.strptime(entry["ts"][:19], "%Y-%m-%dT%H:%M:%S"))
            if stamp - time.timezone >= since - 1:  # the log's stamps are UTC, to the second
                count += 1
    return count


def measure(pages: list[Page], started: float, ended: float) -> dict[str, Any]:
    """The figures of one fault, from what the pages saw between `started` and `ended`."""
    accepted = sorted(a for p in pages for a in p.accepted if started <= a[0] <= ended)
    times = [when for when, _ in accepted]
    gap = max((b - a for a, b in itertools.pairwise(times)), default=ended - started)
    # A version going backwards: the table came back from an older save. The moves lost are
    # those accepted before that moment numbered at or above the one it came back at (an
    # upper bound: a restored table numbers its own first change, the people it lost).
    back, lowest, first_seen = 0, None, None
    for page in pages:
        seen = 0
        for when, version, _ in page.states:
            if when > ended:
                break
            if when >= started and version < seen:
                back = max(back, seen - version)
                lowest = version if lowest is None else min(lowest, version)
                first_seen = when if first_seen is None else min(first_seen, when)
            seen = max(seen, version)
    lost = 0
    if lowest is not None and first_seen is not None:
        lost = sum(1 for when, version in accepted if when < first_seen and version >= lowest)
    return {"gap": gap, "lost": lost, "back": back, "moves": len(accepted)}


async def run_fault(cluster: Cluster, fault: str, outage: float) -> dict[str, Any]:
    code, pages = await open_table(cluster, ("Ann", "Bob", "Cy", "Dot"))
    stop = asyncio.Event()
    playing = asyncio.create_task(play_on(pages, stop))
    extra: list[Page] = []
    try:
        await asyncio.sleep(3.0)  # in full play, saved a few times over
        owner = owner_index(cluster, code)
        wall, started = time.time(), time.monotonic()
        drops = sum(p.drops for p in pages)
        answering = started
        if fault.startswith("redis-stopped"):
            await asyncio.to_thread(cluster.stop_redis)
            await asyncio.sleep(outage)
            await asyncio.to_thread(cluster.start_redis)
            answering = time.monotonic()
            if fault == "redis-stopped-direct":
                tv = Page(cluster.app_url(1 - owner), code, "TV", come_back=False)
                extra.append(tv)
                await tv.connect()
        elif fault == "redis-hung":
            await asyncio.to_thread(cluster.hang_redis)
            await asyncio.sleep(outage)
            await asyncio.to_thread(cluster.wake_redis)
            answering = time.monotonic()
        elif fault == "owner-killed":
            await asyncio.to_thread(cluster.kill, owner, signal.SIGKILL)
            await asyncio.sleep(outage)
            await asyncio.to_thread(cluster.start_app, owner)
            answering = time.monotonic()
            await pages[0].close()  # a page refreshes
            pages[0] = Page(cluster.url, code, pages[0].name, token=pages[0].token)
            await pages[0].connect()
        elif fault == "owner-stopped":
            await asyncio.to_thread(cluster.kill, owner, signal.SIGSTOP)
            await asyncio.sleep(outage)
            await asyncio.to_thread(cluster.kill, owner, signal.SIGCONT)
            answering = time.monotonic()
            await pages[0].close()
            pages[0] = Page(cluster.url, code, pages[0].name, token=pages[0].token)
            await pages[0].connect()
        await asyncio.sleep(8.0)  # play goes on again; any late move of the table shows
        ended = time.monotonic()
        figures = measure(pages, started - 3.0, ended)
        figures["owner_changes"] = leases_taken(cluster, wall)
        after = [when for p in pages for when, _ in p.accepted if when >= answering]
        figures["resumed"] = min(after, default=float("nan")) - answering
        figures["drops"] = sum(p.drops for p in pages) - drops
        figures["paused_notices"] = sum(
            1 for p in pages for when, kind in p.notices if kind == "paused" and when >= started
        )
        return figures
    finally:
        stop.set()
        playing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await playing
        for page in pages + extra:
            await page.close()


def owner_index(cluster: Cluster, code: str) -> int:
    import redis as sync_redis

    with sync_redis.Redis(port=cluster.redis_port, decode_responses=True) as client:
        node = client.hget(f"slapjack:lease:{code}", "node")
    return int(str(node).removeprefix("node-")) - 1


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outage", type=float, default=10.0, help="seconds (default 10)")
    parser.add_argument("--faults", default=",".join(FAULTS))
    args = parser.parse_args()
    print(f"{'fault':22} {'outage s':>8} {'gap s':>6} {'again s':>7} {'lost':>5} {'back':>5} "
          f"{'owners':>6} {'drops':>5} {'paused':>6} {'moves':>5}")  # fmt: skip
    for fault in args.faults.split(","):
        with Cluster(processes=2, env=SETTINGS, workdir=Path(tempfile.mkdtemp())) as cluster:
            f = await run_fault(cluster, fault, args.outage)
        print(
            f"{fault:22} {args.outage:8.1f} {f['gap']:6.2f} {f['resumed']:7.2f} {f['lost']:5d} "
            f"{f['back']:5d} "
            f"{f['owner_changes']:6d} {f['drops']:5d} {f['paused_notices']:6d} {f['moves']:5d}",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
