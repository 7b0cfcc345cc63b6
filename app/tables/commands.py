"""Each client command's handler on the Table: the other half of the command registry
(app/wire/protocol.py declares the payload, who may send it and when)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.tables.table import Outcome, Table
from app.wire.protocol import COMMANDS, AddBot, Kick, Lock, Pong, Remove, RulesUpdate, Sit, Slap

Handler = Callable[[Table, str, Any, float], Outcome]  # (table, person id, payload, now)


def _sit(table: Table, person: str, message: Any, now: float) -> Outcome:
    assert isinstance(message, Sit)
    return table.sit(person, message.seat, now)


def _add_bot(table: Table, person: str, message: Any, now: float) -> Outcome:
    assert isinstance(message, AddBot)
    return table.add_bot(person, message.level, now)


def _remove(table: Table, person: str, message: Any, now: float) -> Outcome:
    assert isinstance(message, Remove)
    return table.remove(person, message.seat, now)


def _kick(table: Table, person: str, message: Any, now: float) -> Outcome:
    assert isinstance(message, Kick)
    return table.kick(person, message.player, now)


def _lock(table: Table, person: str, message: Any, now: float) -> Outcome:
    assert isinstance(message, Lock)
    return table.lock(person, message.locked, now)


def _rules(table: Table, person: str, message: Any, now: float) -> Outcome:
    assert isinstance(message, RulesUpdate)
    return table.set_rules(person, message.changes(), now)


def _pong(table: Table, person: str, message: Any, now: float) -> Outcome:
    assert isinstance(message, Pong)
    return table.pong(person, message.id, now)


def _slap(table: Table, person: str, message: Any, now: float) -> Outcome:
    assert isinstance(message, Slap)
    return table.play_as(person, "slap", message.pile_id, now)


HANDLERS: dict[str, Handler] = {
    "sit": _sit,
    "stand": lambda t, p, m, now: t.stand(p, now),
    "add_bot": _add_bot,
    "remove": _remove,
    "kick": _kick,
    "lock": _lock,
    "invite": lambda t, p, m, now: t.invite(p, now),
    "rules": _rules,
    "start": lambda t, p, m, now: t.start(p, now),
    "rematch": lambda t, p, m, now: t.rematch(p, now),
    "flip": lambda t, p, m, now: t.play_as(p, "flip", None, now),
    "slap": _slap,
    "pong": _pong,
    "leave": lambda t, p, m, now: Outcome(t.drop(p, now, left=True)),
}
assert HANDLERS.keys() == COMMANDS.keys(), "every declared command has its handler"
