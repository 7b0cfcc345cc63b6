"""The `redis://HOST:PORT/DB` store: tables in Redis, for deployments that run it and for the
cluster, where each table is owned by one process through a lease.

Keys (under a namespace, `slapjack` by default):
- `slapjack:table:CODE`: a hash {snapshot, schema, saved_at, seen_at}, written whole by one
  command inside a MULTI with its index entry, so a reader never sees half a save;
- `slapjack:tables`: a sorted set of codes scored by `seen_at` (wall clock), for `codes()` and
  expiry;
- `slapjack:lease:CODE`: the node id holding the table, with a TTL in milliseconds.

Fencing: `save_fenced`/`delete_fenced` compare the lease with the caller's node id and write
in one Lua script, which Redis runs atomically, so a process that lost its lease (paused,
partitioned, its lease expired and taken by another) can never overwrite the new owner's table.

Durability is Redis's own: a deployer turns on the append-only file (docs/operations.md).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError

from app.ops.logs import log_event
from app.stores.base import (
    NEWEST_SCHEMA,
    LeaseLost,
    Savable,
    Snapshot,
    StoreError,
    decode_snapshot,
    encode_snapshot,
    wall_clock,
)

# A command waits this long for Redis before the save is counted as failed (and retried by
# the Saver): a game never waits on it, but a shutdown's last save should not hang.
SOCKET_SECONDS = 2.0

FENCED_SAVE = """
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'snapshot', ARGV[2], 'schema', ARGV[3],
           'saved_at', ARGV[4], 'seen_at', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
return 1
"""

FENCED_DELETE = """
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
"""

# SET NX PX, except that the holder taking it again only extends it.
ACQUIRE = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return 1
"""

RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""

# Tables nobody was connected to since the cutoff, unless a live process holds their lease
# (an idle lobby whose people are still there is saved rarely, but is not gone).
PURGE = """
local gone = {}
for _, code in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])) do
  if redis.call('EXISTS', ARGV[3] .. code) == 0 then
    redis.call('DEL', ARGV[2] .. code)
    redis.call('ZREM', KEYS[1], code)
    table.insert(gone, code)
  end
end
return gone
"""


class RedisStore:
    def __init__(
        self, url: str, *, newest_schema: int = NEWEST_SCHEMA, namespace: str = "slapjack"
    ) -> None:
        self.url = url
        self.newest_schema = newest_schema
        self._table_prefix = f"{namespace}:table:"
        self._lease_prefix = f"{namespace}:lease:"
        self._index = f"{namespace}:tables"
        # One quick retry covers a pooled connection that a Redis restart left dead; longer
        # outages are the Saver's to retry, with backoff.
        self._redis: Any = aioredis.Redis.from_url(
            url,
            decode_responses=True,
            socket_timeout=SOCKET_SECONDS,
            socket_connect_timeout=SOCKET_SECONDS,
            retry=Retry(NoBackoff(), 1),
        )
        self._scripts = {
            name: self._redis.register_script(source)
            for name, source in (
                ("fenced_save", FENCED_SAVE),
                ("fenced_delete", FENCED_DELETE),
                ("acquire", ACQUIRE),
                ("renew", RENEW),
                ("release", RELEASE),
                ("purge", PURGE),
            )
        }

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
                raw = await self._redis.hget(self._table_prefix + code, "snapshot")
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
        async with self._errors():
            gone = await self._scripts["purge"](
                keys=[self._index], args=[repr(cutoff), self._table_prefix, self._lease_prefix]
            )
        return sorted(gone)

    # ---- leases and fenced writes (one owner per table in a cluster) -----------------------

    async def acquire_lease(self, code: str, node: str, ttl_ms: int) -> bool:
        """True if `node` now holds the table's lease for `ttl_ms` (taken, or already its own)."""
        return await self._lease_script("acquire", code, node, ttl_ms)

    async def renew_lease(self, code: str, node: str, ttl_ms: int) -> bool:
        """True if `node` still held the lease and it now runs `ttl_ms` more; False if lost."""
        return await self._lease_script("renew", code, node, ttl_ms)

    async def release_lease(self, code: str, node: str) -> bool:
        """Gives the lease up if `node` holds it (never someone else's); True if it did."""
        return await self._lease_script("release", code, node)

    async def lease_holder(self, code: str) -> str | None:
        async with self._errors():
            holder: str | None = await self._redis.get(self._lease_prefix + code)
        return holder

    async def save_fenced(
        self, code: str, node: str, snapshot: Savable, seen_at: float | None = None
    ) -> None:
        """`save`, only while `node` holds the table's lease: LeaseLost (nothing written) if not."""
        fields, seen = self._fields(code, snapshot, seen_at)
        keys = [self._table_prefix + code, self._index, self._lease_prefix + code]
        args = [node, fields["snapshot"], fields["schema"], fields["saved_at"], seen, code]
        async with self._errors():
            written = await self._scripts["fenced_save"](keys=keys, args=args)
        if not written:
            raise LeaseLost(f"table {code}: node {node} does not hold its lease")

    async def delete_fenced(self, code: str, node: str) -> None:
        keys = [self._table_prefix + code, self._index, self._lease_prefix + code]
        async with self._errors():
            deleted = await self._scripts["fenced_delete"](keys=keys, args=[node, code])
        if not deleted:
            raise LeaseLost(f"table {code}: node {node} does not hold its lease")

    def as_node(self, node: str) -> FencedStore:
        """This store as seen by one node of a cluster: its saves and deletes are fenced."""
        return FencedStore(self, node)

    # ---- helpers ----------------------------------------------------------------------

    def _fields(
        self, code: str, snapshot: Savable, seen_at: float | None
    ) -> tuple[dict[str, Any], float]:
        text, schema = encode_snapshot(code, snapshot)
        now = wall_clock()
        seen = now if seen_at is None else seen_at
        return {"snapshot": text, "schema": schema, "saved_at": now, "seen_at": seen}, seen

    async def _lease_script(self, name: str, code: str, node: str, *ttl_ms: int) -> bool:
        async with self._errors():
            done = await self._scripts[name](keys=[self._lease_prefix + code], args=[node, *ttl_ms])
        return bool(done)

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
        # The URL without a password, for logs.
        kwargs = self._redis.connection_pool.connection_kwargs
        return f"{kwargs.get('host')}:{kwargs.get('port')}/{kwargs.get('db')}"


class _WrongType(StoreError):
    """A key of the store's holds something else (written by hand or by another program)."""


class FencedStore:
    """A RedisStore for one node: the RoomStore seam with fenced saves and deletes."""

    def __init__(self, store: RedisStore, node: str) -> None:
        self.store, self.node = store, node

    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> None:
        await self.store.save_fenced(code, self.node, snapshot, seen_at)

    async def load(self, code: str) -> Snapshot | None:
        return await self.store.load(code)

    async def delete(self, code: str) -> None:
        await self.store.delete_fenced(code, self.node)

    async def codes(self) -> list[str]:
        return await self.store.codes()

    async def exists(self, code: str) -> bool:
        return await self.store.exists(code)
