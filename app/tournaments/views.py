"""The one place that builds `event_state` messages: the event, its players, its rounds with each
table's progress, its podium and recap, for everyone connected to it.

Everyone sees the same event, so a change builds one view, encodes it once, and each
connection's message is that JSON with its own `you` spliced in at the end (as a table's
`state` is built: app/tables/views.py). docs/protocol.md describes every field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from app.tournaments.heats import HeatState
from app.tournaments.tournament import Tournament
from app.tournaments.values import EventDict, Role
from app.wire.encoded import Encoded, event_head, to_json
from app.wire.protocol import EVENT_STATE
from engine import bracket


def event_view(
    event: Tournament,
    progress: Mapping[str, HeatState],
    happened: Sequence[EventDict],
    next_round_ms: int | None,
) -> dict[str, Any]:
    """The event as everyone sees it, after the change that caused `happened`."""
    organiser = event.organiser
    final = event.final()
    return {
        "event": event.code,
        "version": event.version,
        "name": event.name,
        "stage": event.stage,
        "paused": event.paused,
        "locked": event.locked,
        "ended": event.ended,
        "size": event.size,
        "first_to": event.first_to,
        "bots": event.bots,
        "rules": {
            **event.rules.to_dict(),
            "lag_fair": event.lag_fair,
            "false_starts": event.false_starts,
        },
        "organiser": None if organiser is None else organiser.name,
        "players": [
            {
                "player": e.id,
                "name": e.name,
                "avatar": e.avatar,
                "bot": e.bot,
                "status": event.status(e.id),
                "table": event.table_of(e.id),
            }
            for e in event.entrants.values()
        ],
        "round": event.round,
        "rounds_to_play": rounds_to_play(event),
        "rounds": [
            [
                {
                    "table": h.code,
                    "players": list(h.players),
                    "decided": h.decided,
                    "winner": h.winner,
                    "progress": progress[h.code].progress if h.code in progress else None,
                }
                for h in heats
            ]
            for heats in event.rounds
        ],
        "final": None if final is None else final.code,
        "next_round_ms": next_round_ms,
        "podium": list(event.podium),
        "recap": recap(event),
        "events": list(happened),
    }


def rounds_to_play(event: Tournament) -> int | None:
    """How many rounds the event plays, the final included, as far as it can be told now."""
    if event.stage == "lobby":
        players = len(event.players())
        if not bracket.can_deal(players, bots=event.bots):
            return None
        return bracket.rounds_to_play(max(players, 2), event.size)
    heats = len(event.current())
    if heats <= 1:
        return event.round
    return event.round + bracket.rounds_to_play(heats, event.size)


def recap(event: Tournament) -> dict[str, Any]:
    """The event's figures so far: the fastest winning slap, the most piles taken, and the
    games played, from the heats decided."""
    fastest = most = None
    for player, total in event.totals.items():
        best, takes = total.get("best_ms"), total.get("takes") or 0
        if best is not None and (fastest is None or best < fastest[1]):
            fastest = (player, best)
        if takes > 0 and (most is None or takes > most[1]):
            most = (player, takes)
    names = {e.id: e.name for e in event.entrants.values()}
    return {
        "fastest": None
        if fastest is None
        else {"player": fastest[0], "name": names[fastest[0]], "ms": fastest[1]},
        "most_piles": None
        if most is None
        else {"player": most[0], "name": names[most[0]], "takes": most[1]},
        "games": sum(int(t.get("wins") or 0) for t in event.totals.values()),
    }


def you(event: Tournament, who: str | None, role: Role) -> dict[str, Any]:
    """A connection's own part: who they are, and for a player their table and status."""
    player = who if role == "player" else None
    return {
        "player": who,
        "organiser": role == "organiser",
        "table": None if player is None else event.table_of(player),
        "status": None if player is None else event.status(player),
    }


class EventViews:
    """One change's `event_state`, encoded once: the shared JSON, each connection's `you`
    last."""

    def __init__(self, event: Tournament, view: dict[str, Any]) -> None:
        self.event = event
        self._head = f'{event_head(EVENT_STATE)}{to_json(view)[:-1]},"you":'

    def message(self, who: str | None, role: Role) -> Encoded:
        return Encoded(EVENT_STATE, f"{self._head}{to_json(you(self.event, who, role))}}}]")


def ms_until(when: float | None, now: float) -> int | None:
    if when is None or not math.isfinite(when):
        return None
    return max(0, round((when - now) * 1000))
