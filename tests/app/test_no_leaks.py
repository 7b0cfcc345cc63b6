"""No message, to anyone, ever names a card that was not face-up on the pile at that time."""

import asyncio
from typing import Any

import pytest
from app_harness import (
    SHORT_COLLECT_SECONDS,
    Client,
    Server,
    autoplay,
    check_refusals,
    close_all,
    join,
)

from app.tables.room import Room
from engine import Card

Snapshot = dict[str, Any]
EMPTY: Snapshot = {"pile": [], "hands": []}


def record_snapshots(room: Room) -> dict[int, Snapshot]:
    """The engine's full snapshot at every version of the room: the face-up pile, and every
    face-down card, which is what the messages must not show."""
    snapshots: dict[int, Snapshot] = {room.version: EMPTY}
    commit = room._commit

    def commit_and_record(events: list[dict[str, Any]], now: float) -> None:
        snapshots[room.version + 1] = room.game.to_dict() if room.game is not None else EMPTY
        commit(events, now)

    room._commit = commit_and_record  # type: ignore[method-assign]
    return snapshots


def face_up(version: int, event: dict[str, Any], snapshots: dict[int, Snapshot]) -> set[str]:
    """What a message of `version` may show: the pile before and after the change, and the
    card the acting seat turned face-up (a flip, or a burned card, even if swept at once)."""
    before, after = snapshots.get(version - 1, EMPTY), snapshots[version]
    shown = set(before["pile"]) | set(after["pile"])
    if event.get("kind") in ("flip", "false_slap") and event.get("to") is None:
        hand = before["hands"][event["seat"]] if before["hands"] else []
        shown |= set(hand[:1])
    return shown


def cards_in(message: Any) -> set[str]:
    """Every string in the message that is a card's text."""
    if isinstance(message, dict):
        return set().union(*(cards_in(v) for v in message.values())) if message else set()
    if isinstance(message, list):
        return set().union(*(cards_in(v) for v in message)) if message else set()
    if isinstance(message, str):
        try:
            Card.parse(message)
        except ValueError:
            return set()
        return {message}
    return set()


def events_of(kind: str, message: Any) -> list[dict[str, Any]]:
    """What a message may show: a state's own version, and the events it carries."""
    if kind == "state":
        return [message, *message["events"]]
    if kind == "event":
        return [message]
    if kind == "ack":
        return list(message.get("events", []))
    return []


def check_no_leak(client: Client, snapshots: dict[int, Snapshot]) -> int:
    """Checks every message `client` got; returns how many messages and events it checked
    (a state and each event it carries count apart, as when events came alone)."""
    checked = 0
    for kind, message in client.messages:
        shown = cards_in(message)
        allowed: set[str] = set()
        carried = events_of(kind, message)
        for event in carried:
            allowed |= face_up(event["version"], event, snapshots)
        assert shown <= allowed, (kind, message, shown - allowed)
        if kind == "state" and message["phase"] != "lobby":
            assert message["pile"]["top"] == snapshots[message["version"]]["pile"][-3:]
        checked += max(1, len(carried))
    return checked


@pytest.mark.parametrize("penalty", ["burn", "give"])
async def test_every_message_of_a_whole_game_shows_only_face_up_cards(
    server: Server, penalty: str
) -> None:
    code = await server.new_room(
        penalty=penalty, freeze_seconds=0.05, collect_seconds=SHORT_COLLECT_SECONDS
    )
    snapshots = record_snapshots(server.room(code))
    ann, bob, spectator = await join(server, code, "Ann", "Bob", "Spec")
    await ann.ok("sit", {"seat": None})
    await bob.ok("sit", {"seat": None})
    await ann.ok("add_bot", {"level": "easy"})
    await ann.ok("start")
    players = [autoplay(ann, false_slaps=True), autoplay(bob, false_slaps=True)]
    results = await asyncio.wait_for(asyncio.gather(*players), 90)
    for acks in results:
        check_refusals(acks)
    for client in (ann, bob, spectator):
        await client.wait_for(lambda c=client: any(e["kind"] == "win" for e in c.events))
    messages = sum(check_no_leak(c, snapshots) for c in (ann, bob, spectator))
    kinds = {e["kind"] for e in spectator.events}
    assert {"flip", "take", "false_slap", "win"} <= kinds, [
        (e["kind"], e.get("seat"), e.get("card")) for e in spectator.events
    ]
    if penalty == "give":
        gives = [e for e in spectator.events if e["kind"] == "false_slap" and e["to"] is not None]
        assert gives and all(e["card"] is None for e in gives)
    assert messages > 300
    await close_all([ann, bob, spectator])


def test_the_leak_check_itself_catches_a_face_down_card() -> None:
    snapshots = {
        1: {"pile": ["JS"], "hands": [["7H", "2C"], ["KD"]]},
        2: {"pile": [], "hands": [["7H", "2C", "JS"], ["KD"]]},
    }
    client = Client.__new__(Client)
    for leaked in (
        {"version": 2, "kind": "take", "seat": 0, "card": "7H"},
        {"version": 2, "kind": "flip", "seat": 1, "card": "7H"},
        {"version": 2, "phase": "lobby", "x": [["2C"]]},
    ):
        client.messages = [("event", leaked)]
        with pytest.raises(AssertionError):
            check_no_leak(client, snapshots)
        client.messages = [("state", {"version": 2, "phase": "lobby", "events": [leaked]})]
        with pytest.raises(AssertionError):
            check_no_leak(client, snapshots)
    client.messages = [
        ("event", {"version": 2, "kind": "take", "seat": 0, "card": "JS"}),
        ("event", {"version": 2, "kind": "flip", "seat": 1, "card": "KD"}),
        ("welcome", {"player": "p1", "token": "t"}),
    ]
    assert check_no_leak(client, snapshots) == 3
