"""Ownership: which process of a cluster judges a table, through a lease in Redis.

    ownership = Ownership(store, node="node-1", lease_seconds=5, metrics=metrics)
    ownership.on_lost = room_lost            # async (code): stop judging, send people elsewhere
    ownership.on_hand_over = give_table_up   # async (code): save it, drop it, send people away
    await ownership.start()
    if await ownership.claim("ABCD", wait_seconds=6):   # now this process's table
        ...
    ownership.holds("ABCD")                  # True while the lease is known to be ours

One owner per table: a process judges a table only while it holds `slapjack:lease:CODE`
(SET NX PX, app/stores/redis.py), renewed about every second and expiring after
`lease_seconds`. `holds` is checked against the local clock (the app's, app/ops/clock.py,
monotonic): the lease is ours until
`lease_seconds` after the last renewal *was sent*, so a process that was paused (SIGSTOP, a
long GC, a swapped-out VM) knows on waking that it may have lost the table before Redis says
so, and stops judging at once. The store refuses its saves anyway (fenced writes).

Hand-over (Redis pub/sub, one channel per node, `slapjack:node:NODE`): a process that gets a
connection for a table a live other process holds publishes `hand_over` to the holder; the
holder runs `on_hand_over` (the room is saved and dropped, its people told to reconnect),
releases the lease and answers `released`, and the asker takes the lease. A holder that is
dead never answers: the asker takes the lease once it expires (failover).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.ops.clock import REAL_TIME, Clock
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.stores import StoreError

RENEW_SECONDS = 1.0  # how often each held lease is renewed (the lease runs lease_seconds)
POLL_SECONDS = 0.1  # while waiting for a lease: how often to try it between `released` notes
ASK_AGAIN_SECONDS = 1.0  # a hand-over request unanswered this long is published again
LISTEN_RETRY_SECONDS = 0.5  # the hand-over channel lost (Redis restarting): resubscribe after

TableCallback = Callable[[str], Awaitable[None]]

# Renewal: extend our lease; or, if it lapsed (a pause, a Redis restart that lost it) and
# nobody took it since, take it back, but only if the stored table is still the one we
# wrote last (its version is ours: nobody else judged and saved it meanwhile) or is gone
# with the rest of a Redis that restarted empty.
KEEP_OR_RETAKE = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder then return 0 end
local stored = redis.call('HGET', KEYS[2], 'snapshot')
if stored then
  local ok, saved = pcall(cjson.decode, stored)
  if not ok or type(saved) ~= 'table' or saved['version'] ~= tonumber(ARGV[3]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


class LeaseStore(Protocol):
    """The lease half of app/stores/redis.py's RedisStore."""

    url: str

    async def acquire_lease(self, code: str, node: str, ttl_ms: int) -> bool: ...

    async def renew_lease(self, code: str, node: str, ttl_ms: int) -> bool: ...

    async def release_lease(self, code: str, node: str) -> bool: ...

    async def lease_holder(self, code: str) -> str | None: ...


