"""What a change costs on the wire: one message per person, their `state` with
the change's events in it (no separate `event` message), and lag pings only in a room whose
`lag_fair` rule uses them."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from app_harness import (
    WAIT,
    Client,
    Recorder,
    Server,
    close_all,
    join,
    serving,
    turn_until,
    until,
)
from raw_client import RawClient

from app.ops.clock import ManualClock
from app.ops.config import Settings
from app.ops.metrics import Metrics
from app.tables.lag import SETTLED
from app.tables.registry import Rooms
from app.tables.room import Room


async def frames_until(client: RawClient, version: int) -> list[str]:
    """The Socket.IO frames `client` gets up to and with the state of `version` (Engine.IO
    pings answered and left out)."""
    frames: list[str] = []
    while True:
        frame = await client.next()
        assert isinstance(frame, str), frame
        if frame == "2":
            await client.send("3")
            continue
        frames.append(frame)
        if frame.startswith('42["state"') and json.loads(frame[2:])[1]["version"] >= version:
            return frames


def state_of(frame: str) -> dict[str, Any]:
    assert frame.startswith('42["state"'), frame
    data: dict[str, Any] = json.loads(frame[2:])[1]
    return data


async def settled(room: Room, players: list[RawClient]) -> tuple[int, list[list[str]]]:
    """One more change (no events), so that whatever the room sent before has arrived
    once each player holds its state: its version and each player's frames up to it."""
    async with room.lock:
        room._apply([], room.clock.now())
        version = room.version
    return version, [await frames_until(player, version) for player in players]


async def test_a_flip_costs_each_of_four_one_message_and_the_flipper_its_ack(
    server: Server,
) -> None:
    code = await server.new_room()
    players = [await RawClient.open(server) for _ in range(4)]
    for i, player in enumerate(players):
        await player.join(code, f"P{i}")  # the lobby seats each newcomer
    room = server.room(code)
    await players[0].send('420["start",{}]')
    async with asyncio.timeout(WAIT):
        while room.game is None:
            await asyncio.sleep(0.01)
    before_flip, _ = await settled(room, players)
    assert room.game.next_to_play is not None
    flipper = players[room.game.next_to_play]
    await flipper.send('421["flip",{}]')
    flipped = before_flip + 1
    async with asyncio.timeout(WAIT):
        while room.version < flipped:
            await asyncio.sleep(0.01)
    barrier, sent = await settled(room, players)
    assert barrier == flipped + 1
    for player, frames in zip(players, sent, strict=True):
        *caused, last = frames  # what the flip caused, then the barrier's state
        assert state_of(last)["version"] == barrier
        acks = [f for f in caused if f.startswith("431")]
        assert len(acks) == (1 if player is flipper else 0), caused
        states = [f for f in caused if f not in acks]
        assert len(states) == 1, caused  # the state, and no `event` message beside it
        state = state_of(states[0])
        assert state["version"] == flipped
        assert [e["kind"] for e in state["events"]] == ["flip"]
        assert all(e["version"] == flipped for e in state["events"])
        if acks:
            assert json.loads(acks[0][3:])[0]["events"] == state["events"]
    for player in players:
        await player.close()


async def test_a_change_sends_its_events_inside_its_state_and_no_event_message(
    server: Server,
) -> None:
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    bob = await Client(server, code, "Bob").connect()
    await ann.wait_state(lambda s: len(s["events"]) > 0 and s["events"][0]["player"] == bob.player)
    arrived = ann.state
    assert [e["kind"] for e in arrived["events"]] == ["join", "sit"]
    assert {e["version"] for e in arrived["events"]} == {arrived["version"]}
    await ann.ok("add_bot", {"level": "easy"})
    added = await bob.wait_state(lambda s: s["events"] and s["events"][0]["kind"] == "bot")
    assert added["events"][0]["version"] == added["version"]
    async with server.room(code).lock:
        server.room(code)._apply([], time.monotonic())  # a change with no events
    assert (await bob.wait_state(lambda s: s["version"] > added["version"]))["events"] == []
    for client in (ann, bob):
        assert [kind for kind, _ in client.messages if kind == "event"] == []
    await close_all([ann, bob])


async def test_only_a_lag_fair_room_pings() -> None:
    clock = ManualClock()
    async with serving(clock, lag_ping_seconds=2.0) as server:
        plain = await server.new_room()
        fair = await server.new_room(lag_fair=True)
        (quiet,) = await join(server, plain, "Quiet")
        (measured,) = await join(server, fair, "Measured")
        # Until settled (then at triggers only): every other ping time at a quiet table.
        await turn_until(clock, lambda: measured.pings >= SETTLED, "its pings", step=2.0)
        lag = server.room(fair).table.lag
        await until(lambda: lag.samples(measured.player) == SETTLED, "its pongs")
        assert quiet.pings == 0  # the same server, the same time: none for a room without it
        assert server.room(plain).table.lag.samples(quiet.player) == 0
        await close_all([quiet, measured])


async def test_lag_pings_start_and_stop_with_the_rule() -> None:
    clock = ManualClock()
    async with serving(clock, lag_ping_seconds=2.0) as server:
        code = await server.new_room()
        control = await server.new_room(lag_fair=True)
        host = await Client(server, code, "Host").connect()
        (measured,) = await join(server, control, "Measured")
        await host.ok("rules", {"lag_fair": True})
        await clock.advance(0)
        await host.wait_for(lambda: host.pings == 1)  # at once
        await clock.advance(2 * 2.0)  # then every other lag_ping_seconds at a quiet table
        await host.wait_for(lambda: host.pings == 2)  # (tests/app/test_lag_fair.py)
        assert server.room(code).table.lag.samples(host.player) < SETTLED  # still pinged
        await host.ok("rules", {"lag_fair": False})
        stopped = host.pings
        (newcomer,) = await join(server, control, "Newcomer")  # pinged from now until settled
        await turn_until(clock, lambda: newcomer.pings >= SETTLED, "its pings", step=2.0)
        assert host.pings == stopped
        await close_all([host, measured, newcomer])


async def test_a_restored_lag_fair_table_pings_whoever_joins_it() -> None:
    # No false-start judging, which measures round trips too (tests/app/test_false_starts.py).
    settings = Settings(
        allowed_origins=["http://127.0.0.1"], lag_ping_seconds=2.0, false_start_ms=0
    )
    recorder = Recorder()
    clock = ManualClock()
    rooms = Rooms(settings, recorder, clock=clock)
    for lag_fair in (True, False):
        room = rooms.create(lag_fair=lag_fair)
        await room.join("sid-old", "Ann", None)
        saved = room.table.to_dict(clock.now())  # the table as a store keeps it
        room.close()
        restored = Room.from_snapshot(
            saved, settings, recorder, lambda code: None, Metrics(), clock.now(), clock=clock
        )
        assert restored.table.lag_fair is lag_fair
        assert recorder.pings("sid-new") == 0  # nobody here: nobody to measure
        await restored.join("sid-new", "Bo", None)
        if lag_fair:
            await clock.advance(0)
            assert recorder.pings("sid-new") == 1  # at once
            await clock.advance(2 * 2.0)
            assert recorder.pings("sid-new") == 3  # and every lag_ping_seconds
        else:
            control = rooms.create(lag_fair=True)  # another room's pings keep the time
            await control.join("sid-control", "Cy", None)
            await clock.advance(2 * 2.0)
            assert recorder.pings("sid-control") == 3
            assert recorder.pings("sid-new") == 0
            control.close()
        restored.close()
        recorder.sent.clear()
    rooms.close_all()
