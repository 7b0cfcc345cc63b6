"""Small helpers shared by the engine tests (imported as a plain module)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from engine import Game, IllegalAction, Rules

# A card token anywhere in a text: rank then suit, not glued to other letters or digits.
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9AJQK])[SHDC](?![A-Za-z0-9])")


def new(
    hands: Sequence[Sequence[str]],
    *,
    pile: Sequence[str] = (),
    first: int = 0,
    now: float = 0.0,
    seed: int | str | None = 0,
    **rules: Any,
) -> Game:
    """A game from literal hands; keyword arguments other than pile/first/now/seed are Rules
    fields. The seed (for shuffle_taken) is fixed unless given, so games built alike are equal."""
    if "triggers" in rules:
        rules["triggers"] = frozenset(rules["triggers"])
    return Game.from_hands(
        [list(h) for h in hands],
        rules=Rules(**rules),
        first=first,
        pile=tuple(pile),
        now=now,
        seed=seed,
    )


def strs(cards: Iterable[object]) -> list[str]:
    return [str(c) for c in cards]


def hands(g: Game) -> list[list[str]]:
    return [strs(g.hand(s)) for s in range(g.players)]


def pile(g: Game) -> list[str]:
    return strs(g.pile)


def evs(events: Iterable[Any]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events]


def kinds(events: Iterable[Any]) -> list[str]:
    return [e.kind for e in events]


def all_cards(g: Game) -> Counter[str]:
    c: Counter[str] = Counter(pile(g))
    for h in hands(g):
        c.update(h)
    return c


def code_of(action: Any, *args: Any, **kwargs: Any) -> str:
    """Run an action that must be refused and return its IllegalAction code."""
    try:
        action(*args, **kwargs)
    except IllegalAction as exc:
        return str(exc.code)
    raise AssertionError("expected IllegalAction")


def refused(g: Game, action: str, *args: Any, **kwargs: Any) -> str:
    """The code of a refused action, checking that the state did not move at all."""
    before = g.to_dict()
    code = code_of(getattr(g, action), *args, **kwargs)
    assert g.to_dict() == before, f"state changed by a refused {action}"
    return code


def view_card_tokens(view: dict[str, Any]) -> list[str]:
    return CARD_TOKEN.findall(json.dumps(view))
