"""Rough figures for the realtime server over loopback (not a test: no pass or fail).

    .venv/bin/python tests/app/bench_realtime.py

1. ack round trip of `flip`/`slap` for one client in a 2-seat game;
2. fan-out: from a `flip` to the last of 40 people in the room holding that `state` (the 40
   clients share this process with the server, so this is mostly their own decoding), and
   the server's share of it: one commit, 40 `state`s built and queued.
"""

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app_harness import close_all, join, serving


def summary(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[int(len(ms) * 0.95) - 1]
    print(f"{label}: n={len(ms)} median {statistics.median(ms):.2f} ms, p95 {p95:.2f} ms")


async def round_trips(rounds: int) -> None:
    async with serving(rate_per_second=1e6, rate_burst=10**6) as server:
        code = await server.new_room(freeze_seconds=0)
        ann, bob = await join(server, code, "Ann", "Bob")
        await ann.ok("sit", {"seat": 0})
        await bob.ok("sit", {"seat": 1})
        await ann.ok("start")
        by_seat, times = {0: ann, 1: bob}, []
        while len(times) < rounds:
            state = ann.state
            if state["phase"] != "playing":
                await ann.ok("rematch")
                await ann.wait_state(lambda s: s["phase"] == "playing")
                continue
            began = time.perf_counter()
            if state["slap_open"]:
                reply = await ann.call("slap", {"pile_id": state["pile"]["id"]})
            else:
                reply = await by_seat[state["next"]].call("flip", {})
            times.append(time.perf_counter() - began)
            assert reply["ok"], reply
            await ann.wait_state(lambda s, v=state["version"]: s["version"] > v)
        summary("ack round trip (flip/slap)", times)
        await close_all([ann, bob])


async def fan_out(rounds: int, people: int) -> None:
    async with serving(max_people_per_room=people, rate_per_second=1e6, rate_burst=10**6) as server:
        code = await server.new_room()
        clients = await join(server, code, *(f"P{i}" for i in range(people)))
        for client in clients[:8]:
            await client.ok("sit", {"seat": None})
        await clients[0].ok("start")
        room, commits = server.room(code), []
        commit = room._commit

        async def timed_commit(*args: object) -> None:
            began = time.perf_counter()
            await commit(*args)  # type: ignore[arg-type]
            commits.append(time.perf_counter() - began)

        room._commit = timed_commit  # type: ignore[method-assign]
        by_seat, times = {c.seat: c for c in clients[:8]}, []
        while len(times) < rounds and clients[0].state["phase"] == "playing":
            state = clients[0].state
            began = time.perf_counter()
            if state["slap_open"]:
                reply = await clients[0].call("slap", {"pile_id": state["pile"]["id"]})
            else:
                reply = await by_seat[state["next"]].call("flip", {})
            assert reply["ok"], reply
            for client in clients:
                await client.wait_state(lambda s, v=state["version"]: s["version"] > v)
            times.append(time.perf_counter() - began)
        summary(f"fan-out to {people} people (action to last state)", times)
        summary(f"server time to build and queue {people} states + events", commits)
        await close_all(clients)


async def main() -> None:
    await round_trips(400)
    await fan_out(100, 40)


if __name__ == "__main__":
    asyncio.run(main())
