"""to_dict / from_dict: an exact snapshot that plays on exactly like the original."""

import json

import pytest
from engine_helpers import evs, new

from engine import Game, IllegalAction


def mid_game():
    """Give penalty, a freeze running, a Jack showing, a take behind it and a time limit."""
    g = new(
        [["2H", "JS", "4H", "5H"], ["3C", "6C", "7C"], ["8D", "9D", "JD"]],
        penalty="give",
        time_limit=60.0,
        now=100.0,
    )
    g.flip(0, 101.0)  # 2H
    g.flip(1, 102.0)  # 3C
    g.slap(2, 102.5)  # false slap: 8D given to seat 1, frozen until 104.0
    g.flip(2, 104.5)  # 9D
    g.flip(0, 105.0)  # JS: a Jack shows
    return g


def play_on(g):
    """The same actions and their answers, refusals included."""
    out = []
    for action, args in [
        ("flip", (1, 105.5)),
        ("slap", (1, 105.75)),
        ("slap", (2, 105.75, 0)),
        ("flip", (1, 106.0)),
        ("slap", (0, 106.5)),
        ("flip", (1, 107.0)),
        ("slap", (0, 107.5)),
        ("tick", (170.0,)),
    ]:
        try:
            out.append(evs(getattr(g, action)(*args)))
        except IllegalAction as exc:
            out.append(exc.code)
    return out, g.to_dict()


def test_from_dict_rebuilds_an_equal_snapshot_mid_game():
    g = mid_game()
    assert Game.from_dict(g.to_dict()).to_dict() == g.to_dict()


def test_a_rebuilt_game_plays_on_exactly_like_the_original():
    g = mid_game()
    twin = Game.from_dict(g.to_dict())
    assert play_on(twin) == play_on(g)


def test_the_played_on_sequence_is_what_the_rules_say():
    answers, _ = play_on(mid_game())
    assert answers[0] == "slap_pending"
    assert answers[1][0]["kind"] == "take"
    assert answers[1][0]["reaction_ms"] == 750
    assert answers[2] == [
        {"kind": "late", "seat": 2, "pile_id": 0, "behind_ms": 0, "winner": 1, "tie": None}
    ]
    assert answers[3] == "collecting"  # seat 1 collects the pile until 106.75
    assert answers[4] == [
        {"kind": "late", "seat": 0, "pile_id": 0, "behind_ms": 750, "winner": 1, "tie": None}
    ]
    assert answers[5] == [{"kind": "flip", "seat": 1, "card": "6C"}]
    assert answers[6] == [
        {"kind": "false_slap", "seat": 0, "card": None, "to": 1, "frozen_until": 109.0}
    ]


def mid_pause():
    """The pile just taken, two late slaps in, the collect pause running, shuffle_taken on."""
    g = new(
        [["JS", "2H", "4H"], ["3C", "6C"], ["8D", "9D"]],
        pile=["5S", "7S"],
        shuffle_taken=True,
        seed=5,
    )
    g.flip(0, 1.0)  # JS
    g.slap(2, 1.3)  # takes 5S 7S JS, collects until 2.3
    g.slap(1, 1.34, 0)  # 40 ms behind
    g.slap(0, 1.9)  # the pile is empty and being collected: late, 600 ms behind
    return g


def test_a_snapshot_mid_pause_keeps_the_pause_the_race_and_the_shuffle():
    g = mid_pause()
    d = json.loads(json.dumps(g.to_dict()))
    twin = Game.from_dict(d)
    assert twin.to_dict() == g.to_dict()
    assert twin.collect_until == g.collect_until == 2.3
    assert (
        twin.last_race
        == g.last_race
        == {
            "pile_id": 0,
            "winner": 2,
            "runners_up": [{"seat": 1, "behind_ms": 40}],
            "tie": None,
        }
    )
    for game in (g, twin):
        with pytest.raises(IllegalAction) as info:
            game.flip(2, 2.0)
        assert info.value.code == "collecting"
    assert evs(twin.slap(0, 2.1, 0)) == evs(g.slap(0, 2.1, 0))
    assert evs(twin.flip(2, 2.3)) == evs(g.flip(2, 2.3))
    assert twin.to_dict() == g.to_dict()


def test_a_version_1_snapshot_from_before_the_new_fields_still_loads():
    g = mid_game()
    old = g.to_dict()
    for name in ("trigger_lapsed", "collect_until", "race", "shuffle_seed"):
        del old[name]
    for name in ("collect_seconds", "trigger_timeout", "shuffle_taken"):
        del old["rules"][name]
    for stats in old["stats"]:
        for name in ("closest_win_ms", "closest_loss_ms", "reactions_ms"):
            del stats[name]
    twin = Game.from_dict(old)
    assert twin.rules == g.rules
    assert twin.collect_until == twin.now  # no pause running
    assert twin.last_race is None
    assert not twin.trigger_lapsed
    assert twin.lapse_at == 105.0 + 8.0  # the Jack showed at 105.0
    assert evs(twin.slap(1, 105.5)) == evs(g.slap(1, 105.5))


def test_a_snapshot_survives_json():
    g = mid_game()
    twin = Game.from_dict(json.loads(json.dumps(g.to_dict())))
    assert play_on(twin) == play_on(g)


def test_a_rebuilt_game_keeps_the_time_limit_of_the_deal():
    g = new([["2H", "3H"], ["4D"]], now=50.0, time_limit=10.0)
    twin = Game.from_dict(g.to_dict())
    assert twin.tick(59.0) == []
    assert evs(twin.tick(60.0)) == [{"kind": "win", "seat": 0, "reason": "time"}]
