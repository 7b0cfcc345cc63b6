"""Illegal actions: IllegalAction codes, their order, and an untouched state."""

import dataclasses

import pytest
from engine_helpers import new, refused

from engine import IllegalAction


def test_illegal_action_is_a_value_error_with_a_code():
    assert issubclass(IllegalAction, ValueError)
    g = new([["2H", "3H"], ["4D", "5D"]])
    with pytest.raises(ValueError) as info:
        g.flip(1, 1.0)
    assert isinstance(info.value, IllegalAction)
    assert info.value.code == "not_your_turn"


@pytest.mark.parametrize("seat", [2, 3, 100, -1, -2])
def test_no_such_seat_is_bad_seat_for_flips_and_slaps(seat):
    g = new([["2H", "3H"], ["4D", "5D"]])
    assert refused(g, "flip", seat, 1.0) == "bad_seat"
    assert refused(g, "slap", seat, 1.0) == "bad_seat"


def test_game_over_comes_before_bad_seat():
    g = new([["5H"], ["2C", "3C"]])
    g.flip(0, 1.0)
    assert refused(g, "flip", 5, 2.0) == "game_over"


def test_out_comes_before_frozen():
    g = new([["2H", "4H"], ["3C"], ["6D", "7D"]])
    g.slap(1, 1.0)  # burns its last card: out, and frozen until 2.5
    assert g.is_out(1)
    assert refused(g, "slap", 1, 1.5) == "out"
    assert refused(g, "flip", 1, 1.5) == "out"


def test_frozen_comes_before_not_your_turn():
    g = new([["2H", "4H"], ["3C", "5C"], ["6D", "7D"]])
    g.slap(2, 1.0)
    assert g.next_to_play == 0
    assert refused(g, "flip", 2, 1.5) == "frozen"
    assert refused(g, "flip", 2, 2.5) == "not_your_turn"


def test_not_your_turn_comes_before_slap_pending():
    g = new([["2H"], ["3C"], ["6D"]], pile=["JS"])
    assert g.slap_open
    assert refused(g, "flip", 1, 1.0) == "not_your_turn"
    assert refused(g, "flip", 0, 1.0) == "slap_pending"


def test_frozen_comes_before_slap_pending():
    g = new([["JS", "2H", "4H"], ["3C", "5C"]])
    g.slap(0, 1.0)  # burns JS onto the empty pile: a Jack shows, seat 0 is frozen
    assert g.slap_open
    assert refused(g, "flip", 0, 1.5) == "frozen"
    assert refused(g, "flip", 0, 2.5) == "slap_pending"


def test_a_refused_action_does_not_even_move_the_clock():
    g = new([["2H", "3H"], ["4D", "5D"]], now=5.0)
    before = g.to_dict()
    for _ in range(3):
        with pytest.raises(IllegalAction):
            g.flip(1, 50.0)
    assert g.to_dict() == before


def test_a_refused_action_returns_no_events_and_the_game_plays_on():
    g = new([["2H", "3H"], ["4D", "5D"]])
    assert refused(g, "flip", 1, 1.0) == "not_your_turn"
    assert g.flip(0, 1.0)[0].kind == "flip"


def test_events_are_frozen_dataclasses_with_a_kind():
    g = new([["2H", "3H"], ["4D", "5D"]])
    (event,) = g.flip(0, 1.0)
    assert dataclasses.is_dataclass(event)
    assert event.kind == "flip"
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.seat = 1  # type: ignore[misc]
