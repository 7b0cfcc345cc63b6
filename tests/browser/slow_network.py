"""A page's connection to the server passed through the test, to play a slow network on
cue: what the server sends can be held back for a moment, and so can the page's slap (so
that two pages' slaps leave at one moment however slowly a loaded machine runs the pages);
what the page sends is seen on its way (and when: the test's clock times the page's taps
from the server's states). Nothing is changed, dropped or made up; held messages arrive
late, in order."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import BrowserContext, WebSocketRoute

SOCKET_IO = re.compile(r"/socket\.io/")
# Socket.IO events with an ack id: the page sends 42<id>["slap",{...}], the server answers
# with 43<id>[{...}].
SLAP_MESSAGE = re.compile(r'^42(\d+)\["slap"')
STATE_HEAD = '42["state",'  # a state the server sends to every page at the table
StateTest = Callable[[dict[str, Any]], bool]


@dataclass
class SlowNetwork:
    holding: bool = False
    _held: list[tuple[WebSocketRoute, str | bytes]] = field(default_factory=list)
    _slap_answer: str | None = None  # the start of the answer to the page's last slap
    _slap_answered: asyncio.Event = field(default_factory=asyncio.Event)
    slap_answered_at: float | None = None  # ...and when the server's answer to it went by
    holding_slaps: bool = False
    _slap_out: tuple[WebSocketRoute, str] | None = None  # the page's slap, held on its way
    _slap_pressed: asyncio.Event = field(default_factory=asyncio.Event)
    _awaited: list[tuple[StateTest, asyncio.Future[tuple[float, dict[str, Any]]]]] = field(
        default_factory=list
    )

    @classmethod
    async def under(cls, context: BrowserContext) -> SlowNetwork:
        """Every Socket.IO connection the context's pages open from now on goes through it."""
        network = cls()
        await context.route_web_socket(SOCKET_IO, network._connect)
        return network

    def _connect(self, page_side: WebSocketRoute) -> None:
        server_side = page_side.connect_to_server()
        server_side.on_message(lambda message: self._to_page(page_side, message))
        page_side.on_message(lambda message: self._to_server(server_side, message))

    def _to_page(self, page_side: WebSocketRoute, message: str | bytes) -> None:
        if self._awaited and isinstance(message, str) and message.startswith(STATE_HEAD):
            self._notice(json.loads(message[2:])[1])
        if self._slap_answer and isinstance(message, str) and message.startswith(self._slap_answer):
            self._slap_answer = None
            self.slap_answered_at = time.monotonic()
            self._slap_answered.set()
        if not self.holding:
            page_side.send(message)
            return
        self._held.append((page_side, message))

    def _to_server(self, server_side: WebSocketRoute, message: str | bytes) -> None:
        slap = SLAP_MESSAGE.match(message) if isinstance(message, str) else None
        if slap:
            self._slap_answer = f"43{slap.group(1)}["
            self._slap_answered.clear()
            self.slap_answered_at = None
            if self.holding_slaps:
                assert isinstance(message, str)
                self._slap_out = (server_side, message)
                self._slap_pressed.set()
                return
        server_side.send(message)

    def _notice(self, state: dict[str, Any]) -> None:
        at = time.monotonic()
        for test, found in list(self._awaited):
            if not found.done() and test(state):
                found.set_result((at, state))
                self._awaited.remove((test, found))

    def state_passing(self, test: StateTest) -> asyncio.Future[tuple[float, dict[str, Any]]]:
        """The next state from the server that passes `test`, and when it went by on its way
        to the page (time.monotonic()). Asked for before the move that brings it."""
        found: asyncio.Future[tuple[float, dict[str, Any]]] = (
            asyncio.get_running_loop().create_future()
        )
        self._awaited.append((test, found))
        return found

    def hold(self) -> None:
        """From now on the page hears nothing new from the server (until `release`)."""
        self._slap_answer = None
        self._slap_answered.clear()
        self.holding = True

    def hold_slaps(self) -> None:
        """From now on the page's next slap waits on its way to the server (`send_slap`)."""
        self._slap_out = None
        self._slap_pressed.clear()
        self.holding_slaps = True

    async def slap_pressed(self, timeout_ms: float) -> None:
        """Waits until the page has sent a slap, held on its way."""
        await asyncio.wait_for(self._slap_pressed.wait(), timeout_ms / 1000)

    def send_slap(self) -> None:
        """Sends the slap held on its way, and stops holding slaps."""
        self.holding_slaps = False
        if self._slap_out is not None:
            (server_side, message), self._slap_out = self._slap_out, None
            server_side.send(message)

    async def slap_answered(self, timeout_ms: float) -> None:
        """Waits until the server has answered the page's last slap (`slap_answered_at`):
        the server has judged it, and while `hold` holds, the page has not heard how."""
        await asyncio.wait_for(self._slap_answered.wait(), timeout_ms / 1000)

    def release(self) -> None:
        """Delivers everything held, in the order the server sent it, and stops holding."""
        held, self._held = self._held, []
        self.holding = False
        for page_side, message in held:
            page_side.send(message)
