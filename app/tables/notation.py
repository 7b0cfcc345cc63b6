"""A table written down and read back, as python-chess's pgn.py writes a game: the snapshot
(`Table.to_dict` / `Table.from_dict`) and the journal.

A snapshot is JSON-able data that comes back under another monotonic clock: every time is
stored relative to the snapshot's moment, and a token only as its SHA-256, so a snapshot
never holds a usable token. Between two whole snapshots a busy table is written as a
`journal`: the last one's text and the moves (`Table.moves`) played since, which `from_dict`
plays again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import orjson

from app.tables.events import AppEvent
from app.tables.values import Person, TableBot
from app.wire.errors import ProtocolError
from app.wire.names import clean_avatar
from app.wire.protocol import MAX_SEATS, PHASES, Phase
from engine import Game, IllegalAction, Rules
from engine.cards import full_deck

SCHEMA_VERSION = 1  # of Table.to_dict; the engine's game inside has its own
# A table written as a whole snapshot (SCHEMA_VERSION) plus the moves played since it
# (`journal`, read by `Table.from_dict`): what a busy room's saves are between two wholes.
JOURNAL_SCHEMA = 2
NEWEST_SCHEMA = JOURNAL_SCHEMA  # the newest a server of this code reads
# One play of the game as `Table.play` and `Table.tick` took it, in order: ("flip" or
# "slap", seat, pile_id, at, auto), or ("tick", None, None, at, False); a slap told whom it
# tied with (tie_window_ms) adds them: ("slap", seat, pile_id, at, False, [seats]).
Move = (
    tuple[str, int | None, int | None, float, bool]
    | tuple[str, int | None, int | None, float, bool, list[int]]
)


class Noted(Protocol):
    """What a snapshot writes of a table and sets again (app/tables/table.py `Table`)."""

    code: str
    rules: Rules
    version: int
    lag_fair: bool
    false_starts: bool
    phase: Phase
    games: int
    first: int
    seats: list[str | None]
    people: dict[str, Person]
    bots: dict[str, TableBot]
    host: str | None
    owner: str | None
    locked: bool
    invite_hash: str | None
    banned_tokens: set[str]
    banned_addresses: set[str]
    acted_at: float
    next_bot: int
    wins: dict[str, int]
    out_order: list[int]
    turn_started_at: float
    game: Game | None

    def admit(self, person: Person) -> None: ...

    def play(
        self,
        seat: int,
        action: Any,
        pile_id: int | None,
        now: float,
        *,
        auto: bool = False,
        tied_with: Sequence[int] = (),
    ) -> list[AppEvent]: ...

    def tick(self, now: float) -> list[AppEvent]: ...


T = TypeVar("T", bound=Noted)


def to_dict(table: Noted, now: float) -> dict[str, Any]:
    """The table at `now` as JSON-able data: times in seconds relative to `now`,
    tokens only as hashes. Timers are not stored: they follow from this state."""
    return {
        "schema": SCHEMA_VERSION,
        "code": table.code,
        "version": table.version,
        "phase": table.phase,
        "rules": table.rules.to_dict(),
        "lag_fair": table.lag_fair,
        "false_starts": table.false_starts,
        "games": table.games,
        "first": table.first,
        "seats": list(table.seats),
        "people": [
            {
                "id": p.id,
                "name": p.name,
                "token_sha256": p.token_hash,
                "connected_for": now - p.connected_since,
                "gone_for": None if p.disconnected_at is None else now - p.disconnected_at,
                "avatar": p.avatar,
                "screen": p.screen,
                "away_flips": p.away_flips,
                "missed_deal": p.missed_deal,
                "here_for": now - p.arrived_at,
                "renamed_ago": None if p.renamed_at is None else now - p.renamed_at,
            }
            for p in table.people.values()
        ],
        "host": table.host,
        "owner": table.owner,
        "locked": table.locked,
        "invite_sha256": table.invite_hash,
        "kicked": {
            "token_sha256": sorted(table.banned_tokens),
            "address_sha256": sorted(table.banned_addresses),
        },
        "acted_ago": now - table.acted_at,
        "bots": [{"id": b.id, "level": b.level, "name": b.name} for b in table.bots.values()],
        "next_bot": table.next_bot,
        "wins": dict(table.wins),
        "out_order": list(table.out_order),
        "turn_started_ago": now - table.turn_started_at,
        "game": None if table.game is None else _game_snapshot(table.game, now),
    }


def from_dict(data: dict[str, Any], now: float, new: Callable[[str, Rules], T]) -> T:
    """The table `to_dict` wrote down, continuing at `now` on this process's clock; or
    the one a `journal` wrote down: its whole snapshot, then every move since. `new` makes
    an empty table of a code and rules (`Table.from_dict` gives its policy)."""
    if data.get("schema") == JOURNAL_SCHEMA:
        return _from_journal(data, now, new)
    if data.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"unsupported table snapshot schema {data.get('schema')!r}")
    table = new(str(data["code"]), Rules.from_dict(data["rules"]))
    table.version = int(data["version"])
    # Absent from older snapshots: each with the value a table had before it existed.
    table.lag_fair = bool(data.get("lag_fair", False))
    table.false_starts = bool(data.get("false_starts", True))
    phase = data["phase"]
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}")
    table.phase = phase
    table.games, table.first = int(data["games"]), int(data["first"])
    seats = list(data["seats"])
    if len(seats) != MAX_SEATS:
        raise ValueError(f"a table has {MAX_SEATS} seats, not {len(seats)}")
    for p in data["people"]:
        gone, renamed = p["gone_for"], p.get("renamed_ago")
        person = Person(
            str(p["id"]),
            str(p["name"]),
            str(p["token_sha256"]),
            now - float(p["connected_for"]),
            None if gone is None else now - float(gone),
            clean_avatar(p.get("avatar")),
            bool(p.get("screen", False)),
            int(p.get("away_flips", 0)),
            bool(p.get("missed_deal", False)),
            now - float(p.get("here_for", p["connected_for"])),
            None if renamed is None else now - float(renamed),
        )
        table.people[person.id] = person
        table.admit(person)
    for b in data["bots"]:
        level = b["level"]
        if level not in ("easy", "normal", "hard"):
            raise ValueError(f"unknown bot level {level!r}")
        table.bots[str(b["id"])] = TableBot(str(b["id"]), level, str(b["name"]))
    known = table.people.keys() | table.bots.keys()
    if any(s is not None and s not in known for s in seats):
        raise ValueError("a seat holds somebody the snapshot does not know")
    table.seats = seats
    host = data["host"]
    if host is not None and host not in table.people:
        raise ValueError("the host is not among the people")
    table.host = host
    owner = data.get("owner", host)
    if owner is not None and owner not in table.people:
        raise ValueError("the table's own host is not among the people")
    table.owner = owner
    table.locked = bool(data.get("locked", False))
    invite = data.get("invite_sha256")
    table.invite_hash = None if invite is None else str(invite)
    kicked = data.get("kicked", {})
    table.banned_tokens = {str(h) for h in kicked.get("token_sha256", [])}
    table.banned_addresses = {str(h) for h in kicked.get("address_sha256", [])}
    table.acted_at = now - float(data.get("acted_ago", 0.0))
    table.next_bot = int(data["next_bot"])
    # Written by later versions of this schema; older snapshots have no match yet.
    table.wins = {str(k): int(v) for k, v in data.get("wins", {}).items()}
    table.out_order = [int(seat) for seat in data.get("out_order", [])]
    table.turn_started_at = now - float(data["turn_started_ago"])
    game = data["game"]
    table.game = None if game is None else Game.from_dict(_game_times(game, now))
    if (table.game is None) != (phase == "lobby"):
        raise ValueError("a game is on in the playing and over phases only")
    if table.game is not None:
        # A table's games are dealt from whole decks, and no card ever leaves one: a
        # card missing (a hand cut short, an edited file) is a damaged snapshot.
        held = sum(table.game.hand_sizes) + len(table.game.pile)
        decks = table.game.rules.decks
        if held != len(full_deck(decks)):
            raise ValueError(f"the game holds {held} cards, not all of {decks} deck(s)")
    return table


def _from_journal(data: dict[str, Any], now: float, new: Callable[[str, Rules], T]) -> T:
    """The whole snapshot, then its moves played again through `play` and `tick`, each
    numbered as its commit was, all on the writer's own clock: every time comes back as
    the very float it was, so the engine, deterministic with time and seed coming in,
    makes the very table that was written. That table, as of the write, then continues
    at `now` as a whole snapshot taken at the write would. A move it refuses means the
    journal is not this table's (ValueError: skipped like any bad snapshot)."""
    base_at, written_at = float(data["base_at"]), float(data["written_at"])
    _check_journal_times(base_at, written_at)
    base = data["base"]
    if not isinstance(base, dict) or base.get("schema") != SCHEMA_VERSION:
        raise ValueError("a journal's base is a whole table snapshot")
    table = from_dict(base, base_at, new)
    if table.code != data["code"]:
        raise ValueError(f"a journal of {data['code']!r} holds table {table.code!r}")
    for number, move in enumerate(data["moves"]):
        try:
            _replay(table, move, number)
        except (TypeError, KeyError, IndexError) as error:  # a move of the wrong shape
            raise ValueError(f"move {number}: {error}") from error
    if table.version != data["version"]:
        raise ValueError(f"a journal of version {data['version']} replays to {table.version}")
    return from_dict(to_dict(table, written_at), now, new)


