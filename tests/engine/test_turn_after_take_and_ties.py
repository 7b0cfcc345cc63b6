"""Who flips after a take (after_take) and a tie too close to call (tie_window_ms)."""

import pytest
from engine_helpers import evs, hands, kinds, new, refused

from engine import Game
from engine.views import player_view

FOUR = [["JS", "2H"], ["3C", "4C"], ["5D", "6D"], ["7S", "8S"]]


def taken_by(seat: int, *, at: float = 1.2, **rules) -> Game:
    """Seat 0 flips JS at 1.0 and `seat` takes it at `at`."""
    g = new(FOUR, **rules)
    g.flip(0, 1.0)
    assert kinds(g.slap(seat, at)) == ["take"]
    return g


# --- after_take -----------------------------------------------------------------------


def test_by_default_the_winner_flips_next():
    g = taken_by(2)
    assert g.next_to_play == 2
    assert refused(g, "flip", 3, 2.5) == "not_your_turn"
    assert kinds(g.flip(2, 2.5)) == ["flip"]


def test_left_of_winner_gives_the_next_flip_to_the_seat_after_the_winner():
    g = taken_by(2, after_take="left_of_winner")
    assert g.next_to_play == 3
    assert player_view(g, None)["next"] == 3
    assert refused(g, "flip", 2, 2.5) == "not_your_turn"
    assert refused(g, "flip", 3, 2.0) == "collecting"  # the winner still gathers the pile
    assert evs(g.flip(3, 2.5)) == [{"kind": "flip", "seat": 3, "card": "7S"}]


def test_left_of_the_last_seat_wraps_round_to_seat_zero():
    g = taken_by(3, after_take="left_of_winner")
    assert g.next_to_play == 0


def test_left_of_winner_skips_a_seat_that_is_out():
    g = new([["JS", "2H"], ["3C"], [], ["7S", "8S"]], after_take="left_of_winner")
    assert g.is_out(2)  # dealt no cards
    g.flip(0, 1.0)
    g.slap(1, 1.2)
    assert g.next_to_play == 3


def test_left_of_winner_skips_a_seat_that_ran_out_of_cards():
    g = new([["2H", "JS", "9C"], ["3C"], ["5D", "6D"]], after_take="left_of_winner")
    g.flip(0, 1.0)
    events = g.flip(1, 2.0)  # its last card: out
    assert {"kind": "out", "seat": 1} in evs(events)
    g.flip(2, 3.0)
    g.flip(0, 4.0)  # JS
    g.slap(0, 4.2)
    assert g.next_to_play == 2  # seat 0's left is seat 1, out


def test_left_of_winner_with_last_chance_knocks_the_empty_left_seat_out_and_moves_on():
    g = new(
        [["2H"], ["JC", "4C"], ["5D", "6D"]], empty_deck="last_chance", after_take="left_of_winner"
    )
    g.flip(0, 1.0)  # seat 0 plays its last card and stays in on its last chance
    assert not g.is_out(0)
    g.flip(1, 2.0)  # JC
    events = g.slap(2, 2.3)  # seat 2's left is seat 0, whose last chance was this pile
    assert kinds(events) == ["take", "out"]
    assert g.is_out(0)
    assert g.next_to_play == 1  # the next seat with cards


def test_left_of_winner_when_a_last_chance_seat_wins_its_cards_back():
    g = new(
        [["2H"], ["JC", "4C"], ["5D", "6D"]], empty_deck="last_chance", after_take="left_of_winner"
    )
    g.flip(0, 1.0)
    g.flip(1, 2.0)  # JC
    g.slap(0, 2.3)  # back in with the pile
    assert hands(g) == [["2H", "JC"], ["4C"], ["5D", "6D"]]
    assert g.next_to_play == 1


def test_left_of_winner_also_follows_a_last_card_jack():
    g = new(
        [["JS"], ["2C", "3C"], ["4D", "5D"]],
        pile=["9H"],
        last_card_jack=True,
        after_take="left_of_winner",
    )
    events = g.flip(0, 1.0)
    assert kinds(events) == ["flip", "take"]
    assert g.next_to_play == 1


def test_left_of_winner_with_two_seats_is_the_other_seat():
    g = new([["JS", "2H"], ["3C", "4C"]], after_take="left_of_winner")
    g.flip(0, 1.0)
    g.slap(0, 1.2)
    assert g.next_to_play == 1


def test_a_take_that_wins_the_game_leaves_nobody_to_flip():
    g = new([["2H"], ["JC"]], empty_deck="last_chance", after_take="left_of_winner")
    g.flip(0, 1.0)  # seat 0's last card: it stays in on its last chance
    g.flip(1, 2.0)  # JC, seat 1's last card
    events = g.slap(1, 2.2)  # seat 0's last chance was this pile: seat 1 holds everything
    assert kinds(events) == ["take", "out", "win"]
    assert g.winner == 1
    assert g.next_to_play is None


