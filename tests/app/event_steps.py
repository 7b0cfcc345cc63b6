"""Steps the event tests take over the wire: opening an event, its organiser, players and
stage connected to it, and each player's phone sent on to its table, as the page does."""

from __future__ import annotations

from typing import Any

import httpx
from app_harness import Client, Server


async def open_event(server: Server, **options: Any) -> tuple[str, str]:
    """A new event's code and its organiser's token."""
    body = {"name": "Class 2B", "organiser": "Ms Lee", **options}
    async with httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.post("/api/events", json=body)
    assert answer.status_code == 201, answer.text
    opened = answer.json()
    assert opened["url"] == f"/e/{opened['code']}"
    return opened["code"], opened["token"]


class EventClient(Client):
    """A connection to an event (a phone on /e/CODE, the organiser's screen, the stage)."""

    async def connect(self, **options: Any) -> EventClient:
        auth: dict[str, Any] = {"room": self.room, "name": self.name, **self.auth_extra}
        if self.token is not None:
            auth["token"] = self.token
        if options.pop("watch", False):
            auth["watch"] = True
        options.setdefault("transports", ["websocket"])
        await self.sio.connect(self.url, auth=auth, wait_timeout=20, **options)
        await self.wait_for(lambda: self.event_states)
        return self

    @property
    def event_states(self) -> list[dict[str, Any]]:
        return [data for kind, data in self.messages if kind == "event_state"]

    @property
    def event(self) -> dict[str, Any]:
        return max(self.event_states, key=lambda s: s["version"])

    async def wait_event(self, condition: Any) -> dict[str, Any]:
        found: dict[str, Any] = await self.wait_for(
            lambda: self.event_states and condition(self.event) and self.event
        )
        return found


async def to_table(phone: EventClient) -> Client:
    """The phone goes to the table the event sent it to, with the token the event knows it
    by (the page keeps it for that table and opens /r/CODE)."""
    state = await phone.wait_event(lambda s: s["you"]["table"] and s["you"]["status"] == "playing")
    table = Client(phone.server, state["you"]["table"], phone.name, phone.token)
    return await table.connect()
