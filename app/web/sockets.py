"""Socket.IO handlers: parse (protocol), hand to the room, answer with an ack.

No rules here. The room and seat of a message come from the connection, never from its
payload: a connection belongs to one room, and the room knows which person holds it.
Every frame was counted and checked before it got here (app/realtime/transport.py).

No handler that a transport callback runs awaits a room: the disconnect handler runs
inside whatever closed the connection, which may be a room sending under its lock, so
the room hears of it in a task of its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import socketio
from socketio.exceptions import ConnectionRefusedError as Refused

from app.cluster.node import ClusterNode
from app.ops.config import Settings
from app.ops.limits import AddressLimit, PerAddress, address_key
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.realtime.guards import client_address
from app.tables.registry import Rooms
from app.tables.room import Room
from app.tables.values import BOT_NAMES
from app.tournaments.registry import Tournaments
from app.tournaments.room import TournamentRoom
from app.web.lookups import CodeLookups
from app.wire.names import SCREEN_WORDS, YOU_WORDS, check_avatar, clean_name
from app.wire.protocol import (
    CLIENT_EVENTS,
    COMMANDS,
    EVENT_COMMANDS,
    Ack,
    ErrorCode,
    Message,
    ProtocolError,
    ack,
    parse,
    parse_auth,
    refusal,
)


@dataclass(eq=False)
class Connection:
    room: (
        Room | TournamentRoom
    )  # a table, or an event (its organiser, stage, players between tables)
    address: str


def install(
    sio: socketio.AsyncServer,
    rooms: Rooms,
    settings: Settings,
    lookups: CodeLookups,
    cluster: ClusterNode | None = None,
    events: Tournaments | None = None,
) -> None:
    connections: dict[str, Connection] = {}
    # In a cluster the limit counts across processes, and a room may live in another one.
    connects: AddressLimit = (
        cluster.connect_limit if cluster else PerAddress.per_minute(settings.connects_per_minute)
    )
    tasks: set[asyncio.Task[None]] = set()  # held until done: asyncio keeps tasks weakly
    clock = rooms.clock  # the rooms' own: an arrival is stamped on the clock it is judged by

    def in_own_task(work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        tasks.add(task)
        task.add_done_callback(_finished)

    def _finished(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log_event("room_drop_failed", level=logging.ERROR, error=repr(task.exception()))

    def hang_up(sid: str) -> None:
        """A room closes a connection (a kicked person's; everyone's when it closes): after
        what it queued there, and with no room to hear of it."""
        connections.pop(sid, None)
        sio.start_background_task(sio.disconnect, sid)

    rooms.hang_up = hang_up

    async def find_room(code: str) -> Room | TournamentRoom | None:
        """A table's room or an event's (its page, its stage, its organiser)."""
        room: Room | TournamentRoom | None = events.get(code) if events is not None else None
        if room is None:
            room = await cluster.room_for(code) if cluster else rooms.get(code)
        if room is None and events is not None and cluster is not None:
            room = events.get(code)  # an event the cluster just brought here
        return room

    async def connect(sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        try:
            if rooms.draining:
                raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is restarting: try again")
            wanted = parse_auth(auth)
            # The page's word for the shared screen is the screens' own.
            words = YOU_WORDS if wanted.watch else YOU_WORDS + SCREEN_WORDS
            name = clean_name(wanted.name, reserved=BOT_NAMES + words)
            avatar = check_avatar(wanted.avatar)
            # The real client address (after the trusted proxies), one budget each.
            address = client_address(environ)
            # A person coming back with their token to a table or event served here tests no
            # code; anyone else spends the address's budget of room codes (app/web/lookups.py).
            here: Room | TournamentRoom | None = events.get(wanted.room) if events else None
            here = here or rooms.get(wanted.room)
            returning = here is not None and not here.closed and knows(here, wanted.token)
            if returning:
                room = await find_room(wanted.room)
            else:
                room = await lookups.find(address, lambda: find_room(wanted.room))
            if room is None:
                raise ProtocolError(ErrorCode.NO_ROOM, "there is no room with that code")
            # A person coming back with their token is no flood: after a blip every phone
            # at once does.
            returning = knows(room, wanted.token)
            if not returning and not await connects.admit(address, time.monotonic()):
                raise ProtocolError(ErrorCode.RATE_LIMITED, "too many connections: wait a moment")
            connections[sid] = Connection(room, address)
            _, replaced = await room.join(
                sid,
                name,
                wanted.token,
                avatar,
                watch=wanted.watch,
                address=address_key(address),
                invite=wanted.invite,
            )
        except ProtocolError as error:
            connections.pop(sid, None)
            raise Refused(error.message, refusal(error)) from None
        except Exception:  # a bug of ours: refused, as python-socketio forgets only a refusal
            log_event("connect_failed", level=logging.ERROR, exc_info=True, sid=sid)
            connection = connections.pop(sid, None)
            if connection is not None:  # what the room may have bound to it, let go
                in_own_task(connection.room.drop(sid, left=False))
            failed = ProtocolError(ErrorCode.INTERNAL, "the server failed: try again")
            raise Refused(failed.message, refusal(failed)) from None
        if replaced is not None and connections.pop(replaced, None) is not None:
            await sio.disconnect(replaced)  # the same person in a newer tab: drop the old one

    async def disconnect(sid: str, reason: str | None = None) -> None:
        connection = connections.pop(sid, None)
        if connection is not None:
            left = reason == sio.reason.CLIENT_DISCONNECT
            in_own_task(connection.room.drop(sid, left=left))  # never awaited here: see above

    async def client_event(event: str, sid: str, *args: Any) -> Ack:
        # python-socketio's catch-all: (event, sid, *args). The transport answers the
        # reserved names ("*" among them) itself, so this call shape always holds.
        now = clock.now()  # arrival: the time every time rule is judged by
        connection = connections.get(sid)
        if connection is None:
            answer = ack(ProtocolError(ErrorCode.NO_ROOM, "you are not in a room"))
        elif not isinstance(message := _parsed(event, args), Message):
            answer = message  # refused, with its reason
        else:
            room = connection.room
            try:
                if event not in (EVENT_COMMANDS if isinstance(room, TournamentRoom) else COMMANDS):
                    # A table's command on an event's connection, or an event's at a table.
                    refused = ProtocolError(ErrorCode.UNKNOWN_EVENT, "not here: a table or event")
                    answer = ack(refused)
                elif CLIENT_ENDS[event]:
                    answer = await _leave(sid, connection)
                elif isinstance(room, TournamentRoom):
                    answer = await room.act(sid, event, message, now)
                elif cluster is not None and not cluster.judges(room):
                    # Not surely this process's table any more: never judged here.
                    answer = ack(
                        ProtocolError(ErrorCode.SHUTTING_DOWN, "the table moved: try again")
                    )
                else:
                    answer = await room.act(sid, event, message, now)
            except Exception:  # a bug of ours: the client still gets its answer
                log_event("event_failed", level=logging.ERROR, exc_info=True, name=event, sid=sid)
                answer = ack(ProtocolError(ErrorCode.INTERNAL, "the server failed: try again"))
        _count(rooms.metrics, event, answer, now, clock.now())
        return answer

    async def _leave(sid: str, connection: Connection) -> Ack:
        """A goodbye: the room hears it at once, then the connection closes (after this ack,
        which is queued first). A bare disconnect cannot tell a goodbye from a lost network."""
        connections.pop(sid, None)
        await connection.room.drop(sid, left=True)
        sio.start_background_task(sio.disconnect, sid)
        return ack()

    sio.on("connect", connect)
    sio.on("disconnect", disconnect)
    sio.on("*", client_event)  # every client event; protocol.CLIENT_EVENTS says which exist


# Whether each client event ends its connection (a table's or an event's `leave`).
CLIENT_ENDS = {name: c.ends_connection for name, c in (*COMMANDS.items(), *EVENT_COMMANDS.items())}


def knows(room: Room | TournamentRoom, token: str | None) -> bool:
    """Whether `token` is of someone this table or event knows."""
    if token is None:
        return False
    return room.knows(token) if isinstance(room, TournamentRoom) else room.table.knows(token)


def _parsed(event: str, args: tuple[Any, ...]) -> Message | Ack:
    """The client event's validated payload, or the answer that refuses it."""
    try:
        return parse(event, args)
    except ProtocolError as error:
        return ack(error)


def _count(metrics: Metrics, event: str, answer: Ack, arrived: float, answered: float) -> None:
    metrics.handled(event if event in CLIENT_EVENTS else "unknown")
    if not answer["ok"]:
        metrics.refused(answer["error"]["code"])
    elif event == "slap":
        metrics.slap_judging.observe(answered - arrived)
