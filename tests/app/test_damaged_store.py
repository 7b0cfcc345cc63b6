"""A damaged store at start: a SQLite file that is no database is moved aside (its name kept,
the time added) and the server starts empty, unless SLAPJACK_STORE_DAMAGED=refuse; a
zero-length file is logged; a saved table whose cards do not add up is refused like any
unreadable one."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
from app_harness import Logged, close_all, deal, join, serving

from app.stores import StoreError
from app.stores.sqlite import SqliteStore

GARBAGE = b"this is no database, whatever its name says\n" * 200


async def test_a_file_that_is_no_database_is_moved_aside_and_the_store_starts_empty(
    tmp_path: Path, logged: Logged
) -> None:
    path = tmp_path / "slapjack.db"
    path.write_bytes(GARBAGE)
    store = SqliteStore(path)
    await store.open()
    try:
        assert await store.codes() == []
        await store.save("ABCDEF", {"schema": 2, "version": 1})  # a working store
    finally:
        await store.close()
    (moved,) = tmp_path.glob("slapjack.db.damaged-*")
    assert moved.read_bytes() == GARBAGE  # kept, whole, for whoever wants to look
    (record,) = [r for r in logged.records if r.getMessage() == "store_damaged"]
    assert record.levelno == logging.CRITICAL
    assert str(path) in json.dumps(record.__dict__, default=str)
    assert str(moved) in json.dumps(record.__dict__, default=str)


async def test_refuse_keeps_a_damaged_file_and_does_not_open(tmp_path: Path) -> None:
    path = tmp_path / "slapjack.db"
    path.write_bytes(GARBAGE)
    store = SqliteStore(path, damaged="refuse")
    with pytest.raises(StoreError, match="not a database"):
        await store.open()
    assert path.read_bytes() == GARBAGE
    assert list(tmp_path.glob("*.damaged-*")) == []


async def test_a_zero_length_file_is_logged_and_used_empty(tmp_path: Path, logged: Logged) -> None:
    path = tmp_path / "slapjack.db"
    path.touch()
    store = SqliteStore(path)
    await store.open()
    try:
        assert await store.codes() == []
    finally:
        await store.close()
    assert "store_file_empty" in logged.events
    assert "store_damaged" not in logged.events


async def test_a_server_over_a_damaged_file_starts_and_opens_tables(
    tmp_path: Path, logged: Logged
) -> None:
    path = tmp_path / "slapjack.db"
    path.write_bytes(GARBAGE)
    async with serving(store=f"sqlite:///{path}") as server:
        code = await server.new_room()
        assert server.rooms.get(code) is not None
    assert "store_damaged" in logged.events
    assert list(tmp_path.glob("slapjack.db.damaged-*"))


async def test_a_saved_table_with_a_card_missing_is_refused(tmp_path: Path, logged: Logged) -> None:
    path = tmp_path / "slapjack.db"
    async with serving(store=f"sqlite:///{path}") as server:
        code = await server.new_room()
        players = await join(server, code, "Ann", "Bob")
        await deal(players)
        await close_all(players)
    # The last save before a restart is a whole snapshot: one card goes from a hand.
    with sqlite3.connect(path) as db:
        (text,) = db.execute("SELECT snapshot FROM tables WHERE code = ?", (code,)).fetchone()
        snapshot = json.loads(text)
        hand = snapshot["game"]["hands"][0]
        assert hand, snapshot["game"]
        hand.pop()
        db.execute("UPDATE tables SET snapshot = ? WHERE code = ?", (json.dumps(snapshot), code))
    async with serving(store=f"sqlite:///{path}") as server:
        assert server.rooms.get(code) is None  # refused, not played with 51 cards
    assert "snapshot_unreadable" in logged.events