def _replay(table: Noted, move: Any, number: int) -> None:
    if not isinstance(move, list) or len(move) not in (5, 6):
        raise ValueError(f"move {number}: not a move")
    kind, seat, pile_id, at, auto = move[:5]
    tied_with = move[5] if len(move) == 6 else []
    if not (
        isinstance(tied_with, list)
        and all(type(other) is int for other in tied_with)
        and (kind == "slap" or not tied_with)
    ):
        raise ValueError(f"move {number}: tied with {tied_with!r}")
    at = float(at)
    if not math.isfinite(at):
        raise ValueError(f"move {number}: at {at}")
    try:
        if kind == "tick" and seat is None and pile_id is None:
            if table.phase != "playing":
                raise ValueError(f"move {number}: a tick with no game on")
            table.tick(at)
        elif kind in ("flip", "slap") and type(seat) is int and type(auto) is bool:
            if pile_id is not None and type(pile_id) is not int:
                raise ValueError(f"move {number}: pile {pile_id!r}")
            table.play(seat, kind, pile_id, at, auto=auto, tied_with=tied_with)
        else:
            raise ValueError(f"move {number}: {kind!r} by {seat!r}")
    except (ProtocolError, IllegalAction) as refused:
        raise ValueError(f"move {number} ({kind}) refused: {refused}") from refused
    table.version += 1


