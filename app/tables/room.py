"""A room: the async shell around each room's Table: its lock, connections, timers, broadcast.

Each room applies one thing at a time, in arrival order, under its own asyncio.Lock: a
person's message, a bot's move, an autopilot flip, a timer. The rules are the Table's
(app/tables/table.py); a Room only calls it, and every change ends in `_commit`, which numbers it,
sends each person one message, their own `state` with the change's events in it, then sets
the timers that keep the game moving. Timers are derived from the table's state alone
(`_schedule`), so a Room rebuilt from a snapshot (`Room.from_snapshot`) carries on with none
stored.

Durability: after each commit, once its messages are sent, the room tells its `Saver`
(app/stores/saver.py), which writes the table to the store a moment later off the hot path
(coalesced; at once on a phase change). A room that closes for good is deleted from the store;
the registry of rooms is app/tables/registry.py.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from app.ops.clock import REAL_TIME, Clock
from app.ops.config import Settings
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.ops.timers import LockWatch, Timers, WatchedLock
from app.stores import (
    Savable,
    Snapshot,
    SnapshotText,
    vouched,
    wall_clock,
)
from app.stores.saver import Saver
from app.tables.bots import Bot, Plan
from app.tables.commands import HANDLERS
from app.tables.events import AppEvent, EventDict, Paused, Resumed
from app.tables.notation import JOURNAL_SCHEMA, Move, encode_move, journal, times_are_finite
from app.tables.table import Action, Person, Phase, Policy, Table, TableBot
from app.tables.views import ViewParts, Views
from app.wire.encoded import Encoded
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.names import clean_avatar
from app.wire.protocol import COMMANDS, EVENT, PING, WELCOME, Ack, Message, Slap, ack
from engine import ErrorCode as EngineCode
from engine import Game, IllegalAction, Rules

# POST /api/rooms answers once the new table is written, or after this long while the store
# is down (the Saver keeps retrying): a shared link must survive a crash a moment later.
FIRST_SAVE_SECONDS = 2.0
# The beats rooms are saved on, per SLAPJACK_SAVE_SECONDS (app/stores/saver.py): the tables
# due on a beat go in one store batch, so SAVE_BEATS batches per delay (SQLite: that many
# commits). Few: a commit costs about as much as ten rows, and 40 commits a second cost 200
# busy tables 8% more CPU than 8 do (bench/load.py, side by side); a beat's snapshots are taken
# a few dozen at a time (saver.py), so a big beat never holds the loop long.
SAVE_BEATS = 4
# A busy room's save is its last whole snapshot plus the moves since (`journal` in
# app/tables/table.py),
# until this many moves have gathered: then a whole snapshot again. A journal's moves are
# replayed at a restore, and each write carries them all (about 40 bytes a move).
JOURNAL_MOVES = 32


class Transport(Protocol):
    """What a room needs from the Socket.IO server (app.realtime.outgoing.SocketTransport wraps
    python-socketio's AsyncServer)."""

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None: ...

    async def enter_room(self, sid: str, room: str) -> None: ...

    def send(self, message: Encoded, to: str) -> None:
        """`message`, encoded once, queued on one connection (its Socket.IO sid) after what
        was queued there before; nothing if it is gone. Never waits: a room sends under
        its lock, to every person at the table in one pass."""
        ...


@dataclass(slots=True)
class Journal:
    """A room's saves since its last whole snapshot (`Room.snapshot_now`): that snapshot,
    its moment and its game's clock (`encode_move`), how many of the table's moves commits
    have numbered since, and those encoded so far (each once)."""

    whole: SnapshotText
    at: float
    clock: float
    committed: int = 0
    encoded: list[str] = field(default_factory=list)

    def text(self, code: str, moves: list[Move], version: int, now: float) -> str | None:
        """The journal of `moves` written at `now`; None if a move is one no journal holds."""
        encoded = self.encoded
        for move in moves[len(encoded) :]:
            text = encode_move(move, self.clock)
            if text is None:
                return None
            encoded.append(text)
        return journal(code, version, self.whole.text, encoded, self.at, now)


@dataclass
class HeldSlap:
    """A slap held for judging: who, when it arrived, when it counts, who waits."""

    seat: int
    arrived: float
    counts_at: float  # arrival minus the slapper's round-trip estimate (lag_fair), else arrival
    answer: asyncio.Future[Ack] | None  # a person's ack waits for the judging; None for a bot


@dataclass
class Judging:
    """The slaps at a trigger held while the judging window is open (house rules lag_fair
    and tie_window_ms: one window serves both)."""

    pile_id: int
    shown_at: float  # when the trigger showed (the last flip or burn): no slap counts before
    slaps: list[HeldSlap] = field(default_factory=list)


def judging_order(
    slaps: Sequence[HeldSlap], tie_window: float, tie_order: Callable[[list[int]], list[int]]
) -> tuple[list[HeldSlap], list[int]]:
    """The held slaps in the order the engine gets them, and the tied seats in the tie
    rule's order (fewer than two: no tie). Slaps counting within `tie_window` seconds of the
    first are a genuine tie (each seat's first slap only): they go first, in `tie_order`
    (the engine's: the seat next to flip, then clockwise after it); the rest follow by the
    time they count. With no window, it is the order of the times they count."""
    timed = sorted(slaps, key=lambda held: held.counts_at)
    if not tie_window or len(timed) < 2:
        return timed, []
    first_of: dict[int, HeldSlap] = {}
    for held in timed:
        if held.counts_at - timed[0].counts_at > tie_window:
            break
        first_of.setdefault(held.seat, held)
    if len(first_of) < 2:
        return timed, []
    tied = tie_order(list(first_of))
    ahead = [first_of[seat] for seat in tied]
    return ahead + [held for held in timed if all(held is not a for a in ahead)], tied


def _no_credit(seat: int) -> float:
    """A slap counts at its arrival: lag_fair is off."""
    return 0.0


def policy(settings: Settings) -> Policy:
    return Policy(
        settings.max_people_per_room, settings.host_handover_seconds, settings.lag_cap_ms / 1000
    )


def table_from_snapshot(snapshot: Snapshot, now: float, rules_policy: Policy) -> Table:
    """`Table.from_dict`, except that a journal whose moves do not replay (a release with
    other rules reading a crashed one's journal) gives its whole snapshot, a few seconds
    back, logged, rather than no table at all."""
    try:
        return Table.from_dict(snapshot, now, rules_policy)
    except (ValueError, KeyError, TypeError) as error:  # a journal's own fields spoiled too
        base = snapshot.get("base")
        if (
            snapshot.get("schema") != JOURNAL_SCHEMA
            or not isinstance(base, dict)
            or base.get("code") != snapshot.get("code")
        ):
            raise
        log_event(
            "journal_not_replayed",
            level=logging.WARNING,
            room=snapshot.get("code"),
            reason=str(error)[:200],
        )
        return Table.from_dict(base, now, rules_policy)


class Room:
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
        self.table = table if table is not None else Table(code, rules, policy(settings))
        self.closed = False
        # The process is leaving (Rooms.drain): the table and its clock stop where they are.
        self.suspended = False
        self._held_at = 0.0  # the time the table's clock stopped, once suspended
        self.saver: Saver | None = None  # Rooms sets it: writes the table after each change
        self._journal: Journal | None = None  # None: the next save is whole
        self._view_parts = ViewParts()  # what each change's view reuses of the last one's
        # Wall-clock time the last person left (None while someone is here): the store's
        # expiry counts from it, across restarts.
        self._seen_at: float | None = wall_clock()
        # Logs a lock held past 1 s.
        self.lock = WatchedLock(code, metrics, lock_watch or LockWatch(clock))
        self._people_by_sid: dict[str, str] = {}  # connection -> person id
        self._sid_of: dict[str, str] = {}  # person id -> their current connection
        self._planners: dict[str, Bot] = {}  # bot id -> the bot's mind (not in snapshots)
        self._bot_plans: dict[int, Plan] = {}
        self._phase_seen: Phase = self.table.phase  # the phase the last commit sent
        self._judging: Judging | None = None  # lag-fair slaps waiting for their window
        self._timers = Timers(self.lock, clock)
        # In a cluster (app/cluster/node.py): whether this process may judge the table now.
        # When it may not, the room pauses: the table stays here, whole, judged by nobody.
        self.judge_gate: Callable[[], bool] | None = None
        self.paused = False
        self._gone_while_paused: dict[str, bool] = {}  # person id -> left (said goodbye)
        # Through a weak reference: the room is freed by its reference count when it closes,
        # never kept for a full collection by a cycle through its timers.
        room = weakref.ref(self)
        self._timers.gate = lambda: (held := room()) is not None and held.may_judge()
        # Whether two people have been in it (a restored table is taken to have been): a
        # room only its opener came to is of no use to anyone else, and goes soon.
        self.used = table is not None
        self.on_used: Callable[[], None] | None = None  # told once two people have been in it
        if table is None:
            # Until someone joins, a room lives only long enough for its creator to arrive.
            when = clock.now() + settings.unused_room_seconds
            self._timers.at("expiry", when, self._expire)

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
        table = table_from_snapshot(snapshot, now, policy(settings))
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
        to close do not eat into a freeze or a turn. Encoded here once its times are seen
        to be finite (else the store's checked encoding refuses it)."""
        now = self._held_at if self.suspended else self.clock.now()
        table, kept = self.table, self._journal
        if (
            kept is not None
            and not self.closed  # the last save before a restart or a move is whole
            and len(table.moves) == kept.committed <= JOURNAL_MOVES
            and now >= kept.at
        ):
            # Nothing but moves, each committed, since the last whole snapshot: that
            # snapshot's text and the moves (`app/tables/table.py` `journal`), no snapshot built.
            text = kept.text(self.code, table.moves, table.version, now)
            if text is not None:
                return SnapshotText(text, JOURNAL_SCHEMA, table.version)
        snapshot = table.to_dict(now)
        table.moves.clear()
        self._journal = None
        if not times_are_finite(snapshot):
            return snapshot
        saved = vouched(self.code, snapshot)
        # Moves are played only in a game: a lobby's table keeps no text for journals.
        game = table.game
        if table.phase == "playing" and game is not None:
            self._journal = Journal(saved, now, game.now)
        return saved

    def write_whole(self) -> None:
        """The next save is a whole snapshot, not a journal."""
        self._journal = None

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
            self._answer_held_slaps()  # a lag-fair window that will not close here

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
        self._answer_held_slaps(ErrorCode.PAUSED)
        log_event("room_paused", room=self.code, version=self.table.version)
        self._notice(Paused())

    def resume(self) -> None:
        """Judging goes on (call it under the lock): the timers are set again from the
        table's state, and everyone is told."""
        if not self.paused or self.closed:
            return
        self.paused = False
        now = self.clock.now()
        gone, self._gone_while_paused = self._gone_while_paused, {}
        for person_id, left in gone.items():
            if person_id not in self._sid_of:  # not back meanwhile
                self._apply(self.table.drop(person_id, now, left=left), now)
        self._schedule(now, Views(self.table), anyone=bool(self.table.connected()))
        log_event("room_resumed", room=self.code, version=self.table.version)
        self._notice(Resumed())

    def _notice(self, event: Paused | Resumed) -> None:
        """An `event` message of its own to everyone connected (no version: no change)."""
        message = Encoded.of(EVENT, event.to_dict())
        for sid in self._people_by_sid:
            self.transport.send(message, sid)

    # ---- reading (the table's fields, for the pages and the tests) ---------------------

    @property
    def version(self) -> int:
        return self.table.version

    @property
    def game(self) -> Game | None:
        return self.table.game

    @property
    def phase(self) -> Phase:
        return self.table.phase

    @phase.setter
    def phase(self, phase: Phase) -> None:
        """Only tests stage a phase (tests/app/test_lobby.py); the server never does."""
        self.table.phase = phase

    @property
    def rules(self) -> Rules:
        return self.table.rules

    @rules.setter
    def rules(self, rules: Rules) -> None:
        """Only tests set rules the protocol refuses (a 0.2 s time limit); the server never
        does: `rules` goes through `Table.set_rules`."""
        self.table.rules = rules

    @property
    def games(self) -> int:
        return self.table.games

    @property
    def first(self) -> int:
        return self.table.first

    @property
    def seats(self) -> list[Person | Bot | None]:
        """Who sits where: people, and the bots' minds (whose plans tests may watch)."""
        seats: list[Person | Bot | None] = []
        for seat in range(len(self.table.seats)):
            occupant = self.table.occupant(seat)
            seats.append(self._planner(occupant) if isinstance(occupant, TableBot) else occupant)
        return seats

    @property
    def host(self) -> Person | None:
        return self.table.host_person()

    def connected(self) -> list[Person]:
        return self.table.connected()

    def spectators(self) -> list[Person]:
        return self.table.spectators()

    def summary(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "phase": self.table.phase,
            "game": self.table.games,
            "seated": self.table.seated(),
            "spectators": len(self.table.spectators()),
        }

    def _planner(self, bot: TableBot) -> Bot:
        planner = self._planners.get(bot.id)
        if planner is None:
            planner = Bot(bot.level, time_scale=self.settings.bot_time_scale)
            self._planners[bot.id] = planner
        return planner

    # ---- people come and go ------------------------------------------------------------

    async def join(
        self,
        sid: str,
        name: str,
        token: str | None,
        avatar: str | None = None,
        *,
        watch: bool = False,
    ) -> tuple[Person, str | None]:
        """Connection `sid` is now the person holding `token` (or a new person); returns them
        and the sid of the older connection this one replaces, for the caller to close."""
        async with self.lock:
            if self.closed:
                raise ProtocolError(ErrorCode.NO_ROOM, "this room has closed")
            if not self.may_judge():  # the page tries again by itself, soon
                raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the table is paused: try again")
            now = self.clock.now()
            joined = self.table.join(name, token, now, avatar=clean_avatar(avatar), watch=watch)
            person = joined.person
            replaced = self._sid_of.get(person.id) if joined.returning else None
            if replaced is not None:
                del self._people_by_sid[replaced]
            self._people_by_sid[sid] = person.id
            self._sid_of[person.id] = sid
            await self.transport.enter_room(sid, self.code)  # the cluster's hand-over finds it so
            await self.transport.emit(WELCOME, {"player": person.id, "token": joined.token}, to=sid)
            self._apply(joined.events, now)  # its `_schedule` starts lag pings if due
            return person, replaced

    async def drop(self, sid: str, *, left: bool) -> None:
        """Connection `sid` is gone; `left` when the person said goodbye (`leave`)."""
        async with self.lock:
            now = self.clock.now()
            person_id = self._people_by_sid.pop(sid, None)
            if person_id is None:
                return  # replaced by a newer connection: the person is still here
            del self._sid_of[person_id]
            if self.closed:
                return
            if not self.may_judge():
                self._gone_while_paused[person_id] = left  # recorded when it goes on
                return
            self._apply(self.table.drop(person_id, now, left=left), now)

    async def _host_timeout(self, now: float) -> None:
        if self.closed:
            return
        host = self.table.host
        happened = self.table.hand_over_if_gone(now)
        if happened:
            self._apply(happened, now)
        else:
            if self.table.host != host:  # nobody to hand over to: no change is sent, but
                self.write_whole()  # the table is not what its journal says any more
            self._schedule_host()  # fired too early for the table: wait the rest

    # ---- what people do ----------------------------------------------------------------

    async def act(self, sid: str, event: str, message: Message, now: float) -> Ack:
        """Applies a validated client message from connection `sid`, arrived at `now`."""
        lock = self.lock
        if not lock.acquire_now():  # free: taken and released with no coroutine (almost always)
            await lock.acquire()
        try:
            person_id = self._people_by_sid.get(sid)
            held = None
            if (
                isinstance(message, Slap)
                and person_id is not None
                and not self.closed
                and self.may_judge()
            ):
                held = self._hold_for_judging(person_id, message.pile_id, now)
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
                self._check_not_judging()
            done = HANDLERS[event](self.table, person_id, message, now)
        except ProtocolError as error:
            return ack(error)
        except IllegalAction as refused:
            return ack(ProtocolError(ErrorCode(refused.code), refused.message))
        if command.ends_connection:
            self._people_by_sid.pop(sid, None)
            self._sid_of.pop(person_id, None)
        if any(e.kind == "start" for e in done.events):
            self._new_game()
        sent = self._apply(done.events, now) if done.events or done.refresh else []
        if command.acks_events:
            return ack(events=sent)
        return ack(**done.reply)

    def _new_game(self) -> None:
        self.metrics.games_started.inc()
        players = self.table.seated()
        log_event("game_started", room=self.code, game=self.table.games, players=players)
        self._bot_plans.clear()
        for planner in self._planners.values():
            planner.forget()

    # ---- the game: one path for people, bots and the autopilot ------------------------

    def _play(
        self, seat: int, action: Action, pile_id: int | None, now: float, *, auto: bool = False
    ) -> None:
        if action == "flip":
            self._check_not_judging()
        elif pile_id is not None and self._hold_seat_for_judging(seat, pile_id, now, None):
            return  # a bot's slap, held for judging like anyone's
        self._apply(self.table.play(seat, action, pile_id, now, auto=auto), now)

    async def _bot_move(self, seat: int, bot_id: str, plan: Plan, now: float) -> None:
        if self.closed or self.table.phase != "playing" or self.table.seats[seat] != bot_id:
            return
        try:
            self._play(seat, plan.action, plan.pile_id, now)
        except (IllegalAction, ProtocolError):
            bot = self.table.bots.get(bot_id)
            if bot is not None:
                self._planner(bot).forget()  # the table moved on: look again
            self._bot_plans.pop(seat, None)
            self._schedule_bots()

    async def _autoflip(self, now: float) -> None:
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
            self._timers.at("autopilot", when, self._autoflip)

    async def _tick(self, now: float) -> None:
        """A freeze or the collect pause ended, a trigger lapsed or the time limit came: let
        the engine's clock catch up."""
        if self.closed or self.table.phase != "playing" or self.table.game is None:
            return
        self._apply(self.table.tick(now), now)  # a fresh state even with no events

    async def _abandon(self, now: float) -> None:
        if self.closed:
            return
        happened = self.table.abandon(now)
        if happened:
            log_event("game_abandoned", room=self.code, game=self.table.games)
            self._apply(happened, now)

    # ---- held judging (house rules lag_fair and tie_window_ms) ---------------------------

    def _hold_for_judging(
        self, person_id: str, pile_id: int, now: float
    ) -> asyncio.Future[Ack] | None:
        """A person's slap held for judging: the future of its ack, or None when the slap
        is judged at once (both rules off, no trigger shows, another pile)."""
        seat = self.table.seat_of(person_id)
        if seat is None:
            return None
        answer: asyncio.Future[Ack] = asyncio.get_running_loop().create_future()
        return answer if self._hold_seat_for_judging(seat, pile_id, now, answer) else None

    def _hold_seat_for_judging(
        self, seat: int, pile_id: int, now: float, answer: asyncio.Future[Ack] | None
    ) -> bool:
        """Holds `seat`'s slap at `pile_id` if lag-fair judging or the tie window applies to
        it. The first slap opens a judging window: any slap that could still count as
        earlier once compensated (arrival minus the slapper's round trip, under lag_fair),
        or as tied with the first (within tie_window_ms of it, compensated times compared
        under lag_fair), arrives within it."""
        table, game = self.table, self.table.game
        tie_window = table.rules.tie_window_ms / 1000
        if not (table.lag_fair or tie_window) or table.phase != "playing" or game is None:
            return False
        if not game.slap_open or pile_id != game.pile_id:
            return False  # no race to judge: late, false or refused, at once
        credit = table.compensation if table.lag_fair else _no_credit
        counts_at = now - credit(seat)
        if self._judging is None:
            self._judging = Judging(game.pile_id, table.turn_started_at)
            most = max((credit(s) for s in range(game.players)), default=0.0)
            self._timers.at("judging", counts_at + most + tie_window, self._judge)
        self._judging.slaps.append(HeldSlap(seat, now, counts_at, answer))
        return True

    def _check_not_judging(self) -> None:
        """No flip while slaps wait for their judging: it would cover the trigger."""
        if self._judging is not None:
            raise IllegalAction(EngineCode.SLAP_PENDING, "slaps are being judged")

    async def _judge(self, now: float) -> None:
        """The judging window closed: the engine gets the held slaps in the order
        `judging_order` gives (a tie first, in the tie rule's order; then by the time each
        counts), each at the time it counts (never before the trigger showed), and stays
        first-come. The tied slap the rule favours is told whom it tied with; if the engine
        refuses it (a frozen seat), the next tied one is, with those still after it."""
        judging, self._judging = self._judging, None
        if judging is None:
            return
        game = self.table.game
        tie_window = self.table.rules.tie_window_ms / 1000
        order, tied = judging_order(
            judging.slaps, tie_window, game.tie_order if game is not None else sorted
        )
        for slap in order:
            at = max(slap.counts_at, judging.shown_at)
            tied_with: list[int] = []
            if tied and tied[0] == slap.seat:
                tied_with, tied = tied[1:], tied[1:]
            try:
                if self.closed or self.table.game is None or self.table.phase != "playing":
                    raise ProtocolError(ErrorCode.WRONG_PHASE, "the game ended")
                happened = self.table.play(
                    slap.seat, "slap", judging.pile_id, at, tied_with=tied_with
                )
                tied = []  # decided: the others are late slaps at the pile taken
            except ProtocolError as error:
                answer = ack(error)
            except IllegalAction as refused:
                answer = ack(ProtocolError(ErrorCode(refused.code), refused.message))
            else:
                answer = ack(events=self._apply(happened, now))
            if slap.answer is not None and not slap.answer.done():
                slap.answer.set_result(answer)
        if self.table.phase == "playing":
            # Flips may go on: the judging no longer holds them.
            self._schedule(now, Views(self.table), anyone=bool(self.table.connected()))

    def _answer_held_slaps(self, why: ErrorCode = ErrorCode.NO_ROOM) -> None:
        """The room closes (or pauses) with slaps held: their senders are told, not left
        waiting."""
        judging, self._judging = self._judging, None
        words = "room closed" if why is ErrorCode.NO_ROOM else "the table is paused"
        for slap in judging.slaps if judging is not None else []:
            if slap.answer is not None and not slap.answer.done():
                slap.answer.set_result(ack(ProtocolError(why, words)))

    async def _ping(self, now: float) -> None:
        """Measures each connection's round trip while the room judges lag-fair: an
        app-level `ping` every SLAPJACK_LAG_PING_SECONDS, answered by the page's `pong`
        (app/tables/lag.py). Nothing else uses it, so a room without the rule sends none."""
        if self.closed or not self.table.lag_fair:
            return
        for person in self.table.connected():
            sid = self._sid_of.get(person.id)
            if sid is not None:
                sent = self.clock.now()  # the moment it leaves, not when the timer fired
                ping = {"id": self.table.lag.ping(person.id, sent)}
                self.transport.send(Encoded.of(PING, ping), sid)
        if self.table.connected():  # `_schedule` starts it again when someone comes back
            when = self.clock.now() + self.settings.lag_ping_seconds
            self._timers.at("ping", when, self._ping)

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
        moves, kept = self.table.moves, self._journal
        if (
            kept is not None
            and len(moves) == kept.committed + 1
            and self.table.phase == phase_before
        ):
            kept.committed += 1  # one move, one change: the journal goes on
        else:  # a change that is not one move: the next save is whole, with no moves
            self._journal = None
            moves.clear()
        version = self.table.new_version()
        for event in sent:
            event["version"] = version
        if self.table.phase == "over" and phase_before != "over":
            self._game_over()
        self._phase_seen = self.table.phase
        # Built and encoded once, shared by recipients and bots.
        views = Views(self.table, sent, self._view_parts)
        connected = self.table.connected()  # who is here, looked up once for the change
        self._broadcast(views, connected)
        self._schedule(now, views, anyone=bool(connected))
        self._changed(urgent=self.table.phase != phase_before, anyone=bool(connected))

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

    def _broadcast(self, views: Views, connected: list[Person]) -> None:
        """Each person's own state, the change's events in it: one message per person per
        change, the shared part encoded once. Every send is queued on its connection
        before this returns, so the next change's messages come after these."""
        seat_of = self.table.seat_by_id()
        for person in connected:
            sid = self._sid_of.get(person.id)
            if sid is not None:
                self.transport.send(views.message(person, seat_of.get(person.id)), sid)

    def _schedule(self, now: float, views: Views, *, anyone: bool) -> None:
        """Every timer, from the table's state alone. `anyone`: whether someone is
        connected."""
        self._schedule_autopilot()
        self._schedule_tick()
        self._schedule_bots(views)
        self._schedule_abandon(now)
        self._schedule_host()
        self._schedule_ping(now, anyone)
        if not self.used and len(self.table.people) >= 2:
            self.used = True
            if self.on_used is not None:
                self.on_used()
                self.on_used = None
        if anyone:
            self._timers.cancel("expiry")
        elif not self._timers.pending("expiry"):
            keep = (
                self.settings.room_expiry_seconds
                if self.used
                else self.settings.unused_room_seconds
            )
            self._timers.at("expiry", now + keep, self._expire)

    def _schedule_ping(self, now: float, anyone: bool) -> None:
        """Lag pings while lag-fair judging is on and someone is here to answer: at once
        when the host turns the rule on or a restored table with it gets its first person
        back (a newcomer to a room already pinging is in the next round, within
        SLAPJACK_LAG_PING_SECONDS); none once it is off."""
        if not self.table.lag_fair or not anyone:
            self._timers.cancel("ping")
        elif not self._timers.pending("ping"):
            self._timers.at("ping", now, self._ping)

    def _schedule_host(self) -> None:
        """A disconnected host hands over when their grace runs out."""
        when = self.table.host_hand_over_at()
        if when is None:
            self._timers.cancel("host")
        else:
            self._timers.at("host", when, self._host_timeout)

    def _schedule_abandon(self, now: float) -> None:
        """A game nobody at the table can play any more (every seat still in is a person who
        is gone) ends after a while: the autopilot flips but never slaps, so it would stall
        at the first Jack while spectators wait for the lobby."""
        if self.table.phase == "playing" and not self.table.anyone_can_play():
            if not self._timers.pending("abandon"):
                self._timers.at("abandon", now + self.settings.abandon_seconds, self._abandon)
        else:
            self._timers.cancel("abandon")

    def _schedule_autopilot(self) -> None:
        """Flips for the seat to play once it is idle, or disconnected, for too long; never
        before its freeze or the collect pause ends, nor while a trigger holds the table (a
        trigger that lapsed holds it no longer)."""
        game, table = self.table.game, self.table
        if table.phase != "playing" or game is None or game.next_to_play is None:
            self._timers.cancel("autopilot")
            return
        if game.slap_open and not game.trigger_lapsed:
            self._timers.cancel("autopilot")  # the lapse's tick schedules it again
            return
        seat, settings = game.next_to_play, self.settings
        when = table.turn_started_at + settings.idle_autoflip_seconds
        occupant = table.occupant(seat)
        if isinstance(occupant, Person) and occupant.disconnected_at is not None:
            gone = occupant.disconnected_at + settings.disconnected_autoflip_seconds
            paused = table.turn_started_at + settings.autoflip_pause_seconds
            when = min(when, max(gone, paused))
        ready = max(game.frozen_until(seat), game.collect_until)
        self._timers.at("autopilot", max(when, ready), self._autoflip)

    def _schedule_tick(self) -> None:
        """Wakes the game when a freeze or the collect pause ends (so `frozen_ms` and
        `collect_ms` drop to 0), when a trigger lapses, or when time runs out."""
        game = self.table.game
        if self.table.phase != "playing" or game is None:
            self._timers.cancel("tick")
            return
        when = game.next_wake
        if when is not None:
            self._timers.at("tick", when, self._tick)
        else:
            self._timers.cancel("tick")

    def _schedule_bots(self, views: Views | None = None) -> None:
        table = self.table
        if not table.bots and not self._planners and not self._bot_plans:
            return  # no bot here, and none had a plan (a bot's timer is set with its plan)
        views = views if views is not None else Views(table)
        for bot_id in self._planners.keys() - table.bots.keys():
            del self._planners[bot_id]  # removed from the table
        for seat in range(len(table.seats)):
            occupant = table.occupant(seat)
            timer = f"bot{seat}"
            if not isinstance(occupant, TableBot):
                self._timers.cancel(timer)
                self._bot_plans.pop(seat, None)
                continue
            planner = self._planner(occupant)
            plan = planner.plan(views.state(None, seat)) if table.game else None
            if plan is None:
                self._timers.cancel(timer)
                self._bot_plans.pop(seat, None)
            elif plan is not self._bot_plans.get(seat):
                self._bot_plans[seat] = plan
                when = self.clock.now() + plan.delay
                self._timers.at(timer, when, partial(self._bot_move, seat, occupant.id, plan))

    def waits_for_players(self, on_used: Callable[[], None]) -> None:
        """A restored table that only its opener has been at (a cluster knows it from Redis:
        app/cluster/node.py): it closes as soon as a new room nobody came to, and `on_used`
        is called once a second person has come."""
        self.used = False
        self.on_used = on_used
        if not self.table.connected():
            when = self.clock.now() + self.settings.unused_room_seconds
            self._timers.at("expiry", when, self._expire)

    async def _expire(self, now: float) -> None:
        if not self.table.connected() and not self.closed:
            self.close()

    def close(self) -> None:
        """Closes the room for good (it expired): Rooms deletes its stored table."""
        self.closed = True
        self._timers.cancel_all()
        self._answer_held_slaps()
        self._on_close(self.code)

    def stop(self) -> None:
        """The process is leaving now: timers and saves stop, the stored table stays."""
        self.hold()
        if self.saver is not None:
            self.saver.stop()
