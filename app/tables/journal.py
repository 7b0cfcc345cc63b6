"""A room's saves: a whole snapshot now and then, and between two a journal of the moves
played since (app/tables/notation.py `journal`), so a busy room's save builds no snapshot.

`Saves.take` is what the Saver (app/stores/saver.py) writes; `Saves.committed` is told of
every change, and decides whether the journal goes on; `table_from_snapshot` reads either
back, falling back on a journal's whole snapshot when its moves do not replay.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from app.ops.logs import log_event
from app.stores import Savable, Snapshot, SnapshotText, vouched
from app.tables.notation import JOURNAL_SCHEMA, Move, encode_move, journal, times_are_finite
from app.tables.table import Phase, Policy, Table

# A busy room's save is its last whole snapshot plus the moves since, until this many moves
# have gathered: then a whole snapshot again. A journal's moves are replayed at a restore,
# and each write carries them all (about 40 bytes a move).
JOURNAL_MOVES = 32


@dataclass(slots=True)
class Journal:
    """A room's saves since its last whole snapshot (`Saves.take`): that snapshot, its
    moment and its game's clock (`encode_move`), how many of the table's moves commits
    have numbered since, and those encoded so far (each once)."""

    whole: SnapshotText
    at: float
    clock: float
    committed: int = 0
    encoded: list[str] = field(default_factory=list)

    def text(self, code: str, moves: list[Move], version: int, now: float) -> str | None:
        """The journal of `moves` written at `now`; None if a move is one no journal holds."""
        encoded = self.encoded
        for move in moves[len(encoded) :]:
            text = encode_move(move, self.clock)
            if text is None:
                return None
            encoded.append(text)
        return journal(code, version, self.whole.text, encoded, self.at, now)


class Saves:
    """What a room's next save is: a journal while there is a whole snapshot to build on
    and nothing but moves came since, else a whole snapshot."""

    __slots__ = ("kept",)

    def __init__(self) -> None:
        self.kept: Journal | None = None  # None: the next save is whole

    def write_whole(self) -> None:
        """The next save is a whole snapshot, not a journal."""
        self.kept = None

    def committed(self, table: Table, phase_before: Phase) -> None:
        """A change is committed: one move, in the same phase, goes on the journal; anything
        else makes the next save whole, with no moves."""
        moves, kept = table.moves, self.kept
        if kept is not None and len(moves) == kept.committed + 1 and table.phase == phase_before:
            kept.committed += 1  # one move, one change: the journal goes on
        else:
            self.kept = None
            moves.clear()

    def take(self, code: str, table: Table, now: float, *, whole: bool = False) -> Savable:
        """The save of room `code`'s table at `now`; `whole`: no journal (the last save
        before a restart or a move). Encoded here once its times are seen to be finite (else
        the store's checked encoding refuses it)."""
        kept = self.kept
        if (
            kept is not None
            and not whole
            and len(table.moves) == kept.committed <= JOURNAL_MOVES
            and now >= kept.at
        ):
            # Nothing but moves, each committed, since the last whole snapshot: that
            # snapshot's text and the moves, no snapshot built.
            text = kept.text(code, table.moves, table.version, now)
            if text is not None:
                return SnapshotText(text, JOURNAL_SCHEMA, table.version)
        snapshot = table.to_dict(now)
        table.moves.clear()
        self.kept = None
        if not times_are_finite(snapshot):
            return snapshot
        saved = vouched(code, snapshot)
        # Moves are played only in a game: a lobby's table keeps no text for journals.
        game = table.game
        if table.phase == "playing" and game is not None:
            self.kept = Journal(saved, now, game.now)
        return saved


def table_from_snapshot(snapshot: Snapshot, now: float, rules_policy: Policy) -> Table:
    """`Table.from_dict`, except that a journal whose moves do not replay (a release with
    other rules reading a crashed one's journal) gives its whole snapshot, a few seconds
    back, logged, rather than no table at all."""
    try:
        return Table.from_dict(snapshot, now, rules_policy)
    except (ValueError, KeyError, TypeError) as error:  # a journal's own fields spoiled too
        base = snapshot.get("base")
        if (
            snapshot.get("schema") != JOURNAL_SCHEMA
            or not isinstance(base, dict)
            or base.get("code") != snapshot.get("code")
        ):
            raise
        log_event(
            "journal_not_replayed",
            level=logging.WARNING,
            room=snapshot.get("code"),
            reason=str(error)[:200],
        )
        return Table.from_dict(base, now, rules_policy)
