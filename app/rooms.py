"""Rooms: the people in them, their seats and host, the engine game, and the room's clock.

Each room applies one thing at a time, in arrival order, under its own asyncio.Lock: a
person's message, a bot's move, an autopilot flip, a timer. Every change ends in `_commit`,
which numbers it, sends each person their own `state` and everyone the `event`s, then sets
the timers that keep the game moving.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, Protocol

from app import lobby
from app.bots import Bot, Plan
from app.config import Settings
from app.logs import log_event
from app.metrics import Metrics
from app.people import People, Person
from app.protocol import (
    EVENT,
    MAX_SEATS,
    STATE,
    WELCOME,
    Ack,
    ErrorCode,
    EventDict,
    Message,
    ProtocolError,
    Seen,
    Slap,
    ack,
)
from app.timers import Timers, WatchedLock
from app.views import build_state
from engine import Event, FalseSlap, Flip, Game, IllegalAction, Rules

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L
CODE_LENGTH = 6

Phase = Literal["lobby", "playing", "over"]
Occupant = Person | Bot


class Transport(Protocol):
    """What a room needs from the Socket.IO server (python-socketio's AsyncServer fits)."""

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None: ...

    async def enter_room(self, sid: str, room: str) -> None: ...


class Room:
    def __init__(
        self,
        code: str,
        rules: Rules,
        settings: Settings,
        transport: Transport,
        on_close: Callable[[str], None],
        metrics: Metrics,
    ) -> None:
        self.code = code
        self.metrics = metrics
        self.rules = rules
        self.settings = settings
        self.transport = transport
        self._on_close = on_close
        self.version = 0
        self.phase: Phase = "lobby"
        self.game: Game | None = None
        self.games = 0
        self.first = 0
        self.seats: list[Occupant | None] = [None] * MAX_SEATS
        self.people = People(lambda p: self.seat_of(p) is not None, settings.max_people_per_room)
        self.closed = False
        self.lock = WatchedLock(code, metrics)  # logs a lock held past 1 s
        self._turn_started_at = 0.0
        self._bot_plans: dict[int, Plan] = {}
        self._timers = Timers(self.lock)
        # Until someone joins, a room lives only long enough for its creator to arrive.
        self._timers.at("expiry", time.monotonic() + settings.unused_room_seconds, self._expire)

    # ---- reading -----------------------------------------------------------------------

    @property
    def host(self) -> Person | None:
        return self.people.host

    def seat_of(self, person: Person) -> int | None:
        for seat, occupant in enumerate(self.seats):
            if occupant is person:
                return seat
        return None

    def connected(self) -> list[Person]:
        return self.people.connected()

    def spectators(self) -> list[Person]:
        return [p for p in self.connected() if self.seat_of(p) is None]

    def summary(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "phase": self.phase,
            "game": self.games,
            "seated": sum(occupant is not None for occupant in self.seats),
            "spectators": len(self.spectators()),
        }

    # ---- people come and go ------------------------------------------------------------

    async def join(self, sid: str, name: str, token: str | None) -> tuple[Person, str | None]:
        """Connection `sid` is now the person holding `token` (or a new person); returns them
        and the sid of the older connection this one replaces, for the caller to close."""
        async with self.lock:
            if self.closed:
                raise ProtocolError(ErrorCode.NO_ROOM, "this room has closed")
            now = time.monotonic()
            person, replaced, events = self.people.admit(sid, name, token, now)
            for event in events:
                if event["kind"] == "reconnect":
                    event["seat"] = self.seat_of(person)
            events += self.people.hand_over_if_gone(now, self.settings.host_handover_seconds)
            await self.transport.enter_room(sid, self.code)  # the events go to the room at once
            await self.transport.emit(WELCOME, {"player": person.id, "token": person.token}, to=sid)
            await self._commit(events, now)
            return person, replaced

    async def drop(self, sid: str, *, left: bool) -> None:
        """Connection `sid` is gone; `left` when the person said goodbye (`leave`)."""
        async with self.lock:
            now = time.monotonic()
            person = self.people.release(sid, now)
            if person is None or self.closed:
                return
            seat = self.seat_of(person)
            events: list[EventDict] = []
            if left and seat is not None and self.phase != "playing":
                lobby.reopen(self)  # as `stand` does: the finished table is cleared
                events += lobby.leave_seat(self, person, seat)
            events.append(
                {"kind": "leave" if left else "disconnect", "player": person.id, "seat": seat}
            )
            if person is self.host:
                if left or self.settings.host_handover_seconds == 0:
                    events += self.people.hand_over()
                else:
                    when = now + self.settings.host_handover_seconds
                    self._timers.at("host", when, self._host_timeout)
            self.people.forget_if_unneeded(person)
            await self._commit(events, now)

    async def _host_timeout(self, now: float) -> None:
        events = self.people.hand_over_if_gone(now, self.settings.host_handover_seconds)
        if events and not self.closed:
            await self._commit(events, now)

    # ---- what people do ----------------------------------------------------------------

    async def act(self, sid: str, event: str, message: Message, now: float) -> Ack:
        """Applies a validated client message from connection `sid`, arrived at `now`."""
        async with self.lock:
            person = self.people.by_sid(sid)
            try:
                if person is None or self.closed:
                    raise ProtocolError(ErrorCode.NO_ROOM, "you are not in this room")
                if event in ("flip", "slap"):
                    return ack(events=await self._play_for(person, event, message, now))
                events, fields = lobby.HANDLERS[event](self, person, message, now)
            except ProtocolError as error:
                return ack(error)
            except IllegalAction as refused:
                return ack(ProtocolError(ErrorCode(refused.code), refused.message))
            if self.phase == "playing" and event in ("start", "rematch"):
                self._new_game(now)
            if events:
                await self._commit(events, now)
            return ack(**fields)

    async def _play_for(
        self, person: Person, action: str, message: Message, now: float
    ) -> list[EventDict]:
        seat = self.seat_of(person)
        if seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "spectators cannot play: sit first")
        pile_id = message.pile_id if isinstance(message, Slap) else None
        if pile_id is not None and self.game is not None and pile_id > self.game.pile_id:
            raise ProtocolError(ErrorCode.BAD_REQUEST, "no such pile yet: send the pile you see")
        return await self._play(seat, action, pile_id, now)

    def _new_game(self, now: float) -> None:
        self.metrics.games_started.inc()
        players = sum(occupant is not None for occupant in self.seats)
        log_event("game_started", room=self.code, game=self.games, players=players)
        self._turn_started_at = now
        self._bot_plans.clear()
        for occupant in self.seats:
            if isinstance(occupant, Bot):
                occupant.forget()

    # ---- the game: one path for people, bots and the autopilot ------------------------

    async def _play(
        self, seat: int, action: str, pile_id: int | None, now: float, *, auto: bool = False
    ) -> list[EventDict]:
        game = self.game
        if game is None:
            raise ProtocolError(ErrorCode.WRONG_PHASE, "no game is on")
        # Judged and applied in one synchronous engine call: no await in between.
        happened = game.flip(seat, now) if action == "flip" else game.slap(seat, now, pile_id)
        if any(e.kind != "late" for e in happened):
            self._turn_started_at = now
        return await self._commit_game(happened, now, auto=auto)

    async def _commit_game(
        self, happened: list[Event], now: float, *, auto: bool = False
    ) -> list[EventDict]:
        game = self.game
        assert game is not None
        if game.over and self.phase != "over":
            self.phase = "over"
            self.metrics.games_finished.inc()
            log_event(
                "game_over",
                room=self.code,
                game=self.games,
                winner=game.winner,
                reason=game.win_reason,
            )
        events = [event_dict(e, now, auto=auto) for e in happened]
        await self._commit(events, now)
        return events

    async def _bot_move(self, seat: int, bot: Bot, plan: Plan, now: float) -> None:
        if self.closed or self.phase != "playing" or self.seats[seat] is not bot:
            return
        try:
            await self._play(seat, plan.action, plan.pile_id, now)
        except (IllegalAction, ProtocolError):
            bot.forget()  # the table moved on: look again
            self._bot_plans.pop(seat, None)
            self._schedule_bots()

    async def _autoflip(self, now: float) -> None:
        game = self.game
        if self.closed or self.phase != "playing" or game is None:
            return
        seat = game.next_to_play
        try:
            if seat is None:
                return
            await self._play(seat, "flip", None, now, auto=True)
        except IllegalAction:
            when = now + max(self.settings.autoflip_pause_seconds, 0.05)
            self._timers.at("autopilot", when, self._autoflip)

    async def _tick(self, now: float) -> None:
        """A freeze ended or the time limit came: let the engine's clock catch up."""
        if self.closed or self.phase != "playing" or self.game is None:
            return
        await self._commit_game(self.game.tick(now), now)

    # ---- after every change ------------------------------------------------------------

    async def _commit(self, events: list[EventDict], now: float) -> None:
        self.version += 1
        for event in events:
            event["version"] = self.version
        seen: dict[int | None, Seen] = {}  # state per seat, shared by recipients
        await self._broadcast(events, seen)
        self._schedule(now, seen)

    async def _broadcast(self, events: list[EventDict], seen: dict[int | None, Seen]) -> None:
        """Each person's own state, then the events to all. Every send is queued on its
        connection before this returns, so the next change's messages come after these."""
        states = [
            self.transport.emit(STATE, build_state(self, p, self.seat_of(p), seen), to=p.sid)
            for p in self.connected()
        ]
        await asyncio.gather(*states)
        for event in events:
            await self.transport.emit(EVENT, event, to=self.code)

    def _schedule(self, now: float, seen: dict[int | None, Seen]) -> None:
        self._schedule_autopilot()
        self._schedule_tick()
        self._schedule_bots(seen)
        self._schedule_abandon(now)
        if self.connected():
            self._timers.cancel("expiry")
        elif not self._timers.pending("expiry"):
            self._timers.at("expiry", now + self.settings.room_expiry_seconds, self._expire)

    def _schedule_abandon(self, now: float) -> None:
        """A game nobody at the table can play any more (every seat still in is a person who
        is gone) ends after a while: the autopilot flips but never slaps, so it would stall
        at the first Jack while spectators wait for the lobby."""
        if self.phase == "playing" and not self._anyone_can_play():
            if not self._timers.pending("abandon"):
                self._timers.at("abandon", now + self.settings.abandon_seconds, self._abandon)
        else:
            self._timers.cancel("abandon")

    def _anyone_can_play(self) -> bool:
        game = self.game
        return game is not None and any(
            isinstance(occupant, Bot) or (isinstance(occupant, Person) and occupant.connected)
            for seat, occupant in enumerate(self.seats[: game.players])
            if not game.is_out(seat)
        )

    async def _abandon(self, now: float) -> None:
        if self.closed or self.phase != "playing" or self._anyone_can_play():
            return
        log_event("game_abandoned", room=self.code, game=self.games)
        lobby.reopen(self)
        await self._commit([{"kind": "abandon", "game": self.games}], now)

    def _schedule_autopilot(self) -> None:
        """Flips for the seat to play once it is idle, or disconnected, for too long."""
        game = self.game
        if self.phase != "playing" or game is None or game.slap_open or game.next_to_play is None:
            self._timers.cancel("autopilot")
            return
        seat, settings = game.next_to_play, self.settings
        when = self._turn_started_at + settings.idle_autoflip_seconds
        occupant = self.seats[seat]
        if isinstance(occupant, Person) and occupant.disconnected_at is not None:
            gone = occupant.disconnected_at + settings.disconnected_autoflip_seconds
            paused = self._turn_started_at + settings.autoflip_pause_seconds
            when = min(when, max(gone, paused))
        self._timers.at("autopilot", max(when, game.frozen_until(seat)), self._autoflip)

    def _schedule_tick(self) -> None:
        """Wakes the game when a freeze ends (so `frozen_ms` drops to 0) or time runs out."""
        game = self.game
        if self.phase != "playing" or game is None:
            self._timers.cancel("tick")
            return
        wakes = [game.frozen_until(s) for s in range(game.players)]
        if game.deadline is not None:
            wakes.append(game.deadline)
        future = [when for when in wakes if when > game.now]
        if future:
            self._timers.at("tick", min(future), self._tick)
        else:
            self._timers.cancel("tick")

    def _schedule_bots(self, seen: dict[int | None, Seen] | None = None) -> None:
        for seat, occupant in enumerate(self.seats):
            if not isinstance(occupant, Bot):
                continue
            timer = f"bot{seat}"
            plan = occupant.plan(build_state(self, None, seat, seen)) if self.game else None
            if plan is None:
                self._timers.cancel(timer)
                self._bot_plans.pop(seat, None)
            elif plan is not self._bot_plans.get(seat):
                self._bot_plans[seat] = plan
                when = time.monotonic() + plan.delay
                self._timers.at(timer, when, partial(self._bot_move, seat, occupant, plan))

    async def _expire(self, now: float) -> None:
        if not self.connected() and not self.closed:
            self.close()

    def close(self) -> None:
        self.closed = True
        self._timers.cancel_all()
        self._on_close(self.code)


