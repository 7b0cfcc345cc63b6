"""Every name of python-engineio, python-socketio, uvicorn and asyncio that our code
overrides, calls, reads or sets beyond their documented API: private names (`_x`), and
public-looking ones their documentation does not promise (a socket's `queue`, a server's
`sockets`). The one list of them: a module of ours that reaches such a name says so here,
with why, what it buys (measured: docs/performance.md, "What each override buys") and the
upstream hook that would make it unnecessary.

tests/app/test_internals.py checks each against what is installed (the checker is
tools/check_internals.py), that no class of ours defines a name of its library base without
it being listed here, and that pyproject.toml caps exactly the libraries listed here; after
`make lock` brings a new release, so does `python -m tools.check_internals`. A failure names
the library, the name and what to do: pin the library below the release in pyproject.toml,
or port our use of the name, then `make lock`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Use = Literal["overrides", "calls", "reads", "sets", "subclasses"]

TRANSPORT = "app/realtime/transport.py"
WEBSOCKET = "app/realtime/websocket.py"
SERVING = "app/realtime/serving.py"
GUARDS = "app/realtime/guards.py"
TIMERS = "app/ops/timers.py"
# The modules that replace a library's own path (docs/performance.md's "What each override
# buys" switches each part off): what the lines of overrides count, in code lines
# (docstrings, comments and blank lines aside), as tests/app/test_internals.py counts them.
OVERRIDE_MODULES = (
    TRANSPORT,
    WEBSOCKET,
    SERVING,
    "app/realtime/frames.py",
    "app/realtime/eager.py",
    "app/realtime/queues.py",
    "app/realtime/pings.py",
)


@dataclass(frozen=True)
class Why:
    """Why a group of internals is used: `reason` (one line), what it buys (`gain`: a
    speed measured by docs/performance.md's ablation, or the guarantee it keeps) and the
    upstream `hook` that would remove it."""

    reason: str
    gain: str
    hook: str


@dataclass(frozen=True)
class Internal:
    """`name` (a dotted path in `module`: a class, a function, a method or an attribute) as
    `where` uses it, for `why`. `signature`: a callable's parameters as we override or call
    it (names, kinds and defaults; annotations aside). An attribute without a signature is
    looked for on the class, then among the `self.<name>` its classes' source assigns."""

    library: str  # the distribution, as pyproject.toml names it
    module: str
    name: str
    use: Use
    where: str
    why: Why
    signature: str | None = None


OWN_WEBSOCKETS = Why(
    "a websocket is read and written by app/realtime/websocket.py: one await a frame, its "
    "events taken as they arrive (app/realtime/frames.py), one ping sweep for all",
    "off, 1.72x the app's CPU per inbound message (1.69-1.74) and 39.6 KB a player idle "
    "against 34.0",
    "python-engineio: a documented way to serve a websocket (a socket class or websocket "
    "driver the server is given), or a reader without a task and a timer per frame",
)
OUTBOX = Why(
    "each connection's outgoing queue is an Outbox (app/realtime/queues.py): written at once "
    "when nothing is queued (as a frame of ours: app/realtime/frames.py `write_frame`), "
    "capped at SLAPJACK_SEND_QUEUE_LIMIT",
    "off (every packet through the writer task), 1.12x the CPU per inbound message (1.11-1.13); "
    "through uvicorn's `send` at once rather than as a frame of ours, 1.08x (1.07-1.10)",
    "python-engineio: a send that writes when nothing is queued, and a queue limit option",
)
SEND_NEVER_WAITS = Why(
    "a send only queues: python-engineio's closes a connection whose pong is late inline, "
    "running the disconnect handler inside a room that sends under its lock",
    "a guarantee, not speed: no room waits on a client (tests/app/test_wire.py)",
    "python-engineio: a send_packet that never closes the connection itself",
)
HANG_UP = Why(
    "cutting a connection off closes its socket at once: python-engineio's disconnect sends "
    "CLOSE and waits for the client to go, and a hostile one never goes",
    "a guarantee, not speed: a flood, a binary packet or a slow reader is cut off",
    "python-engineio: disconnect(sid, abort=True)",
)
GUARDS_FIRST = Why(
    "every frame passes app/realtime/guards.py before python-socketio decodes it: our "
    "handlers of python-engineio's events call python-socketio's, read where it put them",
    "a guarantee, not speed: frame budgets, binary and reserved names refused",
    "python-socketio: a documented hook before a packet is decoded (a middleware)",
)
FAST_EVENTS = Why(
    "a client's event goes from its decoded packet to the app's handler of every event, "
    "answered with orjson, without python-socketio's layers of dispatch",
    "off, 1.13x the CPU per inbound message with python-socketio's dispatch (one round), "
    "1.07x (1.05-1.08) with its ack",
    "python-socketio: a catch-all handler called directly, and an orjson serializer option",
)
OWN_PINGS = Why(
    "websockets are pinged by one sweep (app/realtime/pings.py), python-engineio's own "
    "pinging of them and its monitor off; long-polling sessions watched for a late pong",
    "off (a task a ping), 1.06x the CPU per inbound message (1.05-1.07) and 1.7 KB more a "
    "player idle",
    "python-engineio: pings on the monotonic clock without a task per ping",
)
DEADLINE = Why(
    "uvicorn's HTTP protocol with a deadline on reading a request and every connection "
    "counted per address from its open (app/realtime/doors.py)",
    "a guarantee, not speed: a slowloris client cannot hold a connection for ever",
    "uvicorn: a request-read timeout, and a hook when a connection opens and closes",
)
LIGHT_WEBSOCKETS = Why(
    "what uvicorn's websocket protocol keeps for a connection's life unused is let go once "
    "its handshake is read (app/realtime/serving.py `lighten`): its asyncio.Queue of ASGI "
    "events becomes a LeanQueue, the request's headers (the scope has a copy) are cleared",
    "idle 28.9-29.4 KB a player against 34.1-34.7 without it (1,000 players, four runs)",
    "uvicorn: a receive queue without asyncio.Queue's four deques, and the handshake's "
    "request dropped once the scope is built",
)
LOCK = Why(
    "WatchedLock times how long a room's lock is held, taken without a coroutine when free",
    "measured in docs/performance.md (the room's lock): a coroutine per action saved",
    "asyncio: a lock that tells when it was taken and by whom",
)


def _engineio(name: str, use: Use, where: str, why: Why, signature: str | None = None) -> Internal:
    module, _, rest = name.partition(":")
    return Internal("python-engineio", module, rest, use, where, why, signature)


def _socketio(name: str, use: Use, where: str, why: Why, signature: str | None = None) -> Internal:
    module, _, rest = name.partition(":")
    return Internal("python-socketio", module, rest, use, where, why, signature)


def _uvicorn(name: str, use: Use, where: str, why: Why, signature: str | None = None) -> Internal:
    module, _, rest = name.partition(":")
    return Internal("uvicorn", module, rest, use, where, why, signature)


SOCKET = "engineio.async_socket:AsyncSocket"
EIO = "engineio.async_server:AsyncServer"
SIO = "socketio.async_server:AsyncServer"
MANAGER = "socketio.base_manager:BaseManager"
HTTP = "uvicorn.protocols.http.httptools_impl:HttpToolsProtocol"
WS = "uvicorn.protocols.websockets.websockets_sansio_impl:WebSocketsSansIOProtocol"
BOTH = f"{TRANSPORT}, {WEBSOCKET}"

INTERNALS: tuple[Internal, ...] = (
    # ---- python-engineio ---------------------------------------------------------------
    # Its ASGI driver table names the class a websocket is served with; that class is made
    # with the socket's own handler (a bound method: its socket) and called with the environ.
    _engineio(f"{EIO}._async", "sets", TRANSPORT, OWN_WEBSOCKETS),
    _engineio(f"{SOCKET}._websocket_handler", "reads", WEBSOCKET, OWN_WEBSOCKETS, "(self, ws)"),
    _engineio(
        "engineio.async_drivers.asgi:WebSocket",
        "calls",
        WEBSOCKET,
        OWN_WEBSOCKETS,
        "(handler, server)",
    ),
    _engineio(f"{SOCKET}.sid", "reads", WEBSOCKET, OWN_WEBSOCKETS),
    _engineio(f"{SOCKET}.connected", "sets", WEBSOCKET, OWN_WEBSOCKETS),
    _engineio(f"{SOCKET}.upgraded", "sets", WEBSOCKET, OWN_WEBSOCKETS),
    _engineio(f"{SOCKET}.last_ping", "sets", TRANSPORT, OWN_PINGS),
    _engineio(f"{SOCKET}.closed", "reads", TRANSPORT, OWN_PINGS),
    _engineio(f"{EIO}.create_queue", "overrides", TRANSPORT, OUTBOX, "(self, *args, **kwargs)"),
    _engineio(f"{SOCKET}.queue", "reads", BOTH, OUTBOX),
    _engineio(f"{EIO}.send_packet", "overrides", TRANSPORT, SEND_NEVER_WAITS, "(self, sid, pkt)"),
    _engineio(f"{EIO}.sockets", "reads", TRANSPORT, HANG_UP),
    _engineio(
        f"{SOCKET}.close", "calls", BOTH, HANG_UP, "(self, wait=True, abort=False, reason=None)"
    ),
    _engineio(f"{EIO}.handlers", "reads", TRANSPORT, GUARDS_FIRST),
    # ---- python-socketio ---------------------------------------------------------------
    _socketio(f"{SIO}._engineio_server_class", "overrides", TRANSPORT, SEND_NEVER_WAITS, "(self)"),
    _socketio(f"{SIO}.eio", "reads", TRANSPORT, GUARDS_FIRST),
    _socketio(f"{SIO}.packet_class", "reads", BOTH, GUARDS_FIRST),
    _socketio(
        f"{MANAGER}.sid_from_eio_sid",
        "calls",
        f"{TRANSPORT}, {GUARDS}",
        GUARDS_FIRST,
        "(self, eio_sid, namespace)",
    ),
    _socketio(f"{MANAGER}.is_connected", "calls", TRANSPORT, FAST_EVENTS, "(self, sid, namespace)"),
    _socketio(
        f"{SIO}.on",
        "overrides",
        TRANSPORT,
        FAST_EVENTS,
        "(self, event, handler=None, namespace=None)",
    ),
    # ---- uvicorn: DeadlineHttp -------------------------------------------------------------
    _uvicorn(f"{HTTP}", "subclasses", SERVING, DEADLINE),
    _uvicorn(f"{HTTP}.connection_made", "overrides", SERVING, DEADLINE, "(self, transport)"),
    _uvicorn(f"{HTTP}.on_message_begin", "overrides", SERVING, DEADLINE, "(self)"),
    _uvicorn(f"{HTTP}.on_message_complete", "overrides", SERVING, DEADLINE, "(self)"),
    _uvicorn(f"{HTTP}.handle_websocket_upgrade", "overrides", SERVING, DEADLINE, "(self)"),
    _uvicorn(f"{HTTP}.connection_lost", "overrides", SERVING, DEADLINE, "(self, exc)"),
    _uvicorn(f"{WS}.queue", "sets", SERVING, LIGHT_WEBSOCKETS),
    _uvicorn(f"{WS}.request", "reads", SERVING, LIGHT_WEBSOCKETS),
    # ---- asyncio: WatchedLock ---------------------------------------------------------------
    Internal("python", "asyncio.locks", "Lock", "subclasses", TIMERS, LOCK),
    Internal("python", "asyncio.locks", "Lock._locked", "sets", TIMERS, LOCK),
    Internal("python", "asyncio.locks", "Lock._waiters", "reads", TIMERS, LOCK),
)
