"""Ownership: which process of a cluster judges a table, through a lease in Redis.

    ownership = Ownership(store, node="node-1", lease_seconds=5, metrics=metrics)
    ownership.on_lost = room_lost            # async (code): another process has the table
    ownership.on_hand_over = give_table_up   # async (code): save it, drop it, send people away
    await ownership.start()
    if await ownership.claim("ABCD", wait_seconds=6):   # now this process's table
        ...
    ownership.holds("ABCD")                  # True while this process may judge it
    ownership.token("ABCD")                  # the fencing token its saves carry

One judge per table. A lease (app/stores/redis.py) names the process and carries a fencing
token that only grows (INCR): every renewal and every save is a script conditional on the
node and the token, run atomically inside Redis. The lease has no expiry in Redis: a
holder's renewals (about every second) move its `beat` on, and another process takes the
lease over only after watching the beat stand still for `lease_seconds` by its own
monotonic clock, with Redis answering all the while (`claim`). So neither a stopped nor a
hung Redis ever hands a table to a second process: time Redis spends away counts against
nobody, and when it answers again the holder's next renewal (within a second) shows it
alive, whatever Redis's clock did meanwhile. The table it kept in memory is the newest,
and it stays its judge: nobody loads the older stored copy over it.

The holder judges only while `holds`: less than `judge_seconds` (the lease less a margin
for clock rates and pauses) after its last confirmed renewal *was sent*. Any watcher began
after that renewal landed and waits a whole lease past it, so the holder has stopped
judging before anyone may take over. A process paused past that (SIGSTOP, a long GC, a
swapped-out VM, Redis away) knows on waking that it may not judge, before Redis says
anything: its tables pause in memory (app/cluster/node.py) until a renewal confirms the
lease again, or Redis says another process has it.

Failover by the process, not the table. Every lease a process takes or renews also moves its
renewal counter on (`slapjack:nodes`, inside the same script), and every process watches every
other's counter all the time (one HGETALL every NODE_WATCH_SECONDS). A process whose counter
stood still for `lease_seconds` by the watcher's clock, with Redis answering all the while,
has renewed no lease since the watch began: it stopped judging before then, and each of its
tables may be taken over at once (TAKE, conditional on the counter being still the same). So
the tables of a killed process are taken about a lease after its last renewal, not a lease
after their people's reconnections reached another process; the claims of those people wait
for it and are answered together, each table restored on its own.

Tables go home. A table taken over from a process that went away (killed, or stopped by a
deploy) remembers where it came from (`came_from`). When that process starts again (its
start count, `slapjack:lives`, moves on), `on_node_back` is told, and the node sends those
tables' people back through the router, a few at a time (app/cluster/node.py): the router
sends them to the returning process, which asks for the table as for any other. A process
that just started is not asked for its tables for a lease (`claim` gives up at once): the
people the router sent elsewhere while it was away come to it now.

Hand-over (Redis pub/sub, one channel per node, `slapjack:node:NODE`): a process that gets a
connection for a table another live process holds publishes `hand_over` to the holder; the
holder runs `on_hand_over` (the room is saved and dropped, its people told to reconnect),
releases the lease and answers `released`, and the asker takes the lease. A holder that is
dead never answers: the asker takes the lease once it has watched it stand still (failover).
The lease it let go is the asker's to take: the old holder does not take it back while it
lies free and untaken (its own people, sent away and back through the router, would often
beat the asker to it, and the asker ask again: the table would go back and forth). Once
the asker has taken it (its fencing token shows it, even if let go since), the old holder
asks for it like any other; if the asker never takes it, the old holder may a lease later.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from app.cluster.leasing import (
    ASK_AGAIN_SECONDS,
    HAND_OVER_SECONDS,
    LISTEN_RETRY_SECONDS,
    NODE_GAP_SECONDS,
    NODE_WATCH_SECONDS,
    QUIET_SECONDS,
    RENEW_SECONDS,
    RETRY_SECONDS,
    STOP_SECONDS,
    LeaseStore,
    NodeCallback,
    TableCallback,
    Watched,
    _no_one,
    _nothing,
    claim_wait,
    judge_seconds,
)
from app.ops.clock import REAL_TIME, Clock
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.stores import StoreError
from app.stores.redis import Lease, connect


class Ownership:
    def __init__(
        self,
        store: LeaseStore,
        node: str,
        lease_seconds: float,
        metrics: Metrics,
        *,
        renew_seconds: float = RENEW_SECONDS,
        namespace: str = "slapjack",
        clock: Clock = REAL_TIME,
    ) -> None:
        self.store, self.node, self.metrics = store, node, metrics
        self.lease_seconds, self.renew_seconds = lease_seconds, renew_seconds
        self.judge_seconds = judge_seconds(lease_seconds)
        self.namespace = namespace
        # The app's clock (app/ops/clock.py): renewals come on it, and a lease is ours until
        # its time says not.
        self.clock = clock
        # Set by whoever serves the tables (app/cluster/node.py); both run before the lease goes.
        self.on_lost: TableCallback = _nothing
        self.on_hand_over: TableCallback = _nothing
        # A process that went away came back (started again): (node, since when it was away,
        # by our clock). The tables that came from it meanwhile are its again.
        self.on_node_back: NodeCallback = _no_one
        # Whether this process is stopping (set by its node): a table it hands over then is
        # the asker's to send back when this process returns.
        self.leaving: Callable[[], bool] = lambda: False
        self._tokens: dict[str, int] = {}  # code -> the fencing token of our lease
        self._confirmed: dict[str, float] = {}  # code -> when its last confirmed renewal left
        # code -> a lease of another process we watch, and when we first saw it so.
        self._watched: dict[str, tuple[Lease, float]] = {}
        self._claiming: set[str] = set()  # taking the lease now: a hand-over request waits
        self._released: dict[str, asyncio.Event] = {}  # code -> set when its holder lets go
        self._giving: set[str] = set()  # handing over now: a second request is the same one
        # code -> until when a lease we handed over is left for the asker to take, and the
        # fencing token it had (a greater one since: the asker has taken it)
        self._promised: dict[str, tuple[float, int]] = {}
        # Renewals (one pipelined round), hand-over notes and the channel's own connection.
        self._redis: Any = connect(
            store.url, socket_timeout=2, connections=getattr(store, "connections", 32)
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._subscribed = asyncio.Event()
        self._failing_since: float | None = None  # renewals have failed since then
        self._nodes: dict[str, Watched] = {}  # every other process, as watched
        self._nodes_read: float | None = None  # when the counters were last read (our clock)
        self._life = 0  # this process's start count
        # code -> (the process it was taken from while that one was away, when)
        self._came_from: dict[str, tuple[str, float]] = {}
        self._left_by: dict[str, str] = {}  # code -> the stopping process that handed it over

    # ---- reading -----------------------------------------------------------------------

    def holds(self, code: str) -> bool:
        """This process may judge the table right now: its lease was confirmed recently
        enough that nobody can have taken it over."""
        confirmed = self._confirmed.get(code)
        return confirmed is not None and self.clock.now() - confirmed < self.judge_seconds

    def token(self, code: str) -> int | None:
        """The fencing token of our lease of the table (None: not ours)."""
        return self._tokens.get(code)

    def giving(self, code: str) -> bool:
        """The table is being handed over to another process right now."""
        return code in self._giving

    def held(self) -> list[str]:
        """The tables whose lease this process has (confirmed or not)."""
        return sorted(self._tokens)

    def channel(self, node: str) -> str:
        return f"{self.namespace}:node:{node}"

    def came_from(self, code: str) -> tuple[str, float] | None:
        """The process a held table was taken from while it was away, and when (our clock)."""
        return self._came_from.get(code)

    def settled(self, code: str) -> None:
        """The table stays here: it no longer counts as another process's to send back."""
        self._came_from.pop(code, None)

    def quiet(self, node: str) -> float | None:
        """How long (our clock) `node`'s renewal counter has stood still, watched without a
        gap; None if it is not being watched now."""
        watched = self._nodes.get(node)
        read = self._nodes_read
        if watched is None or read is None or self.clock.now() - read > NODE_GAP_SECONDS:
            return None
        return self.clock.now() - watched.since

    def alive(self, node: str) -> bool:
        """`node` renewed something lately (its counter moved within QUIET_SECONDS)."""
        quiet = self.quiet(node)
        return quiet is not None and quiet < QUIET_SECONDS

    def _still(self, node: str) -> tuple[str, int] | None:
        """(node, count) if `node` renewed nothing for a whole lease, as watched."""
        quiet = self.quiet(node)
        if quiet is None or quiet < self.lease_seconds:
            return None
        return node, self._nodes[node].beat

    def _just_started(self, node: str) -> bool:
        """`node` started again less than a lease ago (as this process saw it)."""
        watched = self._nodes.get(node)
        return (
            watched is not None
            and watched.restarted is not None
            and self.clock.now() - watched.restarted < self.lease_seconds
        )

    # ---- the process starts and stops ----------------------------------------------------

    async def start(self) -> None:
        """Counts this start (the other processes see it: `on_node_back`), subscribes to this
        node's channel, starts renewing and watching the others; returns once subscribed.
        StoreError if Redis cannot be reached."""
        self.metrics.watch_tables_owned(lambda: len(self._tokens))
        self._life = await self.store.node_started(self.node)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._listen(), name=f"ownership-listen:{self.node}"),
            loop.create_task(self._renew_forever(), name=f"ownership-renew:{self.node}"),
            loop.create_task(self._watch_nodes(), name=f"ownership-nodes:{self.node}"),
        ]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await self._subscribed.wait()

    async def stop(self) -> None:
        """Releases every lease (the tables are saved by then: another process may take them
        at once) and stops listening. Bounded: a task that does not end within STOP_SECONDS
        of its cancellation is left behind."""
        tasks, self._tasks = list(self._tasks), []
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=STOP_SECONDS)
        codes = list(self._tokens)
        await asyncio.gather(*(self.release(code, leaving=True) for code in codes))  # one round
        if codes:
            await self._say_left()
        await self._redis.aclose()

    async def _say_left(self) -> None:
        """Tells every other process that this one let its tables go: a claim waiting for
        one of them (a hand-over this process, stopping, had no time to answer) takes it
        now, not at its next look, nor a lease later once this process counts as silent."""
        try:
            counts = await self.store.node_counts()
            for node in counts.beats:
                if node != self.node:
                    await self._publish(node, {"kind": "left"})
        except StoreError as error:  # the claims find the leases free at their next look
            log_event("left_not_told", level=logging.WARNING, reason=str(error))

    # ---- taking, keeping and giving up a table --------------------------------------------

    async def take_if_free(self, code: str) -> bool:
        """Takes the table's lease if nobody holds it, or if we watched its holder's lease
        stand still for a whole lease (nobody is asked to hand it over). A lease we handed
        over stays free for the asker until it takes it (or a lease has gone by)."""
        promised = self._promised.get(code)
        if promised is not None:
            until, token = promised
            if (
                self.clock.now() < until
                and await self.store.lease(code) is None
                and await self.store.fence(code) <= token
            ):
                return False  # still free, and nobody took it since
            del self._promised[code]  # the asker has it (or had it), or had its chance
        watched = self._watched.get(code)
        over = None
        if watched is not None and self.clock.now() - watched[1] >= self.lease_seconds:
            over = watched[0]
        still = None if watched is None else self._still(watched[0].node)
        sent = self.clock.now()
        try:
            lease = await self.store.take_lease(code, self.node, over, still)
            if lease.node != self.node and still is None:
                still = self._still(lease.node)  # its holder, seen now, renews nothing
                if still is not None:
                    sent = self.clock.now()
                    lease = await self.store.take_lease(code, self.node, None, still)
        except StoreError:
            self._watched.pop(code, None)  # a watch counts only while Redis answers it
            raise
        if lease.node != self.node:
            if watched is None or watched[0] != lease:
                self._watched[code] = (lease, self.clock.now())  # from when we saw it: after it
            return False
        self._watched.pop(code, None)
        self._tokens[code], self._confirmed[code] = lease.token, sent
        self._mark_origin(code, lease, over, still)
        self.metrics.leases_taken.inc()
        log_event(
            "lease_taken",
            room=code,
            node=self.node,
            token=lease.token,
            over=over.node if over is not None else still[0] if still is not None else None,
        )
        return True

    def _mark_origin(
        self, code: str, lease: Lease, over: Lease | None, still: tuple[str, int] | None
    ) -> None:
        """Remembers where a table just taken came from, if that process was away: taken
        over from it, or let go by it as it stopped (found free, or handed over to us then).
        Any other table came here by the router's choice: it stays."""
        left_by = self._left_by.pop(code, None) or lease.left_by
        if still is not None:  # taken over from a process that renewed nothing
            origin = still[0]
        elif over is not None:  # its lease stood still
            origin = over.node
        else:  # free: let go as its process stopped, or handed over by a live one (ours)
            origin = left_by
        if not origin or origin == self.node:
            self._came_from.pop(code, None)
        else:
            self._came_from[code] = (origin, self.clock.now())

    async def claim(self, code: str, wait_seconds: float) -> bool:
        """Takes the table's lease: at once if nobody holds it, else by asking the holder to
        hand it over (or, if it is dead, once its lease stood still for `lease_seconds`).
        False if not ours within `wait_seconds` of the app's clock (on a test's ManualClock,
        as the test turns it). StoreError if Redis cannot be reached."""
        deadline = self.clock.now() + wait_seconds
        asked: tuple[str, float] | None = None  # the holder asked, and when
        released = self._released.setdefault(code, asyncio.Event())
        self._claiming.add(code)
        try:
            while True:
                released.clear()  # before asking: a note that comes from now on counts
                if await self.take_if_free(code):
                    return True
                watched = self._watched.get(code)
                holder = None if watched is None else watched[0].node
                if holder is not None and self._just_started(holder):
                    # Its process is back: the router sends this table's people there now.
                    log_event("lease_left_home", room=code, holder=holder)
                    return False
                now = self.clock.now()
                quiet = None if holder is None else self.quiet(holder)
                if (
                    holder is not None
                    and (quiet is None or quiet < QUIET_SECONDS)
                    and (asked is None or asked[0] != holder or now - asked[1] >= ASK_AGAIN_SECONDS)
                ):
                    await self._publish(holder, {"kind": "hand_over", "room": code})
                    asked = (holder, now)
                left = deadline - now
                if left <= 0:
                    log_event("lease_busy", level=logging.WARNING, room=code, holder=holder)
                    return False
                wait = claim_wait(quiet, self.lease_seconds)
                # Not `asyncio.wait_for`: on Python 3.11 it swallows a cancellation that
                # comes as the note arrives, and the claim would go on for its caller gone.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(wait, left)):
                        await released.wait()
        finally:
            self._claiming.discard(code)
            if code not in self._claiming:
                self._released.pop(code, None)
                self._left_by.pop(code, None)

    async def release(self, code: str, *, leaving: bool = False) -> None:
        """Gives the lease up (the table is saved and dropped here first); `leaving`: as
        this process stops, and the table is its own again when it returns."""
        token = self._forget(code)
        if token is None:
            return
        try:
            await self.store.release_lease(code, self.node, token, leaving=leaving)
        except StoreError as error:
            # Taken over once another process has watched it stand still.
            log_event("lease_release_failed", level=logging.WARNING, room=code, reason=str(error))

    def _forget(self, code: str) -> int | None:
        self._confirmed.pop(code, None)
        self._came_from.pop(code, None)
        return self._tokens.pop(code, None)

    def forget(self, code: str) -> None:
        """The table and its lease are gone from Redis (deleted for good)."""
        self._forget(code)

    # ---- renewing ------------------------------------------------------------------------

    async def _renew_forever(self) -> None:
        while True:
            unsure = any(not self.holds(code) for code in self._tokens)
            await self.clock.sleep(RETRY_SECONDS if unsure else self.renew_seconds)
            await self.renew_all()

    async def renew_all(self) -> None:
        """Renews every held lease once, in one round trip (a pipeline: hundreds of tables
        cost one exchange with Redis, not hundreds of connections), and moves this process's
        renewal counter on even with no table; a lease Redis gives to another process is
        lost. While Redis cannot be reached nothing is lost: the tables pause once `holds`
        says so, and go on at the first renewal that lands."""
        tokens = dict(self._tokens)
        sent = self.clock.now()
        script = self.store.renew_script()
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.hincrby(*self.store.heartbeat(self.node))  # alive, with tables or none
                for code, token in tokens.items():
                    await script(client=pipe, **self.store.renewal(code, self.node, token))
                answers = (await pipe.execute())[1:]
        except RedisError as error:
            if self._failing_since is None:  # once per outage, not four times a second
                self._failing_since = sent
                log_event(
                    "lease_renew_failed",
                    level=logging.WARNING,
                    tables=len(tokens),
                    reason=str(error),
                )
            return
        if self._failing_since is not None:
            away, self._failing_since = sent - self._failing_since, None
            log_event("lease_renew_recovered", tables=len(tokens), seconds=round(away, 2))
        for (code, token), kept in zip(tokens.items(), answers, strict=True):
            if self._tokens.get(code) != token:
                continue  # released, handed over or taken anew meanwhile
            if kept:
                self._confirmed[code] = max(sent, self._confirmed.get(code, sent))
            else:
                await self.lost(code, "taken")

    async def _watch_nodes(self) -> None:
        while True:
            await self.clock.sleep(NODE_WATCH_SECONDS)
            try:
                await self.watch_nodes()
            except Exception:  # a bug of ours: watching goes on
                log_event("node_watch_failed", level=logging.ERROR, exc_info=True)

    async def watch_nodes(self) -> None:
        """Reads every process's renewal counter and start count once: a counter that moved
        starts its watch again; a start count that moved tells `on_node_back`. A failed read,
        or one long after the last, starts every watch again from the next."""
        try:
            counts = await self.store.node_counts()
        except StoreError:
            self._nodes_read = None
            return
        now = self.clock.now()
        gap = self._nodes_read is None or now - self._nodes_read > NODE_GAP_SECONDS
        self._nodes_read = now
        for node, beat in counts.beats.items():
            if node == self.node:
                continue
            life = counts.lives.get(node, 0)
            watched = self._nodes.get(node)
            if watched is None:
                self._nodes[node] = Watched(beat, now, life, first_seen=now)
                continue
            # Away since its counter last moved before this read (or since first watched).
            away_since = watched.moved if watched.moved is not None else watched.first_seen
            if beat != watched.beat:
                watched.beat, watched.since, watched.moved = beat, now, now
            elif gap:
                watched.since = now  # nobody watched meanwhile: it counts from now
            if life != watched.life:
                watched.life, watched.restarted = life, now
                log_event("node_back", node=node, life=life)
                task = asyncio.get_running_loop().create_task(self.on_node_back(node, away_since))
                self._tasks.append(task)
                task.add_done_callback(self._done)

    async def keep(self, code: str) -> bool:
        """Renews the lease now (or takes it back if it went with nobody writing the table
        since); False if another process has it."""
        token = self._tokens.get(code)
        if token is None:
            return False
        sent = self.clock.now()
        if not await self.store.renew_lease(code, self.node, token):
            return False
        if self._tokens.get(code) == token:
            self._confirmed[code] = max(sent, self._confirmed.get(code, sent))
        return True

    async def lost(self, code: str, why: str) -> None:
        """Redis says the table is another process's (a renewal or a fenced save refused):
        stop serving it."""
        if self._forget(code) is None:
            return
        self.metrics.leases_lost.inc()
        log_event("lease_lost", level=logging.WARNING, room=code, node=self.node, reason=why)
        try:
            await self.on_lost(code)
        except Exception:
            log_event("lease_lost_failed", level=logging.ERROR, exc_info=True, room=code)

    # ---- the hand-over channel -------------------------------------------------------------

    async def _publish(self, node: str, note: dict[str, Any]) -> None:
        try:
            await self._redis.publish(self.channel(node), json.dumps({**note, "from": self.node}))
        except RedisError as error:
            raise StoreError(f"publishing to {node}: {error}") from error

    async def _listen(self) -> None:
        while True:
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel(self.node))
                self._subscribed.set()
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        self._on_channel_note(message.get("data"))
            except RedisError as error:
                if self._subscribed.is_set():  # once per outage
                    log_event("handover_channel_lost", level=logging.WARNING, reason=str(error))
                self._subscribed.clear()
                await asyncio.sleep(LISTEN_RETRY_SECONDS)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _on_channel_note(self, data: object) -> None:
        try:
            note = json.loads(data) if isinstance(data, str) else None
        except ValueError:
            note = None
        if isinstance(note, dict) and note.get("kind") == "left":
            self._holder_left(note.get("from"))
            return
        if not isinstance(note, dict) or not isinstance(note.get("room"), str):
            return
        code, sender = note["room"], note.get("from")
        if note.get("kind") == "released":
            event = self._released.get(code)
            if event is not None:
                if note.get("leaving") and isinstance(sender, str):
                    self._left_by[code] = sender
                event.set()
        elif note.get("kind") == "hand_over" and isinstance(sender, str) and sender != self.node:
            if code in self._giving or code in self._claiming:
                return  # already on it / still taking it: the asker asks again in a second
            self._giving.add(code)
            task = asyncio.get_running_loop().create_task(self._hand_over(code, sender))
            self._tasks.append(task)
            task.add_done_callback(self._done)

    def _holder_left(self, sender: object) -> None:
        """`sender` stopped and let every table go: the claims waiting for one look again."""
        for code in self._claiming:
            watched = self._watched.get(code)
            released = self._released.get(code)
            if watched is not None and watched[0].node == sender and released is not None:
                released.set()

    def _done(self, task: asyncio.Task[None]) -> None:
        with contextlib.suppress(ValueError):
            self._tasks.remove(task)

    async def _hand_over(self, code: str, asker: str) -> None:
        """The router now sends this table's people to `asker`: save it, let it go, say so
        (within HAND_OVER_SECONDS: a table is never left refusing its people)."""
        try:
            async with asyncio.timeout(HAND_OVER_SECONDS):
                await self._give(code, asker)
        except TimeoutError:
            log_event("hand_over_failed", level=logging.ERROR, room=code, reason="timeout")
        finally:
            self._giving.discard(code)

    async def _give(self, code: str, asker: str) -> None:
        try:
            if code in self._tokens and not self.holds(code) and not await self.keep(code):
                # Asked while paused past the lease: the table is the asker's already.
                await self.lost(code, "taken")
            elif (token := self._tokens.get(code)) is not None:
                log_event("hand_over", room=code, node=self.node, to=asker)
                try:
                    await self.on_hand_over(code)  # saved and dropped before the lease goes
                except Exception:
                    log_event("hand_over_failed", level=logging.ERROR, exc_info=True, room=code)
                self.metrics.hand_overs.inc()
                now = self.clock.now()
                self._promised = {c: p for c, p in self._promised.items() if p[0] > now}
                self._promised[code] = (now + self.lease_seconds, token)
            await self.release(code, leaving=self.leaving())
            if code not in self._tokens:
                # Not serving it (a restart under the same node id left its lease behind):
                # let that go too, so the asker need not watch it stand still.
                stale = await self.store.lease(code)
                if stale is not None and stale.node == self.node:
                    await self.store.release_lease(code, self.node, stale.token)
            note = {"kind": "released", "room": code, "leaving": self.leaving()}
            await self._publish(asker, note)
        except StoreError as error:
            log_event("hand_over_failed", level=logging.WARNING, room=code, reason=str(error))
