"""Rate limits: a token bucket per connection (events) and per address (new rooms)."""

from __future__ import annotations

import time


class TokenBucket:
    """`rate` actions a second on average, `burst` at once."""

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
