"""Rooms cannot be hoarded: an address holds a few rooms nobody else came to, those close
soon, and when every room is taken an address holding none still gets one."""

from __future__ import annotations

import asyncio

import httpx
from app_harness import Client, deal, join, serving, until

from app.ops.clock import ManualClock

HOARDERS = [f"203.0.113.{n}" for n in range(1, 11)]  # through the trusted proxy (loopback)
HONEST = {"X-Forwarded-For": "198.51.100.7"}


async def hoard(http: httpx.AsyncClient, address: str, tries: int) -> list[str]:
    codes = []
    for _ in range(tries):
        answer = await http.post("/api/rooms", headers={"X-Forwarded-For": address})
        if answer.status_code == 201:
            codes.append(answer.json()["code"])
    return codes


async def test_hoarders_cannot_keep_an_honest_user_out() -> None:
    caps = {"max_rooms": 30, "open_rooms_per_address": 5}
    async with serving(**caps) as server, httpx.AsyncClient(base_url=server.url) as http:
        held = await asyncio.gather(*(hoard(http, address, 20) for address in HOARDERS))
        assert all(len(codes) <= 5 for codes in held), [len(c) for c in held]
        for _ in range(3):  # more than once: each time a hoarder's room gives way
            answer = await http.post("/api/rooms", headers=HONEST)
            assert answer.status_code == 201, answer.text
            code = answer.json()["code"]
            await join(server, code, "Host", "Friend")  # used: two people came


async def test_a_room_only_its_opener_came_to_closes_soon() -> None:
    clock = ManualClock()
    async with serving(clock, unused_room_seconds=1.0, room_expiry_seconds=600.0) as server:
        lonely, used = await server.new_room(), await server.new_room()
        (alone,) = await join(server, lonely, "Alone")
        pair = await join(server, used, "Ann", "Bob")
        await deal(pair)  # played in: it lives SLAPJACK_ROOM_EXPIRY_SECONDS
        await alone.close()
        for client in pair:
            await client.close()
        rooms = [server.rooms.get(lonely), server.rooms.get(used)]
        await until(lambda: not any(r is not None and r.table.connected() for r in rooms), "gone")
        await clock.advance(2.0)
        await until(lambda: server.rooms.get(lonely) is None, "the room only its opener came to")
        assert server.rooms.get(used) is not None
        back = Client(server, used, "Ann", token=pair[0].token)
        await back.connect()
        await back.close()
