"""Each person's round-trip time to the server, measured all game long, for lag-fair judging.

While its `lag_fair` rule is on, or it judges false starts (app/tables/reflexes.py
`Reflexes.measures_lag`), the room sends each connection an app-level `ping` every couple of
seconds with an id nobody can guess, and the page answers `pong` with it; the time between is
one sample. The
estimate is a low percentile of the recent samples, so a player who holds some answers
back (to look slow and be compensated more) moves it little, and nobody can look faster
than their network: a pong cannot come before its ping. It is capped (SLAPJACK_LAG_CAP_MS,
50 ms by default), so even a player who delays every answer gains at most the cap.

Synchronous and clock-free like the Table: `now` comes in. Not part of a snapshot: a
restored room measures again.
"""

from __future__ import annotations

import secrets
from collections import deque
from dataclasses import dataclass, field

SAMPLES = 10  # recent round trips kept per person: about 20 s of pings
PERCENTILE = 0.2  # the estimate: the 20th percentile of the samples kept


@dataclass
class LagMeter:
    cap: float  # seconds: no estimate exceeds it
    _samples: dict[str, deque[float]] = field(default_factory=dict)
    _waiting: dict[str, tuple[str, float]] = field(default_factory=dict)  # id, sent at

    def ping(self, person_id: str, now: float) -> str:
        """A new ping for `person_id`, sent at `now`: its id. An older ping still unanswered
        is forgotten (its pong, if it ever comes, counts for nothing)."""
        ping_id = secrets.token_hex(4)
        self._waiting[person_id] = (ping_id, now)
        return ping_id

    def pong(self, person_id: str, ping_id: str, now: float) -> bool:
        """The answer to ping `ping_id` arrived at `now`; False when it answers no ping of
        this person's still waiting (a replay, a guess, or an answer too late)."""
        waiting = self._waiting.get(person_id)
        if waiting is None or waiting[0] != ping_id or now < waiting[1]:
            return False
        del self._waiting[person_id]
        self._samples.setdefault(person_id, deque(maxlen=SAMPLES)).append(now - waiting[1])
        return True

    def estimate(self, person_id: str) -> float | None:
        """The round trip to credit `person_id` with, in seconds (at most the cap); None
        before any sample."""
        samples = self._samples.get(person_id)
        if not samples:
            return None
        ordered = sorted(samples)
        return min(ordered[int(len(ordered) * PERCENTILE)], self.cap)

    def smallest(self, person_id: str) -> float | None:
        """The smallest of `person_id`'s recent round trips, in seconds, uncapped; None
        before any sample. A pong held back only makes it larger, never smaller."""
        samples = self._samples.get(person_id)
        return min(samples) if samples else None

    def samples(self, person_id: str) -> int:
        """How many round trips of `person_id`'s the estimate rests on."""
        return len(self._samples.get(person_id, ()))

    def reset(self) -> None:
        """Everyone measured afresh: the pings stop while the rule is off, so samples from
        before would describe the network of a while ago."""
        self._samples.clear()
        self._waiting.clear()

    def forget(self, person_id: str) -> None:
        """A new connection: its network may be another (Wi-Fi to mobile data)."""
        self._samples.pop(person_id, None)
        self._waiting.pop(person_id, None)
