"""Switches overrides of the transport off (bench/serve.py, BENCH_ABLATE=name,...): the
libraries' own path is put back for each one named, so that `bench.load --together --ablate
name` measures what it buys (docs/performance.md, "What each override buys"). Nothing in app/
changes unless a benchmark's server sets BENCH_ABLATE.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from app.ops.logs import log_event
from app.realtime import frames, pings, queues, serving, transport, websocket
from app.realtime.eager import first_step

EIO = transport.GameEngineIO
SIO = transport.GameServer
_WAITING: set[asyncio.Future[Any]] = set()  # sends begun at once that wait for their client


def _engineio_pings() -> None:
    """python-engineio's pings for every connection (a task sleeping ping_interval per ping,
    its service task visiting every socket), not app/realtime/pings.py's sweep."""
    init = EIO.__init__

    def __init__(self: Any, **options: Any) -> None:
        init(self, **{**options, "monitor_clients": True})

    EIO.__init__ = __init__  # type: ignore[method-assign]
    connect = SIO.engineio_connect

    async def engineio_connect(self: Any, eio_sid: str, environ: dict[str, Any]) -> Any:
        socket = self.eio.sockets.get(eio_sid)
        answer = await connect(self, eio_sid, environ)
        if socket is not None and socket.last_ping is None:
            socket.last_ping = 1  # python-engineio's own first ping, as it schedules it
            socket.schedule_ping()
        return answer

    SIO.engineio_connect = engineio_connect  # type: ignore[method-assign]
    pings.PingSweep.watch = lambda self, connection: None  # type: ignore[method-assign]
    pings.PingSweep.answered = _schedule_ping  # type: ignore[method-assign, assignment]


def _schedule_ping(sweep: Any, connection: Any) -> None:
    """A pong: python-engineio's next ping, a task sleeping until it."""
    connection.socket.schedule_ping()


def _reader_writer() -> None:
    """python-engineio's own websocket driver, reader and writer (a task and `wait_for` per
    frame read, a hand-over to the writer task per packet) and its pings: none of
    app/realtime/websocket.py. Its reader still answers each message where it reads it."""
    EIO.serve_websockets = lambda self, heard, settings: None  # type: ignore[method-assign]
    _engineio_pings()


def _frames() -> None:
    """Every websocket frame parsed by uvicorn (websockets' parser, an ASGI event queued and
    received per frame), none read by app/realtime/frames.py as it arrives. (What the app
    sends is still written as frames of its own.)"""
    frames.FrameReader.take = lambda self, data, forward: forward(data)  # type: ignore[method-assign]


def _frame_writer() -> None:
    """Every packet written at once through uvicorn's ASGI `send` (an event, websockets'
    Frame serialized, a coroutine started where it is sent), not as a frame of ours
    (app/realtime/frames.py `write_frame`)."""

    def write_frame(socket: Any, reader: Any, text: str) -> bool:
        if socket.paused or reader.for_good:
            return False  # the connection's writer sends it, as before
        try:  # uvicorn's protocol's own `send`
            rest = first_step(socket.inner.send({"type": "websocket.send", "text": text}))
        except Exception:  # the client is gone: its reader ends the connection
            return True
        if rest is not None:  # a client reading slowly (this benchmark's read at once)
            task = asyncio.ensure_future(rest)
            _WAITING.add(task)
            task.add_done_callback(_WAITING.discard)
        return True

    websocket.write_frame = write_frame  # type: ignore[attr-defined]


def _write() -> None:
    """Every outgoing packet through the connection's writer task, none written at once."""
    queues.Outbox.send_now = lambda self, text: False  # type: ignore[method-assign]


def _eager() -> None:
    """Every event in a task of its own (as python-engineio starts a message), none run at
    once where it is read."""

    def heard(self: Any, eio_sid: str, data: Any) -> Any:
        work = self.engineio_message(eio_sid, data)
        if not (isinstance(data, str) and data[:1] == transport.EVENT_TYPE):
            return work
        task = asyncio.get_running_loop().create_task(work)
        self._handling.add(task)
        task.add_done_callback(self._settled)
        return None

    SIO.heard = heard  # type: ignore[method-assign]


def _decode() -> None:
    """Every frame decoded by python-socketio's Packet, not orjson."""
    transport.plain_event = lambda text: None


def _dispatch() -> None:
    """An event through python-socketio's own dispatch (its decoding, `_handle_event`,
    `_trigger_event`, its ack), not straight to the app's handler of every event."""

    async def event(
        self: Any, eio_sid: str, namespace: Any, pkt_id: Any, args: Any, data: str
    ) -> None:
        await self._socketio["message"](eio_sid, data)

    SIO._event = event  # type: ignore[method-assign]


def _ack() -> None:
    """An ack built as python-socketio's Packet and encoded by it, not by orjson."""

    def send_answer(self: Any, eio_sid: str, namespace: Any, id: Any, answer: Any) -> None:
        if id is None:
            return
        args = [] if answer is None else list(answer) if isinstance(answer, tuple) else [answer]
        self._queue_packet(eio_sid, self._ack_packet(namespace, id, args))

    SIO._send_answer = send_answer  # type: ignore[method-assign]


def _environ() -> None:
    """The connect request's body reader kept for the connection's life."""
    connect = SIO.engineio_connect

    async def engineio_connect(self: Any, eio_sid: str, environ: dict[str, Any]) -> Any:
        body = environ.get("wsgi.input")
        answer = await connect(self, eio_sid, environ)
        if body is not None:
            environ["wsgi.input"] = body
        return answer

    SIO.engineio_connect = engineio_connect  # type: ignore[method-assign]


def _light() -> None:
    """uvicorn's websocket protocol as it is: its asyncio.Queue of ASGI events and the
    handshake request's headers kept for the connection's life."""
    serving.lighten = lambda websocket: None


GROUPS: dict[str, Callable[[], None]] = {
    "reader-writer": _reader_writer,
    "frames": _frames,
    "frame-writer": _frame_writer,
    "write": _write,
    "eager": _eager,
    "decode": _decode,
    "dispatch": _dispatch,
    "ack": _ack,
    "pings": _engineio_pings,
    "environ": _environ,
    "light": _light,
}


def apply(names: str) -> list[str]:
    """Switches off each override named (comma-separated); returns their names."""
    chosen = [name.strip() for name in names.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in GROUPS]
    if unknown:
        raise SystemExit(f"BENCH_ABLATE: no override {unknown}; known: {', '.join(GROUPS)}")
    for name in chosen:
        GROUPS[name]()
    log_event("ablated", level=logging.WARNING, overrides=chosen)
    return chosen
