"""Rough figures for the realtime server over loopback (not a test: no pass or fail).

    .venv/bin/python -m bench.realtime

1. ack round trip of `flip`/`slap` for one client in a 2-seat game;
2. fan-out: from a `flip` to the last of 40 people in the room holding that `state` (the 40
   clients share this process with the server, so this is mostly their own decoding), and
   the server's share of it: one commit, 40 `state`s built and queued;
3. the room alone, no network: a change seen by 40 people, their states built and encoded
   as JSON, with a transport that only encodes.

Every table here lets a pile's winner flip again at once (collect_seconds 0): the loops
act as fast as the server answers, and the collect pause would refuse their next flip.
"""

import asyncio
import json
import statistics
import time

from app.ops.config import Settings
from app.tables.registry import Rooms
from app.wire import protocol
from app.wire.encoded import Encoded
from bench.harness import close_all, join, serving
from engine import Rules


def summary(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[int(len(ms) * 0.95) - 1]
    print(f"{label}: n={len(ms)} median {statistics.median(ms):.2f} ms, p95 {p95:.2f} ms")


async def round_trips(rounds: int) -> None:
    async with serving(rate_per_second=1e6, rate_burst=10**6) as server:
        code = await server.new_room(freeze_seconds=0, collect_seconds=0)
        ann, bob = await join(server, code, "Ann", "Bob")
        await ann.ok("sit", {"seat": 0})
        await bob.ok("sit", {"seat": 1})
        await ann.ok("start")
        by_seat = {0: ann, 1: bob}
        times: list[float] = []
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
        code = await server.new_room(collect_seconds=0)
        clients = await join(server, code, *(f"P{i}" for i in range(people)))
        for client in clients[:8]:
            await client.ok("sit", {"seat": None})
        await clients[0].ok("start")
        room, commits = server.room(code), []
        commit = room._commit

        def timed_commit(*args: object) -> None:
            began = time.perf_counter()
            commit(*args)
            commits.append(time.perf_counter() - began)

        room._commit = timed_commit
        by_seat = {c.seat: c for c in clients[:8]}
        times: list[float] = []
        while len(times) < rounds and clients[0].state["phase"] == "playing":
            state = clients[0].state
            began = time.perf_counter()
            if state["slap_open"]:
                slapper = next(s["seat"] for s in state["seats"] if not s["out"])
                reply = await by_seat[slapper].call("slap", {"pile_id": state["pile"]["id"]})
            else:
                reply = await by_seat[state["next"]].call("flip", {})
            assert reply["ok"], reply
            for client in clients:
                await client.wait_state(lambda s, v=state["version"]: s["version"] > v)
            times.append(time.perf_counter() - began)
        summary(f"fan-out to {people} people (action to last state)", times)
        summary(f"server time to build and queue {people} states + events", commits)
        await close_all(clients)


class EncodeOnly:
    async def emit(self, event: str, data: object = None, to: str | None = None) -> None:
        json.dumps(data)

    async def enter_room(self, sid: str, room: str) -> None:
        pass

    def send(self, message: Encoded, to: str) -> None:
        message.text.encode()  # the bytes a websocket writes (its text is built already)


async def room_alone(people: int) -> None:
    settings = Settings(allowed_origins=["http://127.0.0.1"], max_people_per_room=people)
    rooms = Rooms(settings, EncodeOnly())
    room = rooms.create(Rules(collect_seconds=0))
    for i in range(people):
        await room.join(f"s{i}", f"P{i}", None)
    for i in range(8):
        await room.act(f"s{i}", "sit", protocol.Sit(seat=i), time.monotonic())
    await room.act("s0", "start", protocol.Start(), time.monotonic())
    times = []
    while room.game is not None and not room.game.over:
        game, now = room.game, time.monotonic()
        began = time.perf_counter()
        if game.slap_open:
            slapper = next(seat for seat in range(game.players) if not game.is_out(seat))
            await room.act(f"s{slapper}", "slap", protocol.Slap(pile_id=game.pile_id), now)
        else:
            await room.act(f"s{game.next_to_play}", "flip", protocol.Flip(), now)
        times.append(time.perf_counter() - began)
    summary(f"room alone: one change seen by {people} people, states built and encoded", times)
    rooms.close_all()


async def main() -> None:
    await round_trips(400)
    await fan_out(100, 40)
    await room_alone(40)


if __name__ == "__main__":
    asyncio.run(main())
