"""Between games: seats, bots, rules and the deal. Who may do what, and when.

Each handler checks first and changes the room only once every check passed, then returns
the events to broadcast and the ack's extra fields; the Room commits them under its lock.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.bots import Bot
from app.people import Person
from app.protocol import (
    MAX_SEATS,
    AddBot,
    ErrorCode,
    EventDict,
    Message,
    ProtocolError,
    Remove,
    RulesUpdate,
    Sit,
)
from engine import Game, Rules
from engine.rules import MAX_PLAYERS, MIN_PLAYERS, check_players

if TYPE_CHECKING:
    from app.rooms import Room


Outcome = tuple[list[EventDict], dict[str, Any]]
Handler = Callable[["Room", Person, Message, float], Outcome]


def sit(room: Room, person: Person, message: Message, now: float) -> Outcome:
    assert isinstance(message, Sit)
    check_between_games(room)
    current = room.seat_of(person)
    wanted = message.seat
    if wanted is None:
        wanted = current if current is not None else free_seat(room)
    if wanted == current:
        return [], {"seat": current}
    if room.seats[wanted] is not None:
        raise ProtocolError(ErrorCode.SEAT_TAKEN, "that seat is taken")
    events = leave_seat(room, person, current) if current is not None else []
    reopen(room)
    room.seats[wanted] = person
    events.append({"kind": "sit", "player": person.id, "seat": wanted, "name": person.name})
    return events, {"seat": wanted}


def stand(room: Room, person: Person, message: Message, now: float) -> Outcome:
    check_between_games(room)
    seat = room.seat_of(person)
    if seat is None:
        raise ProtocolError(ErrorCode.NOT_SEATED, "you have no seat")
    reopen(room)
    return leave_seat(room, person, seat), {}


def add_bot(room: Room, person: Person, message: Message, now: float) -> Outcome:
    assert isinstance(message, AddBot)
    check_host(room, person)
    check_between_games(room)
    seat = free_seat(room)
    bot = Bot(message.level, time_scale=room.settings.bot_time_scale)
    reopen(room)
    room.seats[seat] = bot
    return [{"kind": "bot", "seat": seat, "level": bot.level, "name": bot.name}], {"seat": seat}


def remove(room: Room, person: Person, message: Message, now: float) -> Outcome:
    assert isinstance(message, Remove)
    check_host(room, person)
    check_between_games(room)
    occupant = room.seats[message.seat]
    if occupant is None:
        raise ProtocolError(ErrorCode.NOT_SEATED, "that seat is empty")
    reopen(room)
    room.seats[message.seat] = None
    player = None
    if isinstance(occupant, Person):
        player = occupant.id
        room.people.forget_if_unneeded(occupant)
    return [{"kind": "remove", "seat": message.seat, "player": player}], {}


def change_rules(room: Room, person: Person, message: Message, now: float) -> Outcome:
    assert isinstance(message, RulesUpdate)
    check_host(room, person)
    check_between_games(room)
    room.rules = merged_rules(room.rules, message)
    reopen(room)
    rules = room.rules.to_dict()
    return [{"kind": "rules", "rules": rules}], {"rules": rules}


def start(room: Room, person: Person, message: Message, now: float) -> Outcome:
    check_host(room, person)
    if room.phase != "lobby":
        raise ProtocolError(ErrorCode.WRONG_PHASE, "start is for the lobby: rematch after a game")
    return deal(room, now, rematch=False)


def rematch(room: Room, person: Person, message: Message, now: float) -> Outcome:
    check_host(room, person)
    if room.phase != "over":
        raise ProtocolError(ErrorCode.WRONG_PHASE, "rematch follows a finished game")
    return deal(room, now, rematch=True)


def deal(room: Room, now: float, *, rematch: bool) -> Outcome:
    seated = [occupant for occupant in room.seats if occupant is not None]
    try:
        check_players(len(seated))  # the engine is the judge of how many can play
    except ValueError:
        message = f"a game needs {MIN_PLAYERS} to {MAX_PLAYERS} seated"
        raise ProtocolError(ErrorCode.TOO_FEW_PLAYERS, message) from None
    room.seats = seated + [None] * (MAX_SEATS - len(seated))  # compact: game seat = room seat
    room.first = (room.first + 1) % len(seated) if room.games else 0
    seed = secrets.randbits(64)  # nobody can predict a deck
    room.game = Game.deal(len(seated), rules=room.rules, seed=seed, first=room.first, now=now)
    room.games += 1
    room.phase = "playing"
    started = {"kind": "start", "game": room.games, "first": room.first, "rematch": rematch}
    return [started], {"game": room.games}


HANDLERS: dict[str, Handler] = {
    "sit": sit,
    "stand": stand,
    "add_bot": add_bot,
    "remove": remove,
    "rules": change_rules,
    "start": start,
    "rematch": rematch,
}


def check_host(room: Room, person: Person) -> None:
    if person is not room.people.host:
        raise ProtocolError(ErrorCode.NOT_HOST, "only the host can do that")


def check_between_games(room: Room) -> None:
    if room.phase == "playing":
        raise ProtocolError(ErrorCode.WRONG_PHASE, "not during a game")


def reopen(room: Room) -> None:
    """A change after a game takes the room back to the lobby, clearing the old table."""
    room.phase, room.game = "lobby", None


def free_seat(room: Room) -> int:
    for seat, occupant in enumerate(room.seats):
        if occupant is None:
            return seat
    raise ProtocolError(ErrorCode.NO_FREE_SEAT, "every seat is taken")


def leave_seat(room: Room, person: Person, seat: int) -> list[EventDict]:
    room.seats[seat] = None
    return [{"kind": "stand", "player": person.id, "seat": seat}]


def merged_rules(rules: Rules, update: RulesUpdate) -> Rules:
    try:
        return Rules.from_dict({**rules.to_dict(), **update.changes()})
    except ValueError as exc:
        raise ProtocolError(ErrorCode.BAD_RULES, str(exc)[:200]) from None
