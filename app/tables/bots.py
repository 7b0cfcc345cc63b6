"""Bot players: from the state a person in their seat would get, decide what to do and when.

A bot only plans; the room carries the plan out through the same locked path a person's
`flip` or `slap` takes, so a bot can be late, refused or beaten like anyone.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from app.wire.protocol import SeatState, State

Level = Literal["easy", "normal", "hard"]
Action = Literal["flip", "slap"]


@dataclass(frozen=True)
class Skill:
    reaction: tuple[float, float]  # seconds from a trigger showing to a slap
    flip_delay: tuple[float, float]  # seconds a turn takes
    false_slap_chance: float  # per face-up card that is no trigger
    miss_chance: float  # chance to notice a trigger late (three times slower)


SKILLS: dict[Level, Skill] = {
    "easy": Skill((0.7, 1.1), (0.8, 1.6), 0.08, 0.25),
    "normal": Skill((0.45, 0.7), (0.6, 1.2), 0.03, 0.08),
    "hard": Skill((0.25, 0.4), (0.4, 0.8), 0.01, 0.0),
}


@dataclass(frozen=True)
class Plan:
    action: Action
    delay: float  # seconds from now
    pile_id: int


class Bot:
    def __init__(self, level: Level, *, time_scale: float = 1.0, seed: int | None = None) -> None:
        self.level: Level = level
        self.skill = SKILLS[level]
        self.time_scale = time_scale
        self._rng = random.Random(secrets.randbits(64) if seed is None else seed)
        self._decided: tuple[tuple[Any, ...], Plan | None] | None = None

    @property
    def name(self) -> str:
        return f"{self.level.capitalize()} bot"

    def plan(self, state: State) -> Plan | None:
        """What to do next, seen from `state` (the bot seat's own view), or None: wait.

        The same situation gets the same decision (the same object), so a bot does not roll
        its dice again each time someone joins the room. The situation includes the bot's own
        card count and freeze, so after its own false slap, and when the freeze ends, it
        looks at the same card afresh."""
        seat = state["you"]["seat"]
        if seat is None or state["phase"] != "playing":
            return None
        me = state["seats"][seat]
        if me is None or me["out"]:
            return None
        pile = state["pile"]
        key: tuple[Any, ...] = (pile["id"], pile["count"], tuple(pile["top"]), state["next"])
        key += (state["trigger"], me["cards"], me["frozen_ms"] > 0)
        if self._decided is None or self._decided[0] != key:
            self._decided = (key, self._decide(state, seat, me))
        return self._decided[1]

    def forget(self) -> None:
        """Decide afresh next time: the last plan was refused."""
        self._decided = None

    def _decide(self, state: State, seat: int, me: SeatState) -> Plan | None:
        pile, top = state["pile"], state["pile"]["top"]
        unfreeze = me["frozen_ms"] / 1000
        if state["slap_open"]:
            return self._slap(pile["id"], unfreeze, slow=self._chance(self.skill.miss_chance))
        if top and self._chance(self.skill.false_slap_chance):
            return self._slap(pile["id"], unfreeze, slow=False)
        if state["next"] == seat and me["cards"] > 0:
            # Never before the freeze or the collect pause ends: the engine would refuse it.
            ready = max(unfreeze, state["collect_ms"] / 1000) + 0.05 * self.time_scale
            delay = max(self._between(self.skill.flip_delay), ready)
            return Plan("flip", delay, pile["id"])
        return None

    def _slap(self, pile_id: int, unfreeze: float, *, slow: bool) -> Plan:
        delay = self._between(self.skill.reaction) * (3 if slow else 1)
        return Plan("slap", max(delay, unfreeze + 0.05 * self.time_scale), pile_id)

    def _between(self, bounds: tuple[float, float]) -> float:
        return self._rng.uniform(*bounds) * self.time_scale

    def _chance(self, p: float) -> bool:
        return self._rng.random() < p
