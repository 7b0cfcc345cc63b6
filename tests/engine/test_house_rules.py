"""House rules (Rules fields), each from literal hands and literal times."""

from collections import Counter

import pytest
from engine_helpers import all_cards, evs, hands, kinds, new, pile, refused

from engine import Game, Rules
from engine.views import player_view

# --- freeze_seconds


def test_freeze_seconds_sets_the_length_of_the_freeze():
    g = new([["2H", "3H"], ["4D", "5D", "6D"]], pile=["7C"], now=4.0, freeze_seconds=0.5)
    events = g.slap(1, 4.0)
    assert evs(events)[0]["frozen_until"] == 4.5
    assert g.frozen_until(1) == 4.5
    assert refused(g, "slap", 1, 4.25) == "frozen"
    assert kinds(g.slap(1, 4.5)) == ["false_slap"]


def test_freeze_seconds_zero_disables_the_freeze():
    g = new([["2H", "3H"], ["4D", "5D", "6D"]], pile=["7C"], now=4.0, freeze_seconds=0)
    (event,) = evs(g.slap(1, 4.0))
    assert event["kind"] == "false_slap"
    assert event["card"] == "4D"
    assert event["frozen_until"] <= 4.0
    assert g.frozen_until(1) <= 4.0
    assert kinds(g.slap(1, 4.0)) == ["false_slap"]
    assert pile(g) == ["5D", "4D", "7C"]


def test_freeze_seconds_zero_lets_the_false_slapper_flip_at_once():
    g = new([["2H", "3H", "8H"], ["4D", "5D"]], pile=["7C"], freeze_seconds=0)
    g.slap(0, 1.0)
    assert evs(g.flip(0, 1.0)) == [{"kind": "flip", "seat": 0, "card": "3H"}]


# --- penalty="give"


def test_give_hands_the_card_face_down_to_the_bottom_of_the_last_flippers_deck():
    g = new([["2H", "3H"], ["4D", "5D"], ["6C", "7C"]], penalty="give")
    g.flip(0, 1.0)
    events = g.slap(2, 2.0)
    assert evs(events) == [
        {"kind": "false_slap", "seat": 2, "card": None, "to": 0, "frozen_until": 3.5}
    ]
    assert hands(g) == [["3H", "6C"], ["4D", "5D"], ["7C"]]
    assert pile(g) == ["2H"]
    assert g.frozen_until(2) == 3.5
    assert g.next_to_play == 1


def test_give_goes_to_the_most_recent_flipper_not_the_next_to_play():
    g = new([["2H", "3H", "8H"], ["4D", "5D"], ["6C", "7C"]], penalty="give")
    g.flip(0, 1.0)
    g.flip(1, 2.0)
    g.slap(0, 3.0)
    assert hands(g) == [["8H"], ["5D", "3H"], ["6C", "7C"]]
    assert pile(g) == ["2H", "4D"]


def test_give_burns_instead_when_nobody_has_flipped_yet():
    g = new([["2H", "3H"], ["4D", "5D"]], pile=["9S"], penalty="give")
    events = g.slap(1, 1.0)
    assert evs(events) == [
        {"kind": "false_slap", "seat": 1, "card": "4D", "to": None, "frozen_until": 2.5}
    ]
    assert pile(g) == ["4D", "9S"]
    assert hands(g) == [["2H", "3H"], ["5D"]]


def test_give_burns_instead_when_the_slapper_flipped_last():
    g = new([["2H", "3H", "8H"], ["4D", "5D"]], penalty="give")
    g.flip(0, 1.0)
    events = g.slap(0, 2.0)
    assert evs(events) == [
        {"kind": "false_slap", "seat": 0, "card": "3H", "to": None, "frozen_until": 3.5}
    ]
    assert pile(g) == ["3H", "2H"]
    assert hands(g) == [["8H"], ["4D", "5D"]]


def test_give_burns_instead_when_the_last_flipper_is_out():
    g = new([["2H"], ["4D", "5D"], ["6C", "7C"]], penalty="give")
    g.flip(0, 1.0)  # seat 0's last card: out
    assert g.is_out(0)
    events = g.slap(2, 2.0)
    assert evs(events)[0] == {
        "kind": "false_slap",
        "seat": 2,
        "card": "6C",
        "to": None,
        "frozen_until": 3.5,
    }
    assert pile(g) == ["6C", "2H"]
    assert hands(g) == [[], ["4D", "5D"], ["7C"]]


def test_give_still_goes_to_the_last_flipper_after_a_take():
    g = new([["JS", "2H"], ["4D", "5D"], ["6C", "7C"]], penalty="give")
    g.flip(0, 1.0)
    g.slap(1, 1.5)
    g.slap(2, 3.0)  # after the collect pause: a false slap on the empty pile; 0 flipped last
    assert hands(g) == [["2H", "6C"], ["4D", "5D", "JS"], ["7C"]]
    assert pile(g) == []


