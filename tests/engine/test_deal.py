"""Default rule 1: 2 to 8 players, one deck, dealt one card at a time from seat `first`."""

import random
from collections import Counter

import pytest
from engine_helpers import all_cards, hands

from engine import Game, Rules

ALL_TEXTS = [r + s for r in ["A", *map(str, range(2, 11)), "J", "Q", "K"] for s in "SHDC"]


def test_deal_hands_out_every_card_of_one_deck_once():
    g = Game.deal(4, seed=3)
    assert all_cards(g) == Counter(ALL_TEXTS)
    assert g.hand_sizes == (13, 13, 13, 13)
    assert [len(h) for h in hands(g)] == [13, 13, 13, 13]


def test_a_fresh_deal_has_an_empty_pile_no_winner_and_first_to_play():
    g = Game.deal(3, seed=3, first=2)
    assert g.pile == ()
    assert g.winner is None
    assert g.next_to_play == 2
    assert not g.slap_open
    assert not any(g.is_out(s) for s in range(3))


@pytest.mark.parametrize(
    ("players", "first", "sizes"),
    [
        (2, 0, (26, 26)),
        (3, 0, (18, 17, 17)),
        (3, 1, (17, 18, 17)),
        (3, 2, (17, 17, 18)),
        (5, 3, (10, 10, 10, 11, 11)),
        (6, 0, (9, 9, 9, 9, 8, 8)),
        (7, 5, (8, 7, 7, 7, 7, 8, 8)),
        (8, 6, (7, 7, 6, 6, 6, 6, 7, 7)),
    ],
)
def test_uneven_splits_give_the_extra_cards_to_the_seats_dealt_first(players, first, sizes):
    assert Game.deal(players, seed=11, first=first).hand_sizes == sizes


@pytest.mark.parametrize(("players", "first"), [(3, 1), (4, 3), (5, 2), (8, 7)])
def test_dealing_from_another_first_seat_rotates_the_same_deal(players, first):
    base = Game.deal(players, seed=42, first=0)
    turned = Game.deal(players, seed=42, first=first)
    for seat in range(players):
        assert turned.hand((seat + first) % players) == base.hand(seat)


def test_the_same_seed_gives_the_same_deal():
    assert hands(Game.deal(4, seed=123)) == hands(Game.deal(4, seed=123))


def test_different_seeds_give_different_deals():
    assert hands(Game.deal(4, seed=1)) != hands(Game.deal(4, seed=2))


def test_deal_without_a_seed_is_still_a_full_deal():
    g = Game.deal(2)
    assert all_cards(g) == Counter(ALL_TEXTS)


@pytest.mark.parametrize("seed", [5, None])
def test_deal_never_touches_the_global_random(seed):
    random.seed(99)
    state = random.getstate()
    Game.deal(4, seed=seed)
    assert random.getstate() == state


def test_two_decks_deal_104_cards_each_twice():
    g = Game.deal(8, seed=9, rules=Rules(decks=2))
    assert all_cards(g) == Counter({t: 2 for t in ALL_TEXTS})
    assert g.hand_sizes == (13,) * 8


def test_two_decks_split_unevenly_from_the_first_seat():
    assert Game.deal(6, seed=9, first=4, rules=Rules(decks=2)).hand_sizes == (
        17,
        17,
        17,
        17,
        18,
        18,
    )
