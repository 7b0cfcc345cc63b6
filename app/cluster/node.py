"""One process of a cluster: N processes on one Redis store behind a router (deploy/), each
serving the tables whose lease it holds, and following the router when it sends a table's
people elsewhere.

With `SLAPJACK_STORE=redis://...` the app runs as a cluster node (app/main.py):
- a connection for a table this process does not serve takes the table: at once if nobody
  holds its lease (the table is loaded from Redis, `Rooms.restore`), else by asking the
  holder to hand it over (app/cluster/ownership.py) and waiting, bounded, for the lease;
- every save goes through this node's fenced view of Redis (`ClusterStore`): refused once
  another process holds the table, and then this process drops the table and sends its
  connections away (they reconnect through the router, to the owner). A changed table is
  written within SLAPJACK_SAVE_SECONDS (`ClusterNode._save_changed`, a round over the
  tables this process holds), and at once when it is handed over or the process stops;
- a hand-over asked by another process: the room stops, is saved, is dropped here, the lease
  is released and the room's connections are closed, so their pages reconnect, through the
  router, to the process that asked;
- a process that cannot confirm its lease (paused past it, Redis stopped or hung) judges
  nothing more for that table, and keeps it, paused, in memory with its connections open
  (`Room.pause`: everyone is told); the first renewal that lands sets it going again
  (`ClusterNode._watch`). The table kept in memory is newer than the stored one and wins:
  nobody can take the lease over while its holder renews it (app/cluster/ownership.py);
- new tables (POST /api/rooms, on any process) are written to Redis and opened by whichever
  process the router sends their first connection to; GET /api/rooms/CODE and the room page
  read Redis;
- the per-address limits count across the processes (app/ops/limits.py `SharedPerAddress`,
  `SharedCodeBudget`), and so do the rooms open (SLAPJACK_MAX_ROOMS) and those an address
  opened, until they close (SLAPJACK_OPEN_ROOMS_PER_ADDRESS; both `RedisStore.open_waiting`).
  A room nobody came to closes as soon as on one process: its owner closes it
  SLAPJACK_UNUSED_ROOM_SECONDS after its last action, and a table nobody opened in that time
  is closed by whichever process looks first (`_close_unopened`).

A table follows the router: a connection that reaches a process the router did not choose
(sent straight to a process's port) moves the table there, and the next connection the router
sends moves it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from app.cluster.leasing import QUIET_SECONDS
from app.cluster.ownership import Ownership
from app.cluster.store import ClusterStore
from app.ops.clock import REAL_TIME, Clock
from app.ops.config import Settings
from app.ops.limits import SharedCodeBudget, SharedPerAddress
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.stores import LeaseLost, Snapshot, StoreError
from app.stores.redis import RedisStore, TooManyRooms, connect
from app.tables.journal import table_from_snapshot
from app.tables.registry import HOARDING, NOT_WRITTEN, Rooms, new_code
from app.tables.room import Room
from app.tables.table import Policy, Table
from app.wire.errors import ErrorCode, ProtocolError
from engine import Rules

# A connection for a table held by a live process waits this long past the lease for it
# (a holder that answers hands over in well under a second; a dead one's lease runs out).
CLAIM_MARGIN_SECONDS = 1.0
# A hand-over writes the table before letting go; a store slower than this loses the last
# SLAPJACK_SAVE_SECONDS of play rather than keeping the table's people waiting.
HAND_OVER_SAVE_SECONDS = 2.0
# How often the tables' pauses are matched to their leases: a table pauses this soon after
# its lease can no longer be confirmed, and goes on this soon after a renewal lands.
WATCH_SECONDS = 0.1
# How often each process looks for rooms nobody opened in time (at most; a quarter of
# SLAPJACK_UNUSED_ROOM_SECONDS when that is shorter): one Redis call.
UNOPENED_SECONDS = 5.0
TELL_AGAIN_SECONDS = 1.0  # a room's use not told to Redis is told again this soon
START_AT_ONCE = 32  # at start, tables nobody serves are taken and restored this many at once
TELLING_ALIVE_SECONDS = QUIET_SECONDS + 0.5  # the others' counters watched from the start
# A process back after a stop or a crash gets the tables that came here from it meanwhile:
# their people are sent back through the router SEND_HOME_BATCH tables at a time, every
# SEND_HOME_SECONDS, starting SEND_HOME_DELAY_SECONDS after its start was seen (it listens
# by then), each table once.
SEND_HOME_DELAY_SECONDS = 2.0
SEND_HOME_BATCH = 10
SEND_HOME_SECONDS = 1.0
SEND_HOME_LONGEST_SECONDS = 300.0
# Taken this much before the returning process's last renewal (as seen here) still counts as
# taken while it was away: it let its tables go as it stopped, after its last renewals.
AWAY_SLACK_SECONDS = 2.0
MOVING = "the table is moving between servers: try again"
PAUSED = "the table is paused while the server reaches its store: try again"
UNREACHABLE = "the server cannot reach its tables: try again"


class Beside(Protocol):
    """Records of another kind held by lease beside the tables, in the same store (an
    event's: app/tournaments/): each has one owner as a table has, and moves between
    processes the same way."""

    def holds(self, code: str) -> bool:
        """Open here."""
        ...

    def opens(self, record: Snapshot) -> bool:
        """A record of this kind (not a table's)."""
        ...

    async def take(self, code: str, record: Snapshot) -> bool:
        """Opens the record here, its lease just taken; False if it cannot be read."""
        ...

    async def give(self, code: str) -> None:
        """Another process takes it: stop, write it (fenced), forget it here."""
        ...

    def drop(self, code: str) -> None:
        """Another process has it already: forget it here, unwritten."""
        ...


class ClusterNode:
    def __init__(
        self,
        redis: RedisStore,
        settings: Settings,
        sio: Any,
        metrics: Metrics,
        clock: Clock = REAL_TIME,
    ) -> None:
        self.redis, self.settings, self.sio, self.metrics = redis, settings, sio, metrics
        self.clock = clock  # the app's: the rooms' clock, the leases' and the saving round's
        self.node = settings.node_id
        self.ownership = Ownership(redis, self.node, settings.lease_seconds, metrics, clock=clock)
        self.ownership.on_lost = self._lost
        self.ownership.on_hand_over = self._hand_over
        self.ownership.on_node_back = self._node_back
        self.ownership.leaving = lambda: self._rooms is not None and self._rooms.draining
        self.store = ClusterStore(redis, self.ownership)
        self._rooms: Rooms | None = None
        self.beside: Beside | None = None  # the events (app/main.py sets it)
        self._moving: dict[str, asyncio.Lock] = {}  # code -> held while the table moves
        self._written: dict[str, int] = {}  # code -> the version last written to Redis
        self._saving: asyncio.Task[None] | None = None
        self._watching: asyncio.Task[None] | None = None
        self._closing_unopened: asyncio.Task[None] | None = None
        self._opening_later: asyncio.Task[None] | None = None
        self._telling: set[asyncio.Task[None]] = set()  # held until done: tasks are weak
        limits = connect(redis.url, socket_timeout=1, connections=redis.connections)
        self.room_limit = SharedPerAddress(limits, "rooms", settings.rooms_per_minute)
        self.connect_limit = SharedPerAddress(limits, "connects", settings.connects_per_minute)
        self.code_limit = SharedCodeBudget(
            limits,
            settings.wrong_codes_per_minute,
            settings.wrong_codes_burst,
            settings.guess_wave_per_minute,
        )
        self._limits = limits

    @property
    def rooms(self) -> Rooms:
        assert self._rooms is not None, "ClusterNode.serve(rooms) first"
        return self._rooms

    def serve(self, rooms: Rooms) -> None:
        self._rooms = rooms

    # ---- the process starts and stops ---------------------------------------------------

    async def start(self) -> None:
        """Instead of `Rooms.start`: expired tables are dropped from Redis, then every table
        nobody serves (its lease free) is taken and opened here, so its timers run; the router
        then moves each table where its people are sent (hand-over). Not at once the tables
        it let go as it stopped (a deploy): their people, at another process meanwhile, would
        be refused there ("moving") and retry here. Whoever they reach first takes each (it
        comes home later); those nobody took open here a lease after the start, or once no
        other process is seen alive."""
        await self.store.open()
        for code in await self.store.purge_expired(self.settings.room_expiry_seconds):
            log_event("room_expired_in_store", room=code)
        await self.ownership.start()
        loop = asyncio.get_running_loop()
        self._saving = loop.create_task(self._save_changed())
        self._watching = loop.create_task(self._watch())
        self._closing_unopened = loop.create_task(self._close_unopened())
        codes = await self.store.codes()
        left = await self.store.left_by(codes)
        later = [code for code in codes if left.get(code) == self.node]
        opened = await self._open_free([code for code in codes if code not in later])
        log_event("cluster_node_started", node=self.node, tables=opened, later=len(later))
        if later:
            others = [n for n in (await self.ownership.store.node_counts()).beats if n != self.node]
            self._opening_later = loop.create_task(self._open_later(later, others))

    async def _open_free(self, codes: list[str]) -> int:
        """Takes and opens each of `codes` nobody serves, START_AT_ONCE at a time: how many."""
        gate = asyncio.Semaphore(START_AT_ONCE)

        async def open_if_free(code: str) -> bool:
            async with gate, self._lock(code):
                if self.rooms.get(code) is None and await self.ownership.take_if_free(code):
                    return await self._open(code) is not None
            return False

        return sum(await asyncio.gather(*(open_if_free(code) for code in codes)))

    async def _open_later(self, codes: list[str], others: list[str]) -> None:
        await self.clock.sleep(TELLING_ALIVE_SECONDS)  # till `alive` can tell, with a margin
        if any(self.ownership.alive(node) for node in others):
            await self.clock.sleep(self.settings.lease_seconds - TELLING_ALIVE_SECONDS)
        if self.rooms.draining:
            return  # stopping already: the next process takes them
        try:
            opened = await self._open_free(codes)
        except StoreError as error:  # each opens when its people come
            log_event("left_tables_not_opened", level=logging.WARNING, reason=str(error))
            return
        log_event("left_tables_opened", node=self.node, tables=opened)

    async def close(self) -> None:
        """The process stops: every table it holds is written and its lease let go (another
        process may take it at once), then the connections to Redis close."""
        tasks = (self._saving, self._watching, self._closing_unopened, self._opening_later)
        for task in (*tasks, *self._telling):
            if task is not None:
                task.cancel()
        for code in self.ownership.held():  # none once Rooms.shutdown closed the store
            room = self.rooms.get(code)
            if room is not None:
                room.closed = True  # nothing changes it any more: this write is the last
                await self._write(room)
        with contextlib.suppress(Exception):  # already closed with the store, most often
            await self.store.close()
        await self._limits.aclose()

    # ---- pauses --------------------------------------------------------------------------

    async def _watch(self) -> None:
        """Pauses each table whose lease cannot be confirmed now, and sets it going again
        once a renewal lands (app/cluster/ownership.py renews, faster while one is unsure)."""
        while True:
            await self.clock.sleep(WATCH_SECONDS)
            for code in self.ownership.held():
                room = self.rooms.get(code)
                if room is None or room.closed:
                    continue
                try:
                    if not self.ownership.holds(code):
                        room.pause()
                    elif room.paused:
                        async with room.lock:
                            if self.ownership.holds(code):
                                room.resume()
                except Exception:  # a bug of ours: the other tables still go on
                    log_event("pause_failed", level=logging.ERROR, exc_info=True, room=code)

    # ---- rooms nobody came to ---------------------------------------------------------------

    async def _close_unopened(self) -> None:
        """Closes the tables that waited for players longer than SLAPJACK_UNUSED_ROOM_SECONDS
        with no process serving them (nobody opened the link; or their process is gone)."""
        unused = self.settings.unused_room_seconds
        while True:
            await self.clock.sleep(min(unused / 4, UNOPENED_SECONDS))
            try:
                for code in await self.redis.close_unopened(unused):
                    log_event("room_closed", room=code, node=self.node, unopened=True)
            except StoreError as error:  # the next look tries again
                log_event("unopened_not_closed", level=logging.WARNING, reason=str(error))

    async def _waits_for_players(self, room: Room) -> None:
        """A table taken here that only its opener came to so far closes as soon as on one
        process, and stops counting against its opener once a second person comes."""
        try:
            if await self.redis.waiting_opener(room.code) is None:
                return
        except StoreError:
            return  # taken as used: it closes after SLAPJACK_ROOM_EXPIRY_SECONDS instead
        if len(room.table.people) >= 2:  # its use was not told (Redis was away then)
            self._tell_used(room)
        else:
            room.waits_for_players(lambda: self._tell_used(room))

    def _tell_used(self, room: Room) -> None:
        self._in_background(self._used(room))

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)

    async def _used(self, room: Room) -> None:
        """Tells Redis, until it has heard it while the room is here: an entry left waiting
        would have the table closed once no process serves it."""
        while self.rooms.get(room.code) is room:
            try:
                await self.redis.waited(room.code)
                return
            except StoreError as error:
                log_event(
                    "room_use_not_told", level=logging.WARNING, room=room.code, reason=str(error)
                )
            await self.clock.sleep(TELL_AGAIN_SECONDS)

    # ---- saving -----------------------------------------------------------------------------

    async def _save_changed(self) -> None:
        while True:
            await self.clock.sleep(self.settings.save_seconds)
            for code in self.ownership.held():
                room, moving = self.rooms.get(code), self._moving.get(code)
                gone = room is None and not (moving and moving.locked()) and not self._beside(code)
                if gone and not self.rooms.draining:  # expired (draining: Ownership.stop's)
                    await self.ownership.release(code)
                elif (
                    room is not None
                    and room.saver is None
                    and self._written.get(code) != room.version
                ):
                    await self._write(room)  # a room with a Saver writes itself

    async def _write(self, room: Room) -> bool:
        """Writes the room's table now (fenced); False if it was not written."""
        try:
            await asyncio.wait_for(self.rooms.save(room), HAND_OVER_SAVE_SECONDS)
        except LeaseLost:
            await self.ownership.lost(room.code, "fenced")
            return False
        except (StoreError, TimeoutError) as error:
            # Retried at the next round; the game goes on from memory meanwhile.
            log_event(
                "table_write_failed", level=logging.WARNING, room=room.code, reason=str(error)
            )
            return False
        self._written[room.code] = room.version
        return True

    # ---- a connection for a table ---------------------------------------------------------

    async def room_for(self, code: object) -> Room | None:
        """The room a connection asks for, served by this process from now on; None if no
        such table exists. ProtocolError (try again) if it could not be taken in time."""
        if not isinstance(code, str):
            return None
        code = code.strip().upper()
        if self.ownership.giving(code):
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, MOVING)  # the page tries again
        room = self.rooms.get(code)
        if room is not None and not room.closed and self.ownership.token(code) is not None:
            if self.ownership.holds(code):
                return room
            room.pause()  # kept here, newest of all: the page tries again until it goes on
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, PAUSED)
        async with self._lock(code):
            try:
                return await self._take(code)
            except StoreError as error:
                log_event("table_unreachable", level=logging.WARNING, room=code, reason=str(error))
                raise ProtocolError(ErrorCode.SHUTTING_DOWN, UNREACHABLE) from None

    async def _take(self, code: str) -> Room | None:
        room = self.rooms.get(code)
        if room is not None and not room.closed and self.ownership.token(code) is not None:
            if self.ownership.holds(code):
                return room  # taken by another connection while this one waited
            room.pause()
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, PAUSED)
        if room is not None:
            self._let_go(code)  # closed here (handed over): never judged again
        if not await self.store.exists(code):
            return None
        wait = self.settings.lease_seconds + CLAIM_MARGIN_SECONDS
        if not await self.ownership.claim(code, wait):
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, MOVING)
        return await self._open(code)

    async def _open(self, code: str) -> Room | None:
        """The table whose lease this process just took, open here from its last save (a
        record of another kind goes to its own registry, `beside`: None here)."""
        record = await self.store.load(code)  # read once, whichever kind it is
        if record is not None and self.beside is not None and self.beside.opens(record):
            if not await self.beside.take(code, record):
                await self.ownership.release(code)
            return None
        try:
            room = self.rooms.restore_loaded(code, record)
        except (ValueError, TypeError, KeyError, IndexError, OverflowError) as error:
            log_event("snapshot_unreadable", level=logging.ERROR, room=code, reason=repr(error))
            room = None
        if room is None:
            await self.ownership.release(code)
            return None
        self.metrics.restores.inc()
        self._written.pop(code, None)  # written at the next round: its version moved on
        self.serve_here(room)
        # After the gate (the room is served from here), and not before its people are let
        # in: a takeover of hundreds of tables does not wait a round trip each for this.
        self._in_background(self._waits_for_players(room))
        return room

    def serve_here(self, room: Room) -> None:
        """The room judges only while this process holds its lease, and its saves stop once
        another process has it."""
        code = room.code
        room.judge_gate = lambda: self.ownership.holds(code)
        if room.saver is not None:  # its own writes, refused once the table is another's
            room.saver.on_lease_lost = lambda: self.ownership.lost(code, "fenced")

    async def open_new(self, table: Table) -> Room:
        """A table made here under a fresh code (an event's heat), served here under its
        lease from its first write; the router moves it where its people connect."""
        if not await self.ownership.take_if_free(table.code):
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, MOVING)
        room = self.rooms.open_table(table)
        self.serve_here(room)
        return room

    def _beside(self, code: str) -> bool:
        return self.beside is not None and self.beside.holds(code)

    def judges(self, room: Room) -> bool:
        """Whether the room's actions are this process's to judge: the table is still ours.
        While its lease is unconfirmed (this process was paused past it, Redis is away) the
        room itself refuses them (`Room.may_judge`: it pauses, kept here, until a renewal
        confirms the lease or Redis names another owner)."""
        return not room.closed and self.ownership.token(room.code) is not None

    # ---- the table leaves this process ------------------------------------------------------

    async def _hand_over(self, code: str) -> None:
        """Another process got this table's people from the router: stop, save, let go."""
        async with self._lock(code):
            room = self.rooms.get(code)
            if room is None and self.beside is not None and self.beside.holds(code):
                await self.beside.give(code)
                self._send_away(code)
                return
            if room is None:
                return
            async with room.lock:
                room.closed = True  # nothing changes it from here on
            if not await self._write(room):
                log_event("hand_over_unsaved", level=logging.ERROR, room=code)
            self._let_go(code)

    async def _lost(self, code: str) -> None:
        """The table is another process's now: whatever this one had is stale."""
        if self.rooms.get(code) is not None:
            self._let_go(code)
        elif self.beside is not None and self.beside.holds(code):
            self.beside.drop(code)
            self._send_away(code)

    async def _node_back(self, node: str, away_since: float) -> None:
        """`node` started again: the tables taken from it since it went away (as this process
        saw it) go back, their people sent through the router a batch at a time. A turn
        when `node` seems not to renew (a busy moment, here or there) waits; `node` silent
        for a lease again, or SEND_HOME_LONGEST_SECONDS gone by, ends it."""
        await self.clock.sleep(SEND_HOME_DELAY_SECONDS)
        sent, ends = 0, self.clock.now() + SEND_HOME_LONGEST_SECONDS
        while self.clock.now() < ends:
            homeward = []
            for code in self.ownership.held():
                origin = self.ownership.came_from(code)
                if origin is not None and origin[0] == node:
                    if origin[1] >= away_since - AWAY_SLACK_SECONDS:
                        homeward.append(code)
                    else:
                        self.ownership.settled(code)  # from an earlier absence: it stays
            quiet = self.ownership.quiet(node)
            if not homeward or (quiet is not None and quiet >= self.settings.lease_seconds):
                break
            if self.ownership.alive(node):
                for code in homeward[:SEND_HOME_BATCH]:
                    self.ownership.settled(code)
                    sent += self._send_home(code)
            await self.clock.sleep(SEND_HOME_SECONDS)
        if sent:
            log_event("tables_sent_home", node=self.node, to=node, tables=sent)

    def _send_home(self, code: str) -> bool:
        """Closes the table's connections (it stays here, lease and all): its pages reconnect
        through the router, which sends them to the table's own process, and that process
        asks for it. If the router sends them here again, the table simply stays."""
        room = self.rooms.get(code)
        if room is None or room.closed or self.ownership.giving(code):
            return False
        return self._hang_up(code) > 0

    def _let_go(self, code: str) -> None:
        """Forgets the room here (its stored table stays) and sends its pages to the owner."""
        self.rooms.let_go(code)
        self._written.pop(code, None)
        self._send_away(code)

    def _send_away(self, code: str) -> None:
        """A table (or an event) went to another process: its pages, to its owner."""
        log_event("table_left", room=code, node=self.node, connections=self._hang_up(code))

    def _hang_up(self, code: str) -> int:
        """Closes the room's connections at the transport, so their pages come back at once (the
        browser's Socket.IO client reads Engine.IO's CLOSE only on long-polling): how many."""
        participants = list(self.sio.manager.get_participants("/", code))
        for _, eio_sid in participants:
            self.sio.start_background_task(self.sio.hang_up, eio_sid)
        return len(participants)

    def _lock(self, code: str) -> asyncio.Lock:
        lock = self._moving.get(code)
        if lock is None:
            if len(self._moving) > 1000:  # forget idle ones now and then
                self._moving = {c: k for c, k in self._moving.items() if k.locked()}
            lock = self._moving[code] = asyncio.Lock()
        return lock

    # ---- the HTTP side: any process ----------------------------------------------------------

    async def open_table(
        self,
        rules: Rules,
        *,
        lag_fair: bool = False,
        false_starts: bool = True,
        opener: str | None = None,
    ) -> str:
        """POST /api/rooms: a new table written to Redis under a code no table has; the
        process the router sends its first connection to opens it. `opener`: who asks, as
        the per-address limits count them; refused (rate_limited) when that address holds
        SLAPJACK_OPEN_ROOMS_PER_ADDRESS rooms nobody else came to, on any process."""
        if self.rooms.draining:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is restarting: try again")
        try:
            while True:
                code = new_code()
                # The lease makes the code ours while we check and write it.
                lease = await self.redis.take_lease(code, self.node)
                if lease.node != self.node:
                    continue
                try:
                    if await self.redis.load(code) is not None:
                        continue
                    if not await self.redis.open_waiting(
                        code,
                        opener,
                        self.settings.open_rooms_per_address,
                        self.settings.unused_room_seconds,
                        most_rooms=self.settings.max_rooms,
                        live_seconds=self.settings.room_expiry_seconds,
                    ):
                        raise ProtocolError(ErrorCode.RATE_LIMITED, HOARDING)
                    table = Table(code, rules, Policy.of(self.settings))
                    table.lag_fair, table.false_starts = lag_fair, false_starts
                    now = self.clock.now()
                    table.acted_at = now  # a table no game was dealt at closes when idle
                    snapshot = table.to_dict(now)
                    await self.redis.save_fenced(code, self.node, lease.token, snapshot)
                finally:
                    await self.redis.release_lease(code, self.node, lease.token)
                log_event("room_opened", room=code, rules=table.rules_shown(), node=self.node)
                return code
        except TooManyRooms:
            raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "too many rooms are open") from None
        except StoreError as error:
            log_event("room_not_written", level=logging.ERROR, reason=str(error)[:200])
            self.metrics.saves_failed.inc()
            raise ProtocolError(ErrorCode.STORE_UNAVAILABLE, NOT_WRITTEN) from None

    async def exists(self, code: str) -> bool:
        try:
            return await self.store.exists(code.strip().upper())
        except StoreError:
            return False

    async def summary(self, code: str) -> dict[str, Any] | None:
        """GET /api/rooms/CODE from Redis (or from the room, if it is served here)."""
        code = code.strip().upper()
        room = self.rooms.get(code)
        if room is not None and self.ownership.holds(code):
            return room.summary()
        try:
            snapshot = await self.store.load(code)
        except StoreError:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, UNREACHABLE) from None
        if snapshot is None:
            return None
        table = table_from_snapshot(snapshot, self.clock.now(), Policy.of(self.settings))
        return {
            "code": code,
            "phase": table.phase,
            "game": table.games,
            "seated": table.seated(),
            "spectators": len(table.spectators()),
        }


def cluster_node(
    store: object, settings: Settings, sio: Any, metrics: Metrics, clock: Clock = REAL_TIME
) -> ClusterNode | None:
    """A cluster node when the store is Redis (every process on it may serve any table),
    else None: SQLite and memory serve one process."""
    if isinstance(store, RedisStore):
        return ClusterNode(store, settings, sio, metrics, clock)
    return None
