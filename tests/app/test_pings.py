"""One sweep pings every websocket (app/realtime/pings.py): each ping when it is due, in
order, one at a time per connection, and a connection whose pong is late told of, on the
monotonic clock whatever the wall clock does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import httpx
import pytest
from app_harness import QUICK_POLLS, WAIT, serving, until
from raw_client import RawClient
from websockets.exceptions import ConnectionClosed

from app.realtime import pings as pings_module
from app.realtime.pings import Pinged, PingSweep


class Connection(Pinged):
    def __init__(self, sid: str) -> None:
        self.sid = sid


class Recorded:
    """A sweep whose pings and late answers are recorded instead of sent."""

    def __init__(self, interval: float = 10, timeout: float = 5) -> None:
        self.pinged: list[str] = []
        self.late: list[str] = []
        self.sweep = PingSweep(
            interval,
            timeout,
            self.pinged.append,
            lambda connection: self.late.append(connection.sid),
        )


async def test_each_ping_goes_out_when_it_is_due_in_order() -> None:
    recorded = Recorded()
    first, second = Connection("first"), Connection("second")
    start = time.monotonic()
    recorded.sweep.watch(first)
    recorded.sweep.watch(second)
    recorded.sweep.sweep(start + 1)  # nothing due yet
    assert recorded.pinged == []
    recorded.sweep.sweep(start + 10.5)
    assert recorded.pinged == ["first", "second"]
    recorded.sweep.sweep(start + 15.4)  # pinged, their pongs not late yet
    assert recorded.late == [] and recorded.pinged == ["first", "second"]


async def test_a_late_pong_is_told_and_an_answered_ping_is_not() -> None:
    recorded = Recorded()
    answers, silent = Connection("answers"), Connection("silent")
    recorded.sweep.watch(answers)
    recorded.sweep.watch(silent)
    pinged = time.monotonic() + 10.5
    recorded.sweep.sweep(pinged)
    recorded.sweep.answered(answers)  # its pong: its next ping ping_interval after it
    recorded.sweep.sweep(pinged + 5)  # the pongs' deadline (and the answered one's next ping)
    assert recorded.late == ["silent"]
    assert recorded.pinged == ["answers", "silent", "answers"]  # none more for the silent one
    recorded.sweep.answered(answers)
    recorded.sweep.sweep(pinged + 30)
    assert recorded.late == ["silent"]  # its answers came in time


async def test_a_connection_that_ended_is_neither_pinged_nor_told_of() -> None:
    recorded = Recorded()
    gone, late = Connection("gone"), Connection("late")
    recorded.sweep.watch(gone)
    recorded.sweep.watch(late)
    gone.ended = True
    start = time.monotonic()
    recorded.sweep.sweep(start + 10.5)
    assert recorded.pinged == ["late"]
    late.ended = True  # it went while its ping was out
    recorded.sweep.sweep(start + 20)
    assert recorded.late == []


async def test_a_pong_that_answers_no_ping_schedules_no_second_one() -> None:
    recorded = Recorded()
    connection = Connection("sid")
    recorded.sweep.watch(connection)
    start = time.monotonic()
    recorded.sweep.sweep(start + 10.5)
    recorded.sweep.answered(connection)
    recorded.sweep.answered(connection)  # a pong nobody asked for
    recorded.sweep.sweep(start + 21)
    assert recorded.pinged == ["sid", "sid"]


async def test_the_sweep_keeps_its_rhythm_whatever_the_wall_clock_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sweep reads the monotonic clock only: a wall clock stepped back an hour (or on)
    neither holds every ping behind it nor drops everyone at once."""
    recorded = Recorded(interval=0.2, timeout=5)
    connection = Connection("sid")
    monkeypatch.setattr(pings_module.time, "time", lambda: 0.0)  # what the wall says: never read
    monkeypatch.setattr(pings_module, "SWEEP_SECONDS", 0.05)
    recorded.sweep.watch(connection)
    async with asyncio.timeout(WAIT):
        while len(recorded.pinged) < 3:
            await asyncio.sleep(0.05)
            if connection.awaiting:
                recorded.sweep.answered(connection)
    assert recorded.late == []
    connection.ended = True


async def test_the_sweep_stops_with_the_last_connection_and_starts_with_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pings_module, "SWEEP_SECONDS", 0.02)
    recorded = Recorded(interval=0.05, timeout=0.05)
    connection = Connection("sid")
    recorded.sweep.watch(connection)
    assert recorded.sweep._task is not None
    connection.ended = True
    async with asyncio.timeout(WAIT):
        while recorded.sweep._task is not None:
            await asyncio.sleep(0.02)
    recorded.sweep.watch(Connection("next"))
    assert recorded.sweep._task is not None
    async with asyncio.timeout(WAIT):
        while "next" not in recorded.pinged:
            await asyncio.sleep(0.02)


async def test_a_client_that_answers_pings_stays_through_many_of_them() -> None:
    async with serving(ping_interval_seconds=0.3, ping_timeout_seconds=3.0) as server:
        code = await server.new_room()
        raw = await RawClient.open(server)
        await raw.join(code, "Awake")
        pings = 0
        async with asyncio.timeout(WAIT * 2):
            while pings < 6:
                frame = await raw.next()
                if frame == "2":
                    pings += 1
                    await raw.send("3")
        assert len(server.app.engineio_server.eio.sockets) == 1
        await raw.send('421["stand",{}]')  # and it still plays
        assert (await raw.ack(1))["ok"]
        await raw.close()


async def test_a_client_that_never_answers_is_dropped_and_its_room_told() -> None:
    async with serving(**QUICK_POLLS) as server:
        code = await server.new_room()
        raw = await RawClient.open(server)
        welcome = await raw.join(code, "Asleep")
        room = server.room(code)
        async with asyncio.timeout(WAIT):
            with contextlib.suppress(ConnectionClosed):
                while True:
                    await raw.ws.recv()  # reads on, and never answers a ping
            while any(person.id == welcome["player"] for person in room.table.connected()):
                await asyncio.sleep(0.05)
        assert not server.app.engineio_server.eio.sockets


async def test_a_long_polling_client_that_stops_polling_is_dropped() -> None:
    """python-engineio pings a long-polling session itself, but its own monitor is off: a
    client that stops asking for its packets must still be dropped once its pong is late."""
    async with serving(**QUICK_POLLS) as server:
        code = await server.new_room()
        async with httpx.AsyncClient(base_url=server.url, timeout=WAIT) as http:
            query = {"EIO": "4", "transport": "polling"}
            opened = (await http.get("/socket.io/", params=query)).text
            sid = json.loads(opened[1:])["sid"]
            query["sid"] = sid
            auth = json.dumps({"room": code, "name": "Poller"})
            assert (await http.post("/socket.io/", params=query, content=f"40{auth}")).text == "OK"
            await http.get("/socket.io/", params=query)  # its CONNECT's answer, then no more
            eio = server.app.engineio_server.eio
            assert sid in eio.sockets
            await until(lambda: sid not in eio.sockets, "the silent poller dropped")
        await until(lambda: not server.room(code).connected(), "its person gone from the room")
