"""Every name of python-engineio, python-socketio, uvicorn, websockets and asyncio that our
code overrides, calls, reads or sets beyond their documented API: private names (`_x`), and
public-looking ones their documentation does not promise (a socket's `queue`, a protocol's
`frames`). The one list of them: a module of ours that reaches such a name says so here.

tests/app/test_internals.py checks each against what is installed (the checker is
tools/check_internals.py), and that no class of ours defines a name of its library base
without it being listed here; after `make lock` brings a new release, so does
`python -m tools.check_internals`. A failure names the library, the name and what to do: pin
the library below the release in pyproject.toml, or port our use of the name, then
`make lock`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Use = Literal["overrides", "calls", "reads", "sets", "subclasses"]

TRANSPORT = "app/realtime/transport.py"
STOCK = "app/realtime/stock.py"
SERVING = "app/realtime/serving.py"
OUTGOING = "app/realtime/outgoing.py"
TIMERS = "app/ops/timers.py"


@dataclass(frozen=True)
class Internal:
    """`name` (a dotted path in `module`: a class, a function, a method or an attribute) as
    `where` uses it. `signature`: a callable's parameters as we override or call it (names,
    kinds and defaults; annotations aside). An attribute without a signature is looked for
    on the class, then among the `self.<name>` its classes' source assigns."""

    library: str  # the distribution, as pyproject.toml names it
    module: str
    name: str
    use: Use
    where: str
    signature: str | None = None


def _engineio(name: str, use: Use, where: str, signature: str | None = None) -> Internal:
    module, _, rest = name.partition(":")
    return Internal("python-engineio", module, rest, use, where, signature)


def _socketio(name: str, use: Use, where: str, signature: str | None = None) -> Internal:
    module, _, rest = name.partition(":")
    return Internal("python-socketio", module, rest, use, where, signature)


def _uvicorn(name: str, use: Use, where: str, signature: str | None = None) -> Internal:
    module, _, rest = name.partition(":")
    return Internal("uvicorn", module, rest, use, where, signature)


def _websockets(name: str, use: Use, where: str, signature: str | None = None) -> Internal:
    module, _, rest = name.partition(":")
    return Internal("websockets", module, rest, use, where, signature)


SOCKET = "engineio.async_socket:AsyncSocket"
EIO = "engineio.async_server:AsyncServer"
SIO = "socketio.async_server:AsyncServer"
MANAGER = "socketio.base_manager:BaseManager"
WS = "uvicorn.protocols.websockets.websockets_sansio_impl:WebSocketsSansIOProtocol"
HTTP = "uvicorn.protocols.http.httptools_impl:HttpToolsProtocol"
CONN = "websockets.protocol:Protocol"
BOTH = f"{TRANSPORT}, {STOCK}"

