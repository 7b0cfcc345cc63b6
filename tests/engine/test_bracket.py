"""The bracket: players in, tables out as even as possible with nobody alone (bots only when
allowed); winners in, the next round out until one table is left, the final; best-of-N;
the podium."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.bracket import (
    MAX_SIZE,
    MIN_SIZE,
    Heat,
    deal,
    heat_winner,
    podium,
    rounds_to_play,
    standing,
    table_sizes,
)

SIZES = st.integers(MIN_SIZE, MAX_SIZE)


def names(n: int) -> list[str]:
    return [f"p{i}" for i in range(n)]


# ---- examples ----------------------------------------------------------------------------


def test_nine_players_at_tables_of_four_sit_three_to_a_table() -> None:
    heats = deal(names(9), 4, seed=1)
    assert [len(h.players) for h in heats] == [3, 3, 3]
    assert all(h.bots == 0 for h in heats)


def test_sixty_four_players_at_tables_of_four_play_three_rounds() -> None:
    assert table_sizes(64, 4) == [4] * 16
    assert table_sizes(16, 4) == [4] * 4
    assert table_sizes(4, 4) == [4]
    assert rounds_to_play(64, 4) == 3


@pytest.mark.parametrize(
    ("players", "size", "sizes"),
    [
        (2, 4, [2]),
        (5, 4, [3, 2]),
        (4, 3, [2, 2]),
        (7, 3, [3, 2, 2]),
        (13, 6, [5, 4, 4]),
        (30, 4, [4, 4, 4, 4, 4, 4, 3, 3]),
    ],
)
def test_tables_are_as_even_as_possible_and_nobody_sits_alone(
    players: int, size: int, sizes: list[int]
) -> None:
    assert table_sizes(players, size) == sizes


def test_bots_fill_every_table_to_its_size_only_when_allowed() -> None:
    heats = deal(names(9), 4, seed=1, bots=True)
    assert [(len(h.players), h.bots) for h in heats] == [(3, 1), (3, 1), (3, 1)]
    assert [h.seats for h in heats] == [4, 4, 4]
    (alone,) = deal(["ann"], 4, seed=1, bots=True)
    assert alone == Heat(("ann",), 3)
    with pytest.raises(ValueError):
        deal(["ann"], 4, seed=1)


def test_a_deal_is_the_seeds_shuffle() -> None:
    assert deal(names(12), 4, seed=3) == deal(names(12), 4, seed=3)
    assert deal(names(12), 4, seed=3) != deal(names(12), 4, seed=4)


@pytest.mark.parametrize("size", [2, 7])
def test_a_table_seats_three_to_six(size: int) -> None:
    with pytest.raises(ValueError):
        table_sizes(8, size)


def test_a_player_is_dealt_once() -> None:
    with pytest.raises(ValueError):
        deal(["ann", "ann", "bo"], 4, seed=1)


def test_the_first_to_n_wins_goes_through() -> None:
    assert heat_winner({"ann": 1, "bo": 1}, 2) is None
    assert heat_winner({"ann": 2, "bo": 1}, 2) == "ann"
    assert heat_winner({"bo": 1}, 1) == "bo"
    with pytest.raises(ValueError):
        heat_winner({}, 0)


def test_a_removed_winner_hands_the_heat_to_the_next_best() -> None:
    table = ["ann", "bo", "cy"]
    order = standing({"ann": 2, "cy": 1}, ["ann", "bo", "cy"], table)
    assert order == ["ann", "cy", "bo"]
    assert heat_winner({"ann": 2, "cy": 1}, 2, standings=order, excluded={"ann"}) == "cy"
    assert heat_winner({"ann": 2}, 2, standings=order, excluded=set(table)) is None


def test_standing_is_wins_then_the_last_games_places_then_seats() -> None:
    assert standing({}, ["cy", "ann"], ["ann", "bo", "cy"]) == ["cy", "ann", "bo"]
    assert standing({"bo": 1}, ["cy", "ann", "bo"], ["ann", "bo", "cy"]) == ["bo", "cy", "ann"]


def test_the_podium_is_the_finals_standing_then_the_runners_up_before() -> None:
    assert podium(["ann", "bo", "cy", "di"]) == ["ann", "bo", "cy"]
    assert podium(["ann", "bo"], ["ed", "bo", "fay"]) == ["ann", "bo", "ed"]
    assert podium(["ann", "bo"]) == ["ann", "bo"]


# ---- properties --------------------------------------------------------------------------


@given(st.integers(2, 300), SIZES, st.booleans(), st.integers())
def test_every_player_sits_once_at_even_tables_none_alone(
    players: int, size: int, bots: bool, seed: int
) -> None:
    heats = deal(names(players), size, seed, bots=bots)
    seated = [p for h in heats for p in h.players]
    assert sorted(seated) == sorted(names(players))
    assert len(heats) == math.ceil(players / size)
    counts = [len(h.players) for h in heats]
    assert max(counts) - min(counts) <= 1
    assert min(counts) >= 2 and max(counts) <= size
    for heat in heats:
        assert heat.bots == (size - len(heat.players) if bots else 0)


@given(st.integers(2, 300), SIZES, st.booleans(), st.integers())
def test_winners_go_round_after_round_to_one_final(
    players: int, size: int, bots: bool, seed: int
) -> None:
    """Each round's winners (one from each table, bots too) are dealt again until one table
    is left: the final, after `rounds_to_play` rounds."""
    left = names(players)
    rounds = 0
    while True:
        heats = deal(left, size, seed + rounds, bots=bots)
        rounds += 1
        winners = [h.players[-1] if h.players else f"bot{i}" for i, h in enumerate(heats)]
        if len(heats) == 1:
            break
        assert len(winners) < len(left)
        left = winners
    assert rounds == rounds_to_play(players, size)


@given(
    st.dictionaries(st.sampled_from(names(6)), st.integers(0, 3), min_size=1),
    st.integers(1, 3),
)
def test_only_a_player_with_n_wins_goes_through(wins: dict[str, int], first_to: int) -> None:
    winner = heat_winner(wins, first_to)
    if winner is None:
        assert all(won < first_to for won in wins.values())
    else:
        assert wins[winner] >= first_to
