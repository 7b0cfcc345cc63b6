"""A tournament's bracket: players in, tables out; winners in, the next round out; the podium.

Pure like the rest of the engine: players are ids the caller gives, the order of a deal
comes from a seed, and nothing here knows of rooms, people or time.

    heats = deal(["ann", "bo", "cy", "di", "ed"], size=4, seed=7)
    # (Heat(players=('cy', 'ann', 'ed'), bots=0), Heat(players=('di', 'bo'), bots=0))
    deal(winners, size=4, seed=8)          # the next round; one heat left is the final
    heat_winner({"ann": 2, "ed": 1}, first_to=2)   # 'ann'

A round's heats are as even as possible: ceil(players / size) of them, their sizes at
most one apart, so nobody sits alone (two players at least) and no heat is fuller than
`size`. With bots allowed, every heat is filled to `size` with bots, who play and go
through like anyone.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

MIN_SIZE, MAX_SIZE, DEFAULT_SIZE = 3, 6, 4  # players at one of an event's tables
MIN_FIRST_TO, MAX_FIRST_TO = 1, 3  # games a player must win to take their heat
PODIUM = 3  # places on the podium: 1st, 2nd and 3rd


@dataclass(frozen=True)
class Heat:
    """One table of a round: the players dealt to it, in seat order, and the bots that
    fill its empty seats (after the players)."""

    players: tuple[str, ...]
    bots: int = 0

    @property
    def seats(self) -> int:
        return len(self.players) + self.bots


def check_size(size: int) -> None:
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"a table of an event seats {MIN_SIZE} to {MAX_SIZE}, not {size}")


def table_sizes(players: int, size: int) -> list[int]:
    """How many players sit at each table of a round of `players`: ceil(players / size)
    tables, the fuller ones first, at most one apart. ValueError for fewer than two (one
    player alone cannot play: see `deal` with bots)."""
    check_size(size)
    if players < 2:
        raise ValueError(f"a round needs two players, not {players}")
    tables = -(-players // size)
    fewer, extra = divmod(players, tables)
    return [fewer + 1] * extra + [fewer] * (tables - extra)


def can_deal(players: int, *, bots: bool = False) -> bool:
    """Whether a round of `players` can be dealt: two at least, or one with bots beside."""
    return players >= 2 or (bots and players == 1)


def deal(
    players: Sequence[str], size: int, seed: int | str, *, bots: bool = False
) -> tuple[Heat, ...]:
    """The round's tables: `players` shuffled (`random.Random(seed)`) and dealt into
    `table_sizes`; with `bots`, each table's empty seats are filled with bots up to `size`
    (so one player may be dealt, to a table of bots). A player id appears once."""
    if len(set(players)) != len(players):
        raise ValueError("a player is dealt once")
    check_size(size)
    if not can_deal(len(players), bots=bots):
        raise ValueError(f"a round needs two players, not {len(players)}")
    order = list(players)
    random.Random(seed).shuffle(order)
    sizes = [1] if len(order) == 1 else table_sizes(len(order), size)
    heats = []
    start = 0
    for seated in sizes:
        heats.append(Heat(tuple(order[start : start + seated]), size - seated if bots else 0))
        start += seated
    return tuple(heats)


def rounds_to_play(players: int, size: int) -> int:
    """How many rounds an event of `players` plays, the final included (one winner goes
    through from each table)."""
    check_size(size)
    rounds = 1
    while players > size:
        players = -(-players // size)
        rounds += 1
    return rounds


def standing(
    wins: Mapping[str, int], last_places: Sequence[str], players: Sequence[str]
) -> list[str]:
    """A table's players best first: most games won, then the order of its last game's
    places (the winner, then most cards, then who went out last), then seat order."""
    place = {player: index for index, player in enumerate(last_places)}
    seat = {player: index for index, player in enumerate(players)}
    return sorted(
        players, key=lambda p: (-wins.get(p, 0), place.get(p, len(place)), seat.get(p, 0))
    )


def heat_winner(
    wins: Mapping[str, int],
    first_to: int,
    *,
    standings: Sequence[str] = (),
    excluded: Collection[str] = (),
) -> str | None:
    """Who goes through from a table whose games were won as `wins` says: the first to
    `first_to` wins; None while nobody has. A winner in `excluded` (removed from the event)
    does not go through: the next of `standings` (the table's, best first) does, else
    nobody."""
    if not MIN_FIRST_TO <= first_to <= MAX_FIRST_TO:
        raise ValueError(f"first to {MIN_FIRST_TO} to {MAX_FIRST_TO} wins, not {first_to}")
    leader = next((p for p, won in wins.items() if won >= first_to), None)
    if leader is None:
        return None
    if leader not in excluded:
        return leader
    return next((p for p in standings if p not in excluded), None)


def podium(final: Sequence[str], runners_up: Sequence[str] = ()) -> list[str]:
    """1st, 2nd and 3rd: the final's standing, then (a final of fewer than three) the
    round before's runners-up in the order given."""
    places = list(dict.fromkeys(final))
    places += [p for p in dict.fromkeys(runners_up) if p not in places]
    return places[:PODIUM]