INTERNALS: tuple[Internal, ...] = (
    # ---- python-engineio: GameSocket and GameEngineIO (lean) -------------------------------
    _engineio(f"{SOCKET}", "subclasses", TRANSPORT),
    _engineio(f"{SOCKET}.poll", "overrides", TRANSPORT, "(self)"),
    _engineio(f"{SOCKET}._websocket_handler", "overrides", TRANSPORT, "(self, ws)"),
    _engineio(f"{SOCKET}.receive", "calls", TRANSPORT, "(self, pkt)"),
    _engineio(f"{SOCKET}.schedule_ping", "overrides", TRANSPORT, "(self)"),
    _engineio(f"{SOCKET}.close", "overrides", BOTH, "(self, wait=True, abort=False, reason=None)"),
    _engineio(f"{SOCKET}.send", "calls", STOCK, "(self, pkt)"),
    _engineio(f"{SOCKET}.connected", "sets", TRANSPORT),
    _engineio(f"{SOCKET}.upgraded", "sets", TRANSPORT),
    _engineio(f"{SOCKET}.last_ping", "sets", TRANSPORT),
    _engineio(f"{SOCKET}.closing", "reads", TRANSPORT),
    _engineio(f"{SOCKET}.closed", "reads", TRANSPORT),
    _engineio(f"{SOCKET}.queue", "reads", BOTH),
    _engineio(f"{SOCKET}.server", "reads", TRANSPORT),
    _engineio(f"{SOCKET}.sid", "reads", TRANSPORT),
    # a socket's queue comes from its server's create_queue (lean and stock replace it)
    _engineio("engineio.base_socket:BaseSocket.__init__", "calls", BOTH, "(self, server, sid)"),
    _engineio(f"{EIO}", "subclasses", TRANSPORT),
    _engineio(f"{EIO}._trigger_event", "overrides", TRANSPORT, "(self, event, *args, **kwargs)"),
    _engineio(f"{EIO}._service_task", "overrides", TRANSPORT, "(self)"),
    _engineio(f"{EIO}.service_task_event", "sets", TRANSPORT),
    _engineio(f"{EIO}.create_queue", "overrides", BOTH, "(self, *args, **kwargs)"),
    _engineio(f"{EIO}.send_packet", "overrides", BOTH, "(self, sid, pkt)"),
    _engineio(f"{EIO}.sockets", "reads", BOTH),
    _engineio(f"{EIO}.handlers", "reads", BOTH),
    _engineio(f"{EIO}.reason", "reads", BOTH),
    _engineio(f"{EIO}.async_handlers", "sets", TRANSPORT),
    _engineio(f"{EIO}.ping_interval", "reads", TRANSPORT),
    _engineio(f"{EIO}.ping_timeout", "reads", TRANSPORT),
    _engineio(f"{EIO}.max_http_buffer_size", "reads", TRANSPORT),
    _engineio("engineio.async_drivers.asgi:WebSocket.asgi_send", "reads", TRANSPORT),
    _engineio("engineio.async_drivers.asgi:WebSocket.wait", "calls", TRANSPORT, "(self)"),
    _engineio("engineio.async_drivers.asgi:WebSocket.send", "calls", TRANSPORT, "(self, message)"),
    _engineio("engineio.async_drivers.asgi:WebSocket.close", "calls", TRANSPORT, "(self)"),
    # Assembled: a packet made from its text, encode() answering the cache
    _engineio("engineio.packet:Packet", "subclasses", OUTGOING),
    _engineio("engineio.packet:Packet.encode_cache", "sets", OUTGOING),
    _engineio("engineio.packet:Packet.binary", "sets", OUTGOING),
    _engineio("engineio.packet:Packet.encode", "calls", OUTGOING, "(self, b64=False)"),
    # ---- python-socketio: GameServer (lean) and StockServer (stock) -----------------------
    _socketio(f"{SIO}", "subclasses", BOTH),
    _socketio(f"{SIO}._engineio_server_class", "overrides", TRANSPORT, "(self)"),
    _socketio(f"{SIO}._handle_eio_connect", "overrides", TRANSPORT, "(self, eio_sid, environ)"),
    _socketio(f"{SIO}._handle_eio_disconnect", "overrides", TRANSPORT, "(self, eio_sid, reason)"),
    _socketio(f"{SIO}._handle_connect", "overrides", TRANSPORT, "(self, eio_sid, namespace, data)"),
    _socketio(f"{SIO}._handle_eio_message", "overrides", BOTH, "(self, eio_sid, data)"),
    _socketio(
        f"{SIO}._handle_event_internal",
        "overrides",
        TRANSPORT,
        "(self, server, sid, eio_sid, data, namespace, id)",
    ),
    _socketio(f"{SIO}._trigger_event", "calls", TRANSPORT, "(self, event, namespace, *args)"),
    _socketio(f"{SIO}._handle_event", "calls", TRANSPORT, "(self, eio_sid, namespace, id, data)"),
    _socketio(
        f"{SIO}._handle_disconnect", "calls", TRANSPORT, "(self, eio_sid, namespace, reason=None)"
    ),
    _socketio(f"{SIO}._handle_ack", "calls", TRANSPORT, "(self, eio_sid, namespace, id, data)"),
    _socketio(
        f"{SIO}.emit",
        "overrides",
        STOCK,
        "(self, event, data=None, to=None, room=None, skip_sid=None, namespace=None,"
        " callback=None, ignore_queue=False)",
    ),
    _socketio(
        f"{SIO}.disconnect", "calls", STOCK, "(self, sid, namespace=None, ignore_queue=False)"
    ),
    _socketio(f"{SIO}.reserved_events", "reads", TRANSPORT),
    _socketio(f"{SIO}.not_handled", "reads", TRANSPORT),
    _socketio(f"{SIO}.handlers", "reads", TRANSPORT),
    _socketio(f"{SIO}.packet_class", "reads", BOTH),
    _socketio(f"{SIO}.eio", "reads", BOTH),
    # python-socketio's handlers of python-engineio's events, registered in its constructor
    _socketio("socketio.base_server:BaseServer.__init__", "calls", STOCK),
    _socketio(f"{MANAGER}.get_participants", "calls", STOCK, "(self, namespace, room)"),
    _socketio(f"{MANAGER}.sid_from_eio_sid", "calls", BOTH, "(self, eio_sid, namespace)"),
    _socketio(f"{MANAGER}.eio_sid_from_sid", "calls", OUTGOING, "(self, sid, namespace)"),
    _socketio(f"{MANAGER}.is_connected", "calls", BOTH, "(self, sid, namespace)"),
    # ---- uvicorn: LeanWebSocket (lean) and DeadlineHttp (both) -----------------------------
    _uvicorn(f"{WS}", "subclasses", SERVING),
    _uvicorn(
        f"{WS}.__init__",
        "overrides",
        SERVING,
        "(self, config, server_state, app_state, _loop=None)",
    ),
    _uvicorn(f"{WS}.data_received", "overrides", SERVING, "(self, data)"),
    _uvicorn(f"{WS}.handle_text", "overrides", SERVING, "(self, event)"),
    _uvicorn(f"{WS}.send_receive_event_to_app", "overrides", SERVING, "(self)"),
    _uvicorn(f"{WS}.queue", "sets", SERVING),
    _uvicorn(f"{WS}.conn", "reads", SERVING),
    _uvicorn(f"{WS}.frames", "sets", SERVING),
    _uvicorn(f"{WS}.curr_msg_data_type", "reads", SERVING),
    _uvicorn(f"{WS}.close_sent", "reads", SERVING),
    _uvicorn(f"{WS}.writable", "reads", SERVING),
    _uvicorn(f"{WS}.disconnected", "reads", SERVING),
    _uvicorn(f"{WS}.handshake_complete", "reads", SERVING),
    _uvicorn(f"{WS}.initial_response", "reads", SERVING),
    _uvicorn(f"{WS}.transport", "reads", SERVING),
    _uvicorn(f"{WS}.loop", "reads", SERVING),
    _uvicorn(f"{HTTP}", "subclasses", SERVING),
    _uvicorn(f"{HTTP}.connection_made", "overrides", SERVING, "(self, transport)"),
    _uvicorn(f"{HTTP}.on_message_begin", "overrides", SERVING, "(self)"),
    _uvicorn(f"{HTTP}.on_message_complete", "overrides", SERVING, "(self)"),
    _uvicorn(f"{HTTP}.handle_websocket_upgrade", "overrides", SERVING, "(self)"),
    _uvicorn(f"{HTTP}.connection_lost", "overrides", SERVING, "(self, exc)"),
    _uvicorn(f"{HTTP}.loop", "reads", SERVING),
    _uvicorn(f"{HTTP}.transport", "reads", SERVING),
    # ---- websockets: the sans-I/O connection LeanWebSocket frames and parses beside ------
    _websockets(f"{CONN}.state", "reads", SERVING),
    _websockets(f"{CONN}.extensions", "reads", SERVING),
    _websockets(f"{CONN}.debug", "reads", SERVING),
    _websockets(f"{CONN}.current_size", "reads", SERVING),
    _websockets(f"{CONN}.expect_continuation_frame", "reads", SERVING),
    _websockets(f"{CONN}.max_message_size", "reads", SERVING),
    _websockets(f"{CONN}.max_fragment_size", "reads", SERVING),
    _websockets(f"{CONN}.parser", "reads", SERVING),
    _websockets(f"{CONN}.reader", "reads", SERVING),
    _websockets(f"{CONN}.writes", "sets", SERVING),
    _websockets(f"{CONN}.send_text", "calls", SERVING, "(self, data, fin=True)"),
    _websockets("websockets.streams:StreamReader.at_eof", "reads", SERVING, "(self)"),
    _websockets("websockets.streams:StreamReader.buffer", "reads", SERVING),
    _websockets("websockets.speedups:apply_mask", "calls", SERVING),
    # ---- asyncio: WatchedLock ---------------------------------------------------------------
    Internal("python", "asyncio.locks", "Lock", "subclasses", TIMERS),
    Internal("python", "asyncio.locks", "Lock._locked", "sets", TIMERS),
    Internal("python", "asyncio.locks", "Lock._waiters", "reads", TIMERS),
)
