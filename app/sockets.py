"""Socket.IO handlers: rate limit, parse (protocol), hand to the room, answer with an ack.

No rules here. The room and seat of a message come from the connection, never from its
payload: a connection belongs to one room, and the room knows which person holds it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import socketio
from socketio.exceptions import ConnectionRefusedError as Refused

from app.config import Settings
from app.limits import PerAddress, TokenBucket
from app.logs import log_event
from app.metrics import Metrics
from app.protocol import (
    CLIENT_EVENTS,
    COMMANDS,
    Ack,
    ErrorCode,
    ProtocolError,
    ack,
    clean_name,
    parse,
    parse_auth,
    refusal,
)
from app.rooms import Room, Rooms


@dataclass(eq=False)
class Connection:
    room: Room
    bucket: TokenBucket
    address: str
    refused_in_a_row: int = 0
    cut_off: bool = False


def install(sio: socketio.AsyncServer, rooms: Rooms, settings: Settings) -> None:
    connections: dict[str, Connection] = {}
    connects = PerAddress.per_minute(settings.connects_per_minute)

    async def connect(sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        try:
            if rooms.draining:
                raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is restarting: try again")
            address = environ.get("REMOTE_ADDR") or "unknown"
            if not connects.take(address, time.monotonic()):
                raise ProtocolError(ErrorCode.RATE_LIMITED, "too many connections: wait a moment")
            wanted = parse_auth(auth)
            name = clean_name(wanted.name)
            room = rooms.get(wanted.room)
            if room is None:
                raise ProtocolError(ErrorCode.NO_ROOM, "there is no room with that code")
            bucket = TokenBucket(settings.rate_per_second, settings.rate_burst)
            connections[sid] = Connection(room, bucket, address)
            _, replaced = await room.join(
                sid, name, wanted.token, wanted.avatar, watch=wanted.watch
            )
        except ProtocolError as error:
            connections.pop(sid, None)
            raise Refused(error.message, refusal(error)) from None
        if replaced is not None and connections.pop(replaced, None) is not None:
            await sio.disconnect(replaced)  # the same person in a newer tab: drop the old one

    async def disconnect(sid: str, reason: str | None = None) -> None:
        connection = connections.pop(sid, None)
        if connection is not None:
            await connection.room.drop(sid, left=reason == sio.reason.CLIENT_DISCONNECT)

    async def client_event(*received: Any) -> Ack:
        now = time.monotonic()  # arrival: the time every time rule is judged by
        event, sid, args = split_catch_all(received)
        answer = await handle(event, sid, args, now)
        _count(rooms.metrics, event, answer, now)
        return answer

    def split_catch_all(received: tuple[Any, ...]) -> tuple[str, str, tuple[Any, ...]]:
        """python-socketio calls the catch-all with (event, sid, *args), except for an event
        literally named "*", which it calls with (sid, *args). A sid is never an event name
        we know, and a client knows no sid but its own, so a first argument that is a live
        sid means the "*" case, from that sid."""
        if received and received[0] in connections:
            return "*", received[0], received[1:]
        return received[0], received[1], received[2:]

    async def handle(event: str, sid: str, args: tuple[Any, ...], now: float) -> Ack:
        connection = connections.get(sid)
        if connection is None or connection.cut_off:
            return ack(ProtocolError(ErrorCode.NO_ROOM, "you are not in a room"))
        if not connection.bucket.take(now):
            return await _refuse_flood(sid, connection)
        connection.refused_in_a_row = 0
        try:
            message = parse(event, args)
        except ProtocolError as error:
            return ack(error)
        try:
            if COMMANDS[event].ends_connection:
                return await _leave(sid, connection)
            return await connection.room.act(sid, event, message, now)
        except Exception:  # a bug of ours: the client still gets its answer
            log_event("event_failed", level=logging.ERROR, exc_info=True, name=event, sid=sid)
            return ack(ProtocolError(ErrorCode.INTERNAL, "the server failed: try again"))

    async def _leave(sid: str, connection: Connection) -> Ack:
        """A goodbye: the room hears it at once, then the connection closes (after this ack,
        which is queued first). A bare disconnect cannot tell a goodbye from a lost network."""
        connections.pop(sid, None)
        await connection.room.drop(sid, left=True)
        sio.start_background_task(sio.disconnect, sid)
        return ack()

    async def _refuse_flood(sid: str, connection: Connection) -> Ack:
        connection.refused_in_a_row += 1
        if connection.refused_in_a_row >= settings.flood_cutoff:
            connection.cut_off = True
            eio_sid = sio.manager.eio_sid_from_sid(sid, "/")
            log_event(
                "rate_limited_cut_off",
                level=logging.WARNING,
                sid=sid,
                room=connection.room.code,
                address=connection.address,
            )
            if eio_sid is not None:
                # The transport, not just the namespace: a flooder must reconnect from scratch.
                sio.start_background_task(sio.eio.disconnect, eio_sid)
        return ack(ProtocolError(ErrorCode.RATE_LIMITED, "too many messages: slow down"))

    sio.on("connect", connect)
    sio.on("disconnect", disconnect)
    sio.on("*", client_event)  # every client event; protocol.CLIENT_EVENTS says which exist


def _count(metrics: Metrics, event: str, answer: Ack, arrived: float) -> None:
    metrics.events.labels(event if event in CLIENT_EVENTS else "unknown").inc()
    if not answer["ok"]:
        metrics.rejected.labels(answer["error"]["code"]).inc()
    elif event == "slap":
        metrics.slap_judging.observe(time.monotonic() - arrived)
