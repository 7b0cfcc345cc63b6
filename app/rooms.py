"""Rooms: the people in them, their seats and host, the engine game, and the room's clock.

Each room applies one thing at a time, in arrival order, under its own asyncio.Lock: a
person's message, a bot's move, an autopilot flip, a timer. Every change ends in `_commit`,
which numbers it, sends each person their own `state` and everyone the `event`s, then sets
the timers that keep the game moving.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, Protocol

from app.bots import Bot, Level, Plan
from app.config import Settings
from app.protocol import (
    EVENT,
    MAX_SEATS,
    STATE,
    WELCOME,
    Ack,
    AddBot,
    ErrorCode,
    Message,
    ProtocolError,
    Remove,
    RulesUpdate,
    Sit,
    Slap,
    ack,
)
from app.timers import Timers
from app.views import build_state
from engine import Event, FalseSlap, Flip, Game, IllegalAction, Rules

log = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L
CODE_LENGTH = 6
MIN_PLAYERS = 2

Phase = Literal["lobby", "playing", "over"]
EventDict = dict[str, Any]


class Transport(Protocol):
    """What a room needs from the Socket.IO server (python-socketio's AsyncServer fits)."""

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None: ...


@dataclass(eq=False)
class Person:
    id: str
    token: str
    name: str
    sid: str | None
    connected_since: float
    disconnected_at: float | None = None

    @property
    def connected(self) -> bool:
        return self.sid is not None


Occupant = Person | Bot


class Room:
    def __init__(
        self,
        code: str,
        rules: Rules,
        settings: Settings,
        transport: Transport,
        on_close: Any,
    ) -> None:
        self.code = code
        self.rules = rules
        self.settings = settings
        self.transport = transport
        self._on_close = on_close
        self.version = 0
        self.phase: Phase = "lobby"
        self.game: Game | None = None
        self.games = 0
        self.first = 0
        self.host: Person | None = None
        self.seats: list[Occupant | None] = [None] * MAX_SEATS
        self.closed = False
        self.lock = asyncio.Lock()
        self._people: dict[str, Person] = {}  # by token
        self._by_sid: dict[str, Person] = {}
        self._turn_started_at = 0.0
        self._bot_plans: dict[int, Plan] = {}
        self._timers = Timers()
        self._timers.at("expiry", time.monotonic() + settings.room_expiry_seconds, self._expire)

    # ---- reading -----------------------------------------------------------------------

    def seat_of(self, person: Person) -> int | None:
        for seat, occupant in enumerate(self.seats):
            if occupant is person:
                return seat
        return None

    def spectators(self) -> list[Person]:
        return [p for p in self._people.values() if p.connected and self.seat_of(p) is None]

    def connected(self) -> list[Person]:
        return [p for p in self._people.values() if p.connected]

    def summary(self) -> dict[str, Any]:
        seated = sum(occupant is not None for occupant in self.seats)
        return {
            "code": self.code,
            "phase": self.phase,
            "game": self.games,
            "seated": seated,
            "spectators": len(self.spectators()),
        }

    # ---- people come and go ------------------------------------------------------------

    async def join(self, sid: str, name: str, token: str | None) -> tuple[Person, str | None]:
        """Seats `sid` as the person holding `token` (or a new person); returns them and the
        sid of the connection this one replaces, which the caller must disconnect."""
        async with self.lock:
            now = time.monotonic()
            if self.closed:
                raise ProtocolError(ErrorCode.NO_ROOM, "this room has closed")
            person = self._people.get(token) if token else None
            replaced = person.sid if person is not None else None
            if person is None:
                person = self._new_person(name, sid, now)
                events: list[EventDict] = [{"kind": "join", "player": person.id, "name": name}]
            else:
                if replaced is not None:
                    del self._by_sid[replaced]
                else:
                    person.connected_since = now
                person.name, person.sid, person.disconnected_at = name, sid, None
                events = [{"kind": "reconnect", "player": person.id, "seat": self.seat_of(person)}]
            self._by_sid[sid] = person
            if self.host is None:
                self.host = person
            events += self._hand_over_host_if_gone(now)
            await self.transport.emit(WELCOME, {"player": person.id, "token": person.token}, to=sid)
            await self._commit(events, now)
            return person, replaced

    def _new_person(self, name: str, sid: str, now: float) -> Person:
        if len(self.connected()) >= self.settings.max_people_per_room:
            raise ProtocolError(ErrorCode.ROOM_FULL, "this room is full")
        person = Person("p" + secrets.token_hex(4), secrets.token_urlsafe(16), name, sid, now)
        self._people[person.token] = person
        return person

    async def drop(self, sid: str, *, left: bool) -> None:
        """The connection `sid` is gone; `left` when the person closed it on purpose."""
        async with self.lock:
            person = self._by_sid.pop(sid, None)
            if person is None or self.closed:
                return
            now = time.monotonic()
            person.sid, person.disconnected_at = None, now
            seat = self.seat_of(person)
            events: list[EventDict] = []
            if left and seat is not None and self.phase != "playing":
                events += self._leave_seat(person, seat)
            kind = "leave" if left else "disconnect"
            events.append({"kind": kind, "player": person.id, "seat": seat})
            if person is self.host:
                if left or self.settings.host_handover_seconds == 0:
                    events += self._hand_over_host(now)
                else:
                    when = now + self.settings.host_handover_seconds
                    self._timers.at("host", when, self._host_timeout)
            self._forget_if_unneeded(person)
            await self._commit(events, now)

    async def _host_timeout(self) -> None:
        async with self.lock:
            now = time.monotonic()
            events = self._hand_over_host_if_gone(now)
            if events and not self.closed:
                await self._commit(events, now)

    def _hand_over_host_if_gone(self, now: float) -> list[EventDict]:
        host = self.host
        if host is None or host.connected or host.disconnected_at is None:
            return []
        if now - host.disconnected_at < self.settings.host_handover_seconds:
            return []
        return self._hand_over_host(now)

    def _hand_over_host(self, now: float) -> list[EventDict]:
        """The connected person present longest becomes host (if anyone is connected)."""
        candidates = self.connected()
        if not candidates:
            gone = self.host
            if gone is not None and not gone.connected:
                self.host = None  # the next person in becomes host
                self._forget_if_unneeded(gone)
            return []
        new_host = min(candidates, key=lambda p: p.connected_since)
        if new_host is self.host:
            return []
        old, self.host = self.host, new_host
        if old is not None:
            self._forget_if_unneeded(old)
        return [{"kind": "host", "player": new_host.id}]

    def _forget_if_unneeded(self, person: Person) -> None:
        """A gone spectator leaves no trace, so reconnecting strangers cannot fill memory."""
        if not person.connected and person is not self.host and self.seat_of(person) is None:
            self._people.pop(person.token, None)

    # ---- what people do ----------------------------------------------------------------

    async def act(self, sid: str, event: str, message: Message, now: float) -> Ack:
        """Applies a validated client message from connection `sid`, arrived at `now`."""
        async with self.lock:
            person = self._by_sid.get(sid)
            try:
                if person is None or self.closed:
                    raise ProtocolError(ErrorCode.NO_ROOM, "you are not in this room")
                return await self._dispatch(person, event, message, now)
            except ProtocolError as error:
                return ack(error)
            except IllegalAction as refused:
                return ack(ProtocolError(ErrorCode(refused.code), refused.message))

    async def _dispatch(self, person: Person, event: str, message: Message, now: float) -> Ack:
        if event in ("flip", "slap"):
            seat = self.seat_of(person)
            if seat is None:
                raise ProtocolError(ErrorCode.NOT_SEATED, "spectators cannot play: sit first")
            pile_id = message.pile_id if isinstance(message, Slap) else None
            return ack(events=await self._play(seat, event, pile_id, now))
        if event == "sit":
            assert isinstance(message, Sit)
            return await self._sit(person, message.seat, now)
        if event == "stand":
            return await self._stand(person, now)
        self._check_host(person)
        if event == "add_bot":
            assert isinstance(message, AddBot)
            return await self._add_bot(message.level, now)
        if event == "remove":
            assert isinstance(message, Remove)
            return await self._remove(message.seat, now)
        if event == "rules":
            assert isinstance(message, RulesUpdate)
            return await self._change_rules(message, now)
        if event in ("start", "rematch"):
            return await self._start(rematch=event == "rematch", now=now)
        raise ProtocolError(ErrorCode.UNKNOWN_EVENT, "the server handles no such event")

    def _check_host(self, person: Person) -> None:
        if person is not self.host:
            raise ProtocolError(ErrorCode.NOT_HOST, "only the host can do that")

    def _check_lobby(self) -> None:
        """Seats and rules change between games only."""
        if self.phase == "playing":
            raise ProtocolError(ErrorCode.WRONG_PHASE, "not during a game")

    def _reopen_lobby(self) -> None:
        """A lobby change after a game clears the finished game's table."""
        self.phase, self.game = "lobby", None

    async def _sit(self, person: Person, wanted: int | None, now: float) -> Ack:
        self._check_lobby()
        current = self.seat_of(person)
        if wanted is None:
            wanted = current if current is not None else self._free_seat()
        if wanted == current:
            return ack(seat=current)
        if self.seats[wanted] is not None:
            raise ProtocolError(ErrorCode.SEAT_TAKEN, "that seat is taken")
        events = self._leave_seat(person, current) if current is not None else []
        self._reopen_lobby()
        self.seats[wanted] = person
        events.append({"kind": "sit", "player": person.id, "seat": wanted, "name": person.name})
        await self._commit(events, now)
        return ack(seat=wanted)

    def _free_seat(self) -> int:
        for seat, occupant in enumerate(self.seats):
            if occupant is None:
                return seat
        raise ProtocolError(ErrorCode.NO_FREE_SEAT, "every seat is taken")

    async def _stand(self, person: Person, now: float) -> Ack:
        self._check_lobby()
        seat = self.seat_of(person)
        if seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "you have no seat")
        self._reopen_lobby()
        await self._commit(self._leave_seat(person, seat), now)
        return ack()

    def _leave_seat(self, person: Person, seat: int) -> list[EventDict]:
        self.seats[seat] = None
        return [{"kind": "stand", "player": person.id, "seat": seat}]

    async def _add_bot(self, level: Level, now: float) -> Ack:
        self._check_lobby()
        seat = self._free_seat()
        bot = Bot(level, time_scale=self.settings.bot_time_scale)
        self._reopen_lobby()
        self.seats[seat] = bot
        await self._commit([{"kind": "bot", "seat": seat, "level": level, "name": bot.name}], now)
        return ack(seat=seat)

    async def _remove(self, seat: int, now: float) -> Ack:
        self._check_lobby()
        occupant = self.seats[seat]
        if occupant is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "that seat is empty")
        self._reopen_lobby()
        self.seats[seat] = None
        player = occupant.id if isinstance(occupant, Person) else None
        if isinstance(occupant, Person):
            self._forget_if_unneeded(occupant)
        await self._commit([{"kind": "remove", "seat": seat, "player": player}], now)
        return ack()

    async def _change_rules(self, update: RulesUpdate, now: float) -> Ack:
        self._check_lobby()
        self.rules = merged_rules(self.rules, update)
        self._reopen_lobby()
        rules = self.rules.to_dict()
        await self._commit([{"kind": "rules", "rules": rules}], now)
        return ack(rules=rules)

    async def _start(self, *, rematch: bool, now: float) -> Ack:
        wanted_phase = "over" if rematch else "lobby"
        if self.phase != wanted_phase:
            reason = "rematch follows a finished game" if rematch else "a game is on"
            raise ProtocolError(ErrorCode.WRONG_PHASE, reason)
        seated = [occupant for occupant in self.seats if occupant is not None]
        if not MIN_PLAYERS <= len(seated) <= MAX_SEATS:
            raise ProtocolError(ErrorCode.TOO_FEW_PLAYERS, "a game needs 2 to 8 seated")
        # Compact the seats, so game seat i is room seat i.
        self.seats = seated + [None] * (MAX_SEATS - len(seated))
        self.first = (self.first + 1) % len(seated) if self.games else 0
        seed = secrets.randbits(64)  # nobody can predict a deck
        self.game = Game.deal(len(seated), rules=self.rules, seed=seed, first=self.first, now=now)
        self.games += 1
        self.phase = "playing"
        self._turn_started_at = now
        for occupant in seated:
            if isinstance(occupant, Bot):
                occupant.forget()
        self._bot_plans.clear()
        start = {"kind": "start", "game": self.games, "first": self.first, "rematch": rematch}
        await self._commit([start], now)
        return ack(game=self.games)

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
        assert self.game is not None
        if self.game.over:
            self.phase = "over"
        events = [event_dict(e, now, auto=auto) for e in happened]
        await self._commit(events, now)
        return events

    async def _bot_move(self, seat: int, bot: Bot, plan: Plan) -> None:
        async with self.lock:
            if self.closed or self.phase != "playing" or self.seats[seat] is not bot:
                return
            try:
                await self._play(seat, plan.action, plan.pile_id, time.monotonic())
            except (IllegalAction, ProtocolError):
                bot.forget()  # the table moved on: look again
                self._bot_plans.pop(seat, None)
                self._schedule_bots()

    async def _autoflip(self) -> None:
        async with self.lock:
            game = self.game
            if self.closed or self.phase != "playing" or game is None:
                return
            seat = game.next_to_play
            now = time.monotonic()
            try:
                if seat is None:
                    return
                await self._play(seat, "flip", None, now, auto=True)
            except IllegalAction:
                when = now + max(self.settings.autoflip_pause_seconds, 0.05)
                self._timers.at("autopilot", when, self._autoflip)

    async def _tick(self) -> None:
        """A freeze ended or the time limit came: let the engine's clock catch up."""
        async with self.lock:
            if self.closed or self.phase != "playing" or self.game is None:
                return
            now = time.monotonic()
            await self._commit_game(self.game.tick(now), now)

    # ---- after every change ------------------------------------------------------------

    async def _commit(self, events: list[EventDict], now: float) -> None:
        self.version += 1
        for event in events:
            event["version"] = self.version
        await self._broadcast(events)
        self._schedule(now)

    async def _broadcast(self, events: list[EventDict]) -> None:
        for person in self.connected():
            assert person.sid is not None
            state = build_state(self, person, self.seat_of(person))
            await self.transport.emit(STATE, state, to=person.sid)
        for event in events:
            for person in self.connected():
                await self.transport.emit(EVENT, event, to=person.sid)

    def _schedule(self, now: float) -> None:
        self._schedule_autopilot()
        self._schedule_tick()
        self._schedule_bots()
        if self.connected():
            self._timers.cancel("expiry")
        elif not self._timers.pending("expiry"):
            self._timers.at("expiry", now + self.settings.room_expiry_seconds, self._expire)

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

    def _schedule_bots(self) -> None:
        for seat, occupant in enumerate(self.seats):
            if not isinstance(occupant, Bot):
                continue
            timer = f"bot{seat}"
            plan = occupant.plan(build_state(self, None, seat)) if self.game else None
            if plan is None:
                self._timers.cancel(timer)
                self._bot_plans.pop(seat, None)
            elif plan is not self._bot_plans.get(seat):
                self._bot_plans[seat] = plan
                when = time.monotonic() + plan.delay
                self._timers.at(timer, when, partial(self._bot_move, seat, occupant, plan))

    async def _expire(self) -> None:
        async with self.lock:
            if self.connected() or self.closed:
                return
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


