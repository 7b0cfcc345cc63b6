"""A crowd at a table without a browser each: python-socketio clients that join, sit and
wait, so a browser test can fill all eight seats cheaply and photograph one page."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
import socketio

WAIT_SECONDS = 20.0
# Twenty characters each, the longest a name may be: with spaces (they could wrap), without
# (they could only overflow), and the widest letters there are.
LONG_NAMES = [
    "Maximiliana Rosewood",
    "Bartholomewsonsmithy",
    "WWWWWWWWWWWWWWWWWWWW",
    "Anne-Marie Delacroix",
    "Christophersonjacobs",
    "Oluwaseun Adeyemi-Ok",
    "MMMMMMMMMM MMMMMMMMM",
    "Guinevere Hollingswo",
]


async def open_room(base_url: str, rules: dict[str, Any] | None = None) -> str:
    async with httpx.AsyncClient(base_url=base_url) as http:
        answer = await http.post("/api/rooms", json={"rules": rules or {}})
        answer.raise_for_status()
        code: str = answer.json()["code"]
        return code


class Guest:
    """One person at the table, driven from the test: connect, sit, act."""

    def __init__(self, base_url: str, room: str, name: str) -> None:
        self.base_url, self.room, self.name = base_url, room, name
        self.sio = socketio.AsyncClient(reconnection=False)
        self.state: dict[str, Any] = {}
        self.token: str | None = None
        self.sio.on("state", self._on_state)
        self.sio.on("welcome", self._on_welcome)

    def _on_welcome(self, data: dict[str, Any]) -> None:
        self.token = data.get("token") or self.token

    def _on_state(self, data: dict[str, Any]) -> None:
        if not self.state or data.get("version", 0) >= self.state.get("version", 0):
            self.state = data

    async def connect(self) -> Guest:
        auth = {"room": self.room, "name": self.name}
        if self.token is not None:
            auth["token"] = self.token
        await self.sio.connect(
            self.base_url, auth=auth, transports=["websocket"], wait_timeout=WAIT_SECONDS
        )
        return self

    async def call(self, event: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        if not self.sio.connected and self.token is not None:
            # Dropped (a test process too starved to answer the server's pings in time): back
            # with its token, as a page comes back.
            await self.connect()
        reply: dict[str, Any] = await self.sio.call(event, data or {}, timeout=WAIT_SECONDS)
        return reply

    async def sit(self) -> None:
        """Sits in the first free seat (unless the server already seated this guest)."""
        async with asyncio.timeout(WAIT_SECONDS):
            while not self.state:
                await asyncio.sleep(0.05)
        if self.state.get("you", {}).get("seat") is not None:
            return
        reply = await self.call("sit", {"seat": None})
        assert reply["ok"], reply

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.sio.disconnect()


async def seat_guests(base_url: str, room: str, names: list[str]) -> list[Guest]:
    guests = []
    for name in names:
        guest = await Guest(base_url, room, name).connect()
        await guest.sit()
        guests.append(guest)
    return guests


async def leave_all(guests: list[Guest]) -> None:
    await asyncio.gather(*(guest.close() for guest in guests))
