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


# ---- room codes: one budget of wrong ones per address ---------------------------------------


class CodeBudget:
    """How fast one client address may test room codes (every way there is: the API, the
    room and TV pages, the QR code, a Socket.IO connection): it may go on while its wrong
    codes stay within `per_minute` a minute on average, `burst` at once. A right code costs
    nothing, so people with a link are never held back; a wrong one costs one, or more while
    a wave of wrong codes (`wave_per_minute` a minute from everyone together: a botnet) is
    on, up to `burst`. An address past its budget is refused every look-up, right or wrong,
    so a refusal says nothing about the code.

    Each address is a GCRA clock (Brandur Leach's generic cell rate algorithm, as Redis
    rate limiters keep it): `due`, when its budget is whole again; a look-up is let through
    while `due` is at most `burst` wrong codes ahead of now, and takes one up front, so
    many at once cannot pass together; `settle` gives it back (a right code) or adds what
    the wave costs beyond it. One process: this class; a cluster: `SharedCodeBudget`."""

    def __init__(
        self, per_minute: float, burst: int, wave_per_minute: float, limit: int = 10_000
    ) -> None:
        self.interval = WINDOW_SECONDS / per_minute  # seconds a wrong code costs
        self.burst, self.wave, self.limit = burst, wave_per_minute, limit
        self._due: dict[str, float] = {}
        self._minute, self._this, self._last = 0, 0, 0  # wrong codes in this minute, the last

    async def take(self, address: str, now: float) -> bool:
        key = address_key(address)
        due = max(self._due.get(key, now), now) + self.interval
        if due - now > self.burst * self.interval:
            return False
        if key not in self._due and len(self._due) >= self.limit:
            self._forget(now)
            if len(self._due) >= self.limit:
                log_event("limit_table_full", level=logging.WARNING, addresses=len(self._due))
                return False
        self._due[key] = due
        return True

    async def settle(self, address: str, found: bool, now: float) -> float:
        """A look-up `take` let through found its room (given back) or not (the wave's cost
        added): what it cost, in wrong codes."""
        key = address_key(address)
        due = self._due.get(key, now)
        if found:
            self._due[key] = max(now, due - self.interval)
            return 0.0
        cost = self.cost(self._count(now), now)
        self._due[key] = max(now, due) + (cost - 1) * self.interval
        return cost

    def cost(self, counted: float, now: float) -> float:
        """A wrong code's cost with `counted` wrong codes in the last minute (this one
        among them): 1, or while they come faster than the wave's rate, in proportion, up
        to `burst`."""
        return min(float(self.burst), max(1.0, counted / self.wave))

    def _count(self, now: float) -> float:
        """Counts one wrong code; the wrong codes of the last minute, sliding (Cloudflare's
        approximation from two fixed minutes, as `SharedPerAddress`)."""
        minute = int(now // WINDOW_SECONDS)
        if minute != self._minute:
            self._last = self._this if minute == self._minute + 1 else 0
            self._minute, self._this = minute, 0
        self._this += 1
        into = (now % WINDOW_SECONDS) / WINDOW_SECONDS
        return self._this + self._last * (1 - into)

    def _forget(self, now: float) -> None:
        """Forgets the addresses whose budget is whole again (they are what a new one is)."""
        self._due = {key: due for key, due in self._due.items() if due > now}


class CodeLimit(Protocol):
    async def take(self, address: str, now: float) -> bool: ...

    async def settle(self, address: str, found: bool, now: float) -> float: ...


# `CodeBudget.take` in Redis: KEYS[1] the address's due time (Redis's clock, seconds);
# ARGV: the interval, the burst. 1 and the wrong code's worth taken, or 0.
TAKE_CODE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local due = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now) + interval
if due - now > burst * interval then return 0 end
redis.call('SET', KEYS[1], string.format('%.6f', due), 'PX', math.ceil((due - now) * 1000) + 1000)
return 1
"""

# `CodeBudget.settle`: KEYS[1] the address's due time, KEYS[2] the prefix of the cluster's
# wrong codes a minute; ARGV: found (1/0), the interval, the burst, the wave's rate a minute.
# The cost, as a string (0: found).
SETTLE_CODE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval, burst, wave = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local due = tonumber(redis.call('GET', KEYS[1]) or '0')
local cost = 0
if ARGV[1] == '1' then
  due = math.max(now, due - interval)
else
  local minute = math.floor(now / 60)
  local this = KEYS[2] .. minute
  local counted = redis.call('INCR', this)
  redis.call('EXPIRE', this, 120)
  local before = tonumber(redis.call('GET', KEYS[2] .. (minute - 1)) or '0')
  local rate = counted + before * (1 - (now % 60) / 60)
  cost = math.min(burst, math.max(1, rate / wave))
  due = math.max(now, due) + (cost - 1) * interval
end
if due > now then
  redis.call('SET', KEYS[1], string.format('%.6f', due), 'PX', math.ceil((due - now) * 1000) + 1000)
else
  redis.call('DEL', KEYS[1])
end
return tostring(cost)
"""


class SharedCodeBudget:
    """`CodeBudget` counted in Redis, so that every process of a cluster spends one budget
    per address and sees one wave of wrong codes: Redis's clock, one script call to take
    and one to settle. While Redis cannot be reached, this process's own budget decides
    (logged)."""

    def __init__(
        self,
        redis: Any,
        per_minute: float,
        burst: int,
        wave_per_minute: float,
        namespace: str = "slapjack",
    ) -> None:
        self.redis = redis
        self.local = CodeBudget(per_minute, burst, wave_per_minute)
        self.args = [self.local.interval, burst, wave_per_minute]
        self.prefix = f"{namespace}:codes:"
        self.wave_prefix = f"{namespace}:codes-wrong:"
        self._take = redis.register_script(TAKE_CODE)
        self._settle = redis.register_script(SETTLE_CODE)
        self._away = False  # Redis failed the last call: the local budget is deciding

    async def take(self, address: str, now: float) -> bool:
        key = address_key(address)
        try:
            taken = await self._take(keys=[self.prefix + key], args=self.args[:2])
        except RedisError as error:
            self._unavailable(error)
            return await self.local.take(key, now)
        self._away = False
        return bool(taken)

    async def settle(self, address: str, found: bool, now: float) -> float:
        key = address_key(address)
        try:
            cost = await self._settle(
                keys=[self.prefix + key, self.wave_prefix], args=[int(found), *self.args]
            )
        except RedisError as error:
            self._unavailable(error)
            return await self.local.settle(key, found, now)
        return float(cost)

    def _unavailable(self, error: RedisError) -> None:
        if not self._away:
            log_event("shared_limit_unavailable", level=logging.WARNING, reason=str(error)[:200])
        self._away = True
