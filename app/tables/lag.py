"""Each person's round-trip time to the server, measured all game long, for lag-fair judging.

While its `lag_fair` rule is on, or it judges false starts (app/tables/reflexes.py
`Reflexes.measures_lag`), the room pings each measured person with an id nobody can guess,
and the page answers `pong` with it at once; the time between is one sample. Samples are
taken where they count: a ping rides on every state that shows a new trigger
(`Reflexes.ping_at_trigger`), so an honest page's answer arrives before its slap, and the
round trip its own trigger took is among those that slap is judged by. A person with fewer
than SETTLED samples is also pinged every SLAPJACK_LAG_PING_SECONDS (`ping_time`), so a
race soon after they come has figures to judge by and their lag badge shows: that ping
rides on the next `state` they are sent, and goes on its own (an app-level `ping`) only
when none is sent before the next ping time. Between triggers a settled person is not
pinged: a table that plays reads a pong a trigger per person, not one every ping time.

The estimate is a low percentile of the recent samples, so a player who holds some answers
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

SAMPLES = 10  # recent round trips kept per person (the module docstring says when taken)
PERCENTILE = 0.2  # the estimate: the 20th percentile of the samples kept
SETTLED = 3  # samples after which a person is pinged at triggers only


@dataclass
class LagMeter:
    cap: float  # seconds: no estimate exceeds it
    _samples: dict[str, deque[float]] = field(default_factory=dict)
    _waiting: dict[str, tuple[str, float]] = field(default_factory=dict)  # id, sent at
    # Each estimate, made once per sample: every state shows every seat's (`lag_ms`).
    _estimates: dict[str, float] = field(default_factory=dict)
    # People whose ping waits to ride on the next state they are sent.
    due: set[str] = field(default_factory=set)
    # The last trigger pings rode on: its game, and when it showed (`Reflexes.ping_at_trigger`).
    trigger_shown: tuple[object, float] | None = None

    def ping_time(self, person_id: str, now: float, every: float) -> str | None:
        """A ping time (every `every` seconds: SLAPJACK_LAG_PING_SECONDS) for a person with
        fewer than SETTLED samples: their ping rides on the next state they are sent
        (`rides`), and None is returned. It goes at once on its own (its id returned) for a
        person not measured yet, or whose last ping found no state to ride before now: one
        every ping time while states flow, every other one at a quiet table. None for a
        settled person (pinged at triggers only), and for one whose ping left less than half
        a ping time ago (a trigger's): it is on its way, and replacing it would throw that
        trigger's round trip away."""
        if self.settled(person_id):
            return None
        waiting = self._waiting.get(person_id)
        if waiting is not None and now - waiting[1] < every / 2:
            return None
        if person_id in self.due or person_id not in self._samples:
            self.due.discard(person_id)
            return self.ping(person_id, now)
        self.due.add(person_id)
        return None

    def settled(self, person_id: str) -> bool:
        """Whether `person_id` has SETTLED samples or more: pinged at triggers only."""
        return len(self._samples.get(person_id, ())) >= SETTLED

    def rides(self, person_id: str, now: float) -> str | None:
        """The id of the ping riding on the state `person_id` is sent at `now`, if theirs
        waits for one (`ping_time`); None otherwise."""
        if person_id not in self.due:
            return None
        self.due.discard(person_id)
        return self.ping(person_id, now)

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
        samples = self._samples.setdefault(person_id, deque(maxlen=SAMPLES))
        samples.append(now - waiting[1])
        ordered = sorted(samples)
        self._estimates[person_id] = min(ordered[int(len(ordered) * PERCENTILE)], self.cap)
        return True

    def estimate(self, person_id: str) -> float | None:
        """The round trip to credit `person_id` with, in seconds (at most the cap): the
        PERCENTILE of their samples; None before any sample."""
        return self._estimates.get(person_id)

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
        self._estimates.clear()
        self.due.clear()
        self.trigger_shown = None

    def forget(self, person_id: str) -> None:
        """A new connection: its network may be another (Wi-Fi to mobile data)."""
        self._samples.pop(person_id, None)
        self._waiting.pop(person_id, None)
        self._estimates.pop(person_id, None)
        self.due.discard(person_id)
