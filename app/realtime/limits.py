"""Rate limits: a token bucket per connection (events) and per address (new rooms,
connections); in a cluster the per-address ones count across every process (Redis)."""

from __future__ import annotations

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
    """One bucket per client address, forgetting them all past `limit` addresses (a flood of
    addresses then costs memory no more than `limit` buckets)."""

    def __init__(self, rate: float, burst: float, limit: int = 10_000) -> None:
        self.rate, self.burst, self.limit = rate, burst, limit
        self._buckets: dict[str, TokenBucket] = {}

    @classmethod
    def per_minute(cls, count: float) -> PerAddress:
        """`count` a minute per address, all of them at once if it likes."""
        return cls(count / 60, count)

    def take(self, address: str, now: float) -> bool:
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= self.limit:
                self._buckets.clear()
            bucket = self._buckets[address] = TokenBucket(self.rate, self.burst)
        return bucket.take(now)

    async def admit(self, address: str, now: float) -> bool:
        """`take`, with the shared limit's signature."""
        return self.take(address, now)


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
