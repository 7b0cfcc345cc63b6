"""Rules: defaults, validation and the dict round trip; player-count limits of the game."""

import dataclasses

import pytest

from engine import Game, Rules

HANDS_2 = [["2H"], ["3H"]]


def test_defaults_are_the_digital_rules():
    r = Rules()
    assert r.freeze_seconds == 1.5
    assert r.penalty == "burn"
    assert r.empty_deck == "out"
    assert r.triggers == frozenset({"jack"})
    assert r.decks == 1
    assert r.last_card_jack is False
    assert r.time_limit is None
    assert r.collect_seconds == 1.0
    assert r.trigger_timeout == 8.0
    assert r.shuffle_taken is False
    assert r.after_take == "winner"
    assert r.tie_window_ms == 0


def test_rules_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().decks = 2  # type: ignore[misc]


def test_every_house_rule_value_is_accepted():
    r = Rules(
        freeze_seconds=0,
        penalty="give",
        empty_deck="last_chance",
        triggers=frozenset({"jack", "face", "double", "sandwich"}),
        decks=2,
        last_card_jack=True,
        time_limit=300.0,
    )
    assert r.decks == 2
    assert r.triggers == frozenset({"jack", "face", "double", "sandwich"})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("decks", 3),
        ("decks", 0),
        ("triggers", frozenset({"queen"})),
        ("triggers", frozenset({"jack", "joker"})),
        ("triggers", frozenset()),
        ("freeze_seconds", -0.5),
        ("freeze_seconds", -1),
        ("penalty", "steal"),
        ("penalty", ""),
        ("empty_deck", "stay"),
        ("empty_deck", "lastchance"),
        ("time_limit", 0),
        ("time_limit", -10.0),
        ("collect_seconds", -0.1),
        ("collect_seconds", 5.5),
        ("collect_seconds", float("nan")),
        ("collect_seconds", True),
        ("trigger_timeout", -1.0),
        ("trigger_timeout", 1.0),
        ("trigger_timeout", 61.0),
        ("trigger_timeout", float("inf")),
        ("trigger_timeout", None),
        ("shuffle_taken", 1),
        ("shuffle_taken", "yes"),
        ("after_take", "left"),
        ("after_take", None),
        ("tie_window_ms", -1),
        ("tie_window_ms", 51),
        ("tie_window_ms", 10.0),
        ("tie_window_ms", True),
        ("tie_window_ms", None),
    ],
)
def test_invalid_rules_raise_value_error_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        Rules(**{field: value})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("collect_seconds", 0),
        ("collect_seconds", 0.25),
        ("collect_seconds", 5.0),
        ("trigger_timeout", 0),
        ("trigger_timeout", 2.0),
        ("trigger_timeout", 60),
        ("tie_window_ms", 0),
        ("tie_window_ms", 1),
        ("tie_window_ms", 50),
        ("after_take", "left_of_winner"),
    ],
)
def test_the_bounds_of_the_house_rules_are_accepted(field, value):
    assert getattr(Rules(**{field: value}), field) == value


def test_an_old_rules_dict_without_the_new_fields_gets_their_defaults():
    old = {k: v for k, v in Rules().to_dict().items()}
    for name in (
        "collect_seconds",
        "trigger_timeout",
        "shuffle_taken",
        "after_take",
        "tie_window_ms",
    ):
        del old[name]
    assert Rules.from_dict(old) == Rules()


def test_to_dict_gives_triggers_as_a_sorted_list():
    d = Rules(triggers=frozenset({"sandwich", "jack", "double"})).to_dict()
    assert d["triggers"] == ["double", "jack", "sandwich"]


def test_default_rules_round_trip_through_a_dict():
    assert Rules.from_dict(Rules().to_dict()) == Rules()


def test_house_rules_round_trip_through_a_dict():
    r = Rules(
        freeze_seconds=0.25,
        penalty="give",
        empty_deck="last_chance",
        triggers=frozenset({"face", "double"}),
        decks=2,
        last_card_jack=True,
        time_limit=90.0,
        collect_seconds=0.0,
        trigger_timeout=0.0,
        shuffle_taken=True,
        after_take="left_of_winner",
        tie_window_ms=25,
    )
    d = r.to_dict()
    assert Rules.from_dict(d) == r
    assert sorted(d["triggers"]) == ["double", "face"]
    assert {k: v for k, v in d.items() if k != "triggers"} == {
        "freeze_seconds": 0.25,
        "penalty": "give",
        "empty_deck": "last_chance",
        "decks": 2,
        "last_card_jack": True,
        "time_limit": 90.0,
        "collect_seconds": 0.0,
        "trigger_timeout": 0.0,
        "shuffle_taken": True,
        "after_take": "left_of_winner",
        "tie_window_ms": 25,
    }


def test_from_dict_rejects_unknown_keys():
    d = Rules().to_dict()
    d["jokers"] = True
    with pytest.raises(ValueError, match="jokers"):
        Rules.from_dict(d)


def test_from_dict_validates_values():
    d = Rules().to_dict()
    d["decks"] = 3
    with pytest.raises(ValueError, match="decks"):
        Rules.from_dict(d)


@pytest.mark.parametrize("players", [-1, 0, 1, 9, 12])
def test_deal_refuses_player_counts_outside_2_to_8(players):
    with pytest.raises(ValueError):
        Game.deal(players, seed=1)


@pytest.mark.parametrize("players", [2, 5, 8])
def test_deal_accepts_player_counts_2_to_8(players):
    assert Game.deal(players, seed=1).players == players


@pytest.mark.parametrize("players", [0, 1, 9])
def test_from_hands_refuses_player_counts_outside_2_to_8(players):
    with pytest.raises(ValueError):
        Game.from_hands(
            [[f"{r}S"] for r in ["A", "2", "3", "4", "5", "6", "7", "8", "9"][:players]]
        )


def test_from_hands_accepts_eight_players():
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8"]
    assert Game.from_hands([[r + "S"] for r in ranks]).players == 8


def test_from_hands_refuses_a_card_twice_with_one_deck():
    with pytest.raises(ValueError):
        Game.from_hands([["2H", "3H"], ["2H"]])


def test_from_hands_refuses_a_pile_card_also_in_a_hand():
    with pytest.raises(ValueError):
        Game.from_hands([["2H"], ["3H"]], pile=["2H"])


def test_from_hands_allows_two_copies_with_two_decks():
    g = Game.from_hands([["2H", "3H"], ["2H"]], rules=Rules(decks=2))
    assert g.hand_sizes == (2, 1)


def test_from_hands_refuses_three_copies_with_two_decks():
    with pytest.raises(ValueError):
        Game.from_hands([["2H", "2H"], ["2H"]], rules=Rules(decks=2))


def test_from_hands_refuses_bad_card_text():
    with pytest.raises(ValueError):
        Game.from_hands([["2H", "ZZ"], ["3H"]])
