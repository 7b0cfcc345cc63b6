"""Switches one override of the lean transport off (bench/serve.py, BENCH_ABLATE=name,...):
the library's own path is put back for it, so `bench.load --ablate name` measures what it
buys. Nothing in app/ changes unless a benchmark's server sets BENCH_ABLATE.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import engineio
import socketio
from engineio import async_socket
from engineio import packet as engineio_packet
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState

from app.realtime import queues, serving, transport
from app.realtime.eager import ResumingWork

EIO = transport.GameEngineIO
SOCKET = transport.GameSocket
SIO = transport.GameServer
WS = serving.LeanWebSocket


def _frames() -> None:
    """Incoming frames through websockets' parser, not the hand-parsed reader."""
    WS.data_received = WebSocketsSansIOProtocol.data_received  # type: ignore[method-assign]


def _listener() -> None:
    """Incoming text through uvicorn's queue and the ASGI `receive` (GameSocket._read), not
    handed to the socket as uvicorn reads it (the hand-parsed reader needs the listener)."""
    WS.listener = property(lambda self: None, lambda self, value: None)  # type: ignore[assignment]


def _write() -> None:
    """Every outgoing packet through the connection's writer task, none written at once."""
    queues.Outbox.send_now = lambda self, text: False  # type: ignore[method-assign]


def _framing() -> None:
    """Outgoing frames built by websockets' `send_text`, not framed by hand."""

    def send_now(self: Any, text: str) -> bool:
        flushes = self.flushes
        if (
            flushes is None
            or not self.writable.is_set()
            or self.disconnected
            or self.close_sent
            or not self.handshake_complete
            or self.initial_response is not None
            or self.transport.is_closing()
        ):
            return False
        try:
            self.conn.send_text(text.encode())
        except InvalidState:
            return False
        if not self._flush_due:
            self._flush_due = True
            flushes.add(self)
        return True

    WS.send_now = send_now  # type: ignore[method-assign]


def _flush() -> None:
    """Each frame written as it is framed, not one write per websocket per loop pass."""
    serving.Flushes.add = lambda self, websocket: websocket._flush()  # type: ignore[method-assign]


def _reader_writer() -> None:
    """python-engineio's own websocket reader and writer (a task and `wait_for` per frame
    read, a hand-over to the writer task per packet), and its `poll`."""
    SOCKET._websocket_handler = async_socket.AsyncSocket._websocket_handler  # type: ignore[method-assign]
    SOCKET.poll = async_socket.AsyncSocket.poll  # type: ignore[method-assign]
    _listener()


def _pings() -> None:
    """python-engineio's pings: a task sleeping ping_interval per pong, its service task."""
    SOCKET.schedule_ping = async_socket.AsyncSocket.schedule_ping  # type: ignore[method-assign]
    EIO._service_task = engineio.AsyncServer._service_task  # type: ignore[method-assign]


def _eager() -> None:
    """Every message in a task of its own (as python-engineio starts it), none run at once."""

    def on_message(self: Any, sid: str, data: Any) -> None:
        handler = self.handlers.get("message")
        if handler is not None:
            self._hold(ResumingWork(handler(sid, data), line=self._to_begin), self._message_settled)

    EIO.on_message = on_message  # type: ignore[method-assign]


def _decode() -> None:
    """Every frame decoded by python-socketio's Packet, not orjson."""
    SIO._plain_event = lambda self, text: None  # type: ignore[method-assign]


def _dispatch() -> None:
    """An event through python-socketio's `_handle_event`, not straight to the catch-all."""
    SIO._catch_all = lambda self, namespace, event: None  # type: ignore[method-assign]


def _ack() -> None:
    """An ack built as python-socketio's Packet and encoded by it, not by orjson."""

    def send_answer(self: Any, eio_sid: str, namespace: str, id: Any, answer: Any) -> None:
        if answer is self.not_handled or id is None:
            return
        args = [] if answer is None else list(answer) if isinstance(answer, tuple) else [answer]
        self._queue_packet(eio_sid, self._ack_packet(namespace, id, args))

    SIO._send_answer = send_answer  # type: ignore[method-assign]


def _outgoing() -> None:
    """A state sent as a python-engineio Packet through `send_packet`'s queueing, not its
    text written as it is."""

    def queue_text(self: Any, sid: str, text: str) -> None:
        self.queue_packet(sid, engineio_packet.Packet(engineio_packet.MESSAGE, data=text[1:]))

    EIO.queue_text = queue_text  # type: ignore[method-assign]


def _queue_in() -> None:
    """uvicorn's own asyncio.Queue for a websocket's incoming events."""
    init = WS.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.queue = asyncio.Queue()

    WS.__init__ = __init__  # type: ignore[method-assign]


def _environ() -> None:
    """The connect request's body reader kept for the connection's life."""

    async def _handle_eio_connect(self: Any, eio_sid: str, environ: dict[str, Any]) -> Any:
        if self.budget_for(eio_sid, environ) is None:
            return False
        self.eio.adopt(eio_sid)
        await socketio.AsyncServer._handle_eio_connect(self, eio_sid, environ)

    SIO._handle_eio_connect = _handle_eio_connect  # type: ignore[method-assign]


GROUPS: dict[str, Callable[[], None]] = {
    "frames": _frames,
    "listener": _listener,
    "write": _write,
    "framing": _framing,
    "flush": _flush,
    "reader-writer": _reader_writer,
    "pings": _pings,
    "eager": _eager,
    "decode": _decode,
    "dispatch": _dispatch,
    "ack": _ack,
    "outgoing": _outgoing,
    "queue-in": _queue_in,
    "environ": _environ,
}


def apply(names: str) -> list[str]:
    """Switches off each override named (comma-separated); returns their names."""
    chosen = [name.strip() for name in names.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in GROUPS]
    if unknown:
        raise SystemExit(f"BENCH_ABLATE: no override {unknown}; known: {', '.join(GROUPS)}")
    for name in chosen:
        GROUPS[name]()
    return chosen
