"""A room: the async shell around each room's Table: its lock, connections and broadcast.

Each room applies one thing at a time, in arrival order, under its own asyncio.Lock: a
person's message (`join`, `act`, `drop`), a bot's move, an autopilot flip, a timer (the
`on_*` hooks). The rules are the Table's (app/tables/table.py); a Room only calls it, and
every change ends in `_commit`, which numbers it, sends each person one message, their own
`state` with the change's events in it, then sets the timers that keep the game moving.
Timers are derived from the table's state alone (app/tables/schedule.py), so a Room rebuilt
from a snapshot (`Room.from_snapshot`) carries on with none stored. Slaps held for lag-fair
or tie judging are app/tables/judging.py's; who is on which connection, and what each is
sent, app/tables/connections.py's; the table's fields read through the room,
app/tables/reads.py's.

Durability: after each commit, once its messages are sent, the room tells its `Saver`
(app/stores/saver.py), which writes the table to the store a moment later off the hot path
(coalesced; at once on a phase change), whole or as a journal (app/tables/journal.py). A room
that closes for good is deleted from the store; the registry of rooms is
app/tables/registry.py.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from app.ops.clock import REAL_TIME, Clock
from app.ops.config import Settings
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.ops.timers import LockWatch, Timers, WatchedLock
from app.stores import Savable, wall_clock
from app.stores.saver import Saver
from app.tables import judging
from app.tables.bots import Plan
from app.tables.commands import HANDLERS
from app.tables.connections import Connections
from app.tables.events import AppEvent, Closed, EventDict, FalseStart, Kick, Resumed, paused
from app.tables.journal import Saves, table_from_snapshot
from app.tables.judging import Judge
from app.tables.reads import TableReads
from app.tables.schedule import Timetable
from app.tables.table import Action, Person, Phase, Policy, Table
from app.tables.views import ViewParts, Views
from app.wire.encoded import Encoded, Transport
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.names import clean_avatar
from app.wire.protocol import COMMANDS, EVENT, WELCOME, Ack, Message, Slap, ack
from engine import IllegalAction, Rules

# A timer may fire a little before its time (the loop's clock resolution, float rounding).
IDLE_EARLY_SECONDS = 0.05


class Room(TableReads):
    def __init__(
        self,
        code: str,
        rules: Rules,
        settings: Settings,
        transport: Transport,
        on_close: Callable[[str], None],
        metrics: Metrics,
        *,
        table: Table | None = None,
        clock: Clock = REAL_TIME,
        lock_watch: LockWatch | None = None,
    ) -> None:
        """`clock` is where the room reads the time and sets its timers (the registry's),
        `lock_watch` what looks at its lock while held (the registry's: one for all)."""
        self.code = code
        self.clock = clock
        self.metrics = metrics
        self.settings = settings
        self.transport = transport
        self._on_close = on_close
        self.table = table if table is not None else Table(code, rules, Policy.of(settings))
        self.closed = False
        # The process is leaving (Rooms.drain): the table and its clock stop where they are.
        self.suspended = False
        self._held_at = 0.0  # the time the table's clock stopped, once suspended
        self.saver: Saver | None = None  # Rooms sets it: writes the table after each change
        self._saves = Saves()  # whether the next save is whole or a journal
        self._view_parts = ViewParts()  # what each change's view reuses of the last one's
        # When the last person left, by the wall clock (None: someone is here): for expiry.
        self._seen_at: float | None = wall_clock()
        self.lock = WatchedLock(code, metrics, lock_watch or LockWatch(clock))
        self.connections = Connections(transport)  # who is on which, what each is sent
        self._phase_seen: Phase = self.table.phase  # the phase the last commit sent
        self._timers = Timers(self.lock, clock)
        self.judge = Judge(self._timers)  # slaps held for lag-fair or tie judging
        self.timetable = Timetable(self._timers, clock, settings)  # every timer, from the state
        # In a cluster (app/cluster/node.py): whether this process may judge the table now.
        # When it may not, the room pauses: the table stays here, whole, judged by nobody.
        self.judge_gate: Callable[[], bool] | None = None
        self.paused = False
        # Paused with the event this table is a heat of, whatever the cluster says.
        self.held_by_event = False
        self._gone_while_paused: dict[str, bool] = {}  # person id -> left (said goodbye)
        # Through a weak reference: the room is freed by its reference count when it closes,
        # never kept for a full collection by a cycle through its timers.
        room = weakref.ref(self)
        self._timers.gate = lambda: (held := room()) is not None and held.may_judge()
        # Whether two people have been in it (a restored table is taken to have been): a
        # room only its opener came to is of no use to anyone else, and goes soon.
        self.used = table is not None
        self.on_used: Callable[[], None] | None = None  # told once two people have been in it
        # Told after each change of phase (a game dealt, a game over): a table of an event
        # tells its event (app/tournaments/), which reads the table's result from it.
        self.on_phase_change: Callable[[Room], None] | None = None
        if table is None:
            # Until someone joins, a room lives only long enough for its creator to arrive.
            now = clock.now()
            self.table.acted_at = now
            self._timers.at("expiry", now + settings.unused_room_seconds, self.on_expire)
            self.timetable.idle(self, self.table)

    @classmethod
    def from_snapshot(
        cls,
        snapshot: dict[str, Any],
        settings: Settings,
        transport: Transport,
        on_close: Callable[[str], None],
        metrics: Metrics,
        now: float,
        *,
        clock: Clock = REAL_TIME,
        lock_watch: LockWatch | None = None,
    ) -> Room:
        """The room `Room.snapshot` wrote down, continuing at `now` on this clock. Nobody's
        connection survives a move between processes: each person is disconnected now and
        comes back with their token; the timers are rebuilt from the state."""
        table = table_from_snapshot(snapshot, now, Policy.of(settings))
        # The engine's clock catches up to the moment the table was written (a state then
        # shows each freeze with the time it had left), and nobody is connected any more.
        if table.disconnect_everyone(now) + table.tick(now):
            table.new_version()  # a change of its own: states sent from now on must say so
        room = cls(
            table.code,
            table.rules,
            settings,
            transport,
            on_close,
            metrics,
            table=table,
            clock=clock,
            lock_watch=lock_watch,
        )
        room._schedule(now, Views(table), anyone=bool(table.connected()))
        return room

    def snapshot(self, now: float) -> dict[str, Any]:
        """The table as JSON-able data (no usable token); call it under the lock."""
        return self.table.to_dict(now)

    def snapshot_now(self) -> Savable:
        """The Saver's snapshot, taken on the loop when it writes: Table methods are
        synchronous, so between two awaits the table is always whole and consistent. A
        suspended table is written as of the moment it stopped: the seconds a process takes
        to close do not eat into a freeze or a turn. The last save before a restart or a
        move is whole (app/tables/journal.py)."""
        now = self._held_at if self.suspended else self.clock.now()
        return self._saves.take(self.code, self.table, now, whole=self.closed)

    def write_whole(self) -> None:
        """The table changed outside a commit: no journal, nor a view's roster, builds on it."""
        self._saves.write_whole()
        self._view_parts.forget()

    def seen_at(self) -> float | None:
        """For the store's expiry: None while someone is connected, else when the last left."""
        return self._seen_at

    async def suspend(self) -> None:
        """The process is leaving: from now on nothing changes the table (no timer, no
        action; a dropped connection is not recorded), so the save that follows is the
        table the next process restores. Unlike `close`, the stored table is kept."""
        async with self.lock:
            self.hold()

    def hold(self) -> None:
        """`suspend` for a caller that cannot wait for the lock (the process is ending)."""
        if not self.suspended:
            self.suspended = self.closed = True
            self._held_at = self.clock.now()
            self._timers.cancel_all()
            self.judge.answer_held(ErrorCode.NO_ROOM)  # a lag-fair window that will not close here

    # ---- a pause: nobody may judge the table for now (a cluster's lease unconfirmed) ---

    def may_judge(self) -> bool:
        """Whether the table may change now; a room whose judge gate says no pauses."""
        if self.paused:
            return False
        gate = self.judge_gate
        if gate is None or gate():
            return True
        self.pause()
        return False

    def pause(self) -> None:
        """Stops judging, keeping everything in memory and every connection open: no
        action is judged and no timer runs until `resume`; everyone is told."""
        if self.paused or self.closed:
            return
        self.paused = True
        self._timers.cancel_all()
        self.judge.answer_held(ErrorCode.PAUSED)
        log_event("room_paused", room=self.code, version=self.table.version)
        self.connections.send_everyone(Encoded.of(EVENT, paused(self.held_by_event)))

    def resume(self) -> None:
        """Judging goes on (call it under the lock): the timers are set again from the
        table's state, and everyone is told."""
        if not self.paused or self.closed or self.held_by_event:
            return
        self.paused = False
        now = self.clock.now()
        gone, self._gone_while_paused = self._gone_while_paused, {}
        for person_id, left in gone.items():
            if not self.connections.has(person_id):  # not back meanwhile
                self._apply(self.table.drop(person_id, now, left=left), now)
        self._schedule(now, Views(self.table), anyone=bool(self.table.connected()))
        log_event("room_resumed", room=self.code, version=self.table.version)
        self.connections.send_everyone(Encoded.of(EVENT, Resumed().to_dict()))

    def hold_for_event(self, held: bool) -> None:
        """The event this table is a heat of paused (`held`) or went on: the table pauses
        with it, and goes on with it unless its judge gate says no (under the lock)."""
        self.held_by_event = held
        if held:
            self.pause()
        elif self.judge_gate is None or self.judge_gate():
            self.resume()

    async def bar_from_event(self, person_id: str) -> None:
        """The event this table is a heat of removed `person_id` (`Table.bar_from_heat`):
        their connection is told (a `kick`) and closed, and they cannot come back."""
        async with self.lock:
            person = self.table.people.get(person_id)
            if self.closed or person is None or person.token_hash in self.table.banned_tokens:
                return
            now = self.clock.now()
            self._show_out(Kick(person_id, None))
            happened = self.table.bar_from_heat(person_id, now)
            self._apply(happened, now)

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
    ) -> tuple[Person, str | None]:
        """Connection `sid`, from client `address`, is now the person holding `token` (or a
        new person, let in with `invite` if the table is locked); returns them and the sid of
        the older connection this one replaces, for the caller to close."""
        async with self.lock:
            if self.closed:
                raise ProtocolError(ErrorCode.NO_ROOM, "this room has closed")
            held = self.held_by_event and (self.judge_gate is None or self.judge_gate())
            if not self.may_judge() and not held:  # (held by its event alone, people may come)
                raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the table is paused: try again")
            now = self.clock.now()
            joined = self.table.join(
                name,
                token,
                now,
                avatar=clean_avatar(avatar),
                watch=watch,
                address=address,
                invite=invite,
            )
            person = joined.person
            replaced = self.connections.bind(sid, person.id)
            welcome = {"player": person.id, "token": joined.token}
            try:  # (in the room, the cluster's hand-over finds the connection)
                await self.transport.enter_room(sid, self.code)
                await self.transport.emit(WELCOME, welcome, to=sid)
            except BaseException:
                self.write_whole()  # taken in, and nothing committed (the drop that follows is)
                raise
            self._apply(joined.events, now)  # its `_schedule` starts lag pings if due
            if self.paused:  # held by its event: told, as those already here were
                self.connections.send(person.id, Encoded.of(EVENT, paused(True)))
            return person, replaced

    async def drop(self, sid: str, *, left: bool) -> None:
        """Connection `sid` is gone; `left` when the person said goodbye (`leave`)."""
        async with self.lock:
            now = self.clock.now()
            person_id = self.connections.unbind(sid)
            if person_id is None:
                return  # replaced by a newer connection: the person is still here
            if self.closed:
                return
            if not self.may_judge():
                self._gone_while_paused[person_id] = left  # recorded when it goes on
                return
            self._apply(self.table.drop(person_id, now, left=left), now)

    async def on_host_timeout(self, now: float) -> None:
        if self.closed:
            return
        host = self.table.host
        happened = self.table.hand_over_if_gone(now)
        if happened:
            self._apply(happened, now)
        else:
            if self.table.host != host:  # nobody to hand over to: no change is sent, but
                self.write_whole()  # the table is not what its journal and views say
            self.timetable.host(self, self.table)  # fired too early for the table: wait the rest

    # ---- what people do ----------------------------------------------------------------

    async def act(self, sid: str, event: str, message: Message, now: float) -> Ack:
        """Applies a validated client message from connection `sid`, arrived at `now`."""
        lock = self.lock
        if not lock.acquire_now():  # free: taken and released with no coroutine (almost always)
            await lock.acquire()
        try:
            person_id = self.connections.person_on(sid)
            held = None
            if (
                isinstance(message, Slap)
                and person_id is not None
                and not self.closed
                and self.may_judge()
                and not self._starts_early(person_id, message.pile_id, now)
            ):
                held = self.judge.hold_person(
                    self.table, person_id, message.pile_id, now, self.on_judging
                )
            if held is None:
                return self._act_now(sid, person_id, event, message, now)
        finally:
            lock.release()
        return await held  # answered when the judging window closes (outside the lock)

    def _act_now(
        self, sid: str, person_id: str | None, event: str, message: Message, now: float
    ) -> Ack:
        """The body of `act`, under the room's lock."""
        command = COMMANDS[event]
        try:
            if self.suspended:
                raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is restarting")
            if not self.closed and not self.may_judge():
                raise ProtocolError(ErrorCode.PAUSED, "the table is paused: try again soon")
            if person_id is None or self.closed:
                raise ProtocolError(ErrorCode.NO_ROOM, "you are not in this room")
            if event == "flip":
                self.judge.check_not_judging()
            done = HANDLERS[event](self.table, person_id, message, now)
        except ProtocolError as error:
            return ack(error)
        except IllegalAction as refused:
            return ack(ProtocolError(ErrorCode(refused.code), refused.message))
        if command.ends_connection:
            self.connections.unbind(sid)
        if event != "pong":
            self.table.acted_at = now
        if any(e.kind == "start" for e in done.events):
            self._new_game()
        for happened in done.events:
            if isinstance(happened, Kick):
                self._show_out(happened)
            elif isinstance(happened, FalseStart):
                self._false_started(happened)
        sent = self._apply(done.events, now) if done.events or done.refresh else []
        if command.acks_events:
            return ack(events=sent)
        return ack(**done.reply)

    def _starts_early(self, person_id: str, pile_id: int, now: float) -> bool:
        """Whether the person's slap is a false start, or refused as one: judged at once
        (`_act_now`), never held for a judging window."""
        try:
            return self.table.false_start_ms(person_id, pile_id, now) is not None
        except ProtocolError:
            return True

    def _false_started(self, event: FalseStart) -> None:
        self.metrics.false_starts.inc()
        log_event("false_start", room=self.code, **event.to_dict())

    def _show_out(self, kick: Kick) -> None:
        """A kicked person's connection is told, then closed: nothing more is sent to it."""
        log_event("kicked", room=self.code, player=kick.player, seat=kick.seat)
        self.connections.show_out(kick.player, Encoded.of(EVENT, kick.to_dict()))

    def _new_game(self) -> None:
        self.metrics.games_started.inc()
        players = self.table.seated()
        log_event("game_started", room=self.code, game=self.table.games, players=players)
        self.timetable.new_game()

    # ---- the game: one path for people, bots and the autopilot ------------------------

    def _play(
        self, seat: int, action: Action, pile_id: int | None, now: float, *, auto: bool = False
    ) -> None:
        if action == "flip":
            self.judge.check_not_judging()
        elif pile_id is not None and self.judge.hold(
            self.table, seat, pile_id, now, None, self.on_judging
        ):
            return  # a bot's slap, held for judging like anyone's
        self._apply(self.table.play(seat, action, pile_id, now, auto=auto), now)

    async def on_bot_move(self, seat: int, bot_id: str, plan: Plan, now: float) -> None:
        if self.closed or self.table.phase != "playing" or self.table.seats[seat] != bot_id:
            return
        try:
            self._play(seat, plan.action, plan.pile_id, now)
        except (IllegalAction, ProtocolError):
            self.timetable.bot_lost_its_plan(self, self.table, seat, bot_id)

    async def on_autoflip(self, now: float) -> None:
        game = self.table.game
        if self.closed or self.table.phase != "playing" or game is None:
            return
        seat = game.next_to_play
        try:
            if seat is None:
                return
            self._play(seat, "flip", None, now, auto=True)
        except IllegalAction:
            when = now + max(self.settings.autoflip_pause_seconds, 0.05)
            self._timers.at("autopilot", when, self.on_autoflip)

    async def on_tick(self, now: float) -> None:
        """A freeze or collect pause ended, a trigger lapsed or time ran out: the clock moves."""
        if self.closed or self.table.phase != "playing" or self.table.game is None:
            return
        self._apply(self.table.tick(now), now)  # a fresh state even with no events

    async def on_heat_deal(self, now: float) -> None:
        """A table of an event deals its next game (app/tables/table.py `Table.deal_heat`)."""
        if self.closed:
            return
        done = self.table.deal_heat(now)
        if done.events:
            self._new_game()
            self._apply(done.events, now)

    async def on_abandon(self, now: float) -> None:
        if self.closed:
            return
        happened = self.table.abandon(now)
        if happened:
            log_event("game_abandoned", room=self.code, game=self.table.games)
            self._apply(happened, now)

    # ---- held judging (house rules lag_fair and tie_window_ms) ---------------------------

    async def on_judging(self, now: float) -> None:
        """The judging window closed: the held slaps are played in the order they count
        (app/tables/judging.py `judge`), each sender answered."""
        window = self.judge.take()
        if window is None:
            return
        judging.judge(
            self.table, window, lambda happened: self._apply(happened, now), closed=self.closed
        )
        if self.table.phase == "playing":
            # Flips may go on: the judging no longer holds them.
            self._schedule(now, Views(self.table), anyone=bool(self.table.connected()))

    async def on_ping(self, now: float) -> None:
        """Lag pings every SLAPJACK_LAG_PING_SECONDS while the room judges lag-fair or false
        starts, for the measured with few samples yet (app/tables/lag.py; everyone measured at
        each trigger), riding on their next state or alone (app/tables/connections.py `ping`),
        answered by `pong`. One judging only false starts measures the seated."""
        if self.closed or not self.table.measures_lag():
            return
        self.connections.ping(self.table, self.clock, self.settings.lag_ping_seconds)
        if self.table.unsettled():  # (`_schedule` starts it for anyone new to measure)
            when = self.clock.now() + self.settings.lag_ping_seconds
            self._timers.at("ping", when, self.on_ping)

    # ---- after every change ------------------------------------------------------------

    def _apply(self, happened: Sequence[AppEvent], now: float) -> list[EventDict]:
        """Commits what the table did; returns the events as sent. Never waits (the sends
        are queued, the saving asked for): a change is whole before anything else runs."""
        sent = [event.to_dict() for event in happened]
        self._commit(sent, now)
        return sent

    def _commit(self, sent: list[EventDict], now: float) -> None:
        """Numbers the change (in each event too), sends it, sets the timers."""
        phase_before = self._phase_seen
        self._saves.committed(self.table, phase_before)  # one move: the journal goes on
        version = self.table.new_version()
        for event in sent:
            event["version"] = version
        if self.table.phase == "over" and phase_before != "over":
            self._game_over()
        self._phase_seen = self.table.phase
        # Built and encoded once, shared by recipients and bots.
        views = Views(self.table, sent, self._view_parts)
        connected = self.table.connected()  # who is here, looked up once for the change
        self.table.ping_at_trigger()  # a new trigger's state carries the measured's pings
        # Each person's own state, its events in it, queued before the next change's.
        self.connections.broadcast(views, connected, self.table.seat_by_id(), self.clock)
        self._schedule(now, views, anyone=bool(connected))
        phase_changed = self.table.phase != phase_before
        # An undecided heat is kept as if someone were here: the event waits for it.
        self._changed(urgent=phase_changed, anyone=bool(connected) or self.table.keeps_open())
        if phase_changed and self.on_phase_change is not None:
            self.on_phase_change(self)

    def _changed(self, *, urgent: bool, anyone: bool) -> None:
        """Asks for the table to be written: after the change is judged and sent, never
        waiting (a game start or end is written at once, anything else within
        SLAPJACK_SAVE_SECONDS, a burst of flips in one write). `anyone`: whether someone
        is connected."""
        if anyone:
            self._seen_at = None
        elif self._seen_at is None:
            self._seen_at = wall_clock()
        if self.saver is not None:
            self.saver.changed(urgent=urgent)

    def _game_over(self) -> None:
        game = self.table.game
        assert game is not None
        self.metrics.games_finished.inc()
        log_event(
            "game_over",
            room=self.code,
            game=self.table.games,
            winner=game.winner,
            reason=game.win_reason,
        )

    def _schedule(self, now: float, views: Views, *, anyone: bool) -> None:
        """Every timer, from the table's state alone (schedule.py). `anyone`: someone is here."""
        self.timetable.set(self, self.table, now, views, anyone=anyone)
        if not self.used and len(self.table.people) >= 2:
            self.used = True
            if self.on_used is not None:
                self.on_used()
                self.on_used = None
        kept = anyone or self.table.keeps_open()  # an undecided heat waits for its winner
        self.timetable.expiry(self, now, anyone=kept, used=self.used)
        self.timetable.idle(self, self.table)

    def set_timers(self) -> None:
        """Sets every timer from the table as it is: a room made around a table it was
        handed (an event's heat: app/tables/registry.py `Rooms.open_table`)."""
        anyone = bool(self.table.connected())
        self._schedule(self.clock.now(), Views(self.table), anyone=anyone)

    def waits_for_players(self, on_used: Callable[[], None]) -> None:
        """A restored table that only its opener has been at (a cluster knows it from Redis:
        app/cluster/node.py): it closes as soon as a new room nobody came to, and `on_used`
        is called once a second person has come."""
        self.used = False
        self.on_used = on_used
        if not self.table.connected():
            when = self.clock.now() + self.settings.unused_room_seconds
            self._timers.at("expiry", when, self.on_expire)

    async def on_expire(self, now: float) -> None:
        if not self.table.connected() and not self.closed:
            self.close()

    async def on_idle(self, now: float) -> None:
        """No game was dealt and nobody acted for SLAPJACK_UNUSED_ROOM_SECONDS: the room
        closes, whoever sits in it (each connection is told, then closed)."""
        if self.closed or self.table.games:
            return
        if now < self.table.acted_at + self.settings.unused_room_seconds - IDLE_EARLY_SECONDS:
            self.timetable.idle(self, self.table)  # fired early (clock resolution): the rest
            return
        log_event("room_idle", room=self.code, people=len(self.table.connected()))
        self.connections.close_all(Encoded.of(EVENT, Closed().to_dict()))
        self.close()

    def close(self) -> None:
        """Closes the room for good (it expired): Rooms deletes its stored table."""
        self.closed = True
        self._timers.cancel_all()
        self.judge.answer_held(ErrorCode.NO_ROOM)
        self._on_close(self.code)

    def stop(self) -> None:
        """The process is leaving now: timers and saves stop, the stored table stays."""
        self.hold()
        if self.saver is not None:
            self.saver.stop()
