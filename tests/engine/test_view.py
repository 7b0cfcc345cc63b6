"""Default rule 10: view(seat) shows counts and the face-up pile, never a face-down card."""

import copy
import json
import pickle

import pytest
from engine_helpers import new, view_card_tokens

from engine import Rules, views
from engine.views import player_view, table_view

HANDS = [["AS", "KH", "7D", "10C"], ["QS", "9H", "3D"], ["2C", "8S", "5H", "6H", "4C"]]


def viewers(g):
    return [None, *range(g.players)]


def test_view_is_json_ready_for_every_viewer():
    g = new(HANDS, pile=["JC", "9C"])
    for viewer in viewers(g):
        json.dumps(player_view(g, viewer))


@pytest.mark.parametrize("viewer", [None, 0, 1, 2])
def test_view_of_a_fresh_game_holds_no_card_at_all(viewer):
    g = new(HANDS)
    assert view_card_tokens(player_view(g, viewer)) == []


@pytest.mark.parametrize("viewer", [None, 0, 1, 2])
def test_view_shows_only_face_up_pile_cards(viewer):
    g = new(HANDS, pile=["JC", "9C"])
    g.flip(0, 1.0)  # AS
    g.slap(1, 2.0)  # burns QS under the pile
    tokens = view_card_tokens(player_view(g, viewer))
    assert set(tokens) <= {"QS", "JC", "9C", "AS"}
    hidden = {"KH", "7D", "10C", "9H", "3D", "2C", "8S", "5H", "6H", "4C"}
    assert not set(tokens) & hidden


def test_view_shape():
    g = new(HANDS, pile=["JC", "9C"], now=10.0)
    v = player_view(g, 1)
    assert v["players"] == 3
    assert v["viewer"] == 1
    assert player_view(g, None)["viewer"] is None
    assert [s["seat"] for s in v["seats"]] == [0, 1, 2]
    assert [s["cards"] for s in v["seats"]] == [4, 3, 5]
    assert [s["out"] for s in v["seats"]] == [False, False, False]
    assert [s["frozen_ms"] for s in v["seats"]] == [0, 0, 0]
    assert v["pile"] == {"id": g.pile_id, "count": 2, "top": ["JC", "9C"], "burned": 0}
    assert v["next"] == 0
    assert v["slap_open"] is False
    assert v["trigger"] is None
    assert v["winner"] is None
    assert v["win_reason"] is None
    assert v["rules"] == Rules().to_dict()


def test_view_pile_top_holds_the_top_three_cards_top_last():
    g = new([["2H"], ["3H"]], pile=["4C", "5C", "6C", "7C", "JC"])
    v = player_view(g, None)
    assert v["pile"]["top"] == ["6C", "7C", "JC"]
    assert v["pile"]["count"] == 5
    assert v["slap_open"] is True
    assert v["trigger"] == "jack"


def test_view_frozen_ms_is_the_time_left_at_the_last_action():
    g = new([["2H", "3H", "4H"], ["5D", "6D", "7D"], ["8S", "9S"]], now=10.0)
    g.slap(1, 10.0)
    assert player_view(g, None)["seats"][1]["frozen_ms"] == pytest.approx(1500, abs=1)
    g.flip(0, 10.5)
    assert player_view(g, None)["seats"][1]["frozen_ms"] == pytest.approx(1000, abs=1)
    assert player_view(g, 2)["seats"][1]["frozen_ms"] == pytest.approx(1000, abs=1)
    g.flip(1, 12.0)
    assert player_view(g, None)["seats"][1]["frozen_ms"] == 0


def test_view_shows_who_is_out_and_the_winner():
    g = new([["5H"], ["2C", "3C"], ["4D", "6D"]])
    g.flip(0, 1.0)
    v = player_view(g, None)
    assert [s["out"] for s in v["seats"]] == [True, False, False]
    assert v["next"] == 1
    g2 = new([["5H"], ["2C", "3C"]])
    g2.flip(0, 1.0)
    v2 = player_view(g2, 0)
    assert v2["winner"] == 1
    assert v2["win_reason"] == "cards"
    assert v2["next"] is None