def merged_rules(rules: Rules, update: RulesUpdate) -> Rules:
    try:
        return Rules.from_dict({**rules.to_dict(), **update.changes()})
    except ValueError as exc:
        raise ProtocolError(ErrorCode.BAD_RULES, str(exc)[:200]) from None


class Rooms:
    """Every open room, by code."""

    def __init__(self, settings: Settings, transport: Transport) -> None:
        self.settings = settings
        self.transport = transport
        self._rooms: dict[str, Room] = {}

    def create(self, rules: Rules | None = None) -> Room:
        if len(self._rooms) >= self.settings.max_rooms:
            raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "too many rooms are open: try later")
        code = new_code()
        while code in self._rooms:
            code = new_code()
        room = Room(code, rules or Rules(), self.settings, self.transport, self._closed)
        self._rooms[code] = room
        log.info("room %s opened", code)
        return room

    def get(self, code: object) -> Room | None:
        """The open room with this code, in any case; None when there is none."""
        if not isinstance(code, str):
            return None
        return self._rooms.get(code.strip().upper())

    def __len__(self) -> int:
        return len(self._rooms)

    def close_all(self) -> None:
        for room in list(self._rooms.values()):
            room.close()

    def _closed(self, code: str) -> None:
        self._rooms.pop(code, None)
        log.info("room %s closed", code)


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
