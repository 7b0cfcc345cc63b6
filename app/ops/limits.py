"""Rate limits: a token bucket per connection (events) and per address (new rooms,
connections); in a cluster the per-address ones count across every process (Redis)."""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import Any, Protocol

from redis.exceptions import RedisError

from app.ops.logs import log_event

WINDOW_SECONDS = 60  # the shared limits count per minute


class TokenBucket:
    """`rate` actions a second on average, `burst` at once."""

    __slots__ = ("burst", "rate", "stamp", "tokens")  # one per connection

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens, self.stamp = float(burst), time.monotonic()

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class PerAddress:
    """One bucket per client address (IPv6 by /64: `address_key`), in at most `limit` buckets.
    When the table is full, the buckets that have refilled are forgotten first (a full
    bucket is what a new one would be: nothing is lost), then those with a token to spare;
    an address that is being limited is never forgotten. With every bucket limited (a flood
    of addresses, each of them refused) a new address is refused too: forgetting the
    guilty would let them all start again."""

    def __init__(self, rate: float, burst: float, limit: int = 10_000) -> None:
        self.rate, self.burst, self.limit = rate, burst, limit
        self._buckets: dict[str, TokenBucket] = {}

    @classmethod
    def per_minute(cls, count: float) -> PerAddress:
        """`count` a minute per address, all of them at once if it likes."""
        return cls(count / 60, count)

    def take(self, address: str, now: float) -> bool:
        key = address_key(address)
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.limit and not self._make_room(now):
                return False
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst)
            bucket.stamp = now
        return bucket.take(now)

    def _make_room(self, now: float) -> bool:
        """Forgets buckets no address is limited by, the fullest first, down to nine
        tenths of the limit (so that this walk is rare); False if none could go."""
        keep = self.limit * 9 // 10
        spare = sorted(
            (
                (min(self.burst, b.tokens + (now - b.stamp) * self.rate), key)
                for key, b in self._buckets.items()
            ),
            reverse=True,
        )
        for tokens, key in spare:
            if len(self._buckets) <= keep or tokens < 1:
                break  # the rest are limited: kept
            del self._buckets[key]
        if len(self._buckets) >= self.limit:
            log_event("limit_table_full", level=logging.WARNING, addresses=len(self._buckets))
            return False
        return True

    def __len__(self) -> int:
        return len(self._buckets)

    async def admit(self, address: str, now: float) -> bool:
        """`take`, with the shared limit's signature."""
        return self.take(address, now)


def address_key(address: str) -> str:
    """What one client is counted as: its IPv4 address, or its IPv6 address's /64 (a single
    host is usually given a whole /64, and picks a new address in it at will)."""
    if ":" not in address:
        return address
    try:
        ip = ipaddress.IPv6Address(address.split("%", 1)[0])
    except ValueError:
        return address
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return f"{ipaddress.IPv6Network((int(ip) >> 64 << 64, 64))}"


class AddressLimit(Protocol):
    async def admit(self, address: str, now: float) -> bool: ...


class SharedPerAddress:
    """`count` a minute per address, counted in Redis so that N processes of a cluster do
    not give an address N times the limit. A sliding window from two fixed ones: this
    minute's counter plus last minute's weighted by how much of it is still in the last 60 s
    (Cloudflare's approximation); each counter expires by itself after two minutes. While
    Redis cannot be reached, the process's own buckets decide (logged)."""

    def __init__(self, redis: Any, kind: str, count: float, namespace: str = "slapjack") -> None:
        self.redis, self.count = redis, count
        self.prefix = f"{namespace}:limit:{kind}:"
        self.local = PerAddress.per_minute(count)

    async def admit(self, address: str, now: float) -> bool:
        wall = time.time()  # every process must agree on which minute it is
        minute = int(wall // WINDOW_SECONDS)
        address = address_key(address)
        into = (wall % WINDOW_SECONDS) / WINDOW_SECONDS
        this, last = f"{self.prefix}{address}:{minute}", f"{self.prefix}{address}:{minute - 1}"
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.incr(this)
                pipe.expire(this, 2 * WINDOW_SECONDS)
                pipe.get(last)
                counted, _, before = await pipe.execute()
        except RedisError as error:
            log_event("shared_limit_unavailable", level=logging.WARNING, reason=str(error)[:200])
            return self.local.take(address, now)
        return int(counted) + int(before or 0) * (1 - into) <= self.count
