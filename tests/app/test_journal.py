"""A busy room's save is its last whole snapshot plus the moves played since (a journal,
app/tables/notation.py `journal`): it must restore to exactly the table a whole snapshot of the
same moment
restores to, at every step of many games; a journal that is not its table's is refused;
and a room writes whole again whenever something that is no move changed the table, after
`JOURNAL_MOVES` moves, and before a restart."""

from __future__ import annotations

import json
import math
import os
import random
from typing import Any

import pytest
from app_harness import Logged, Recorder, close_all, deal, join, serving, until
from played import random_rules

from app.ops.clock import ManualClock
from app.ops.config import Settings
from app.stores import NEWEST_SCHEMA, SCHEMA_KEY, decode_snapshot, vouched
from app.stores.memory import MemoryStore
from app.tables import journal as journal_module
from app.tables.journal import JOURNAL_MOVES
from app.tables.notation import JOURNAL_SCHEMA, SCHEMA_VERSION, encode_move, journal
from app.tables.registry import Rooms
from app.tables.table import Table
from app.wire.errors import ProtocolError
from engine import IllegalAction, Rules


class Saving:
    """What a Room does to save its table, without the Room: a whole snapshot, then
    journals of the moves committed since, a whole one again after anything else."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.whole: str | None = None
        self.whole_at = self.clock = 0.0
        self.journals = 0

    def rewrite(self, now: float) -> str:
        game = self.table.game
        assert game is not None
        self.whole = vouched(self.table.code, self.table.to_dict(now)).text
        self.whole_at, self.clock = now, game.now
        self.table.moves.clear()
        return self.whole

    def save(self, now: float) -> str:
        """The text a room would write at `now`."""
        if self.whole is None:
            return self.rewrite(now)
        moves = [encode_move(move, self.clock) for move in self.table.moves]
        if None in moves:  # a move timed before the snapshot's clock: whole
            return self.rewrite(now)
        self.journals += 1
        return journal(
            self.table.code,
            self.table.version,
            self.whole,
            [m for m in moves if m is not None],
            self.whole_at,
            now,
        )


def played(games: int, seed: int) -> Any:
    """Yields (saving, now) after each step of `games` games of 2 to 8 people under random
    house rules: flips, slaps (late, false, at a pile gone), ticks, people dropping (no
    move: the next save is whole), each committed change numbered as the Room does."""
    rng = random.Random(seed)
    for number in range(games):
        table = Table(f"JR{number:04d}", random_rules(rng))
        # A clock that has counted for longer than a game lasts: every time then comes back
        # exactly (`base_at - (base_at - t)` is t for t > base_at / 2; docs/table.md).
        now = rng.uniform(1e4, 1e5)
        people = rng.randint(2, 8)
        for i in range(people):
            table.join(f"P{i}", None, now, new_id=f"p{i}", new_token=f"t{i}")
        assert table.host is not None
        table.start(table.host, now, seed=rng.getrandbits(64))
        table.new_version()
        saving = Saving(table)
        game = table.game
        assert game is not None
        for _ in range(rng.randint(5, 300)):
            if game.over:
                break
            now += rng.choice([0.01, 0.05, 0.3, 0.6, 1.7, 9.0])
            # Some moves count from before the game's clock: a message timed as it arrived
            # and played after a timer's tick, a lag-fair slap judged at its counted time.
            at = now - rng.choice([0.0, 0.0, 0.0, 0.0, 0.1, 0.7, 2.0])
            seat = rng.randrange(game.players)
            roll = rng.random()
            try:
                if roll < 0.45 and game.next_to_play is not None:
                    table.play(game.next_to_play, "flip", None, at, auto=rng.random() < 0.1)
                elif roll < 0.8 and game.slap_open and table.rules.tie_window_ms:
                    # Slaps the room judged tied: the favoured one is told whom it tied with.
                    tied = game.tie_order(rng.sample(range(game.players), 2))
                    table.play(tied[0], "slap", game.pile_id, at, tied_with=tied[1:])
                elif roll < 0.8:
                    aimed = game.pile_id - (rng.random() < 0.3)
                    table.play(seat, "slap", max(aimed, 0), at)
                elif roll < 0.97:
                    table.tick(at)
                else:
                    table.drop(f"p{seat}", now, left=False)
                    saving.whole = None  # no move: the room's next save is whole
            except (IllegalAction, ProtocolError):
                continue  # refused: nothing changed, nothing recorded
            table.new_version()
            if saving.whole is not None and len(table.moves) > JOURNAL_MOVES:
                saving.whole = None
            now += rng.choice([0.0, 0.004, 0.2, 0.49])  # a save comes after its change
            yield saving, now


def restored(text: str, code: str, now: float) -> Table:
    loaded = decode_snapshot(code, text, NEWEST_SCHEMA)
    assert loaded is not None
    return Table.from_dict(loaded, now)


# Games of random rules whose every save is restored both ways: `make test` plays 30 (over
# 2,000 saves); DEEP_PROPERTIES=1 (docs/development.md) ten times as many.
JOURNAL_GAMES = 30 * (10 if os.environ.get("DEEP_PROPERTIES") else 1)


def test_a_journal_restores_the_table_its_whole_snapshot_would() -> None:
    journals = 0
    for saving, written_at in played(JOURNAL_GAMES, seed=7):
        table = saving.table
        text = saving.save(written_at)
        whole = json.dumps(table.to_dict(written_at))
        for now in (0.0, 12345.678):  # a restart's clock: anything
            from_journal = restored(text, table.code, now)
            from_whole = restored(whole, table.code, now)
            assert from_journal.version == table.version
            # Bit for bit: the moves replay at the very times they had, on the writer's clock.
            assert from_journal.to_dict(now) == from_whole.to_dict(now)
            assert from_journal.moves == []  # played again, not new
        journals += json.loads(text)[SCHEMA_KEY] == JOURNAL_SCHEMA
    assert journals > 1000  # most saves were journals, not whole snapshots


def test_a_restored_journal_plays_on_as_the_table_would() -> None:
    checked = 0
    for saving, written_at in played(8, seed=11):
        table = saving.table
        game = table.game
        if game is None or game.over or len(table.moves) < 5:
            continue
        text = saving.save(written_at)
        again = restored(text, table.code, written_at)
        whole = restored(json.dumps(table.to_dict(written_at)), table.code, written_at)
        for copy in (whole, again):  # the same moves from here give the same tables
            later = written_at
            for step in range(20):
                later += 0.7
                copy_game = copy.game
                assert copy_game is not None
                if copy_game.over:
                    break
                try:
                    if step % 3 == 2:
                        copy.play(step % copy_game.players, "slap", copy_game.pile_id, later)
                    elif copy_game.next_to_play is not None:
                        copy.play(copy_game.next_to_play, "flip", None, later)
                except (IllegalAction, ProtocolError):
                    pass
        assert again.to_dict(later) == whole.to_dict(later)
        checked += 1
    assert checked >= 5


def a_journal() -> dict[str, Any]:
    """A journal of three moves or more, a flip among them."""
    for saving, written_at in played(3, seed=3):
        data = json.loads(saving.save(written_at))
        moves = data.get("moves", [])
        if len(moves) >= 3 and any(move[0] == "flip" for move in moves):
            return dict(data)
    raise AssertionError("no journal of three moves")


def another_seat(data: dict[str, Any]) -> None:
    """The first flip, by the seat after the one whose turn it was."""
    flip = next(move for move in data["moves"] if move[0] == "flip")
    flip[1] = (flip[1] + 1) % len(data["base"]["game"]["hands"])


@pytest.mark.parametrize(
    "spoil",
    [
        another_seat,
        lambda j: j["moves"].insert(0, ["flip", 0, None, j["base_at"], False]),  # one too many
        lambda j: j["moves"].append(["shuffle", 0, None, 1.0, False]),
        lambda j: j["moves"].append(["flip", "0", None, 1.0, False]),
        lambda j: j["moves"].append(["tick", 0, None, 1.0, False]),
        lambda j: j["moves"].append(["flip", 0]),
        lambda j: j.__setitem__("version", j["version"] + 1),
        lambda j: j.__setitem__("code", "OTHER1"),
        lambda j: j.__setitem__("written_at", j["base_at"] - 0.5),
        lambda j: j["moves"].append(["tick", None, None, None, False]),
        lambda j: j["moves"].append(["flip", 0, None, 1.0, False, [1]]),  # only slaps tie
        lambda j: j["moves"].append(["slap", 0, 0, 1.0, False, ["1"]]),
        lambda j: j.__setitem__("base", {**j, "moves": []}),  # a journal in a journal
    ],
)
def test_a_journal_that_is_not_its_table_is_refused(spoil: Any) -> None:
    data = a_journal()
    Table.from_dict(json.loads(json.dumps(data)), 0.0)  # unspoiled, it restores
    spoil(data)
    with pytest.raises(ValueError):
        Table.from_dict(data, 0.0)


def test_a_move_before_the_snapshots_clock_or_with_no_time_is_not_journaled() -> None:
    assert encode_move(("flip", 0, None, math.nan, False), 0.0) is None
    assert encode_move(("flip", 0, None, 1.5, True), 1.0) == '["flip",0,null,1.5,true]'
    assert encode_move(("tick", None, None, 1.5, False), 1.5) is not None
    assert encode_move(("slap", 1, 3, 1.4, False), 1.5) is None


def test_a_move_before_the_snapshots_clock_may_not_replay_from_it() -> None:
    """Why `encode_move` refuses those: the snapshot writes a freeze that ended before the
    game's clock as ending at it, and a flip timed between the two replays as frozen."""
    table = Table("CLOCK1", Rules(freeze_seconds=1.0))
    for i in range(2):
        table.join(f"P{i}", None, 0.0, new_id=f"p{i}", new_token=f"t{i}")
    assert table.host is not None
    table.start(table.host, 0.0, seed=5)
    game = table.game
    assert game is not None
    while game.slap_open or game.next_to_play != 0:  # seat 0 to flip on a plain pile
        if game.slap_open:
            table.play(game.next_to_play or 0, "slap", game.pile_id, 0.0)
        else:
            table.play(game.next_to_play or 0, "flip", None, 0.0)
    table.play(0, "slap", game.pile_id, 100.0)  # a false slap: frozen until 101
    assert game.frozen_until(0) == 101.0
    table.tick(105.0)  # a timer moves the game's clock on
    table.moves.clear()
    whole = vouched(table.code, table.to_dict(105.0)).text
    table.play(0, "flip", None, 104.0)  # arrived at 104, played after the tick: fine live
    moves = [encode_move(move, game.now) for move in table.moves]
    assert moves == [None]  # so the room writes whole
    forced = journal(table.code, table.version, whole, ['["flip",0,null,104.0,false]'], 105, 105)
    with pytest.raises(ValueError, match="frozen"):
        Table.from_dict(json.loads(forced), 0.0)
    with pytest.raises(ValueError):
        journal("ABCDEF", 1, "{}", [], 1.0, math.inf)
    with pytest.raises(ValueError):
        journal("ABCDEF", 1, "{}", [], 1.0, 0.5)


