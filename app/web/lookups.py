"""Every way to test a room code (the API, the room and TV pages, the QR code, a Socket.IO
connection) spends one budget per client address: app/ops/limits.py `CodeBudget`, counted
across a cluster's processes in Redis. A right code costs nothing; a wrong one costs one, or
more during a wave of them; an address past its budget is refused every look-up (429
`rate_limited`), counted in /metrics and logged (rate-limited)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from app.ops.clock import Clock
from app.ops.limits import CodeLimit, address_key
from app.ops.logs import Throttled
from app.ops.metrics import Metrics
from app.wire.errors import ErrorCode, ProtocolError

Found = TypeVar("Found")

TOO_MANY = "too many wrong room codes from your address: wait a minute"


class CodeLookups:
    def __init__(self, budget: CodeLimit, metrics: Metrics, clock: Clock) -> None:
        self.budget, self.metrics, self.clock = budget, metrics, clock
        self._refused = Throttled("lookup_refused")
        self._wave = Throttled("guessing_wave")

    async def find(self, address: str, look: Callable[[], Awaitable[Found | None]]) -> Found | None:
        """What `look` finds for a code `address` tests: None when there is no such room.
        ProtocolError (rate_limited) when the address is past its budget, before looking."""
        now = self.clock.now()
        if not await self.budget.take(address, now):
            self.metrics.code_lookups.inc("refused")
            self._refused.log(now, address=address_key(address))
            raise ProtocolError(ErrorCode.RATE_LIMITED, TOO_MANY)
        try:
            found = await look()
        except BaseException:
            await self.budget.settle(address, True, now)  # no answer: nothing to pay for
            raise
        cost = await self.budget.settle(address, found is not None, now)
        self.metrics.code_lookups.inc("missing" if found is None else "found")
        if cost > 1:
            self.metrics.wrong_code_cost.set(cost)
            self._wave.log(now, cost=round(cost, 2), address=address_key(address))
        return found
