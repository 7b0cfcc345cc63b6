"""Property tests: random rules, random deals and random action sequences.

A state machine drives a game with flips, slaps (late ones too) and ticks by any seat,
valid or not, at non-decreasing times, and a twin rebuilt from `to_dict()` that must
answer every action exactly like the original. After every step it checks that no card
is created or lost, that refused actions touch nothing, that the refusal codes follow
the documented order (the collect pause and trigger lapses predicted from our own record
of takes and flips), that late slaps report the photo finish, and that no view leaks a
face-down card.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Callable
from typing import Any

from engine_helpers import CARD_TOKEN, all_cards, evs, hands, pile
from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from engine import Game, IllegalAction, Rules, views
from engine.cards import full_deck
from engine.rules import AFTER_TAKE, EMPTY_DECK, PENALTIES, RULES_SCHEMA, TRIGGERS
from engine.views import player_view

# A strategy for every field of Rules (a test checks none is left at its default).
RULE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "freeze_seconds": st.sampled_from([0.0, 0.5, 1.5]),
    "penalty": st.sampled_from(PENALTIES),
    "empty_deck": st.sampled_from(EMPTY_DECK),
    "triggers": st.frozensets(st.sampled_from(TRIGGERS), min_size=1),
    "decks": st.sampled_from([1, 2]),
    "last_card_jack": st.booleans(),
    "time_limit": st.sampled_from([None, None, 4.0, 20.0]),
    "collect_seconds": st.sampled_from([0.0, 0.5, 1.0]),
    "trigger_timeout": st.sampled_from([0.0, 2.0, 8.0]),
    "shuffle_taken": st.booleans(),
    "after_take": st.sampled_from(AFTER_TAKE),
    "tie_window_ms": st.sampled_from([0, 0, 25]),
}
RULES = st.builds(Rules, **RULE_VALUES)


def ms_left(now: float, until: float) -> int:
    """What a view shows of a wait, from its definition (engine/views.py `_ms_left`)."""
    return 0 if until <= now else math.ceil(round((until - now) * 1000, 3))


DT = st.sampled_from([0.0, 0.0, 0.05, 0.3, 1.0, 2.0, 6.0])
ANY_SEAT = st.integers(-2, 9)
FORBIDDEN_KEYS = {"hand", "hands", "deck", "decks_cards", "face_down"}


def small_game(rules: Rules, rnd: Any, players: int, now: float) -> Game:
    """A few random cards spread over the seats (some seats may be empty), and a short pile."""
    deck = [str(c) for c in full_deck(rules.decks)]
    rnd.shuffle(deck)
    jacks = [c for c in deck if c[0] == "J"]  # plenty of Jacks: more races, takes, comebacks
    others = [c for c in deck if c[0] != "J"]
    cards = (
        jacks[: rnd.randint(0, len(jacks))] + others[: rnd.randint(players + 2, 2 * players + 6)]
    )
    rnd.shuffle(cards)
    n_pile = rnd.randint(0, min(4, len(cards) - 2))
    pile_cards, rest = cards[:n_pile], cards[n_pile:]
    seats: list[list[str]] = [[] for _ in range(players)]
    seats[0].append(rest[0])
    seats[1].append(rest[1])
    for card in rest[2:]:
        seats[rnd.randrange(players)].append(card)
    first = rnd.choice([s for s in range(players) if seats[s]])
    return Game.from_hands(seats, rules=rules, first=first, pile=pile_cards, now=now)


def rank(text: str) -> str:
    return text[:-1]


# An independent oracle for rule 3 and the trigger house rules: what makes each trigger show
# on a pile (top last), written again from the rules, not from engine/rules.py.
SHOWS: dict[str, Callable[[list[str]], bool]] = {
    "jack": lambda cards: rank(cards[-1]) == "J",
    "face": lambda cards: rank(cards[-1]) in {"J", "Q", "K"},
    "double": lambda cards: len(cards) >= 2 and rank(cards[-2]) == rank(cards[-1]),
    "sandwich": lambda cards: len(cards) >= 3 and rank(cards[-3]) == rank(cards[-1]),
}


def trigger_shows(rules: Rules, cards: list[str]) -> bool:
    return bool(cards) and any(SHOWS[name](cards) for name in rules.triggers)


def test_the_random_rules_vary_every_rule_and_the_oracle_knows_every_trigger() -> None:
    assert set(RULE_VALUES) == {spec.name for spec in RULES_SCHEMA}
    assert set(SHOWS) == set(TRIGGERS)


def kinds_of(events: list[Any]) -> set[str]:
    return {e.kind for e in events}


def all_keys(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [k for k, v in node.items() for k in [str(k), *all_keys(v)]]
    if isinstance(node, list):
        return [k for item in node for k in all_keys(item)]
    return []


class SlapjackMachine(RuleBasedStateMachine):
    game: Game
    twin: Game

    @initialize(
        rules=RULES,
        players=st.integers(2, 8),
        full=st.booleans(),
        seed=st.integers(0, 2**32),
        rnd=st.randoms(use_true_random=False),
        start=st.sampled_from([0.0, 3.25, 1000.0]),
    )
    def start(self, rules, players, full, seed, rnd, start):
        if full:
            self.game = Game.deal(players, rules=rules, seed=seed, first=seed % players, now=start)
        else:
            self.game = small_game(rules, rnd, players, start)
        self.rules = rules
        self.now = start
        self.deadline = None if rules.time_limit is None else start + rules.time_limit
        self.cards = all_cards(self.game)
        self.twin = Game.from_dict(self.game.to_dict())
        self.frozen: dict[int, float] = {}
        self.last_false_slapper: int | None = None
        # Our own record of the collect pause, the showing trigger and the last race.
        self.collect_until = start
        self.shown_at: float | None = start if self.game.slap_open else None
        self.lapsed = False
        self.race: tuple[int, int, float] | None = None  # (pile won, winner, when)
        # The last race's tie, if the tie rule decided it: (seat next to flip, tied seats).
        self.race_tie: tuple[int, frozenset[int]] | None = None
        self.tying: tuple[int, frozenset[int]] | None = None  # the slap being played's tie

    def observe(self, events: list[Any], now: float) -> None:
        """Updates our record from what an accepted action caused, in order."""
        for e in events:
            if e.kind == "lapse":
                assert not self.lapsed
                self.lapsed = True
            elif e.kind == "flip" or (e.kind == "false_slap" and e.card is not None):
                self.lapsed, self.shown_at = False, now  # a card landed on the pile
            elif e.kind == "take":
                self.lapsed, self.shown_at = False, None
                self.collect_until = now + self.rules.collect_seconds
                self.race = (e.pile_id - 1, e.seat, now) if e.reason == "slap" else None
                self.race_tie = self.tying if e.reason == "slap" else None
        if not trigger_shows(self.rules, pile(self.game)):
            self.shown_at = None

    def lapse_due(self, now: float) -> bool:
        timeout = self.rules.trigger_timeout
        return (
            not self.game.over
            and bool(timeout)
            and self.shown_at is not None
            and not self.lapsed
            and now >= self.shown_at + timeout
        )

    def expected_lapse(self, now: float) -> dict[str, Any] | None:
        """The lapse event an action at `now` must start with, if one is due."""
        if not self.lapse_due(now):
            return None
        return {"kind": "lapse", "trigger": self.game.trigger, "pile_id": self.game.pile_id}

    def strip_lapse(self, events: list[Any], lapse: dict[str, Any] | None) -> list[Any]:
        """A lapse that was due comes first, and only then."""
        lapses = [e for e in events if e.kind == "lapse"]
        assert len(lapses) == (0 if lapse is None else 1), (lapse, evs(events))
        if lapse is not None:
            assert evs(events[:1]) == [lapse]
            return events[1:]
        return events

    # --- drivers ---------------------------------------------------------------------------

    def both(self, action: str, *args: Any, **kwargs: Any) -> tuple[str | None, list[Any]]:
        """Run an action on the game and on its twin; both must answer alike."""
        before = self.game.to_dict()
        results = []
        for g in (self.game, self.twin):
            try:
                results.append((None, getattr(g, action)(*args, **kwargs)))
            except IllegalAction as exc:
                results.append((exc.code, []))
        (code, events), (twin_code, twin_events) = results
        assert code == twin_code, "the rebuilt twin refused differently"
        event(f"{action}: {code or ','.join(e.kind for e in events) or 'nothing'}")
        assert evs(events) == evs(twin_events), "the rebuilt twin answered differently"
        assert self.twin.to_dict() == self.game.to_dict()
        if code is not None:
            assert self.game.to_dict() == before, f"refused {action} ({code}) changed the state"
        else:
            now = args[0] if action == "tick" else args[1]
            self.observe(events, max(now, self.now))
        return code, events

    def advance(self, dt: float) -> float:
        self.now += dt
        if self.deadline is not None and self.now >= self.deadline and not self.game.over:
            # The server ticks as time passes: the time limit is applied before any action.
            due = self.expected_lapse(self.now)
            _, events = self.both("tick", self.now)
            self.strip_lapse(events, due)
        return self.now

    def expected_code(self, kind: str, seat: int, now: float) -> str | None:
        """The refusal the documented order predicts, from the public state and our own
        record of the freezes (not the engine's)."""
        g = self.game
        if g.winner is not None:
            return "game_over"
        if not 0 <= seat < g.players:
            return "bad_seat"
        if g.is_out(seat):
            return "out"
        if now < self.frozen.get(seat, float("-inf")):
            return "frozen"
        if kind == "flip":
            if seat != g.next_to_play:
                return "not_your_turn"
            if now < self.collect_until:
                return "collecting"
            if trigger_shows(self.rules, pile(g)) and not self.lapsed and not self.lapse_due(now):
                return "slap_pending"
            if g.hand_sizes[seat] == 0:
                return "no_cards"
        return None

    def do_flip(self, seat: int, dt: float) -> None:
        now = self.advance(dt)
        expected = self.expected_code("flip", seat, now)
        top = self.game.hand(seat)[0] if expected is None else None
        old_pile = pile(self.game)
        due = self.expected_lapse(now)
        code, events = self.both("flip", seat, now)
        assert code == expected
        if code is None:
            events = self.strip_lapse(events, due)
            assert evs(events)[0] == {"kind": "flip", "seat": seat, "card": str(top)}
        if code is None and [e.kind for e in events] == ["flip"]:
            g = self.game
            assert pile(g) == [*old_pile, str(top)]
            up = [(seat + k) % g.players for k in range(1, g.players)]
            assert g.next_to_play == next(s for s in up if not g.is_out(s))

    def do_slap(
        self, seat: int, dt: float, aim: str, back: int, tied_with: frozenset[int] = frozenset()
    ) -> None:
        now = self.advance(dt)
        g = self.game
        pile_id = {"none": None, "current": g.pile_id, "old": max(0, g.pile_id - back)}[aim]
        gone = pile_id is not None and pile_id < g.pile_id
        collecting = not g.pile and now < self.collect_until
        late = gone or collecting
        aimed = pile_id if gone else g.pile_id - 1
        race, race_tie = self.race, self.race_tie
        due = self.expected_lapse(now)
        expected = self.expected_code("slap", seat, now)
        was_open = trigger_shows(self.rules, pile(g))
        old_hands, old_pile, old_id = hands(g), pile(g), g.pile_id
        before = (old_hands, old_pile, old_id, g.next_to_play, g.hand_sizes)
        self.tying = (g.next_to_play, tied_with) if tied_with else None
        kwargs: dict[str, Any] = {"tied_with": tied_with} if tied_with else {}
        code, events = self.both("slap", seat, now, pile_id=pile_id, **kwargs)
        self.tying = None
        if late and expected == "frozen":
            assert code in {"frozen", None}  # a late slap by a frozen seat: either is fair
        else:
            assert code == expected
        if code is not None:
            return
        events = self.strip_lapse(events, due)
        if events and events[0].kind == "out":
            assert (
                due is not None and self.rules.empty_deck == "last_chance"
            )  # the lapse spent a last chance
            return
        done = "win" in [e.kind for e in events]  # a win may sweep the pile: skip exact checks
        if late:
            winner = behind = tie = None
            if race is not None and race[0] == aimed:
                winner = race[1]
                behind = None if seat == winner else max(0, round((now - race[2]) * 1000))
                if race_tie is not None and seat in race_tie[1]:
                    tie = race_tie[0]
            assert evs(events)[0] == {
                "kind": "late",
                "seat": seat,
                "pile_id": aimed,
                "behind_ms": behind,
                "winner": winner,
                "tie": tie,
            }
            assert kinds_of(events[1:]) <= {"win"}
            if due is None:
                assert (hands(g), pile(g), g.pile_id, g.next_to_play, g.hand_sizes) == before
            else:
                assert (hands(g), pile(g), g.pile_id) == before[:3]
        elif was_open:
            take = evs(events)[0]
            assert take["kind"] == "take"
            assert (take["seat"], take["count"], take["pile_id"]) == (
                seat,
                len(old_pile),
                old_id + 1,
            )
            assert g.pile_id == old_id + 1
            if not done and self.rules.shuffle_taken:
                assert hands(g)[seat][: len(old_hands[seat])] == old_hands[seat]
                assert Counter(hands(g)[seat]) == Counter(old_hands[seat] + old_pile)
            elif not done:
                assert hands(g)[seat] == old_hands[seat] + old_pile
                assert pile(g) == []
            if not done:
                first = seat
                if self.rules.after_take == "left_of_winner":  # the next seat still in
                    up = [(seat + k) % g.players for k in range(1, g.players)]
                    first = next(s for s in up if not g.is_out(s))
                assert g.next_to_play == first
                assert g.hand_sizes[first] > 0
        else:
            false_slap = evs(events)[0]
            assert false_slap["kind"] == "false_slap"
            if not done:
                assert g.pile_id == old_id
            if old_hands[seat]:
                card = old_hands[seat][0]
                self.last_false_slapper = seat
                self.frozen[seat] = now + self.rules.freeze_seconds
                assert hands(g)[seat] == old_hands[seat][1:]
                if not done and false_slap["to"] is None:
                    assert false_slap["card"] == card
                    assert pile(g) == [card, *old_pile]
                elif not done:
                    to = false_slap["to"]
                    assert self.rules.penalty == "give"
                    assert false_slap["card"] is None
                    assert to != seat
                    assert hands(g)[to] == [*old_hands[to], card]
                    assert pile(g) == old_pile
                if self.rules.freeze_seconds > 0 and not g.is_out(seat):
                    assert g.frozen_until(seat) == now + self.rules.freeze_seconds
            else:
                assert self.rules.empty_deck == "last_chance"
                assert g.is_out(seat)

    # --- rules -----------------------------------------------------------------------------

    @rule(dt=DT)
    def flip_by_next(self, dt):
        seat = self.game.next_to_play
        self.do_flip(0 if seat is None else seat, dt)

    @rule(dt=DT)
    def flip_by_next_again(self, dt):
        self.flip_by_next(dt)

    @rule(seat=ANY_SEAT, dt=DT)
    def flip_by_anyone(self, seat, dt):
        self.do_flip(seat, dt)

    @rule(
        seat=ANY_SEAT,
        dt=DT,
        aim=st.sampled_from(["none", "current", "old"]),
        back=st.integers(1, 3),
    )
    def slap_by_anyone(self, seat, dt, aim, back):
        self.do_slap(seat, dt, aim, back)

    @precondition(lambda self: self.game.slap_open)
    @rule(seat=st.integers(0, 7), dt=st.sampled_from([0.0, 0.1, 0.4]))
    def race_for_the_trigger(self, seat, dt):
        self.do_slap(seat % self.game.players, dt, "current", 1)

    @precondition(lambda self: self.game.slap_open and self.rules.tie_window_ms > 0)
    @rule(
        seats=st.lists(st.integers(0, 7), min_size=2, max_size=4, unique=True),
        dt=st.sampled_from([0.0, 0.1, 0.4]),
        gaps=st.lists(st.sampled_from([0.0, 0.01, 0.02]), min_size=3, max_size=3),
    )
    def a_tie_at_the_trigger(self, seats, dt, gaps):
        """Slaps the room judged a genuine tie: the one the tie rule favours first, told
        whom it tied with, then the others, each a little later, at the pile just won."""
        self.advance(dt)  # a tick it brings may move the turn, and the tie's order with it
        g = self.game
        if g.over or not g.slap_open:
            return
        tied = g.tie_order({seat % g.players for seat in seats})
        first, rest = tied[0], frozenset(tied[1:])
        pile_id = g.pile_id
        self.do_slap(first, 0.0, "current", 1, tied_with=rest)
        for seat, gap in zip(tied[1:], gaps, strict=False):
            self.do_slap(seat, gap, "old" if g.pile_id > pile_id else "current", 1)

    @precondition(lambda self: self.game.pile_id > 0)
    @rule(seat=st.integers(0, 7), dt=DT, back=st.integers(1, 3))
    def slap_a_gone_pile(self, seat, dt, back):
        self.do_slap(seat % self.game.players, dt, "old", back)

    @rule(dt=DT)
    def tick(self, dt):
        now = self.now + dt
        self.now = now
        g = self.game
        sizes = g.hand_sizes
        was_over = g.over
        due = self.expected_lapse(now)
        code, events = self.both("tick", now)
        if was_over:
            return
        assert code is None
        events = self.strip_lapse(events, due)
        if events and events[0].kind == "out":
            return  # the lapse spent a last chance: the sizes did not change, the seats did
        leader = max(range(g.players), key=lambda s: sizes[s])
        alone = sizes.count(sizes[leader]) == 1
        if self.deadline is None or now < self.deadline or not alone:
            assert events == []
            assert g.winner is None
        else:
            assert evs(events) == [{"kind": "win", "seat": leader, "reason": "time"}]
            assert g.winner == leader

    @precondition(lambda self: self.last_false_slapper is not None)
    @rule(
        dt=st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0]),
        flip=st.booleans(),
        aim=st.sampled_from(["none", "current", "old"]),
    )
    def false_slapper_acts_again(self, dt, flip, aim):
        seat = self.last_false_slapper
        if flip:
            self.do_flip(seat, dt)
        else:
            self.do_slap(seat, dt, aim, 1)

    @rule()
    def rebuild_twin(self):
        self.twin = Game.from_dict(self.game.to_dict())

    @precondition(lambda self: self.game.over)
    @rule(seat=ANY_SEAT, dt=DT)
    def everything_is_game_over_once_won(self, seat, dt):
        now = self.now + dt
        assert self.both("flip", seat, now)[0] == "game_over"
        assert self.both("slap", seat, now)[0] == "game_over"
        assert self.both("slap", seat, now, pile_id=0)[0] == "game_over"

    # --- invariants ------------------------------------------------------------------------

    @invariant()
    def no_card_is_created_or_lost(self):
        assert all_cards(self.game) == self.cards

    @invariant()
    def snapshot_round_trips(self):
        d = self.game.to_dict()
        assert Game.from_dict(d).to_dict() == d

    @invariant()
    def seats_and_turn_are_consistent(self):
        g = self.game
        assert g.hand_sizes == tuple(len(g.hand(s)) for s in range(g.players))
        for s in range(g.players):
            if g.is_out(s):
                assert g.hand_sizes[s] == 0
            elif self.rules.empty_deck == "out" and not g.over:
                assert g.hand_sizes[s] > 0
        if g.over:
            assert g.next_to_play is None
            assert g.winner is not None
        else:
            assert g.winner is None
            assert g.next_to_play is not None
            assert not g.is_out(g.next_to_play)
            assert sum(not g.is_out(s) for s in range(g.players)) >= 2

    @invariant()
    def a_win_by_cards_leaves_every_card_with_the_winner(self):
        g = self.game
        if g.over and player_view(g, None)["win_reason"] == "cards":
            assert g.hand_sizes[g.winner] == sum(self.cards.values())
            assert g.pile == ()

    @invariant()
    def slap_open_means_a_trigger_shows(self):
        if not self.game.over:
            assert self.game.slap_open == trigger_shows(self.rules, pile(self.game))

    @invariant()
    def the_engine_keeps_the_pause_and_the_lapse_we_predict(self):
        g = self.game
        if g.over:
            return
        assert g.collect_until == self.collect_until
        assert g.trigger_lapsed == (self.lapsed and g.slap_open)
        timeout = self.rules.trigger_timeout
        if self.shown_at is None or self.lapsed or not timeout:
            assert g.lapse_at is None
        else:
            assert g.lapse_at == self.shown_at + timeout
        race = g.last_race
        if self.race is None:
            assert race is None
        else:
            assert race is not None
            assert (race["pile_id"], race["winner"]) == self.race[:2]
            assert race["tie"] == (None if self.race_tie is None else self.race_tie[0])
            assert all(r["behind_ms"] <= 500 for r in race["runners_up"])

    @invariant()
    def the_next_wake_is_the_soonest_time_still_to_come(self):
        """What a room schedules its one wake-up at (app/tables/schedule.py `Timetable.tick`)."""
        g = self.game
        times = [g.frozen_until(seat) for seat in range(g.players)]
        times += [g.collect_until, g.lapse_at, g.deadline]
        future = [when for when in times if when is not None and when > g.now]
        assert g.next_wake == (min(future) if future else None)

    @invariant()
    def the_table_view_shows_what_the_public_properties_say(self):
        """engine/views.py reads the game's fields (a property call each was measurable);
        every value is what the public property of the same name gives."""
        g = self.game
        lapse_at = g.lapse_at
        assert views.table_facts(g) == {
            "pile": {
                "id": g.pile_id,
                "count": g.pile_size,
                "top": [card.text for card in g.pile[-3:]],
                "burned": g.pile_burned,
            },
            "next": g.next_to_play,
            "slap_open": g.slap_open,
            "trigger": g.trigger,
            "trigger_lapsed": g.trigger_lapsed,
            "lapse_ms": None if lapse_at is None else ms_left(g.now, lapse_at),
            "collect_ms": ms_left(g.now, g.collect_until),
            "race": g.last_race,
            "winner": g.winner,
            "win_reason": g.win_reason,
        }
        assert views.seat_rows(g) == [
            (g.hand_sizes[seat], g.is_out(seat), ms_left(g.now, g.frozen_until(seat)))
            for seat in range(g.players)
        ]

    @invariant()
    def views_never_show_a_face_down_card(self):
        g = self.game
        face_up = set(pile(g))
        for viewer in [None, *range(g.players)]:
            view = player_view(g, viewer)
            text = json.dumps(view)
            tokens = CARD_TOKEN.findall(text)
            assert set(tokens) <= face_up, f"view({viewer}) shows {set(tokens) - face_up}"
            assert Counter(tokens) == Counter(view["pile"]["top"])
            assert view["pile"]["top"] == pile(g)[-3:]
            assert not {k.lower() for k in all_keys(view)} & FORBIDDEN_KEYS
            assert [s["cards"] for s in view["seats"]] == list(g.hand_sizes)
            assert all(s["frozen_ms"] >= 0 for s in view["seats"])
            assert view["collect_ms"] >= 0
            assert view["lapse_ms"] is None or view["lapse_ms"] >= 0
            assert "shuffle_seed" not in json.dumps(view)
            assert view["pile"]["count"] == len(g.pile)
            assert view["next"] == g.next_to_play
            assert view["winner"] == g.winner


# `make test` plays a sweep it can afford; DEEP_PROPERTIES=1 (docs/development.md) ten times
# as many games, for a change to the rules or the engine.
SlapjackMachine.TestCase.settings = settings(
    max_examples=40 * (10 if os.environ.get("DEEP_PROPERTIES") else 1),
    stateful_step_count=40,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow],
)
TestSlapjack = SlapjackMachine.TestCase