def test_giving_the_last_card_puts_the_slapper_out():
    g = new([["2H", "3H"], ["4D", "5D"], ["6C"]], penalty="give")
    g.flip(0, 1.0)
    events = g.slap(2, 2.0)
    assert evs(events) == [
        {"kind": "false_slap", "seat": 2, "card": None, "to": 0, "frozen_until": 3.5},
        {"kind": "out", "seat": 2},
    ]
    assert hands(g) == [["3H", "6C"], ["4D", "5D"], []]
    assert g.is_out(2)


# --- empty_deck="last_chance"


def last_chance_start(seat1, seat2):
    """Seat 0 flips its last card (2H) at 1.0 and stays in with no cards."""
    g = new([["2H"], seat1, seat2], empty_deck="last_chance")
    events = g.flip(0, 1.0)
    return g, events


def test_last_chance_keeps_a_seat_with_no_cards_in():
    g, events = last_chance_start(["3C", "4C"], ["5D", "6D"])
    assert evs(events) == [{"kind": "flip", "seat": 0, "card": "2H"}]
    assert not g.is_out(0)
    assert g.hand_sizes == (0, 2, 2)
    assert g.next_to_play == 1
    assert g.winner is None


def test_last_chance_winning_a_jack_brings_the_seat_back_with_the_pile():
    g, _ = last_chance_start(["JC", "4C"], ["5D", "6D"])
    g.flip(1, 2.0)  # JC
    events = g.slap(0, 2.25)
    assert evs(events) == [
        {
            "kind": "take",
            "seat": 0,
            "card": "JC",
            "count": 2,
            "pile_id": 1,
            "reaction_ms": 250,
            "reason": "slap",
        }
    ]
    assert hands(g) == [["2H", "JC"], ["4C"], ["5D", "6D"]]
    assert g.next_to_play == 0
    assert not g.is_out(0)


def test_last_chance_seat_is_out_when_someone_else_takes_a_pile():
    g, _ = last_chance_start(["JC", "4C"], ["5D", "6D"])
    g.flip(1, 2.0)  # JC
    events = g.slap(2, 2.25)
    assert kinds(events)[0] == "take"
    assert {"kind": "out", "seat": 0} in evs(events)
    assert g.is_out(0)
    assert hands(g) == [[], ["4C"], ["5D", "6D", "2H", "JC"]]
    assert refused(g, "slap", 0, 3.0) == "out"


def test_last_chance_seat_is_out_when_its_turn_comes_round():
    g, _ = last_chance_start(["3C", "4C"], ["5D", "6D"])
    g.flip(1, 2.0)
    events = g.flip(2, 3.0)
    assert evs(events) == [{"kind": "flip", "seat": 2, "card": "5D"}, {"kind": "out", "seat": 0}]
    assert g.is_out(0)
    assert g.next_to_play == 1


def test_last_chance_seat_is_out_when_it_slaps_falsely():
    g, _ = last_chance_start(["3C", "4C"], ["5D", "6D"])
    events = g.slap(0, 2.0)  # 2H on top: no Jack
    assert {"kind": "out", "seat": 0} in evs(events)
    assert g.is_out(0)
    assert pile(g) == ["2H"]
    assert hands(g) == [[], ["3C", "4C"], ["5D", "6D"]]


def test_last_chance_seat_is_not_out_while_a_jack_shows_on_its_turn():
    g = new([["5H"], ["JS", "2C"]], empty_deck="last_chance")
    g.flip(0, 1.0)
    assert not g.is_out(0)
    assert g.winner is None
    g.flip(1, 2.0)  # JS: seat 0's turn comes with a Jack showing, so it may still race
    assert not g.is_out(0)
    g.slap(0, 2.5)
    assert hands(g) == [["5H", "JS"], ["2C"]]
    assert g.next_to_play == 0


def test_last_chance_last_seat_in_wins_when_the_empty_seats_turn_comes():
    g = new([["5H"], ["2C", "JS"]], empty_deck="last_chance")
    g.flip(0, 1.0)
    assert g.winner is None
    events = g.flip(1, 2.0)
    assert kinds(events) == ["flip", "out", "win"]
    assert evs(events)[2] == {"kind": "win", "seat": 1, "reason": "cards"}
    assert g.winner == 1
    assert hands(g) == [[], ["JS", "5H", "2C"]]


def test_last_chance_seat_dealt_no_cards_is_out_from_the_start():
    g = new([["2H"], [], ["3C"]], empty_deck="last_chance")
    assert g.is_out(1)


# --- triggers