# ---- a room's saves -----------------------------------------------------------------------


def play_of(snapshot: dict[str, Any]) -> tuple[Any, ...]:
    """A snapshot's version, cards, turn and stats: what does not move with the clock (the
    tests above compare every time)."""
    game = snapshot["game"]
    return snapshot["version"], game["hands"], game["pile"], game["next"], game["stats"]


def schema_of(saved: Any) -> int:
    return int(json.loads(saved.text)[SCHEMA_KEY])


async def test_a_room_journals_its_moves_and_writes_whole_after_anything_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(journal_module, "JOURNAL_MOVES", 3)
    # The clock stands still: the saver writes only the start and what the test flushes.
    async with serving(ManualClock()) as server:
        code = await server.new_room(collect_seconds=0)  # a flip may follow a take at once
        clients = await join(server, code, "Ann", "Bob")
        await deal(clients)
        room = server.room(code)
        assert room.saver is not None
        await until(lambda: not room.saver.pending, "the start's save")  # type: ignore[union-attr]

        async def flip() -> None:
            """One move: the next flip, or Ann's slap when a Jack shows."""
            state = clients[0].state
            if state["slap_open"]:
                answer = await clients[0].call("slap", {"pile_id": state["pile"]["id"]})
            else:
                mover = next(c for c in clients if c.state["next"] == c.seat)
                answer = await mover.call("flip", {})
            assert answer["ok"], answer
            for client in clients:  # sent
                await client.wait_state(lambda s: s["version"] == room.version)

        assert schema_of(room.snapshot_now()) == JOURNAL_SCHEMA  # the start was written whole
        await flip()
        saved = room.snapshot_now()
        data = json.loads(saved.text)  # type: ignore[union-attr]
        assert (data[SCHEMA_KEY], len(data["moves"]), saved.version) == (
            JOURNAL_SCHEMA,
            1,
            room.version,
        )
        now = room.clock.now()
        assert play_of(Table.from_dict(data, now).to_dict(now)) == play_of(room.snapshot(now))

        # A change that is no move (someone comes to watch): the next save is whole.
        watcher = (await join(server, code, "Cy"))[0]
        assert schema_of(room.snapshot_now()) == SCHEMA_VERSION
        assert schema_of(room.snapshot_now()) == JOURNAL_SCHEMA  # and journals after it

        # What the saver writes is the journal, and it restores to the table.
        await flip()
        await server.rooms.flush([room])
        stored = await server.rooms.store.load(code)
        assert stored is not None and stored[SCHEMA_KEY] == JOURNAL_SCHEMA
        now = room.clock.now()
        assert play_of(Table.from_dict(stored, now).to_dict(now)) == play_of(room.snapshot(now))

        # Past JOURNAL_MOVES moves (the flushed journal holds one), whole again.
        await flip()
        await flip()
        assert schema_of(room.snapshot_now()) == JOURNAL_SCHEMA  # three moves
        await flip()
        assert len(room.table.moves) == 4
        assert schema_of(room.snapshot_now()) == SCHEMA_VERSION
        assert room.table.moves == []

        # The last save before a restart is whole: a newer release never replays our moves.
        await flip()
        await room.suspend()
        assert schema_of(room.snapshot_now()) == SCHEMA_VERSION
        await close_all([*clients, watcher])


