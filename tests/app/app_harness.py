"""A real uvicorn server on loopback and real Socket.IO clients, for the server's tests."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
import socketio
import uvicorn

from app.main import create_app
from app.ops.clock import Clock, ManualClock, settle
from app.ops.config import Settings
from app.realtime.uvicorn_config import server_config
from app.tables.registry import Rooms
from app.tables.room import Room
from app.wire import protocol
from app.wire.encoded import Encoded

# The servers the tests start (`python -m app`, a cluster's processes, the benchmark's) each
# import the app and its frameworks: from the bytecode the first one cached, not compiled
# again every time (about 2 s of CPU a process), where the environment turned the cache off.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

WAIT = 20.0  # generous: the machine is shared; waits end on the awaited message, not on time
# A `python -m app` process's cold start (its imports, its store) on a loaded machine: as
# deploy/cluster.py and the browser tests' server wait for theirs (20 s ran out at a load
# average of 40).
START_WAIT = 60.0

# Settings for tests: everything that waits is scaled down so the suite stays fast.
FAST = {
    # No durability where it is not the point (and no slapjack.db left in the repo); the
    # durability tests name their own store.
    "store": "memory",
    "bot_time_scale": 0.01,
    "disconnected_autoflip_seconds": 30.0,
    "idle_autoflip_seconds": 30.0,
    "autoflip_pause_seconds": 0.0,
    "host_handover_seconds": 30.0,
    # Test players act as fast as the loop lets them: far beyond a person's 20 events a
    # second. The flood tests use the real limit.
    "rate_per_second": 10_000.0,
    "rate_burst": 10_000,
    "rooms_per_minute": 10_000.0,
    "open_rooms_per_address": 10_000,  # tests open many rooms from 127.0.0.1
    "connects_per_minute": 100_000.0,
    "opens_per_minute": 100_000.0,
    # ...and test codes nobody opened (404s) far more often than people mistype one.
    "wrong_codes_per_minute": 100_000.0,
    "wrong_codes_burst": 100_000,
    # Test players slap the instant a trigger reaches them: a script's reflexes, which the
    # false-start tests judge with the deployed floor.
    "false_start_ms": 0,
}

# A long-polling client's goodbye leaves its pending GET open until the ping interval and
# the ping timeout have passed (python-engineio ends it then), and closing the client waits
# for it: 15 s with the defaults. Servers of tests that close long-polling clients ping
# more often. A pong has 5 s to come back: the test's clients share its event loop with the
# server, and on a loaded machine (load average 17) a 2 s timeout ended a polling session
# mid-game ("Invalid session"), and its game with it.
QUICK_POLLS = {"ping_interval_seconds": 1.0, "ping_timeout_seconds": 5.0}

# The pause after a take (collect_seconds, 1 s by default) at tables of tests that play
# whole games to show something else: a game then takes a few seconds, not ten.
SHORT_COLLECT_SECONDS = 0.1


class Server:
    """The app served by uvicorn on 127.0.0.1 in this event loop, so tests can see rooms.
    `clock`: the app's clock (a ManualClock the test turns; real time by default)."""

    def __init__(self, clock: Clock | None = None, **overrides: Any) -> None:
        # IPPROTO_TCP: asyncio then sets TCP_NODELAY on each connection, as it does for
        # uvicorn's own sockets; without it Nagle's algorithm holds small frames for 40 ms.
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        options = {**FAST, "allowed_origins": [self.url], **overrides}
        self.settings = Settings(**options)
        self.clock = clock if clock is not None else Clock()
        self.app = create_app(self.settings, self.clock)
        # Served as `python -m app` serves it (uvloop: see conftest.py; httptools, limits).
        config = server_config(self.app, self.settings, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def rooms(self) -> Rooms:
        rooms: Rooms = self.app.other_asgi_app.state.rooms
        return rooms

    async def start(self) -> None:
        self._task = asyncio.create_task(self.server.serve(sockets=[self.sock]))
        while not self.server.started:
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self.server.should_exit = True
        if self._task is not None:
            await asyncio.wait_for(self._task, WAIT)
        self.sock.close()

    async def new_room(self, **rules: Any) -> str:
        async with httpx.AsyncClient(base_url=self.url) as http:
            answer = await http.post("/api/rooms", json={"rules": rules} if rules else None)
        assert answer.status_code == 201, answer.text
        code: str = answer.json()["code"]
        return code

    def room(self, code: str) -> Room:
        room = self.rooms.get(code)
        assert room is not None
        return room


class Client:
    """One person's browser, reduced to what tests need: every message, kept in order."""

    def __init__(
        self,
        server: Server,
        room: str,
        name: str,
        token: str | None = None,
        *,
        url: str | None = None,
        pong_delay: float | None = 0.0,
    ) -> None:
        self.server, self.room, self.name, self.token = server, room, name, token
        self.url = url or server.url  # another address: a proxy in front of the server
        self.pong_delay = pong_delay  # seconds before answering a lag ping; None: never
        self.sio = socketio.AsyncClient(reconnection=False)
        self._pongs: set[asyncio.Task[None]] = set()
        self.messages: list[tuple[str, Any]] = []  # (event name, payload), acks included
        self.times: list[float] = []  # when each message came (monotonic), in step with it
        self.welcome: dict[str, Any] | None = None
        self.pings = 0  # the room's lag pings received, on their own or riding on a state
        self.refusal: Any = None
        self.disconnected = asyncio.Event()
        self._news = asyncio.Event()
        self.sio.on("welcome", self._on_welcome)
        self.sio.on("state", self._on_state)
        self.sio.on("event", lambda data: self._record("event", data))
        self.sio.on("event_state", lambda data: self._record("event_state", data))  # an event's
        self.sio.on("connect_error", self._on_refusal)
        self.sio.on("disconnect", lambda *args: self.disconnected.set())
        self.sio.on("ping", self._on_ping)  # answered as the page does (lag-fair judging)
        self.auth_extra: dict[str, Any] = {}  # more for `auth`: an avatar, an invite

    async def connect(self, **options: Any) -> Client:
        auth: dict[str, Any] = {"room": self.room, "name": self.name, **self.auth_extra}
        if self.token is not None:
            auth["token"] = self.token
        options.setdefault("transports", ["websocket"])
        await self.sio.connect(self.url, auth=auth, wait_timeout=WAIT, **options)
        await self.wait_for(lambda: self.states)
        return self

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.sio.disconnect()

    async def drop(self) -> None:
        """The network drops: the websocket closes with no goodbye in it. python-engineio's
        `disconnect(abort=True)` alone queues an Engine.IO CLOSE first, which the server
        reads as the client saying goodbye whenever it gets out before the websocket
        closes (on Python 3.12, every time)."""
        ws = self.sio.eio.ws
        if ws is not None:
            await ws.close()  # a websocket close frame, and the handshake's end
        await self.sio.eio.disconnect(abort=True)  # the client's own state (nothing is sent)

    async def call(self, event: str, data: Any = None) -> dict[str, Any]:
        reply: dict[str, Any] = await self.sio.call(event, data, timeout=WAIT)
        self._record("ack", reply)
        return reply

    async def ok(self, event: str, data: Any = None) -> dict[str, Any]:
        reply = await self.call(event, {} if data is None else data)
        assert reply["ok"], (event, data, reply)
        return reply

    @property
    def states(self) -> list[dict[str, Any]]:
        return [data for kind, data in self.messages if kind == "state"]

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event as it came: a change's in its `state`, a notice (`restart`) alone."""
        events: list[dict[str, Any]] = []
        for kind, data in self.messages:
            if kind == "state":
                events.extend(data["events"])
            elif kind == "event":
                events.append(data)
        return events

    @property
    def state(self) -> dict[str, Any]:
        return max(self.states, key=lambda s: s["version"])

    @property
    def player(self) -> str:
        assert self.welcome is not None
        return str(self.welcome["player"])

    @property
    def seat(self) -> int | None:
        seat: int | None = self.state["you"]["seat"]
        return seat

    async def wait_for(self, condition: Callable[[], Any], timeout: float = WAIT) -> Any:
        """Waits until `condition()` is truthy, re-checking on every message received."""
        async with asyncio.timeout(timeout):
            while not (result := condition()):
                self._news.clear()
                await self._news.wait()
            return result

    async def wait_state(self, condition: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        state: dict[str, Any] = await self.wait_for(lambda: condition(self.state) and self.state)
        return state

    def _record(self, kind: str, data: Any) -> None:
        self.messages.append((kind, data))
        self.times.append(time.monotonic())
        self._news.set()

    def _on_welcome(self, data: dict[str, Any]) -> None:
        self.welcome = data
        self.token = data["token"]
        self._record("welcome", data)

    def _on_state(self, data: dict[str, Any]) -> None:
        if "ping" in data:  # a lag ping riding on the state: answered as the page does
            self._on_ping({"id": data["ping"]})
        self._record("state", data)

    def _on_ping(self, data: Any) -> None:
        self.pings += 1
        self._news.set()
        if self.pong_delay is None:
            return

        async def answer() -> None:
            await asyncio.sleep(self.pong_delay or 0)
            with contextlib.suppress(Exception):
                await self.sio.emit("pong", {"id": data["id"]})

        task = asyncio.get_running_loop().create_task(answer())
        self._pongs.add(task)  # a reference until done: asyncio holds tasks weakly
        task.add_done_callback(self._pongs.discard)

    def _on_refusal(self, data: Any = None) -> None:
        self.refusal = data
        self._news.set()


class Logged(logging.Handler):
    """The app's log records as a test sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    @property
    def events(self) -> list[str]:
        return [record.getMessage() for record in self.records]

    @property
    def tracebacks(self) -> list[str]:
        """Each record's traceback as logged ("" for a record without one)."""
        formatter = logging.Formatter()
        return [
            formatter.formatException(record.exc_info) if record.exc_info else ""
            for record in self.records
        ]


class Recorder:
    """A room's transport in process: keeps what the room sends (no sockets)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Encoded]] = []

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None:
        pass

    async def enter_room(self, sid: str, room: str) -> None:
        pass

    def send(self, message: Encoded, to: str) -> None:
        self.sent.append((to, message))

    def pings(self, to: str) -> int:
        """Lag pings sent to `to` on their own."""
        return sum(1 for sid, m in self.sent if sid == to and m.event == protocol.PING)

    def rides(self, to: str) -> int:
        """Lag pings sent to `to` riding on a state."""
        states = [m for sid, m in self.sent if sid == to and m.event == protocol.STATE]
        return sum(1 for m in states if "ping" in m.data)


@contextlib.asynccontextmanager
async def serving(clock: Clock | None = None, **overrides: Any) -> AsyncIterator[Server]:
    server = Server(clock, **overrides)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def join(server: Server, code: str, *names: str) -> list[Client]:
    """People who come in and watch: the lobby seats each newcomer at once (while a seat is
    free), so each stands up again, leaving the seats to the test."""
    clients = []
    for name in names:
        client = await Client(server, code, name).connect()
        if client.seat is not None:
            await client.ok("stand")
            await client.wait_state(lambda s: s["you"]["seat"] is None)
        clients.append(client)
    return clients


async def close_all(clients: list[Client]) -> None:
    await asyncio.gather(*(client.close() for client in clients))


async def until(
    condition: Callable[[], Any], what: str = "a condition", seconds: float = WAIT
) -> None:
    """Polls `condition()` until it holds, for what no message announces (a server's own
    state, a store, a log); AssertionError naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def turn_until(
    clock: ManualClock,
    condition: Callable[[], Any],
    what: str = "a condition",
    *,
    step: float = 0.1,
    most: float = 600.0,
) -> Any:
    """Turns the app's clock `step` seconds at a time until `condition()` holds (what it
    returns), letting the messages each turn sends reach the clients over loopback before
    the next; AssertionError naming `what` after `most` seconds of the clock."""
    end = clock.now() + most
    while not (result := condition()):
        if clock.now() >= end:
            raise AssertionError(f"{what}: not within {most} s of the clock")
        await clock.advance(step)
        await settle()
    return result


async def deal(clients: list[Client]) -> None:
    """Everyone sits (the first free seat each), the first of them starts, and all see the
    game on."""
    for client in clients:
        await client.ok("sit", {"seat": None})
    await clients[0].ok("start")
    for client in clients:
        await client.wait_state(lambda s: s["phase"] == "playing")


async def settled(clients: Sequence[Client]) -> dict[str, Any]:
    """The newest state once every client has seen it."""
    newest = max(c.state["version"] for c in clients)
    for client in clients:
        await client.wait_state(lambda s, v=newest: s["version"] >= v)  # type: ignore[misc]
    return clients[0].state


async def play(clients: Sequence[Client], steps: int) -> None:
    """`steps` moves as players would make them: the seat to play flips, and a trigger is
    slapped by the first player in seat order who is not frozen or out."""
    by_seat = {c.seat: c for c in clients}
    for _ in range(steps):
        state = await settled(clients)
        if state["phase"] != "playing":
            return
        if state["slap_open"]:
            awake = [s for s in state["seats"] if not s["out"] and s["frozen_ms"] == 0]
            await by_seat[awake[0]["seat"]].call("slap", {"pile_id": state["pile"]["id"]})
        elif state["next"] is not None:
            await by_seat[state["next"]].call("flip", {})
        await asyncio.sleep(0)


# Refusals a simple player may meet in a fast game: it acts on the state it last saw,
# which the table may have moved past (someone flipped, slapped or froze it meanwhile), or
# the table paused meanwhile (its server lost its store for a moment).
RACE_CODES = {
    "not_your_turn",
    "slap_pending",
    "frozen",
    "out",
    "game_over",
    "wrong_phase",
    "paused",
}


def news_since(client: Client, start: int) -> bool:
    """Something to act on has come since message `start`: a state, a welcome (back after a
    move, whose versions may be below ones seen) or a table going on after a pause (which
    brings no state: what was refused while paused can be tried again)."""
    return any(
        kind in ("state", "welcome") or (kind == "event" and data.get("kind") == "resumed")
        for kind, data in client.messages[start:]
    )


async def autoplay(
    client: Client, *, slap: bool = True, false_slaps: bool = False
) -> list[dict[str, Any]]:
    """Plays the client's seat to the end of the game: flips on its turn, slaps a trigger,
    and with `false_slaps` now and then slaps a card that is no trigger. Returns its acks.
    It acts on every news (`news_since`), as the page does."""
    acks: list[dict[str, Any]] = []
    read = 0
    blundered: set[tuple[int, int]] = set()
    while True:
        await client.wait_for(lambda read=read: news_since(client, read))  # type: ignore[misc]
        read = len(client.messages)
        state = client.state
        if state["phase"] != "playing":
            return acks
        seat = state["you"]["seat"]
        me = state["seats"][seat]
        if me["out"] or me["frozen_ms"] > 0:
            continue
        pile = (state["pile"]["id"], state["pile"]["count"])
        blunder = false_slaps and pile[1] % 5 == 2 and seat == state["next"]
        if blunder:  # once per pile: with `give` the pile stays as it was
            blunder = pile not in blundered
            blundered.add(pile)
        if (state["slap_open"] and slap) or (blunder and not state["slap_open"]):
            acks.append(await client.call("slap", {"pile_id": state["pile"]["id"]}))
        elif state["next"] == seat and state["collect_ms"] == 0 and flips_go_on(state):
            acks.append(await client.call("flip", {}))


def flips_go_on(state: dict[str, Any]) -> bool:
    """No trigger holds the table: none shows, or the one showing lapsed unslapped."""
    return not state["slap_open"] or state["trigger_lapsed"]


def check_refusals(acks: list[dict[str, Any]]) -> None:
    for reply in acks:
        assert reply["ok"] or reply["error"]["code"] in RACE_CODES, reply


def cards_held(state: dict[str, Any]) -> int:
    return sum(s["cards"] for s in state["seats"] if s is not None) + state["pile"]["count"]


def table_of(state: dict[str, Any]) -> dict[str, Any]:
    """What a restart or a move between processes must not change: who sits where with how
    many cards, the pile, whose turn, and the person's own seat."""
    return {
        "phase": state["phase"],
        "game": state["game"],
        "seats": [
            (s["player"], s["name"], s["cards"], s["out"]) if s else None for s in state["seats"]
        ],
        "pile": state["pile"],
        "next": state["next"],
        "slap_open": state["slap_open"],
        "you": state["you"],
    }


async def play_to_the_end(clients: Sequence[Client], seconds: float = 120) -> None:
    """Everyone plays the game out (`autoplay`); the table ends whole: one winner holding
    every card, and no state along the way with a card more or less."""
    results = await asyncio.wait_for(asyncio.gather(*(autoplay(c) for c in clients)), seconds)
    for acks in results:
        check_refusals(acks)
    final = await settled(clients)
    assert final["phase"] == "over" and final["winner"] is not None
    assert final["seats"][final["winner"]]["cards"] == 52
    for client in clients:
        assert all(cards_held(s) == 52 for s in client.states if s["phase"] == "playing")