def test_after_take_survives_a_snapshot():
    g = taken_by(2, after_take="left_of_winner")
    twin = Game.from_dict(g.to_dict())
    assert twin.rules.after_take == "left_of_winner"
    assert twin.next_to_play == g.next_to_play == 3


# --- tie_window_ms --------------------------------------------------------------------


def jack_showing(**rules) -> Game:
    """Seat 0 flips JS at 1.0: seat 1 is next to flip."""
    g = new(FOUR, tie_window_ms=25, **rules)
    g.flip(0, 1.0)
    assert g.next_to_play == 1
    return g


def test_the_tie_order_starts_with_the_seat_next_to_flip():
    g = jack_showing()
    assert g.tie_order([3, 1, 0]) == [1, 3, 0]
    assert g.tie_order([0, 3]) == [3, 0]  # none is next: nearest after it, clockwise
    assert g.tie_order([2, 0]) == [2, 0]
    assert g.tie_order([0]) == [0]


def test_a_tie_goes_to_the_seat_next_to_flip_and_the_photo_finish_says_so():
    g = jack_showing()
    take = g.slap(1, 1.31, tied_with={3})
    assert kinds(take) == ["take"]
    late = g.slap(3, 1.3, 0)  # arrived 10 ms earlier, but inside the window: a tie
    assert evs(late) == [
        {"kind": "late", "seat": 3, "pile_id": 0, "behind_ms": 0, "winner": 1, "tie": 1}
    ]
    assert g.last_race == {
        "pile_id": 0,
        "winner": 1,
        "runners_up": [{"seat": 3, "behind_ms": 0}],
        "tie": 1,
    }
    assert player_view(g, 2)["race"]["tie"] == 1
    assert g.stats(1).closest_win_ms == 0


def test_a_tie_none_of_whose_seats_is_next_goes_to_the_nearest_after_it():
    g = jack_showing()
    g.slap(3, 1.3, tied_with={0})
    late = g.slap(0, 1.31, 0)
    assert evs(late) == [
        {"kind": "late", "seat": 0, "pile_id": 0, "behind_ms": 10, "winner": 3, "tie": 1}
    ]
    assert g.last_race["tie"] == 1  # the seat whose turn it was: the reference, not a slapper


def test_a_slap_outside_the_tie_is_an_ordinary_late_slap():
    g = jack_showing()
    g.slap(1, 1.3, tied_with={3})
    g.slap(3, 1.31, 0)
    late = g.slap(2, 1.4, 0)  # not one of the tied: it came after the window
    assert evs(late) == [
        {"kind": "late", "seat": 2, "pile_id": 0, "behind_ms": 100, "winner": 1, "tie": None}
    ]


def test_a_race_without_a_tie_has_none():
    g = jack_showing()
    g.slap(1, 1.3)
    assert evs(g.slap(3, 1.31, 0))[0]["tie"] is None
    assert g.last_race["tie"] is None


def test_the_next_race_forgets_the_tie():
    g = jack_showing(collect_seconds=0)
    g.slap(1, 1.3, tied_with={3})
    g.flip(1, 2.0)  # 3C
    g.flip(2, 3.0)  # 5D
    g.flip(3, 4.0)  # 7S
    g.flip(0, 5.0)  # 2H
    assert g.last_race["tie"] == 1  # until the next pile is won
    assert player_view(g, None)["race"]["tie"] == 1


@pytest.mark.parametrize(
    ("seat", "tied_with", "rules", "message"),
    [
        (3, {1}, {}, "seat 1"),  # the rule gives it to the seat next to flip
        (1, {1, 3}, {}, "itself"),
        (1, {3}, {"tie_window_ms": 0}, "tie_window_ms"),
    ],
)
def test_a_tie_the_rule_would_decide_otherwise_is_the_callers_bug(seat, tied_with, rules, message):
    g = new(FOUR, **{"tie_window_ms": 25, **rules})
    g.flip(0, 1.0)
    before = g.to_dict()
    with pytest.raises(ValueError, match=message):
        g.slap(seat, 1.3, tied_with=tied_with)
    assert g.to_dict() == before


def test_a_tied_slap_that_finds_no_trigger_is_a_false_slap_as_ever():
    g = new(FOUR, tie_window_ms=25, pile=["9H"])
    events = g.slap(0, 1.0, tied_with={1})
    assert kinds(events) == ["false_slap"]
    assert g.last_race is None


def test_a_tie_survives_a_snapshot_and_an_old_race_loads_without_one():
    g = jack_showing()
    g.slap(1, 1.31, tied_with={3})
    twin = Game.from_dict(g.to_dict())
    assert twin.to_dict() == g.to_dict()
    assert evs(twin.slap(3, 1.3, 0)) == evs(g.slap(3, 1.3, 0))
    old = g.to_dict()
    del old["race"]["tie"], old["race"]["tied"]
    assert Game.from_dict(old).last_race["tie"] is None
