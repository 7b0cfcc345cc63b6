"""The `redis://HOST:PORT/DB` store: tables in Redis, for deployments that run it and for the
cluster, where each table is owned by one process through a lease.

Keys (under a namespace, `slapjack` by default):
- `slapjack:table:CODE`: a hash {snapshot, schema, saved_at, seen_at, token, version}, written
  whole by one command (with its index entry) inside a MULTI or a script, so a reader never
  sees half a save; `token` and `version` are the writer's fencing token and table version;
- `slapjack:tables`: a sorted set of codes scored by `seen_at` (wall clock), for `codes()` and
  expiry;
- `slapjack:lease:CODE`: the process judging the table: a hash {node, token, beat, at} with
  no expiry (see TAKE in app/stores/redis_scripts.py); `slapjack:fence:CODE`: the counter
  its fencing tokens come from;
- `slapjack:nodes`: a hash, each process's renewal counter (node -> count), moved on by every
  lease it takes or renews and by each round of renewals; `slapjack:lives`: a hash, how many
  times each process started (node -> count): app/cluster/ownership.py watches both;
  `slapjack:left:CODE`: the process that let the table's lease go as it stopped (for ten
  minutes, or until the lease is taken): the table goes back to it when it returns;
- rooms and who opened them (a cluster's POST /api/rooms, `open_waiting`):
  `slapjack:opener`, a hash code -> the address that opened it, and `slapjack:opened:ADDRESS`,
  a sorted set of that address's codes, both until the table closes (an address holds at most
  so many open rooms); `slapjack:waiting`, a sorted set of the codes waiting for their
  second person, scored by when to look at them again (Redis's clock, seconds): a table
  nobody serves by then is closed (`close_unopened`).

Fencing: `save_fenced`/`delete_fenced` compare the lease with the caller's node id and token
and write in one Lua script, which Redis runs atomically, so a process that lost its lease
(paused, partitioned, taken over by another) can never overwrite the new owner's table.

Durability is Redis's own: a deployer turns on the append-only file (docs/operations.md).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError

from app.ops.logs import log_event
from app.ops.store_url import parse_store_url, shown
from app.stores.base import (
    NEWEST_SCHEMA,
    LeaseLost,
    Savable,
    Snapshot,
    StoreError,
    decode_snapshot,
    encode_snapshot,
    snapshot_version,
    wall_clock,
)
from app.stores.redis_scripts import (
    CLOSE_UNOPENED,
    FENCED_DELETE,
    FENCED_SAVE,
    LEFT_SECONDS,
    OPEN_WAITING,
    PURGE,
    RELEASE,
    RENEW,
    TAKE,
    WAITED,
)
from app.stores.same_turn import SameTurn

# A lease whose holder renewed it within this many seconds (Redis's clock) keeps its table
# from expiry: its process is alive, whoever is connected.
LIVE_LEASE_SECONDS = 120

# A new room's table is written within this many seconds of its code being recorded as
# waiting (the caller's command timeouts are shorter): till then it counts unwritten.
WRITING_SECONDS = 10
# A table counts as open (against SLAPJACK_MAX_ROOMS, and its opener) while someone was at
# it this recently (by the index's wall-clock scores): the default room expiry.
LIVE_TABLE_SECONDS = 600.0

# A command waits this long for Redis before the save is counted as failed (and retried by
# the Saver): a game never waits on it, but a shutdown's last save should not hang.
SOCKET_SECONDS = 2.0

# Each client's connections (SLAPJACK_REDIS_CONNECTIONS sets them for the app): a command
# finding every one busy waits for the next free one, up to POOL_WAIT_SECONDS, rather than
# failing at once as redis-py's default pool does past its hundredth ("Too many
# connections"). Hundreds of tables saved, restored or handed over at once queue: Redis
# answers each in well under a millisecond, and the beat's saves and the renewals go in
# one pipelined round each. What holds a connection that long is this process's own loop,
# too busy to read the answers (a takeover of 150 tables on a saturated core: 5 s was seen
# to run out): a Redis that is down fails each command within SOCKET_SECONDS instead, so
# the wait only has to outlast a busy loop (redis-py's own default).
CONNECTIONS = 32
POOL_WAIT_SECONDS = 20.0


class BlockingSentinelPool(SentinelConnectionPool, BlockingConnectionPool):
    """Sentinel's pool (each new connection asks the sentinels for the primary), waiting
    for a free connection as BlockingConnectionPool does."""


def connect(
    url: str,
    *,
    socket_timeout: float = SOCKET_SECONDS,
    connections: int = CONNECTIONS,
    **options: Any,
) -> Any:
    """A redis.asyncio client for a store URL (strings decoded, every wait bounded: no
    retry unless `retry` says so, where redis-py's default would try a hung Redis four
    times over), with at most `connections` connections: a command beyond them waits,
    up to POOL_WAIT_SECONDS, for one to come free."""
    options.setdefault("retry", Retry(NoBackoff(), 0))
    where = parse_store_url(url)
    pooled = {"max_connections": connections, "timeout": POOL_WAIT_SECONDS}
    if where.sentinels:
        # redis-py's own Sentinel support: each new connection asks the sentinels which
        # server is the primary now, so a failover is followed by reconnecting.
        sentinel = Sentinel(  # type: ignore[no-untyped-call]
            list(where.sentinels),
            sentinel_kwargs={
                "password": where.password,
                "socket_timeout": socket_timeout,
                "socket_connect_timeout": socket_timeout,
            },
        )
        return sentinel.master_for(
            where.service,
            redis_class=aioredis.Redis,
            connection_pool_class=BlockingSentinelPool,
            db=where.db,
            password=where.password,
            decode_responses=True,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_timeout,
            **pooled,
            **options,
        )
    pool = BlockingConnectionPool.from_url(
        url,
        decode_responses=True,
        socket_timeout=socket_timeout,
        socket_connect_timeout=socket_timeout,
        **pooled,
        **options,
    )
    return aioredis.Redis.from_pool(pool)


@dataclass(frozen=True, slots=True)
class Lease:
    """A table's lease as Redis holds it: who, under which fencing token, renewed how often;
    for a lease just taken, `left_by`: the process that let it go as it stopped ("": none)."""

    node: str
    token: int
    beat: int
    left_by: str = ""


@dataclass(frozen=True, slots=True)
class NodeCounts:
    """Every process's renewal counter and how many times it started, as Redis has them."""

    beats: dict[str, int]
    lives: dict[str, int]