def encode_move(move: Move, clock: float) -> str | None:
    """One move of `Table.moves` as the JSON a journal holds, its time as it was. None,
    and the room saves whole, for a move no journal can hold: one timed before `clock`,
    the game's clock when the whole snapshot was taken (a message timed as it arrived and
    played after a timer's tick, a lag-fair slap judged at its counted time: the snapshot
    writes a freeze or collect pause that ended before its clock as ending at it, so such a
    move could replay differently), a time that is no finite number, or anything else
    orjson will not write."""
    if not (move[3] >= clock and math.isfinite(move[3])):
        return None
    try:
        return orjson.dumps(move).decode()
    except TypeError:  # orjson.JSONEncodeError: a value no move holds
        return None


def _check_journal_times(base_at: float, written_at: float) -> None:
    """A journal is written at or after its whole snapshot, both at finite times."""
    if not (math.isfinite(base_at) and base_at <= written_at < math.inf):
        raise ValueError(f"a journal written at {written_at} of a snapshot at {base_at}")


def journal(
    code: str, version: int, whole: str, moves: list[str], base_at: float, written_at: float
) -> str:
    """A table's save as its last whole snapshot (`whole`: the JSON `to_dict(base_at)`
    gave, unchanged) and the moves played since (`encode_move`), written at `written_at`:
    what `from_dict` reads back as the table at version `version`. Both times are on the
    writer's monotonic clock, which means nothing to another process: a restore uses them
    only to play the moves again at the very times they had. A busy room writes this
    between two whole snapshots: the snapshot's text is kept, and a move is encoded once,
    so a save builds no snapshot."""
    _check_journal_times(base_at, written_at)
    return (
        f'{{"schema":{JOURNAL_SCHEMA},"code":{orjson.dumps(code).decode()},"version":{version},'
        f'"base_at":{base_at!r},"written_at":{written_at!r},"moves":[{",".join(moves)}],'
        f'"base":{whole}}}'
    )