def test_a_time_from_long_before_the_snapshot_may_come_back_a_bit_off_and_judges_the_same() -> None:
    """A person who joined when the clock had counted less than half what it had at the
    snapshot: their time can come back an ulp off (what docs/table.md says), and the game
    the journal replays is still the one played."""
    rng = random.Random(2)
    differing = 0
    for number in range(40):
        table = Table(f"OLD{number:03d}", Rules(collect_seconds=0.0))
        for i in range(3):
            table.join(f"P{i}", None, rng.uniform(1.0, 300.0), new_id=f"p{i}", new_token=f"t{i}")
        assert table.host is not None
        now = rng.uniform(700.0, 800.0)
        table.start(table.host, now, seed=number)
        table.new_version()
        saving = Saving(table)
        saving.save(now)
        game = table.game
        assert game is not None
        for _ in range(6):
            now += 0.4
            try:
                if game.next_to_play is not None and not game.slap_open:
                    table.play(game.next_to_play, "flip", None, now)
                else:
                    table.play(0, "slap", game.pile_id, now)
            except (IllegalAction, ProtocolError):
                continue
            table.new_version()
        text = saving.save(now + 0.1)
        from_journal = restored(text, table.code, 0.0).to_dict(0.0)
        from_whole = restored(json.dumps(table.to_dict(now + 0.1)), table.code, 0.0).to_dict(0.0)
        assert from_journal["game"] == from_whole["game"]  # the game: exactly
        assert from_journal["version"] == from_whole["version"]
        for mine, theirs in zip(from_journal["people"], from_whole["people"], strict=True):
            assert math.isclose(mine["connected_for"], theirs["connected_for"], abs_tol=1e-9)
            differing += mine != theirs
    assert differing > 0  # the case this test is about did come up