class RedisStore:
    def __init__(
        self,
        url: str,
        *,
        newest_schema: int = NEWEST_SCHEMA,
        namespace: str = "slapjack",
        connections: int = CONNECTIONS,
    ) -> None:
        self.url = url
        self.connections = connections  # per client: this store's, and its cluster node's
        self.newest_schema = newest_schema
        self._table_prefix = f"{namespace}:table:"
        self._lease_prefix = f"{namespace}:lease:"
        self._left_prefix = f"{namespace}:left:"
        self._fence_prefix = f"{namespace}:fence:"
        self._index = f"{namespace}:tables"
        self._opened_prefix = f"{namespace}:opened:"
        self._waiting = f"{namespace}:waiting"
        self._opener = f"{namespace}:opener"
        self._nodes = f"{namespace}:nodes"
        self._lives = f"{namespace}:lives"
        # One quick retry covers a pooled connection that a Redis restart left dead; longer
        # outages are the Saver's to retry, with backoff.
        self._redis: Any = connect(url, connections=connections, retry=Retry(NoBackoff(), 1))
        self._scripts = {
            name: self._redis.register_script(source)
            for name, source in (
                ("fenced_save", FENCED_SAVE),
                ("fenced_delete", FENCED_DELETE),
                ("take", TAKE),
                ("renew", RENEW),
                ("release", RELEASE),
                ("purge", PURGE),
                ("open_waiting", OPEN_WAITING),
                ("waited", WAITED),
                ("close_unopened", CLOSE_UNOPENED),
            )
        }
        # The takes and loads asked at once (a takeover's claims, woken together), one
        # pipeline each.
        take = self._scripts["take"]
        self._takes = SameTurn(
            self._redis, lambda pipe, keys, args: take(keys=keys, args=args, client=pipe)
        )
        self._loads = SameTurn(self._redis, lambda pipe, key: pipe.hget(key, "snapshot"))
        release = self._scripts["release"]  # a stopping process's, all at once
        self._releases = SameTurn(
            self._redis, lambda pipe, keys, args: release(keys=keys, args=args, client=pipe)
        )

    async def open(self) -> None:
        """Checks that Redis answers; StoreError (naming the URL) if not."""
        async with self._errors():
            await self._redis.ping()

    async def close(self) -> None:
        await self._redis.aclose()

    # ---- the RoomStore seam ------------------------------------------------------------

    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> None:
        fields, seen = self._fields(code, snapshot, seen_at)
        async with self._errors(), self._redis.pipeline(transaction=True) as multi:
            multi.hset(self._table_prefix + code, mapping=fields)
            multi.zadd(self._index, {code: seen})
            await multi.execute()

    async def load(self, code: str) -> Snapshot | None:
        try:
            async with self._errors():
                raw = await self._loads(self._table_prefix + code)
        except _WrongType as error:
            log_event("snapshot_unreadable", level=logging.ERROR, room=code, reason=str(error))
            return None
        return decode_snapshot(code, raw, self.newest_schema)

    async def delete(self, code: str) -> None:
        async with self._errors(), self._redis.pipeline(transaction=True) as multi:
            multi.delete(self._table_prefix + code)
            multi.zrem(self._index, code)
            await multi.execute()

    async def codes(self) -> list[str]:
        async with self._errors():
            return sorted(await self._redis.zrange(self._index, 0, -1))

    async def exists(self, code: str) -> bool:
        async with self._errors():
            return bool(await self._redis.exists(self._table_prefix + code))

    async def purge_expired(self, older_than_seconds: float) -> list[str]:
        cutoff = wall_clock() - older_than_seconds
        prefixes = [self._table_prefix, self._lease_prefix, self._fence_prefix]
        async with self._errors():
            gone = await self._scripts["purge"](
                keys=[self._index], args=[repr(cutoff), *prefixes, LIVE_LEASE_SECONDS]
            )
        return sorted(gone)

    # ---- leases and fenced writes (one owner per table in a cluster) -----------------------

    async def take_lease(
        self,
        code: str,
        node: str,
        over: Lease | None = None,
        still: tuple[str, int] | None = None,
    ) -> Lease:
        """Takes the table's lease with a new fencing token if nobody holds it, its holder
        is `node` itself (a process started again under the same name), it is still
        exactly `over` (a lease the caller watched stand still), or its holder is the node
        `still` names whose renewal counter is still the count `still` gives (a process the
        caller watched renew nothing for a whole lease). The lease as it is after: `node`'s
        (taken, with the process that let it go as it stopped) or another's."""
        keys = [
            self._lease_prefix + code,
            self._fence_prefix + code,
            self._left_prefix + code,
            self._nodes,
        ]
        args: list[Any] = [node, over.token, over.beat] if over is not None else [node, "", ""]
        args += list(still) if still is not None else ["", ""]
        async with self._errors():
            answer = await self._takes(keys, args)
        if int(answer[0]) > 0:
            return Lease(node, int(answer[0]), 0, str(answer[1]))
        return Lease(str(answer[1]), int(answer[2]), int(answer[3]))

    async def node_counts(self) -> NodeCounts:
        """Every process's renewal counter and start count (one round trip)."""
        async with self._errors(), self._redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self._nodes)
            pipe.hgetall(self._lives)
            beats, lives = await pipe.execute()
        return NodeCounts(
            {node: int(count) for node, count in beats.items()},
            {node: int(count) for node, count in lives.items()},
        )

    async def node_started(self, node: str) -> int:
        """A process starts under `node`: its start count, one more than before."""
        async with self._errors(), self._redis.pipeline(transaction=True) as multi:
            multi.hincrby(self._lives, node, 1)
            multi.hincrby(self._nodes, node, 1)
            life, _ = await multi.execute()
        return int(life)

    def heartbeat(self, node: str) -> tuple[str, str, int]:
        """The HINCRBY arguments of `node`'s renewal counter, for a round of renewals."""
        return self._nodes, node, 1

    async def renew_lease(self, code: str, node: str, token: int) -> bool:
        """True if the lease is still (or again, nobody having written the table since it
        went) `node`'s under `token`; False if it is another's."""
        async with self._errors():
            return bool(await self._scripts["renew"](**self.renewal(code, node, token)))

    def renewal(self, code: str, node: str, token: int) -> dict[str, list[Any]]:
        """The keys and arguments of a renewal, for a caller that pipelines many."""
        keys = [
            self._lease_prefix + code,
            self._table_prefix + code,
            self._fence_prefix + code,
            self._nodes,
        ]
        return {"keys": keys, "args": [node, token]}

    def renew_script(self) -> Any:
        return self._scripts["renew"]

    async def release_lease(
        self, code: str, node: str, token: int, *, leaving: bool = False
    ) -> bool:
        """Gives the lease up if `node` holds it under `token` (never someone else's);
        `leaving`: as `node` stops (whoever takes the table next gives it back later)."""
        keys = [self._lease_prefix + code, self._left_prefix + code]
        args = [node, token, "1" if leaving else "", LEFT_SECONDS]
        async with self._errors():
            done = await self._releases(keys, args)
        return bool(done)

    async def left_by(self, codes: list[str]) -> dict[str, str]:
        """The process that let each of `codes` go as it stopped, where one did within
        LEFT_SECONDS and nobody took the table since (one round trip)."""
        if not codes:
            return {}
        async with self._errors():
            nodes = await self._redis.mget([self._left_prefix + code for code in codes])
        return {code: node for code, node in zip(codes, nodes, strict=True) if node}

    async def lease(self, code: str) -> Lease | None:
        async with self._errors():
            node, token, beat = await self._redis.hmget(
                self._lease_prefix + code, "node", "token", "beat"
            )
        if node is None:
            return None
        return Lease(node, int(token or 0), int(beat or 0))

    async def fence(self, code: str) -> int:
        """The table's last fencing token handed out (0: none yet): a lease taken since a
        token was released shows here as a greater one, even if let go again."""
        async with self._errors():
            value = await self._redis.get(self._fence_prefix + code)
        return int(value or 0)

    async def lease_holder(self, code: str) -> str | None:
        lease = await self.lease(code)
        return None if lease is None else lease.node

    async def save_fenced(
        self, code: str, node: str, token: int, snapshot: Savable, seen_at: float | None = None
    ) -> None:
        """`save`, only while `node` holds the table's lease under `token`, and never over a
        newer version of the table: LeaseLost (nothing written) if not."""
        call = self._fenced_save(code, node, token, snapshot, seen_at)
        async with self._errors():
            written = await self._scripts["fenced_save"](keys=call["keys"], args=call["args"])
        _raise_unless_written(written, code, node, token, call["version"])

    async def save_fenced_many(
        self, node: str, items: list[tuple[str, int, Savable, float | None]]
    ) -> list[BaseException | None]:
        """`save_fenced` of many tables (code, token, snapshot, seen_at) in one round trip
        (a pipeline of the fenced script: each table's write is atomic on its own): what
        each came to, None if written, else LeaseLost or StoreError."""
        calls = [self._fenced_save(code, node, token, snap, at) for code, token, snap, at in items]
        script = self._scripts["fenced_save"]
        try:
            async with self._errors(), self._redis.pipeline(transaction=False) as pipe:
                for call in calls:
                    await script(keys=call["keys"], args=call["args"], client=pipe)
                answers = await pipe.execute(raise_on_error=False)
        except StoreError as error:
            return [error] * len(items)
        outcomes: list[BaseException | None] = []
        for (code, token, _, _), call, written in zip(items, calls, answers, strict=True):
            try:
                if isinstance(written, Exception):
                    raise StoreError(f"redis store {self._where()}: {written}")
                _raise_unless_written(written, code, node, token, call["version"])
                outcomes.append(None)
            except StoreError as error:
                outcomes.append(error)
        return outcomes

    def _fenced_save(
        self, code: str, node: str, token: int, snapshot: Savable, seen_at: float | None
    ) -> dict[str, Any]:
        fields, seen = self._fields(code, snapshot, seen_at)
        version = snapshot_version(snapshot)
        keys = [self._table_prefix + code, self._index, self._lease_prefix + code]
        args = [
            node,
            token,
            fields["snapshot"],
            fields["schema"],
            fields["saved_at"],
            seen,
            code,
            version if isinstance(version, int) else "",
        ]
        return {"keys": keys, "args": args, "version": version}

    async def delete_fenced(self, code: str, node: str, token: int) -> None:
        """The table, its lease and its fence go, only while `node` holds it under `token`."""
        keys = [
            self._table_prefix + code,
            self._index,
            self._lease_prefix + code,
            self._fence_prefix + code,
            self._waiting,
            self._opener,
        ]
        args = [node, token, code, self._opened_prefix]
        async with self._errors():
            deleted = await self._scripts["fenced_delete"](keys=keys, args=args)
        if not deleted:
            raise LeaseLost(f"table {code}: node {node} does not hold its lease ({token})")

    # ---- rooms waiting for players (a cluster's per-address limit) --------------------------

    async def open_waiting(
        self,
        code: str,
        address: str | None,
        limit: int,
        unused_seconds: float,
        *,
        most_rooms: int = 0,
        live_seconds: float = LIVE_TABLE_SECONDS,
    ) -> bool:
        """Records the new room `code` as waiting for players, opened by `address` (None:
        nobody counted), unless that address holds `limit` open rooms already (False:
        nothing recorded). TooManyRooms when `most_rooms` (> 0) tables are open in the
        cluster: stored and someone was at them within `live_seconds`. Atomic: processes
        opening rooms at once never pass either limit together."""
        keys = [self._opened_prefix + (address or ""), self._waiting, self._opener, self._index]
        now = wall_clock()
        args = [
            code,
            address or "",
            limit,
            unused_seconds,
            self._table_prefix,
            WRITING_SECONDS,
            most_rooms,
            repr(now - live_seconds),
            repr(now),
        ]
        async with self._errors():
            recorded = int(await self._scripts["open_waiting"](keys=keys, args=args))
        if recorded < 0:
            raise TooManyRooms(f"{most_rooms} tables are open")
        return bool(recorded)

    async def waiting_opener(self, code: str) -> str | None:
        """The address that opened `code`, while the room waits for its second person."""
        async with self._errors(), self._redis.pipeline(transaction=False) as pipe:
            pipe.zscore(self._waiting, code)
            pipe.hget(self._opener, code)
            waiting, address = await pipe.execute()
        return None if waiting is None or address is None else str(address)

    async def waited(self, code: str) -> None:
        """Two people came to `code`: it waits for players no more (and still counts against
        its opener, until it closes)."""
        async with self._errors():
            await self._scripts["waited"](keys=[self._waiting], args=[code])

    async def close_unopened(self, recheck_seconds: float) -> list[str]:
        """Closes the waiting rooms due a look that no live process serves (their tables
        go); the served ones are looked at again in `recheck_seconds`. The codes closed."""
        keys = [self._waiting, self._opener, self._index]
        args = [
            self._table_prefix,
            self._lease_prefix,
            self._fence_prefix,
            self._opened_prefix,
            LIVE_LEASE_SECONDS,
            recheck_seconds,
        ]
        async with self._errors():
            closed = await self._scripts["close_unopened"](keys=keys, args=args)
        return sorted(closed)

    # ---- helpers ----------------------------------------------------------------------

    def _fields(
        self, code: str, snapshot: Savable, seen_at: float | None
    ) -> tuple[dict[str, Any], float]:
        text, schema = encode_snapshot(code, snapshot)
        now = wall_clock()
        seen = now if seen_at is None else seen_at
        return {"snapshot": text, "schema": schema, "saved_at": now, "seen_at": seen}, seen

    @asynccontextmanager
    async def _errors(self) -> AsyncIterator[None]:
        try:
            yield
        except ResponseError as error:
            if str(error).startswith("WRONGTYPE"):
                raise _WrongType(str(error)) from error
            raise StoreError(f"redis store {self._where()}: {error}") from error
        except RedisError as error:
            raise StoreError(f"redis store {self._where()}: {error}") from error

    def _where(self) -> str:
        return shown(self.url)  # without its password: it goes into logs


def _raise_unless_written(written: Any, code: str, node: str, token: int, version: Any) -> None:
    if written == -1:
        raise LeaseLost(f"table {code}: the stored table is newer than version {version}")
    if not written:
        raise NotHeld(f"table {code}: node {node} does not hold its lease ({token})")


class NotHeld(LeaseLost):
    """A fenced write refused: the caller does not hold the table's lease (under its token)."""


class TooManyRooms(StoreError):
    """SLAPJACK_MAX_ROOMS tables are open in the cluster: no new one."""


class _WrongType(StoreError):
    """A key of the store's holds something else (written by hand or by another program)."""