@pytest.mark.parametrize("top", ["JH", "QH", "KH"])
def test_face_trigger_makes_jacks_queens_and_kings_slappable(top):
    g = new([["2C", "3C"], ["4D", "5D"]], pile=["9S", top], triggers={"face"})
    assert g.slap_open
    assert refused(g, "flip", 0, 1.0) == "slap_pending"
    g.slap(1, 1.0)
    assert hands(g) == [["2C", "3C"], ["4D", "5D", "9S", top]]


@pytest.mark.parametrize("top", ["10H", "AH", "2H"])
def test_face_trigger_does_not_include_other_ranks(top):
    g = new([["2C", "3C"], ["4D", "5D"]], pile=["9S", top], triggers={"face"})
    assert not g.slap_open
    assert kinds(g.slap(1, 1.0)) == ["false_slap"]


def test_queen_is_no_trigger_by_default():
    g = new([["2C", "3C"], ["4D", "5D"]], pile=["QS"])
    assert not g.slap_open
    assert kinds(g.slap(1, 1.0)) == ["false_slap"]


def test_double_trigger_two_top_cards_of_the_same_rank():
    g = new([["7C", "3C"], ["4D", "5D"]], pile=["9S", "7H"], triggers={"double"})
    assert not g.slap_open
    g.flip(0, 1.0)
    assert g.slap_open
    assert g.trigger == "double"
    assert refused(g, "flip", 1, 1.5) == "slap_pending"
    g.slap(1, 1.5)
    assert hands(g) == [["3C"], ["4D", "5D", "9S", "7H", "7C"]]


def test_double_trigger_alone_does_not_make_a_jack_slappable():
    g = new([["2C", "3C"], ["4D", "5D"]], pile=["9S", "JH"], triggers={"double"})
    assert not g.slap_open
    assert kinds(g.slap(1, 1.0)) == ["false_slap"]
    assert pile(g) == ["4D", "9S", "JH"]


def test_double_trigger_needs_two_cards_on_the_pile():
    g = new([["2C", "3C"], ["4D", "5D"]], pile=["7H"], triggers={"double"})
    assert not g.slap_open


def test_sandwich_trigger_top_card_matches_the_card_two_below():
    g = new([["7C", "3C"], ["4D", "5D"]], pile=["7H", "KS"], triggers={"sandwich"})
    assert not g.slap_open
    g.flip(0, 1.0)
    assert g.slap_open
    assert g.trigger == "sandwich"
    g.slap(1, 1.5)
    assert hands(g) == [["3C"], ["4D", "5D", "7H", "KS", "7C"]]


def test_sandwich_trigger_alone_does_not_fire_on_a_double():
    g = new([["2C", "3C"], ["4D", "5D"]], pile=["KS", "7H", "7C"], triggers={"sandwich"})
    assert not g.slap_open


def test_jack_and_double_triggers_combine():
    g = new([["2C", "3C"], ["4D", "5D"]], pile=["9S", "JH"], triggers={"jack", "double"})
    assert g.slap_open
    g2 = new([["2C", "3C"], ["4D", "5D"]], pile=["9S", "9H"], triggers={"jack", "double"})
    assert g2.slap_open


def test_a_burn_under_a_one_card_pile_can_make_a_double():
    g = new([["7C", "3C"], ["7D", "5D"]], pile=["7H"], triggers={"double"})
    g.slap(1, 1.0)  # 7D burned under 7H: the top two cards are now a double
    assert pile(g) == ["7D", "7H"]
    assert g.slap_open
    assert refused(g, "flip", 0, 1.25) == "slap_pending"
    g.slap(0, 1.25)
    assert hands(g) == [["7C", "3C", "7D", "7H"], ["5D"]]


def test_a_burn_under_a_two_card_pile_can_make_a_sandwich():
    g = new([["2C", "3C"], ["KD", "5D"]], pile=["9H", "KS"], triggers={"sandwich"})
    g.slap(1, 1.0)
    assert pile(g) == ["KD", "9H", "KS"]
    assert g.slap_open


# --- decks=2


def test_two_decks_let_the_same_card_be_in_play_twice():
    g = new([["JS", "2H", "9D"], ["JS", "2H"]], decks=2)
    g.flip(0, 1.0)
    g.slap(1, 1.5)
    assert hands(g) == [["2H", "9D"], ["JS", "2H", "JS"]]
    assert all_cards(g) == Counter({"JS": 2, "2H": 2, "9D": 1})


def test_two_decks_still_refuse_a_third_copy_on_the_pile():
    with pytest.raises(ValueError):
        Game.from_hands([["JS"], ["JS"]], pile=["JS"], rules=Rules(decks=2))


# --- last_card_jack