async def _nothing(code: str) -> None:
    return None


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
        # The app's clock: renewals come on it, and a lease is ours until its time says not
        # (a test turns it past a lease to stand for a paused process). Redis's own expiry
        # runs on Redis's clock, which is why a lease ends here first (`holds`).
        self.clock = clock
        self.lease_seconds, self.renew_seconds = lease_seconds, renew_seconds
        self.ttl_ms = max(1, round(lease_seconds * 1000))
        self.namespace = namespace
        # Set by whoever serves the tables (app/cluster/node.py); both run before the lease goes.
        self.on_lost: TableCallback = _nothing
        self.on_hand_over: TableCallback = _nothing
        self._valid_until: dict[str, float] = {}  # code -> when our lease surely ends
        self._saved_version: dict[str, int] = {}  # code -> the version of our last save
        # While Redis cannot be reached nobody can take a lease either: tables go on from
        # memory as long as this process keeps trying (its renewal loop is alive, so it was
        # not paused). The time of the last renewal round that found Redis away:
        self._unreachable_at: float | None = None
        self._claiming: set[str] = set()  # taking the lease now: a hand-over request waits
        self._released: dict[str, asyncio.Event] = {}  # code -> set when its holder lets go
        self._giving: set[str] = set()  # handing over now: a second request is the same one
        self._redis: Any = aioredis.Redis.from_url(
            store.url, decode_responses=True, socket_timeout=2, socket_connect_timeout=2
        )
        self._keep_or_retake = self._redis.register_script(KEEP_OR_RETAKE)
        self._tasks: list[asyncio.Task[None]] = []
        self._subscribed = asyncio.Event()

    # ---- reading -----------------------------------------------------------------------

    def holds(self, code: str) -> bool:
        """The lease is surely this process's right now: it may judge and save the table."""
        until = self._valid_until.get(code)
        if until is None:
            return False
        now = self.clock.now()
        if now < until:
            return True
        away = self._unreachable_at
        return away is not None and now - away < 2 * self.renew_seconds + 1

    def saved(self, code: str, version: int) -> None:
        """A fenced save of this version landed: renewal may take a lapsed lease back while
        the stored table is still this one."""
        self._saved_version[code] = version

    def giving(self, code: str) -> bool:
        """The table is being handed over to another process right now."""
        return code in self._giving

    def held(self) -> list[str]:
        """The tables whose lease this process holds (or held at its last renewal)."""
        return sorted(self._valid_until)

    def channel(self, node: str) -> str:
        return f"{self.namespace}:node:{node}"

    # ---- the process starts and stops ----------------------------------------------------

    async def start(self) -> None:
        """Subscribes to this node's channel and starts renewing; returns once subscribed."""
        self.metrics.watch_tables_owned(lambda: len(self._valid_until))
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._listen(), name=f"ownership-listen:{self.node}"),
            loop.create_task(self._renew_forever(), name=f"ownership-renew:{self.node}"),
        ]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), 5.0)

    async def stop(self) -> None:
        """Releases every lease (the tables are saved by then: another process may take them
        at once) and stops listening."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        for code in list(self._valid_until):
            await self.release(code)
        await self._redis.aclose()

    # ---- taking, keeping and giving up a table --------------------------------------------

    async def take(self, code: str) -> bool:
        """Takes the table's lease if nobody holds it (nobody is asked to hand it over)."""
        sent = self.clock.now()
        if not await self.store.acquire_lease(code, self.node, self.ttl_ms):
            return False
        self._valid_until[code] = sent + self.lease_seconds
        self.metrics.leases_taken.inc()
        log_event("lease_taken", room=code, node=self.node, asked=False)
        return True

    async def claim(self, code: str, wait_seconds: float) -> bool:
        """Takes the table's lease: at once if nobody holds it, else by asking the holder to
        hand it over (or, if it is dead, once its lease expires). False if not ours within
        `wait_seconds` of the app's clock (on a test's ManualClock, as the test turns it).
        StoreError if Redis cannot be reached."""
        deadline = self.clock.now() + wait_seconds
        asked: tuple[str, float] | None = None  # the holder asked, and when
        released = self._released.setdefault(code, asyncio.Event())
        self._claiming.add(code)
        try:
            while True:
                if await self.take(code):
                    return True
                holder = await self.store.lease_holder(code)
                now = self.clock.now()
                if holder is not None and (
                    asked is None or asked[0] != holder or now - asked[1] >= ASK_AGAIN_SECONDS
                ):
                    await self._publish(holder, {"kind": "hand_over", "room": code})
                    asked = (holder, now)
                left = deadline - now
                if left <= 0:
                    log_event("lease_busy", level=logging.WARNING, room=code, holder=holder)
                    return False
                released.clear()
                # Redis's lease runs out on Redis's clock: it is asked again every
                # POLL_SECONDS of real time (an I/O poll, not the app's clock).
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(released.wait(), min(POLL_SECONDS, left))
        finally:
            self._claiming.discard(code)
            if code not in self._claiming:
                self._released.pop(code, None)

    async def release(self, code: str) -> None:
        """Gives the lease up (the table is saved and dropped here first)."""
        self._valid_until.pop(code, None)
        self._saved_version.pop(code, None)
        try:
            await self.store.release_lease(code, self.node)
        except StoreError as error:
            # It expires by itself within lease_seconds.
            log_event("lease_release_failed", level=logging.WARNING, room=code, reason=str(error))

    # ---- renewing ------------------------------------------------------------------------

    async def _renew_forever(self) -> None:
        while True:
            await self.clock.sleep(self.renew_seconds)
            await self.renew_all()

    async def renew_all(self) -> None:
        """Renews every held lease once, in one round trip (a pipeline: hundreds of tables
        cost one exchange with Redis, not hundreds of connections); a lease Redis no longer
        gives us is lost. While Redis cannot be reached nothing is lost (`holds`)."""
        codes = list(self._valid_until)
        if not codes:
            return
        sent = self.clock.now()
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for code in codes:
                    keys, args = self._keys(code), self._args(code)
                    await self._keep_or_retake(keys=keys, args=args, client=pipe)  # queued
                answers = await pipe.execute()
        except RedisError as error:
            self._unreachable_at = sent
            log_event(
                "lease_renew_failed", level=logging.WARNING, tables=len(codes), reason=str(error)
            )
            return
        self._unreachable_at = None
        for code, kept in zip(codes, answers, strict=True):
            if code not in self._valid_until:
                continue  # released or handed over meanwhile
            if kept:
                self._valid_until[code] = sent + self.lease_seconds
            else:
                await self.lost(code, "taken")

    def _keys(self, code: str) -> list[str]:
        return [f"{self.namespace}:lease:{code}", f"{self.namespace}:table:{code}"]

    def _args(self, code: str) -> list[str | int]:
        return [self.node, self.ttl_ms, self._saved_version.get(code, -1)]

    async def keep(self, code: str) -> bool:
        """Extends the lease, or takes it back if it lapsed with nobody writing the table
        since our last save; False if another process has (or had) the table."""
        try:
            return bool(await self._keep_or_retake(keys=self._keys(code), args=self._args(code)))
        except RedisError as error:
            raise StoreError(f"renewing the lease of {code}: {error}") from error

    async def lost(self, code: str, why: str) -> None:
        """The table is no longer surely ours (Redis gave it to another process, a fenced
        save was refused, or renewals failed until it ran out): stop serving it."""
        self._saved_version.pop(code, None)
        if self._valid_until.pop(code, None) is None:
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
                        self._heard(message.get("data"))
            except RedisError as error:
                log_event("handover_channel_lost", level=logging.WARNING, reason=str(error))
                await asyncio.sleep(LISTEN_RETRY_SECONDS)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _heard(self, data: object) -> None:
        try:
            note = json.loads(data) if isinstance(data, str) else None
        except ValueError:
            note = None
        if not isinstance(note, dict) or not isinstance(note.get("room"), str):
            return
        code, sender = note["room"], note.get("from")
        if note.get("kind") == "released":
            event = self._released.get(code)
            if event is not None:
                event.set()
        elif note.get("kind") == "hand_over" and isinstance(sender, str) and sender != self.node:
            if code in self._giving or code in self._claiming:
                return  # already on it / still taking it: the asker asks again in a second
            self._giving.add(code)
            task = asyncio.get_running_loop().create_task(self._hand_over(code, sender))
            self._tasks.append(task)
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        with contextlib.suppress(ValueError):
            self._tasks.remove(task)

    async def _hand_over(self, code: str, asker: str) -> None:
        """The router now sends this table's people to `asker`: save it, let it go, say so."""
        try:
            if code in self._valid_until and not self.holds(code):
                # Asked while paused past the lease: the table may be the asker's already.
                await self.lost(code, "unconfirmed")
            elif code in self._valid_until:
                log_event("hand_over", room=code, node=self.node, to=asker)
                try:
                    await self.on_hand_over(code)  # saved and dropped before the lease goes
                except Exception:
                    log_event("hand_over_failed", level=logging.ERROR, exc_info=True, room=code)
                self.metrics.hand_overs.inc()
            # Not serving it (a restart under the same node id left its lease behind):
            # release whatever Redis still says is ours, so the asker need not wait it out.
            await self.release(code)
            await self._publish(asker, {"kind": "released", "room": code})
        except StoreError as error:
            log_event("hand_over_failed", level=logging.WARNING, room=code, reason=str(error))
        finally:
            self._giving.discard(code)