def event_dict(event: Event, now: float, *, auto: bool = False) -> EventDict:
    """An engine event as sent: times become milliseconds left, never server clock values."""
    data = event.to_dict()
    if isinstance(event, FalseSlap):
        del data["frozen_until"]
        data["frozen_ms"] = max(0, round((event.frozen_until - now) * 1000))
    if isinstance(event, Flip):
        data["auto"] = auto
    return data


class Rooms:
    """Every open room, by code."""

    def __init__(
        self, settings: Settings, transport: Transport, metrics: Metrics | None = None
    ) -> None:
        self.settings = settings
        self.transport = transport
        self.metrics = metrics or Metrics()
        self.draining = False  # the server is shutting down: no new rooms or people
        self._rooms: dict[str, Room] = {}
        self.metrics.watch(rooms=lambda: len(self._rooms), connected=self.connected_count)

    def create(self, rules: Rules | None = None) -> Room:
        if self.draining:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is restarting: try again")
        if len(self._rooms) >= self.settings.max_rooms:
            raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "too many rooms are open: try later")
        code = new_code()
        while code in self._rooms:
            code = new_code()
        rules = rules or Rules()
        room = Room(code, rules, self.settings, self.transport, self._closed, self.metrics)
        self._rooms[code] = room
        log_event("room_opened", room=code, rules=rules.to_dict())
        return room

    def get(self, code: object) -> Room | None:
        """The open room with this code, in any case; None when there is none."""
        if not isinstance(code, str):
            return None
        return self._rooms.get(code.strip().upper())

    def __len__(self) -> int:
        return len(self._rooms)

    def connected_count(self) -> int:
        return sum(len(room.connected()) for room in self._rooms.values())

    async def drain(self) -> None:
        """Shutting down: no new rooms or people, and everyone is told why the table ends."""
        self.draining = True
        log_event("draining", rooms=len(self._rooms), connected=self.connected_count())
        notice = {"kind": "restart", "message": "The server is restarting: this table will close."}
        await self.transport.emit(EVENT, notice)  # no `to`: every connection

    def close_all(self) -> None:
        for room in list(self._rooms.values()):
            room.close()

    def _closed(self, code: str) -> None:
        self._rooms.pop(code, None)
        log_event("room_closed", room=code)


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
