"""What taking and keeping a table's lease takes (app/cluster/ownership.py): its timings,
what it needs of a store, the watch of another process's renewals, and how long a claim
waits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from app.stores.redis import Lease, NodeCounts

RENEW_SECONDS = 1.0  # how often each held lease is renewed
RETRY_SECONDS = 0.25  # how soon a renewal is tried again while a lease is unconfirmed
# While waiting for a lease: how often to try it again when no `released` note came (the note
# wakes a claim at once; hundreds of claims at once each polling faster cost their process
# more than the notes save).
POLL_SECONDS = 0.5
ASK_AGAIN_SECONDS = 1.0  # a hand-over request unanswered this long is published again
LISTEN_RETRY_SECONDS = 0.5  # the hand-over channel lost (Redis restarting): resubscribe after
# How often every process's renewal counter is read (two small reads in one round trip). A
# counter is seen to move up to this late, and a silent process's tables are taken this much
# past a lease after its last renewal at worst.
NODE_WATCH_SECONDS = 0.1
# Reads of the counters further apart than this (this process paused, its loop stalled, Redis
# slow) start every watch again: time nobody watched counts against no process (a whole
# machine paused and woken must not find every other process silent for as long). Not less:
# a process whose loop is starved for a second would put every failover off by a lease.
NODE_GAP_SECONDS = 2.0
# A counter standing still this long: its process renews nothing (dead, paused, cut off). Its
# tables' claims wait for its lease to be over instead of polling.
QUIET_SECONDS = 2.0
# A claim waiting for a silent holder's lease to be over wakes this long after it (a timer may
# fire a little early), and no sooner than this apart while it is not over yet.
LEASE_OVER_SECONDS = 0.02
STOP_SECONDS = 5.0  # `stop` waits this long for its tasks to end (each is cancelled first)
HAND_OVER_SECONDS = 10.0  # a hand-over (save, release, tell) is given up after this long
# A holder stops judging this much before its lease could be taken over: clocks that run at
# different rates (well under 1%) and a pause between the check and the judging itself.
MARGIN_SHARE = 0.2
MARGIN_MIN_SECONDS = 0.5

TableCallback = Callable[[str], Awaitable[None]]
NodeCallback = Callable[[str, float], Coroutine[Any, Any, None]]


class LeaseStore(Protocol):
    """The lease half of app/stores/redis.py's RedisStore."""

    url: str

    async def take_lease(
        self,
        code: str,
        node: str,
        over: Lease | None = None,
        still: tuple[str, int] | None = None,
    ) -> Lease: ...

    async def node_counts(self) -> NodeCounts: ...

    async def node_started(self, node: str) -> int: ...

    def heartbeat(self, node: str) -> tuple[str, str, int]: ...

    async def renew_lease(self, code: str, node: str, token: int) -> bool: ...

    async def release_lease(
        self, code: str, node: str, token: int, *, leaving: bool = False
    ) -> bool: ...

    async def lease(self, code: str) -> Lease | None: ...

    async def fence(self, code: str) -> int: ...

    def renewal(self, code: str, node: str, token: int) -> dict[str, list[Any]]: ...

    def renew_script(self) -> Any: ...


async def _nothing(code: str) -> None:
    return None


async def _no_one(node: str, gone_since: float) -> None:
    return None


@dataclass(slots=True)
class Watched:
    """Another process as this one watches it: its renewal counter and since when (our
    clock) it has stood at that count; its start count; when its counter last moved."""

    beat: int
    since: float
    life: int
    first_seen: float
    moved: float | None = None  # None: never seen moving
    restarted: float | None = None  # when its start count was last seen to move on


def claim_wait(quiet: float | None, lease_seconds: float) -> float:
    """How long a claim waits before asking Redis again (unless a note wakes it): every
    POLL_SECONDS of real time (an I/O poll), or, for a holder that has renewed nothing for
    `quiet` seconds (QUIET_SECONDS or more), until its lease is over and just past it, so the
    table is taken as soon as it may be: a floor of POLL_SECONDS there put some failovers
    off by up to half a second."""
    if quiet is None or quiet < QUIET_SECONDS:
        return POLL_SECONDS
    return max(LEASE_OVER_SECONDS, lease_seconds - quiet + LEASE_OVER_SECONDS)


def judge_seconds(lease_seconds: float) -> float:
    """How long after its last confirmed renewal was sent a holder may still judge."""
    return lease_seconds - max(MARGIN_MIN_SECONDS, lease_seconds * MARGIN_SHARE)
