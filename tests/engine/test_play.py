"""Default rules 2 to 9 from literal hands and literal times."""

import dataclasses
from collections import Counter

import pytest
from engine_helpers import all_cards, evs, hands, kinds, new, pile, refused

import engine.events as events
from engine import Card, Game
from engine.views import player_view

# --- rule 2: only next_to_play flips; the turn passes up the seats, wrapping, skipping outs


def test_flip_puts_the_top_card_face_up_on_the_pile_and_passes_the_turn():
    g = new([["2H", "4H"], ["3C", "5C"], ["6D", "7D"]])
    events = g.flip(0, 1.0)
    assert evs(events) == [{"kind": "flip", "seat": 0, "card": "2H"}]
    assert hands(g) == [["4H"], ["3C", "5C"], ["6D", "7D"]]
    assert pile(g) == ["2H"]
    assert g.next_to_play == 1


def test_flips_stack_with_the_newest_card_on_top():
    g = new([["2H", "4H"], ["3C", "5C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    g.flip(1, 2.0)
    g.flip(2, 3.0)
    assert pile(g) == ["2H", "3C", "6D"]
    assert g.next_to_play == 0


def test_only_next_to_play_may_flip():
    g = new([["2H", "4H"], ["3C", "5C"], ["6D", "7D"]])
    assert refused(g, "flip", 1, 1.0) == "not_your_turn"
    assert refused(g, "flip", 2, 1.0) == "not_your_turn"
    assert g.next_to_play == 0


def test_first_seat_flips_first_and_the_turn_wraps_to_seat_zero():
    g = new([["2H", "4H"], ["3C", "5C"], ["6D", "7D"]], first=2)
    assert g.next_to_play == 2
    g.flip(2, 1.0)
    assert g.next_to_play == 0


def test_the_turn_skips_a_seat_dealt_no_cards():
    g = new([["2H", "4H"], [], ["3C", "5C"]])
    assert g.is_out(1)
    g.flip(0, 1.0)
    assert g.next_to_play == 2
    g.flip(2, 2.0)
    assert g.next_to_play == 0


def test_the_turn_skips_a_seat_that_went_out_during_play():
    g = new([["2H", "4H", "8H"], ["3C"], ["5D", "6D", "7D"]])
    g.flip(0, 1.0)
    g.flip(1, 2.0)  # seat 1's last card
    assert g.is_out(1)
    assert g.next_to_play == 2
    g.flip(2, 3.0)
    assert g.next_to_play == 0
    g.flip(0, 4.0)
    assert g.next_to_play == 2


# --- rule 3: a trigger on top pauses flips until someone slaps it


def test_a_flipped_jack_opens_the_slap_and_refuses_the_next_flip():
    g = new([["2H", "JS", "4H"], ["3C", "5C"]])
    g.flip(0, 1.0)
    assert not g.slap_open
    g.flip(1, 2.0)
    g.flip(0, 3.0)
    assert g.slap_open
    assert g.next_to_play == 1
    assert refused(g, "flip", 1, 4.0) == "slap_pending"


def test_a_jack_on_top_of_a_literal_pile_also_pauses_flips():
    g = new([["2H"], ["3C"]], pile=["4D", "JH"])
    assert g.slap_open
    assert refused(g, "flip", 0, 1.0) == "slap_pending"


def test_a_jack_below_the_top_is_no_trigger():
    g = new([["2H"], ["3C"]], pile=["JH", "4D"])
    assert not g.slap_open


def test_a_jack_burned_onto_an_empty_pile_pauses_flips():
    g = new([["2H", "4H"], ["JC", "5C"]])
    events = g.slap(1, 1.0)
    assert evs(events) == [
        {"kind": "false_slap", "seat": 1, "card": "JC", "to": None, "frozen_until": 2.5}
    ]
    assert pile(g) == ["JC"]
    assert g.slap_open
    assert refused(g, "flip", 0, 1.5) == "slap_pending"


def test_flips_resume_once_the_jack_is_taken():
    g = new([["JS", "2H"], ["3C", "5C"]])
    g.flip(0, 1.0)
    g.slap(1, 1.5)
    assert not g.slap_open
    assert evs(g.flip(1, 2.5)) == [{"kind": "flip", "seat": 1, "card": "3C"}]  # pause over


# --- rule 4: any seat in, holding cards and not frozen may slap at any time


def test_the_seat_that_flipped_the_jack_may_slap_it():
    g = new([["JS", "2H"], ["3C", "5C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    g.slap(0, 1.25)
    assert hands(g) == [["2H", "JS"], ["3C", "5C"], ["6D", "7D"]]
    assert g.next_to_play == 0


def test_a_seat_whose_turn_it_is_not_may_slap():
    g = new([["JS", "2H"], ["3C", "5C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    g.slap(2, 1.25)
    assert hands(g) == [["2H"], ["3C", "5C"], ["6D", "7D", "JS"]]


def test_the_first_slap_received_wins_and_the_next_one_is_late():
    g = new([["JS", "2H"], ["3C", "5C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    first = g.slap(2, 1.25, pile_id=0)
    second = g.slap(1, 1.25, pile_id=0)
    assert kinds(first) == ["take"]
    assert evs(second) == [
        {"kind": "late", "seat": 1, "pile_id": 0, "behind_ms": 0, "winner": 2, "tie": None}
    ]
    assert hands(g) == [["2H"], ["3C", "5C"], ["6D", "7D", "JS"]]


def test_a_frozen_seat_may_not_slap_the_jack_but_the_others_may():
    g = new([["JS", "2H"], ["3C", "5C"], ["6D", "7D"]])
    g.slap(1, 0.5)  # false slap: burns 3C, frozen until 2.0
    g.flip(0, 1.0)  # JS
    assert refused(g, "slap", 1, 1.5) == "frozen"
    g.slap(2, 1.6)
    assert hands(g) == [["2H"], ["5C"], ["6D", "7D", "3C", "JS"]]


def test_a_frozen_seat_may_slap_again_from_the_moment_its_freeze_ends():
    g = new([["JS", "2H"], ["3C", "5C", "8C"], ["6D", "7D"]])
    g.slap(1, 0.0)  # burns 3C, frozen until 1.5
    g.flip(0, 1.0)  # JS
    assert refused(g, "slap", 1, 1.25) == "frozen"
    g.slap(1, 1.5)
    assert hands(g) == [["2H"], ["5C", "8C", "3C", "JS"], ["6D", "7D"]]


# --- rule 5: a correct slap takes the pile under the deck, bottom card first


def test_a_correct_slap_takes_the_whole_pile_under_the_deck_bottom_card_first():
    g = new([["2C", "JS", "9H"], ["4D", "5D"]])
    g.flip(0, 1.0)
    g.flip(1, 2.0)
    g.flip(0, 3.0)
    events = g.slap(1, 3.25)
    assert evs(events) == [
        {
            "kind": "take",
            "seat": 1,
            "card": "JS",
            "count": 3,
            "pile_id": 1,
            "reaction_ms": 250,
            "reason": "slap",
        }
    ]
    assert hands(g) == [["9H"], ["5D", "2C", "4D", "JS"]]
    assert pile(g) == []
    assert g.pile_id == 1


def test_a_taken_literal_pile_keeps_its_order_with_the_jack_last():
    g = new([["2H"], ["3H", "4H"]], pile=["5C", "6C", "JD"])
    g.slap(0, 1.0)
    assert hands(g) == [["2H", "5C", "6C", "JD"], ["3H", "4H"]]


def test_the_slapper_flips_next_even_out_of_turn():
    g = new([["JS", "2H"], ["3C", "5C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    assert g.next_to_play == 1
    g.slap(2, 1.5)
    assert g.next_to_play == 2
    assert refused(g, "flip", 1, 2.5) == "not_your_turn"
    assert evs(g.flip(2, 2.5)) == [{"kind": "flip", "seat": 2, "card": "6D"}]


def test_each_take_raises_the_pile_id_by_one():
    g = new([["JS", "JH", "2H"], ["3C", "5C"]])
    start = g.pile_id
    g.flip(0, 1.0)
    g.slap(1, 1.5)
    assert g.pile_id == start + 1
    g.flip(1, 2.5)
    g.flip(0, 3.0)  # JH
    g.slap(0, 3.5)
    assert g.pile_id == start + 2


def test_reaction_ms_counts_from_the_flip_of_the_jack():
    g = new([["2C", "JS", "9H"], ["4D", "5D"]])
    g.flip(0, 10.0)
    g.flip(1, 11.0)
    g.flip(0, 12.0)
    (take,) = g.slap(1, 12.5)
    assert take.to_dict()["reaction_ms"] == 500


# --- rule 6: a false slap burns the top card under the pile and freezes the slapper


def test_a_false_slap_burns_the_slappers_top_card_under_the_pile():
    g = new([["2H", "3H"], ["4D", "5D"]], pile=["6C", "7C"], now=10.0)
    events = g.slap(1, 10.0)
    assert evs(events) == [
        {"kind": "false_slap", "seat": 1, "card": "4D", "to": None, "frozen_until": 11.5}
    ]
    assert pile(g) == ["4D", "6C", "7C"]
    assert hands(g) == [["2H", "3H"], ["5D"]]
    assert g.frozen_until(1) == 11.5


def test_a_false_slap_on_an_empty_pile_makes_the_burned_card_the_top():
    g = new([["2H", "3H"], ["4D", "5D"]])
    g.slap(1, 1.0)
    assert pile(g) == ["4D"]
    assert g.pile[-1] == g.pile[0]


def test_the_pile_counts_its_burned_cards_until_it_is_taken() -> None:
    """Burned cards are face up under the pile: every view says how many, so a page that
    arrives late (or reloads) draws them apart from the flipped ones, and a snapshot keeps
    the count."""
    g = new(
        [
            ["2H", "3H", "JD", "8S", "8H"],
            ["4D", "5D", "6S", "6H", "6D"],
            ["7C", "9C", "KD", "2C", "3C"],
        ],
        pile=["6C"],
    )
    g.slap(1, 1.0)  # 4D burned
    g.slap(2, 1.0)  # 7C burned
    assert pile(g) == ["7C", "4D", "6C"] and g.pile_burned == 2
    assert player_view(g, None)["pile"] == {
        "id": g.pile_id,
        "count": 3,
        "top": ["7C", "4D", "6C"],
        "burned": 2,
    }
    again = Game.from_dict(g.to_dict())
    assert again.pile_burned == 2 and again.to_dict() == g.to_dict()
    g.flip(0, 3.0)  # 2H
    g.flip(1, 3.1)  # 5D
    g.flip(2, 3.2)  # 9C
    g.flip(0, 3.3)  # 3H
    assert player_view(g, None)["pile"]["top"] == ["5D", "9C", "3H"] and g.pile_burned == 2
    g.flip(1, 3.4)  # 6S
    g.flip(2, 3.5)  # KD
    g.flip(0, 3.6)  # JD: a Jack
    g.slap(1, 3.7)
    assert g.pile_burned == 0 and player_view(g, None)["pile"]["burned"] == 0  # taken: a new pile


def test_a_snapshot_with_more_burned_cards_than_its_pile_is_refused() -> None:
    data = new([["2H"], ["3C"]], pile=["6C"]).to_dict()
    for burned in (2, -1):
        with pytest.raises(ValueError, match="burned"):
            Game.from_dict({**data, "burned": burned})
    older = {key: value for key, value in data.items() if key != "burned"}
    assert Game.from_dict(older).pile_burned == 0  # written before the count: none


def test_a_false_slap_keeps_the_pile_id():
    g = new([["2H", "3H"], ["4D", "5D"]], pile=["6C"])
    before = g.pile_id
    g.slap(0, 1.0)
    assert g.pile_id == before


def test_a_false_slap_does_not_pass_the_turn():
    g = new([["2H", "3H"], ["4D", "5D"], ["6S", "7S"]])
    g.flip(0, 1.0)
    assert g.next_to_play == 1
    g.slap(1, 2.0)
    assert g.next_to_play == 1
    g.slap(2, 2.0)
    assert g.next_to_play == 1


def test_a_frozen_seat_may_not_slap_until_its_freeze_ends():
    g = new([["2H", "3H"], ["4D", "5D", "8D"]], pile=["6C"], now=10.0)
    g.slap(1, 10.0)
    assert refused(g, "slap", 1, 11.0) == "frozen"
    assert refused(g, "slap", 1, 11.499) == "frozen"
    events = g.slap(1, 11.5)
    assert evs(events) == [
        {"kind": "false_slap", "seat": 1, "card": "5D", "to": None, "frozen_until": 13.0}
    ]
    assert pile(g) == ["5D", "4D", "6C"]


def test_a_frozen_seat_may_not_flip_until_its_freeze_ends():
    g = new([["2H", "3H", "8H"], ["4D", "5D"]], pile=["6C"])
    g.slap(0, 1.0)  # seat 0 is next to play and is now frozen until 2.5
    assert g.next_to_play == 0
    assert refused(g, "flip", 0, 2.0) == "frozen"
    assert evs(g.flip(0, 2.5)) == [{"kind": "flip", "seat": 0, "card": "3H"}]


def test_the_freeze_of_one_seat_does_not_stop_the_others():
    g = new([["2H", "3H"], ["4D", "5D"]], pile=["6C"])
    g.slap(1, 1.0)
    assert evs(g.flip(0, 1.1)) == [{"kind": "flip", "seat": 0, "card": "2H"}]
    assert g.frozen_until(0) <= 1.1


# --- rule 7: a slap at an older pile id is late and changes nothing but the photo finish

PHOTO_FINISH = {"now", "race", "stats"}


def table_part(g):
    """The snapshot without the clock and the photo-finish records a late slap adds to."""
    return {k: v for k, v in g.to_dict().items() if k not in PHOTO_FINISH}


def test_a_late_slap_returns_a_late_event_and_changes_nothing():
    g = new([["JS", "2H"], ["3C", "5C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    g.slap(2, 1.5)
    before = g.to_dict()
    events = g.slap(1, 1.5, pile_id=0)
    assert evs(events) == [
        {"kind": "late", "seat": 1, "pile_id": 0, "behind_ms": 0, "winner": 2, "tie": None}
    ]
    assert table_part(g) == {k: v for k, v in before.items() if k not in PHOTO_FINISH}


def test_a_late_slap_costs_no_card_even_with_no_trigger_showing():
    g = new([["JS", "2H"], ["3C", "5C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    g.slap(2, 1.5)
    g.flip(2, 2.5)  # 6D shows: a fresh slap now would be false
    before = table_part(g)
    events = g.slap(1, 3.0, pile_id=0)
    assert table_part(g) == before
    assert evs(events) == [
        {"kind": "late", "seat": 1, "pile_id": 0, "behind_ms": 1500, "winner": 2, "tie": None}
    ]
    assert hands(g) == [["2H"], ["3C", "5C"], ["7D", "JS"]]
    assert pile(g) == ["6D"]
    assert g.pile_id == 1
    assert g.frozen_until(1) <= 3.0
    assert g.next_to_play == 0


def test_a_late_slap_leaves_an_open_trigger_open():
    g = new([["JS", "JH", "2H"], ["3C", "5C"]])
    g.flip(0, 1.0)
    g.slap(1, 1.5)
    g.flip(1, 2.5)
    g.flip(0, 3.0)  # JH on pile 1
    assert evs(g.slap(0, 3.1, pile_id=0)) == [
        {"kind": "late", "seat": 0, "pile_id": 0, "behind_ms": 1600, "winner": 1, "tie": None}
    ]
    assert g.slap_open
    assert pile(g) == ["3C", "JH"]


def test_a_slap_carrying_the_current_pile_id_is_judged_normally():
    g = new([["JS", "2H"], ["3C", "5C"]])
    g.flip(0, 1.0)
    assert kinds(g.slap(1, 1.5, pile_id=g.pile_id)) == ["take"]


def test_a_slap_without_a_pile_id_is_aimed_at_the_current_pile():
    g = new([["JS", "2H"], ["3C", "5C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    g.slap(2, 1.5)
    events = g.slap(1, 2.5)  # the pile is empty and the collect pause over: a false slap
    assert kinds(events) == ["false_slap"]
    assert pile(g) == ["3C"]


# --- rule 8: a seat with no cards is out at once; the last seat holding cards wins


def test_flipping_the_last_card_puts_the_seat_out_at_once():
    g = new([["2H"], ["3C", "5C"], ["6D", "7D"]])
    events = g.flip(0, 1.0)
    assert evs(events) == [{"kind": "flip", "seat": 0, "card": "2H"}, {"kind": "out", "seat": 0}]
    assert g.is_out(0)
    assert g.hand_sizes == (0, 2, 2)
    assert g.winner is None


def test_burning_the_last_card_puts_the_seat_out_at_once():
    g = new([["2H", "4H"], ["3C"], ["6D", "7D"]])
    events = g.slap(1, 1.0)
    assert kinds(events) == ["false_slap", "out"]
    assert evs(events)[1] == {"kind": "out", "seat": 1}
    assert g.is_out(1)
    assert pile(g) == ["3C"]


def test_an_out_seat_may_neither_flip_nor_slap():
    g = new([["2H", "4H"], ["3C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    g.flip(1, 2.0)
    assert g.is_out(1)
    assert refused(g, "slap", 1, 3.0) == "out"
    assert refused(g, "flip", 1, 3.0) == "out"


def test_a_seat_dealt_no_cards_is_out_from_the_start():
    g = new([["2H", "4H"], [], ["6D", "7D"]])
    assert g.is_out(1)
    assert refused(g, "slap", 1, 1.0) == "out"


def test_the_next_seat_to_play_going_out_by_a_false_slap_passes_the_turn_on():
    g = new([["2H", "4H"], ["3C"], ["6D", "7D"]])
    g.flip(0, 1.0)
    assert g.next_to_play == 1
    g.slap(1, 2.0)
    assert g.is_out(1)
    assert g.next_to_play == 2


def test_the_last_seat_holding_cards_wins_and_sweeps_the_pile():
    g = new([["5H"], ["2C", "3C"]], pile=["9S"])
    events = g.flip(0, 1.0)
    assert evs(events) == [
        {"kind": "flip", "seat": 0, "card": "5H"},
        {"kind": "out", "seat": 0},
        {"kind": "win", "seat": 1, "reason": "cards"},
    ]
    assert g.winner == 1
    assert g.next_to_play is None
    assert hands(g) == [[], ["2C", "3C", "9S", "5H"]]
    assert pile(g) == []


def test_the_last_seat_holding_cards_wins_even_with_a_jack_showing():
    g = new([["JS"], ["2C", "3C"], []])
    events = g.flip(0, 1.0)
    assert kinds(events) == ["flip", "out", "win"]
    assert g.winner == 1
    assert hands(g) == [[], ["2C", "3C", "JS"], []]


def test_a_false_slap_of_the_last_card_can_hand_the_game_to_the_other_seat():
    g = new([["2H", "4H"], ["3C"]], pile=["6D"])
    events = g.slap(1, 1.0)
    assert evs(events) == [
        {"kind": "false_slap", "seat": 1, "card": "3C", "to": None, "frozen_until": 2.5},
        {"kind": "out", "seat": 1},
        {"kind": "win", "seat": 0, "reason": "cards"},
    ]
    assert g.winner == 0
    assert hands(g) == [["2H", "4H", "3C", "6D"], []]


def test_after_a_win_every_action_is_game_over():
    g = new([["5H"], ["2C", "3C"]])
    g.flip(0, 1.0)
    assert g.winner == 1
    assert refused(g, "flip", 1, 2.0) == "game_over"
    assert refused(g, "slap", 1, 2.0) == "game_over"
    assert refused(g, "slap", 0, 2.0) == "game_over"
    assert refused(g, "slap", 7, 2.0) == "game_over"
    assert refused(g, "slap", 1, 2.0, pile_id=0) == "game_over"


# --- rule 9: cards are never created or lost


def test_a_played_out_sequence_keeps_every_card():
    g = new(
        [["2H", "JS", "4H"], ["3C", "5C", "QD"], ["6D", "7D", "8S"]],
        pile=["9H", "10H"],
    )
    start = all_cards(g)
    g.slap(2, 0.5)
    g.flip(0, 1.0)
    g.flip(1, 2.0)
    g.flip(2, 3.0)
    g.flip(0, 4.0)  # JS
    g.slap(1, 4.5)
    g.flip(1, 5.5)
    g.slap(0, 6.0)
    assert all_cards(g) == start
    assert sum(g.hand_sizes) + len(g.pile) == sum(Counter(start).values())


def test_from_hands_takes_cards_or_text_alike():
    g = Game.from_hands([[Card.parse("2H"), "3h"], ["10c", Card.parse("JD")]], pile=["td"])
    assert hands(g) == [["2H", "3H"], ["10C", "JD"]]
    assert pile(g) == ["10D"]
    assert all(isinstance(c, Card) for c in g.hand(0) + g.pile)


def test_every_event_kind_turns_into_its_fields_as_a_dict() -> None:
    """Each kind's dict holds its `kind` and every field, cards as text, in field order
    (`field_names` is kept per class: a subclass never gets its parent's names)."""
    kinds_seen = 0
    for kind in vars(events).values():
        if not (isinstance(kind, type) and issubclass(kind, events.Event)):
            continue
        if kind is events.Event:
            continue
        names = [f.name for f in dataclasses.fields(kind)]
        values = {
            name: Card.parse("JH") if f.type in ("Card", "Card | None") else index
            for index, (name, f) in enumerate(zip(names, dataclasses.fields(kind), strict=True))
        }
        data = kind(**values).to_dict()
        assert list(data) == ["kind", *names] and data["kind"] == kind.kind
        for name, value in values.items():
            assert data[name] == (str(value) if isinstance(value, Card) else value)
        assert events.field_names(kind) is events.field_names(kind)  # made once
        kinds_seen += 1
    assert kinds_seen >= 5