# The engine's snapshot times (`now` of its clock), each moved by the same offset.
_GAME_TIMES = ("now", "deadline", "trigger_since", "collect_until")
_RACE_TIMES = ("at", "shown_at")  # in the photo finish of the last pile won


def times_are_finite(snapshot: dict[str, Any]) -> bool:
    """Whether every time in a `Table.to_dict` snapshot is a finite number, by their sum
    (a NaN or an infinity makes it one too; a sum too big for a float, which no clock
    reaches, only makes this say no). Its other floats are the rules', checked finite when
    they were made."""
    total: float = snapshot["turn_started_ago"]  # a time that is None adds 0.0 (`or`)
    total += snapshot.get("acted_ago", 0.0)
    for person in snapshot["people"]:
        total += person["connected_for"] + (person["gone_for"] or 0.0)
        total += person.get("here_for", 0.0) + (person.get("renamed_ago") or 0.0)
    game = snapshot["game"]
    if game is not None:
        for key in _GAME_TIMES:
            total += game[key] or 0.0
        total += sum(game["frozen_until"])
        race = game["race"]
        if race is not None:
            for key in _RACE_TIMES:
                total += race[key] or 0.0
    return math.isfinite(total)


def _game_snapshot(game: Game, now: float) -> dict[str, Any]:
    """The engine's snapshot with its times relative to `now`. A freeze or collect pause
    that ended by the game's own clock is written as ending at that clock: the engine starts
    every seat "frozen until 0.0" on whatever clock dealt it, which means nothing on another
    clock."""
    data = game.to_dict()
    clock = game.now
    data["collect_until"] = max(data["collect_until"], clock)
    # A fresh dict of our own, moved in place (a deep copy here costs half a save);
    # the freezes are clamped in the same pass.
    return _move_times(data, -now, not_before=clock)


def _game_times(game: dict[str, Any], offset: float) -> dict[str, Any]:
    """A copy of a stored game with its times moved: the Game built from it shares nothing
    with the snapshot it came from (`Game.from_dict` copies the rest)."""
    race = game.get("race")
    copied = {**game, "race": None if race is None else dict(race)}
    return _move_times(copied, offset)


def _move_times(
    game: dict[str, Any], offset: float, *, not_before: float | None = None
) -> dict[str, Any]:
    """Moves the game's times by `offset` in `game` itself (and in its `race`, which must
    be its own too), the freezes from no sooner than `not_before` (if given). Its
    `frozen_until` is replaced by a new list, never changed in place."""
    for key in _GAME_TIMES:
        when = game.get(key)
        if when is not None:
            game[key] = when + offset
    frozen = game["frozen_until"]
    if not_before is None:
        game["frozen_until"] = [when + offset for when in frozen]
    else:
        game["frozen_until"] = [max(when, not_before) + offset for when in frozen]
    race: dict[str, Any] | None = game.get("race")
    if race is not None:
        for key in _RACE_TIMES:
            when = race[key]
            if when is not None:
                race[key] = when + offset
    return game