def test_last_card_jack_takes_the_pile_at_once():
    g = new([["JS"], ["2C", "3C"], ["4D", "5D"]], pile=["9H", "8H"], last_card_jack=True)
    events = g.flip(0, 1.0)
    assert evs(events) == [
        {"kind": "flip", "seat": 0, "card": "JS"},
        {
            "kind": "take",
            "seat": 0,
            "card": "JS",
            "count": 3,
            "pile_id": 1,
            "reaction_ms": None,
            "reason": "last_card",
        },
    ]
    assert hands(g) == [["9H", "8H", "JS"], ["2C", "3C"], ["4D", "5D"]]
    assert pile(g) == []
    assert not g.is_out(0)
    assert not g.slap_open
    assert g.next_to_play == 0


def test_without_last_card_jack_flipping_a_final_jack_puts_the_seat_out():
    g = new([["JS"], ["2C", "3C"], ["4D", "5D"]], pile=["9H", "8H"])
    events = g.flip(0, 1.0)
    assert kinds(events) == ["flip", "out"]
    assert g.is_out(0)
    assert g.slap_open
    assert g.next_to_play == 1
    g.slap(2, 1.5)
    assert hands(g) == [[], ["2C", "3C"], ["4D", "5D", "9H", "8H", "JS"]]


def test_last_card_jack_does_not_apply_to_a_jack_that_is_not_the_last_card():
    g = new([["JS", "7S"], ["2C", "3C"]], last_card_jack=True)
    assert kinds(g.flip(0, 1.0)) == ["flip"]
    assert g.slap_open
    assert pile(g) == ["JS"]


def test_last_card_jack_is_only_for_jacks_even_with_face_triggers():
    g = new([["QS"], ["2C", "3C"], ["4D", "5D"]], last_card_jack=True, triggers={"face"})
    events = g.flip(0, 1.0)
    assert "take" not in kinds(events)
    assert g.is_out(0)
    assert pile(g) == ["QS"]


# --- time_limit


def test_tick_without_a_time_limit_returns_nothing():
    g = new([["2H", "3H"], ["4D"]])
    assert g.tick(10_000.0) == []
    assert g.winner is None
    assert g.next_to_play == 0


def test_tick_before_the_time_limit_returns_nothing():
    g = new([["2H", "3H"], ["4D"]], now=100.0, time_limit=10.0)
    assert g.tick(109.99) == []
    assert g.winner is None


def test_tick_at_the_time_limit_ends_the_game_for_the_seat_with_most_cards():
    g = new([["2H", "3H"], ["4D"]], pile=["5C", "6C", "7C"], now=100.0, time_limit=10.0)
    events = g.tick(110.0)
    assert evs(events) == [{"kind": "win", "seat": 0, "reason": "time"}]
    assert g.winner == 0
    assert g.next_to_play is None
    assert player_view(g, None)["win_reason"] == "time"
    assert refused(g, "flip", 0, 111.0) == "game_over"
    assert refused(g, "slap", 1, 111.0) == "game_over"


def test_tick_after_the_time_limit_also_ends_the_game():
    g = new([["2H"], ["4D", "5D"]], time_limit=10.0)
    assert kinds(g.tick(25.0)) == ["win"]
    assert g.winner == 1


def test_time_limit_counts_from_the_now_of_the_deal():
    g = Game.deal(3, seed=4, now=50.0, rules=Rules(time_limit=10.0))
    assert g.tick(59.5) == []
    assert evs(g.tick(60.0)) == [{"kind": "win", "seat": 0, "reason": "time"}]


def test_time_limit_tie_plays_on_until_one_seat_leads_alone():
    g = new([["2H", "3H"], ["4D", "5D"], ["6C"]], time_limit=10.0)
    assert g.tick(10.0) == []
    assert g.winner is None
    assert g.next_to_play == 0
    events = g.flip(0, 11.0)  # 1, 2, 1: seat 1 now leads alone
    assert evs(events)[0] == {"kind": "flip", "seat": 0, "card": "2H"}
    assert evs(events)[-1] == {"kind": "win", "seat": 1, "reason": "time"}
    assert g.winner == 1


def test_time_limit_tie_of_three_seats_plays_on():
    g = new([["2H", "3H"], ["4D", "5D"], ["6C", "7C"]], time_limit=5.0)
    assert g.tick(6.0) == []
    g.flip(0, 7.0)  # 1, 2, 2: still tied at the top
    assert g.winner is None
    g.flip(1, 8.0)  # 1, 1, 2: seat 2 leads alone
    assert g.winner == 2


def test_a_leader_before_the_time_limit_does_not_end_the_game():
    g = new([["2H", "3H", "8H"], ["4D"], ["6C"]], time_limit=10.0)
    assert kinds(g.flip(0, 5.0)) == ["flip"]
    assert g.tick(9.0) == []
    assert g.winner is None
