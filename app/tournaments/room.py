"""An event's async shell, as `Room` is a table's: its lock, its connections (the organiser's
screen, the stage, the players' phones between their tables), its broadcast, its timers and
its saves. The rules are the `Tournament`'s; its heats are ordinary tables, opened and read
through `HeatTables` (app/tournaments/heats.py).

One thing at a time, under the lock: a connection's command, or a timer. Timers:
- `watch`: while the event is on, its current round's tables are read every WATCH_SECONDS
  (and at once when one of them, in this process, changes phase): their progress goes to the
  stage, and a table whose winner is known is decided in the event;
- `round`: the next round is dealt ROUND_PAUSE_SECONDS after the last heat of one ended;
- `expiry`: an event nobody is connected to closes after SLAPJACK_ROOM_EXPIRY_SECONDS,
  never while it is on (its tables play on by autopilot, and it waits for their winners).
Each change is written by its `Saver` (app/stores/saver.py), at once when the event's stage
changes or a round is dealt.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.ops.clock import REAL_TIME, Clock
from app.ops.config import Settings
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.ops.timers import LockWatch, Timers, WatchedLock
from app.stores import Savable, vouched, wall_clock
from app.stores.saver import Saver
from app.tournaments.heats import HeatState, HeatTables
from app.tournaments.tournament import Tournament
from app.tournaments.values import Dealt, EventDict, Outcome, Role
from app.tournaments.views import EventViews, event_view, ms_until
from app.wire.encoded import Transport
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.names import clean_avatar
from app.wire.protocol import (
    EVENT_COMMANDS,
    WELCOME,
    Ack,
    EventBot,
    EventPause,
    EventRemove,
    Lock,
    Message,
    ack,
)

# The stage reads an event's tables this often while it is on (and at once when one of this
# process's changes phase): a table's progress on the stage is at most this old.
WATCH_SECONDS = 1.0

CodeSource = Callable[[], Awaitable[str]]  # a code no table or event has: a new table's


@dataclass(eq=False)
class Visitor:
    who: str | None  # the organiser's or a player's id; None: a guest
    role: Role


class TournamentRoom:
    def __init__(
        self,
        event: Tournament,
        settings: Settings,
        transport: Transport,
        heats: HeatTables,
        codes: CodeSource,
        on_close: Callable[[str], None],
        metrics: Metrics,
        *,
        clock: Clock = REAL_TIME,
        lock_watch: LockWatch | None = None,
    ) -> None:
        self.code = event.code
        self.event = event
        self.settings = settings
        self.transport = transport
        self.heats = heats
        self.clock = clock
        self._codes = codes
        self._on_close = on_close
        self.lock = WatchedLock(self.code, metrics, lock_watch or LockWatch(clock))
        self._timers = Timers(self.lock, clock)
        self.saver: Saver | None = None  # the registry sets it
        self.closed = False
        self.suspended = False
        self._held_at = 0.0
        self._visitors: dict[str, Visitor] = {}  # connection -> who
        self._sid_of: dict[str, str] = {}  # the organiser's or a player's id -> connection
        self._progress: dict[str, HeatState] = {}  # table code -> how it stood when last read
        self._seen_at: float | None = wall_clock()
        # In a cluster: whether this process may run the event now (its lease confirmed).
        self.judge_gate: Callable[[], bool] | None = None
        self._timers.gate = self.may_run

    # ---- reading -------------------------------------------------------------------------

    def may_run(self) -> bool:
        """Whether the event may change now (in a cluster: its lease is confirmed)."""
        gate = self.judge_gate
        return gate is None or gate()

    def knows(self, token: str) -> bool:
        return self.event.knows(token)

    def connected(self) -> int:
        return len(self._visitors)

    def summary(self) -> dict[str, Any]:
        event = self.event
        return {
            "code": self.code,
            "name": event.name,
            "stage": event.stage,
            "players": len(event.players()),
            "round": event.round,
        }

    def seen_at(self) -> float | None:
        return self._seen_at

    def snapshot_now(self) -> Savable:
        now = self._held_at if self.suspended else self.clock.now()
        return vouched(self.code, self.event.to_dict(now))

    # ---- people come and go ------------------------------------------------------------

    async def join(
        self,
        sid: str,
        name: str,
        token: str | None,
        avatar: str | None = None,
        *,
        watch: bool = False,
        address: str | None = None,
        invite: str | None = None,
    ) -> tuple[str | None, str | None]:
        """Connection `sid` (from client `address`, holding the organiser's `invite` if
        any) is the organiser, a player or a guest; returns who, and the sid of an older
        connection of theirs this one replaces (for the caller to close)."""
        async with self.lock:
            if self.closed:
                raise ProtocolError(ErrorCode.NO_ROOM, "this event has closed")
            now = self.clock.now()
            joined = self.event.join(
                name,
                token,
                now,
                avatar=clean_avatar(avatar),
                watch=watch,
                address=address,
                invite=invite,
            )
            replaced = None
            if joined.who is not None:
                replaced = self._sid_of.get(joined.who)
                if replaced is not None:
                    self._visitors.pop(replaced, None)
                self._sid_of[joined.who] = sid
            self._visitors[sid] = Visitor(joined.who, joined.role)
            await self.transport.enter_room(sid, self.code)
            await self.transport.emit(
                WELCOME, {"player": joined.who, "token": joined.token}, to=sid
            )
            if joined.events:
                self._commit(joined.events, now, saved=True)
            else:
                self._send(sid, self._views([], now))
            self.set_timers(now)
            return joined.who, replaced

    async def drop(self, sid: str, *, left: bool) -> None:
        async with self.lock:
            visitor = self._visitors.pop(sid, None)
            if visitor is not None and visitor.who and self._sid_of.get(visitor.who) == sid:
                del self._sid_of[visitor.who]
            if not self.closed and not self.suspended:
                self.set_timers(self.clock.now())

    # ---- what the organiser does -------------------------------------------------------

    async def act(self, sid: str, event_name: str, message: Message, now: float) -> Ack:
        """Applies a validated event command from connection `sid`, arrived at `now`."""
        async with self.lock:
            visitor = self._visitors.get(sid)
            try:
                if self.suspended:
                    raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is restarting")
                if visitor is None or self.closed:
                    raise ProtocolError(ErrorCode.NO_ROOM, "you are not in this event")
                if not self.may_run():
                    raise ProtocolError(ErrorCode.PAUSED, "the event is paused: try again soon")
                if EVENT_COMMANDS[event_name].ends_connection:
                    self._visitors.pop(sid, None)
                    if visitor.who is not None and self._sid_of.get(visitor.who) == sid:
                        del self._sid_of[visitor.who]
                    return ack()
                done = await self._command(visitor.who, event_name, message, now)
            except ProtocolError as error:
                return ack(error)
            if done.events:
                self._commit(done.events, now, saved=True, urgent=bool(done.dealt))
            return ack(**done.reply)

    async def _command(self, who: str | None, name: str, message: Message, now: float) -> Outcome:
        event = self.event
        if name == "event_start":
            event.check_organiser(who)
            codes = await self._new_codes(event.heats_needed())
            done = event.start(who, now, codes, secrets.randbits(32))
            await self._open(done.dealt)
            return done
        if name == "event_bot":
            assert isinstance(message, EventBot)
            return event.add_bot(who, message.level, now)
        if name == "event_remove":
            assert isinstance(message, EventRemove)
            done = event.remove(who, message.player, now)
            heat = next((h for h in event.current() if message.player in h.players), None)
            if event.stage == "playing" and heat is not None and not heat.decided:
                await self.heats.bar(heat.code, message.player)  # no more play of theirs
            return done
        if name == "event_lock":
            assert isinstance(message, Lock)
            return event.lock(who, message.locked, now)
        if name == "event_invite":
            return event.invite(who, now)
        if name == "event_pause":
            assert isinstance(message, EventPause)
            done = event.pause(who, message.paused, now)
            if done.events:
                await self._hold_tables(message.paused)
            return done
        if name == "event_end":
            paused = event.paused
            done = event.end(who, now)
            if paused:
                await self._hold_tables(False)
            return done
        raise ProtocolError(ErrorCode.UNKNOWN_EVENT, "the server handles no such event")

    async def _new_codes(self, count: int) -> list[str]:
        codes: list[str] = []
        while len(codes) < count:
            code = await self._codes()
            if code not in codes:
                codes.append(code)
        return codes

    async def _open(self, dealt: Sequence[Dealt]) -> None:
        event = self.event
        for heat in dealt:
            await self.heats.open(heat, event.rules, event.lag_fair, event.false_starts)
            self.heats.follow(heat.code, self._heat_changed)
        log_event("event_round", code=self.code, round=event.round, tables=len(dealt))

    async def _hold_tables(self, held: bool) -> None:
        for heat in self.event.current():
            if not heat.decided:
                await self.heats.hold(heat.code, held)

    def _heat_changed(self) -> None:
        """A table of this event, in this process, changed phase: read it at once. (Called
        under that table's lock: only a timer is set here.)"""
        if not self.closed and not self.suspended:
            self._timers.at("watch", self.clock.now(), self.on_watch)

    # ---- timers --------------------------------------------------------------------------

    async def on_watch(self, now: float) -> None:
        """Reads the current round's tables: their progress for the stage, their winners
        for the event; a table lost before anyone won it is dealt again."""
        if self.closed or self.event.stage != "playing":
            return
        happened: list[EventDict] = []
        moved = False
        for heat in list(self.event.current()):
            state = await self.heats.read(heat.code)
            if state is None:
                if not heat.decided:
                    again = self.event.deal_again(heat.code, now)
                    if again is not None:
                        log_event("event_table_dealt_again", code=self.code, table=heat.code)
                        await self._open([again])
                continue
            if self._progress.get(heat.code) != state:
                self._progress[heat.code] = state
                moved = True
            if state.decided and not heat.decided:
                done = self.event.heat_decided(
                    heat.code, state.wins, state.places, state.totals, now
                )
                happened += done.events
        if happened:
            self._commit(happened, now, saved=True, urgent=True)
        elif moved:
            self._commit([], now, saved=False)
        else:
            self.set_timers(now)

    async def on_round(self, now: float) -> None:
        """The next round is due: its tables are opened and everyone is sent to theirs."""
        event = self.event
        if self.closed or event.round_due() is None:
            return
        codes = await self._new_codes(event.heats_needed())
        done = event.advance(now, codes, secrets.randbits(32))
        if done.dealt:
            await self._open(done.dealt)
            self._commit(done.events, now, saved=True, urgent=True)
        else:
            self.set_timers(now)

    async def on_expire(self, now: float) -> None:
        if not self._visitors and not self.closed and self.event.stage != "playing":
            self.close()

    def set_timers(self, now: float) -> None:
        """Every timer, from the event's state."""
        event = self.event
        if event.stage == "playing" and not self._timers.pending("watch"):
            self._timers.at("watch", now + WATCH_SECONDS, self.on_watch)
        elif event.stage != "playing":
            self._timers.cancel("watch")
        due = event.round_due()
        if due is None:
            self._timers.cancel("round")
        else:
            self._timers.at("round", due, self.on_round)
        if self._visitors or event.stage == "playing":
            self._timers.cancel("expiry")
            self._seen_at = None
        else:
            if self._seen_at is None:
                self._seen_at = wall_clock()
            if not self._timers.pending("expiry"):
                when = now + self.settings.room_expiry_seconds
                self._timers.at("expiry", when, self.on_expire)

    # ---- after every change -------------------------------------------------------------

    def _views(self, happened: Sequence[EventDict], now: float) -> EventViews:
        next_round = ms_until(self.event.round_due(), now)
        view = event_view(self.event, self._progress, happened, next_round)
        return EventViews(self.event, view)

    def _commit(
        self, happened: list[EventDict], now: float, *, saved: bool, urgent: bool = False
    ) -> None:
        """Numbers the change (in each event too), sends everyone their `event_state`, sets
        the timers and (`saved`: the record changed) asks for a write."""
        version = self.event.new_version()
        for event in happened:
            event["version"] = version
        views = self._views(happened, now)
        for sid in self._visitors:
            self._send(sid, views)
        self.set_timers(now)
        if saved and self.saver is not None:
            self.saver.changed(urgent=urgent)

    def _send(self, sid: str, views: EventViews) -> None:
        visitor = self._visitors.get(sid)
        if visitor is not None:
            self.transport.send(views.message(visitor.who, visitor.role), sid)

    # ---- the process starts and stops ----------------------------------------------------

    async def resume_heats(self) -> None:
        """After a restore: follow this process's tables of the event again, pause them
        again if the event is paused, and read them at once."""
        async with self.lock:
            for heat in self.event.current():
                self.heats.follow(heat.code, self._heat_changed)
                if self.event.paused and not heat.decided:
                    await self.heats.hold(heat.code, True)
            now = self.clock.now()
            if self.event.stage == "playing":
                self._timers.at("watch", now, self.on_watch)
            self.set_timers(now)

    async def suspend(self) -> None:
        async with self.lock:
            self.hold()

    def hold(self) -> None:
        if not self.suspended:
            self.suspended = self.closed = True
            self._held_at = self.clock.now()
            self._timers.cancel_all()

    def stop(self) -> None:
        self.hold()
        if self.saver is not None:
            self.saver.stop()

    def close(self) -> None:
        """Closes the event for good (it expired): the registry deletes its record."""
        self.closed = True
        self._timers.cancel_all()
        log_event("event_closed", code=self.code, level=logging.INFO)
        self._on_close(self.code)