async def test_a_journal_whose_moves_do_not_replay_goes_on_from_its_whole_snapshot(
    logged: Logged,
) -> None:
    """A crashed release's journal that this one cannot replay (its rules changed) costs
    the moves since the last whole snapshot, never the game."""
    good = a_journal()
    spoiled = json.loads(json.dumps(good))
    another_seat(spoiled)
    spoiled["code"] = spoiled["base"]["code"] = "SPOIL1"
    torn = {key: value for key, value in good.items() if key != "written_at"}
    torn["code"] = "SPOIL2"
    torn["base"] = {**good["base"], "code": "SPOIL2"}  # its moves never read: no write time
    store = MemoryStore()
    await store.save(good["code"], good)
    await store.save("SPOIL1", spoiled)
    await store.save("SPOIL2", torn)
    rooms = Rooms(Settings(store="memory"), Recorder(), store=store)
    await rooms.start()
    replayed, fallen_back = rooms.get(good["code"]), rooms.get("SPOIL1")
    assert replayed is not None and fallen_back is not None
    # Each restore is numbered as a change of its own (everyone disconnected).
    assert replayed.version == good["version"] + 1
    assert fallen_back.version == spoiled["base"]["version"] + 1
    assert fallen_back.table.game is not None and cards_in(fallen_back.table) == cards_in(
        Table.from_dict(spoiled["base"], 0.0)
    )
    assert rooms.get("SPOIL2") is not None
    warned = [r for r in logged.records if r.getMessage() == "journal_not_replayed"]
    assert sorted(r.fields["room"] for r in warned) == ["SPOIL1", "SPOIL2"]  # type: ignore[attr-defined]
    assert "snapshot_unreadable" not in logged.events
    await rooms.shutdown(1.0)


def cards_in(table: Table) -> tuple[Any, ...]:
    game = table.game
    assert game is not None
    return tuple(game.hand(seat) for seat in range(game.players)), game.pile