def test_view_counts_takes_and_false_slaps_per_seat():
    g = new([["JS", "2H", "3H"], ["4D", "5D"], ["6C", "7C"]])
    g.flip(0, 1.0)
    g.slap(2, 1.25)
    g.slap(1, 2.5)  # after the collect pause: a false slap
    stats = {s["seat"]: s for s in player_view(g, None)["stats"]}
    assert stats[2]["takes"] == 1
    assert stats[2]["best_ms"] == 250
    assert stats[1]["false_slaps"] == 1
    assert stats[0]["takes"] == 0


def test_view_has_no_hand_or_deck_lists():
    g = new(HANDS, pile=["JC"])

    def keys(node):
        if isinstance(node, dict):
            for k, v in node.items():
                yield k
                yield from keys(v)
        elif isinstance(node, list):
            for item in node:
                yield from keys(item)

    for viewer in viewers(g):
        found = {k.lower() for k in keys(player_view(g, viewer))}
        assert not found & {"hand", "hands", "deck", "decks_cards", "cards_list"}


def test_every_seat_sees_the_same_table_and_views_share_no_mutable_data():
    g = new(HANDS, pile=["9C", "JC"], penalty="give")
    g.slap(0, now=1.0)  # takes the Jack: stats to share
    table = table_view(g)
    for viewer in viewers(g):
        view = player_view(g, viewer)
        assert view == {"players": 3, "viewer": viewer, **table}
    player_view(g, None)["rules"]["triggers"].append("face")  # a caller's copy, not the rules'
    player_view(g, None)["stats"][0]["takes"] = 99
    assert player_view(g, None)["rules"]["triggers"] == ["jack"]
    assert player_view(g, None)["stats"][0]["takes"] == 1
    assert g.rules.to_dict() == Rules.from_dict(g.rules.to_dict()).to_dict()


def test_the_table_view_is_its_parts_and_the_stats_figures_change_only_with_a_record():
    g = new(HANDS, pile=["JC", "9C"])
    figures = g.stats_figures()
    g.flip(0, 1.0)  # AS: a flip records nothing
    assert all(a is b for a, b in zip(g.stats_figures(), figures, strict=True))
    g.slap(1, now=1.5)  # no trigger: a false slap, so seat 1's figures are new
    after = g.stats_figures()
    assert [a is b for a, b in zip(after, figures, strict=True)] == [True, False, True]
    assert after[1]["false_slaps"] == 1
    with pytest.raises(TypeError):
        after[1]["false_slaps"] = 5  # type: ignore[index]  # read-only: kept, never changed
    table = table_view(g)
    rows = views.seat_rows(g)
    assert table["seats"] == [
        {"seat": s, "cards": cards, "out": out, "frozen_ms": frozen}
        for s, (cards, out, frozen) in enumerate(rows)
    ]
    assert table == {
        "seats": table["seats"],
        **views.table_facts(g),
        "stats": [{"seat": s, **f} for s, f in enumerate(after)],
        "rules": g.rules.to_dict(),
    }
    assert list(table) == ["seats", *views.table_facts(g), "stats", "rules"]


def test_a_game_whose_figures_were_read_still_copies_and_pickles():
    g = new(HANDS, pile=["JC", "9C"])
    g.flip(0, 1.0)
    g.slap(1, now=1.5)  # a false slap: figures to keep
    table_view(g)  # the figures are kept now (read-only mappings)
    for twin in (copy.deepcopy(g), pickle.loads(pickle.dumps(g)), copy.copy(g)):
        assert twin.to_dict() == g.to_dict()
        assert table_view(twin) == table_view(g)
    assert g.stats(1).summary() == g.stats_summary(1)
