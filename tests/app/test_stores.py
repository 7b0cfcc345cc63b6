"""The table stores (app/stores) against the real thing: a SQLite file, a redis-server process.

Round trips, expiry, unreadable snapshots skipped, a Redis outage ridden out by the Saver,
fencing with leases, and SQLite's atomicity under SIGKILL.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as sync_redis
from app_harness import Logged, until
from pydantic import ValidationError

from app.ops.clock import ManualClock, settle
from app.ops.config import Settings
from app.stores import (
    NEWEST_SCHEMA,
    LeaseLost,
    Savable,
    Store,
    StoreError,
    open_store,
    parse_store_url,
    restore_all,
    vouched,
    wall_clock,
)
from app.stores.memory import MemoryStore
from app.stores.redis import RedisStore
from app.stores.saver import Saver
from app.stores.sqlite import STORE_THREAD_NICE, SqliteStore
from deploy.redis import RedisServer
from engine import Game

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 30.0  # generous: the machine is shared; the waits end as soon as the condition holds


def table(seed: int = 1, **extra: Any) -> dict[str, Any]:
    """A snapshot shaped like a table's: a 4-player engine game part-way through."""
    game = Game.deal(4, seed=seed)
    for step in range(seed % 7 + 3):
        if game.slap_open:  # a Jack: someone takes the pile before the next flip
            game.slap(game.next_to_play, now=float(step))
        else:
            game.flip(game.next_to_play, now=float(step))
    return {
        "schema": NEWEST_SCHEMA,
        "version": 17 + seed,
        "phase": "playing",
        "people": [
            {"id": f"p{i}", "name": f"Player {i}", "token_hash": "ab" * 32} for i in range(4)
        ],
        "game": game.to_dict(),
        **extra,
    }


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        opened: Store = open_store("memory")
    elif request.param == "sqlite":
        opened = open_store(f"sqlite:///{tmp_path / 'tables.db'}")  # four slashes: absolute
    else:
        opened = open_store(request.getfixturevalue("redis_server").url)
    await opened.open()
    yield opened
    await opened.close()


def plant(store: Store, code: str, raw: str) -> None:
    """Writes `raw` as a table's stored snapshot, behind the store's back (a bad file, a
    key written by another program)."""
    if isinstance(store, MemoryStore):
        store._tables[code] = (raw, wall_clock())
    elif isinstance(store, SqliteStore):
        with sqlite3.connect(store.path) as db:
            db.execute(
                "INSERT INTO tables VALUES (?, 1, ?, ?, ?)", (code, wall_clock(), wall_clock(), raw)
            )
    else:
        assert isinstance(store, RedisStore)
        client = sync_redis.Redis.from_url(store.url)
        client.hset(f"slapjack:table:{code}", mapping={"snapshot": raw, "schema": 1})
        client.zadd("slapjack:tables", {code: wall_clock()})
        client.close()


# ---- every store ---------------------------------------------------------------------------


async def test_a_table_comes_back_as_it_was_saved(store: Store) -> None:
    ann, bob = table(1), table(2)
    await store.save("ANNS", ann)
    await store.save("BOBS", bob)
    assert await store.load("ANNS") == ann
    assert await store.load("BOBS") == bob
    assert await store.codes() == ["ANNS", "BOBS"]
    assert await store.load("NONE") is None


async def test_the_latest_save_wins_and_a_saved_dict_is_not_shared(store: Store) -> None:
    snapshot = table(1)
    await store.save("ANNS", snapshot)
    snapshot["version"] += 1
    snapshot["game"]["hands"][0].clear()  # the live table moves on after its save
    assert (await store.load("ANNS")) == table(1)
    await store.save("ANNS", snapshot)
    assert (await store.load("ANNS")) == snapshot
    assert await store.codes() == ["ANNS"]


async def test_a_snapshot_its_maker_encoded_is_written_as_it_is(store: Store) -> None:
    snapshot = table(1)
    text = vouched("ANNS", snapshot)
    assert (text.schema, text.version) == (NEWEST_SCHEMA, snapshot["version"])
    await store.save("ANNS", text)
    assert await store.load("ANNS") == snapshot


async def test_a_deleted_table_is_gone(store: Store) -> None:
    await store.save("ANNS", table(1))
    await store.delete("ANNS")
    await store.delete("ANNS")  # twice is harmless
    assert await store.load("ANNS") is None
    assert await store.codes() == []


async def test_a_snapshot_without_a_schema_is_refused_at_save(store: Store) -> None:
    with pytest.raises(ValueError, match="schema"):
        await store.save("ANNS", {"version": 3})
    assert await store.codes() == []


async def test_tables_nobody_was_connected_to_expire(store: Store) -> None:
    now = wall_clock()
    await store.save("GONE", table(1), seen_at=now - 700)
    await store.save("LIVE", table(2), seen_at=now - 500)
    await store.save("FRSH", table(3))  # someone is connected now
    assert await store.purge_expired(600) == ["GONE"]
    assert await store.codes() == ["FRSH", "LIVE"]
    assert set(await restore_all(store, expiry_seconds=400)) == {"FRSH"}
    assert await store.codes() == ["FRSH"]


async def test_unreadable_snapshots_are_logged_and_skipped(store: Store, logged: Logged) -> None:
    await store.save("GOOD", table(1))
    plant(store, "BADJ", '{"schema": 1, "game": {"hands": [[')  # cut off mid-write
    plant(store, "LIST", "[1, 2, 3]")
    plant(store, "NOSC", json.dumps({"game": {}}))
    plant(store, "NANS", '{"schema": 1, "turn_started_ago": NaN}')  # Python's json writes it
    plant(store, "HUGE", '{"schema": 1, "turn_started_ago": 1e999}')  # read as an infinity
    await store.save("NEWR", table(2, schema=NEWEST_SCHEMA + 1))  # written by a newer release
    restored = await restore_all(store, expiry_seconds=600)
    assert restored == {"GOOD": table(1)}
    assert logged.events.count("snapshot_unreadable") == 5
    assert logged.events.count("snapshot_too_new") == 1


def test_store_urls_follow_sqlalchemy_spelling() -> None:
    assert parse_store_url("sqlite:///slapjack.db").path == Path("slapjack.db")
    assert parse_store_url("sqlite:///data/x.db").path == Path("data/x.db")
    assert parse_store_url("sqlite:////data/slapjack.db").path == Path("/data/slapjack.db")
    assert parse_store_url("redis://127.0.0.1:6379/0").kind == "redis"
    assert parse_store_url("redis://cache").kind == "redis"
    assert parse_store_url("memory").kind == "memory"


@pytest.mark.parametrize(
    "url",
    ["", "postgres://x/y", "sqlite://x.db", "sqlite:///", "redis://:6379/0", "redis://h:port/0",
     "redis://h:6379/zero", "Memory"],
)  # fmt: skip
def test_a_bad_store_setting_is_refused_naming_it(url: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(store=url)
    assert refused.value.errors()[0]["loc"] == ("store",)


def test_the_server_does_not_start_with_a_bad_store() -> None:
    env = {**os.environ, "SLAPJACK_STORE": "postgres://db/slapjack", "SLAPJACK_PORT": "1"}
    ran = subprocess.run(
        [sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode != 0
    assert "SLAPJACK_STORE" in ran.stderr and "postgres://db/slapjack" in ran.stderr


# ---- SQLite -------------------------------------------------------------------------------


async def test_sqlite_keeps_tables_across_a_restart_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tables.db"  # the folder is created
    first = SqliteStore(path)
    await first.open()
    await first.save("ANNS", table(1))
    await first.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again = SqliteStore(path)
    await again.open()
    assert await again.load("ANNS") == table(1)
    await again.close()


async def test_sqlite_cannot_open_where_it_cannot_write(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    store = SqliteStore(tmp_path / "file" / "tables.db")
    with pytest.raises(StoreError, match=r"tables\.db"):
        await store.open()


async def test_sqlite_saves_never_block_the_event_loop(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "tables.db")
    await store.open()
    # Another connection holds the write lock (a backup, say): the save waits for it on the
    # store's thread while the loop goes on ticking.
    other = sqlite3.connect(tmp_path / "tables.db")
    other.execute("BEGIN IMMEDIATE")
    saving = asyncio.create_task(store.save("ANNS", table(1)))
    for _ in range(10):
        await asyncio.sleep(0.01)
    assert not saving.done()
    other.rollback()
    other.close()
    await asyncio.wait_for(saving, WAIT_SECONDS)
    assert await store.load("ANNS") == table(1)
    await store.close()


def thread_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(sys.platform != "linux", reason="only Linux gives a thread its own priority")
async def test_sqlite_writes_on_a_thread_that_gives_way_to_the_event_loop(tmp_path: Path) -> None:
    """Where the loop and the store's thread share a core, a commit must not hold up the
    flips and slaps waiting on the loop: the store's thread runs at nice 10, and the loop's
    own priority is left as it was."""
    loop_nice, loop_thread = thread_nice(), threading.get_native_id()
    if loop_nice >= STORE_THREAD_NICE:
        pytest.skip(f"the tests run at nice {loop_nice}: the store's thread has nothing to give")
    store = SqliteStore(tmp_path / "tables.db")
    await store.open()
    try:
        where = await store._call(lambda: (threading.get_native_id(), thread_nice()))
        await store.save("ANNS", table(1))
        assert await store.load("ANNS") == table(1)
    finally:
        await store.close()
    assert where[0] != loop_thread
    assert where[1] == STORE_THREAD_NICE
    assert thread_nice() == loop_nice


WRITER = """
import asyncio, random, sys
from app.stores.sqlite import SqliteStore

async def main():
    store = SqliteStore(sys.argv[1])
    await store.open()
    last = await store.load("ANNS")
    n = last["n"] if last else 0
    cards = list(range(5000))
    while True:
        n += 1
        random.shuffle(cards)
        for code in ("ANNS", "BOBS"):
            await store.save(code, {"schema": 1, "n": n, "cards": cards, "pad": "x" * n})

asyncio.run(main())
"""


def rounds_saved(path: Path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            row = db.execute("SELECT snapshot FROM tables WHERE code = 'ANNS'").fetchone()
    except sqlite3.Error:
        return 0
    return 0 if row is None else int(json.loads(row[0])["n"])


async def test_sqlite_killed_mid_write_keeps_whole_tables(tmp_path: Path) -> None:
    """A writer saving two big tables in a loop is SIGKILLed at random moments, eight times
    over the same file: every time, both tables are whole and nothing committed is lost."""
    path = tmp_path / "tables.db"
    chance = random.Random(10)
    for _ in range(8):
        start = rounds_saved(path)
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=ROOT)
        try:
            goal = start + chance.randint(1, 30)
            await until(lambda: rounds_saved(path) >= goal, "the writer's saves", WAIT_SECONDS)  # noqa: B023
            await asyncio.sleep(chance.uniform(0, 0.05))  # somewhere inside some save
            seen = rounds_saved(path)
            writer.send_signal(signal.SIGKILL)
            writer.wait(timeout=20)
        finally:
            if writer.poll() is None:
                writer.kill()
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        store = SqliteStore(path)
        await store.open()
        assert await store.codes() == ["ANNS", "BOBS"]
        for code in ("ANNS", "BOBS"):
            snapshot = await store.load(code)
            assert snapshot is not None
            assert sorted(snapshot["cards"]) == list(range(5000))  # every card conserved
            assert snapshot["pad"] == "x" * snapshot["n"]
            assert snapshot["n"] >= seen - 1  # nothing committed was lost
        await store.close()


# ---- Redis --------------------------------------------------------------------------------


async def test_a_redis_outage_is_retried_until_the_save_lands(
    redis_server: RedisServer, logged: Logged
) -> None:
    store = RedisStore(redis_server.url)
    await store.open()
    current = {"snapshot": table(1)}
    saver = Saver(store, "ANNS", lambda: current["snapshot"], delay=0.05, last_retry=0.5)
    saver.changed(urgent=True)
    await asyncio.wait_for(saver.flush(), WAIT_SECONDS)
    assert await store.load("ANNS") == table(1)

    redis_server.stop()
    current["snapshot"] = table(2)
    saver.changed()
    await until(lambda: saver.failures >= 2, "two failed saves", WAIT_SECONDS)
    assert saver.pending
    current["snapshot"] = table(3)  # play goes on from memory meanwhile
    saver.changed(urgent=True)
    with pytest.raises(StoreError):
        await store.load("ANNS")

    redis_server.start()  # the same address, empty (no persistence in this test)
    await asyncio.wait_for(saver.flush(), WAIT_SECONDS)
    assert await store.load("ANNS") == table(3)  # the latest, not the one that first failed
    assert "save_failed" in logged.events and "save_recovered" in logged.events
    await saver.close()
    await store.close()


async def test_redis_with_append_only_keeps_tables_across_its_restart(tmp_path: Path) -> None:
    with RedisServer(tmp_path / "aof", append_only=True) as server:
        store = RedisStore(server.url)
        await store.open()
        await store.save("ANNS", table(1))
        server.stop()
        server.start()
        assert await store.load("ANNS") == table(1)
        await store.close()


class Fenced:
    """One node's fenced view of a RedisStore, as a cluster node saves through it."""

    def __init__(self, store: RedisStore, node: str, token: int) -> None:
        self.store, self.node, self.token = store, node, token

    async def save(self, code: str, snapshot: Any, seen_at: float | None = None) -> None:
        await self.store.save_fenced(code, self.node, self.token, snapshot, seen_at)

    async def delete(self, code: str) -> None:
        await self.store.delete_fenced(code, self.node, self.token)


async def test_only_the_lease_holder_saves(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url)
    await store.open()
    first = await store.take_lease("ANNS", "node-a")
    assert first.node == "node-a"
    assert await store.take_lease("ANNS", "node-b") == first  # held: not taken
    assert not await store.renew_lease("ANNS", "node-b", first.token)
    assert not await store.release_lease("ANNS", "node-b", first.token)
    assert await store.renew_lease("ANNS", "node-a", first.token)
    assert await store.lease_holder("ANNS") == "node-a"
    await store.save_fenced("ANNS", "node-a", first.token, table(1))
    with pytest.raises(LeaseLost):
        await store.save_fenced("ANNS", "node-b", first.token, table(9))

    # node-b watched the lease stand still (node-a paused, partitioned): a stale view of
    # it takes nothing, the one it watched takes it over with a bigger token.
    assert (await store.take_lease("ANNS", "node-b", over=first)).node == "node-a"  # it moved
    watched = await store.lease("ANNS")
    assert watched is not None and watched.beat == 1
    second = await store.take_lease("ANNS", "node-b", over=watched)
    assert second.node == "node-b" and second.token > first.token
    await Fenced(store, "node-b", second.token).save("ANNS", table(2))
    stale = Fenced(store, "node-a", first.token)
    with pytest.raises(LeaseLost):
        await stale.save("ANNS", table(1, version=0))
    with pytest.raises(LeaseLost):
        await stale.delete("ANNS")
    assert not await store.renew_lease("ANNS", "node-a", first.token)
    assert await store.load("ANNS") == table(2)  # the new owner's table, untouched
    # Even its holder never writes an older version over a newer one.
    with pytest.raises(LeaseLost):
        await store.save_fenced("ANNS", "node-b", second.token, table(1, version=0))

    assert await store.renew_lease("ANNS", "node-b", second.token)
    assert await store.release_lease("ANNS", "node-b", second.token)
    assert await store.lease_holder("ANNS") is None
    third = await store.take_lease("ANNS", "node-a")
    assert third.token > second.token  # tokens only grow, across releases too
    await store.close()


async def test_a_lease_let_go_as_its_process_stops_says_by_whom_until_taken(
    redis_server: RedisServer,
) -> None:
    store = RedisStore(redis_server.url)
    await store.open()
    kept, left = await store.take_lease("KEPT", "node-a"), await store.take_lease("LEFT", "node-a")
    assert await store.release_lease("KEPT", "node-a", kept.token)  # let go, not stopping
    assert await store.release_lease("LEFT", "node-a", left.token, leaving=True)
    assert await store.left_by(["KEPT", "LEFT", "NONE"]) == {"LEFT": "node-a"}
    assert await store.left_by([]) == {}
    assert (await store.take_lease("LEFT", "node-b")).left_by == "node-a"
    assert await store.left_by(["LEFT"]) == {}  # taken since: nobody's to come back to
    await store.close()


async def test_a_saver_fenced_off_stops_and_says_so(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url)
    await store.open()
    assert (await store.take_lease("ANNS", "node-b")).node == "node-b"
    lost: list[str] = []
    saver = Saver(
        Fenced(store, "node-a", 1), "ANNS", lambda: table(1), delay=0.01,
        on_lease_lost=lambda: lost.append("ANNS"),
    )  # fmt: skip
    saver.changed(urgent=True)
    await until(lambda: bool(lost), "the lease-lost call", WAIT_SECONDS)
    assert saver.failures == 0 and saver.saves == 0 and not saver.pending
    saver.changed(urgent=True)  # a stopped saver writes nothing more
    assert not saver.pending
    assert await store.load("ANNS") is None
    await store.close()


async def test_expiry_spares_a_table_whose_lease_is_held(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url)
    await store.open()
    await store.save("IDLE", table(1), seen_at=wall_clock() - 3600)  # an idle lobby, still owned
    await store.save("GONE", table(2), seen_at=wall_clock() - 3600)
    assert (await store.take_lease("IDLE", "node-a")).node == "node-a"
    assert await store.purge_expired(600) == ["GONE"]
    assert await store.codes() == ["IDLE"]
    await store.close()


async def test_a_key_of_another_type_is_skipped(redis_server: RedisServer, logged: Logged) -> None:
    store = RedisStore(redis_server.url)
    await store.open()
    client = sync_redis.Redis.from_url(redis_server.url)
    client.set("slapjack:table:ODDS", "a string, not a hash")
    client.zadd("slapjack:tables", {"ODDS": wall_clock()})
    client.close()
    assert await store.load("ODDS") is None
    assert "snapshot_unreadable" in logged.events
    await store.close()


async def test_an_unreachable_redis_fails_to_open_naming_it() -> None:
    from deploy.redis import free_port

    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(StoreError, match=r"127\.0\.0\.1"):
        await store.open()
    await store.close()


# ---- the Saver ----------------------------------------------------------------------------


class Counting(MemoryStore):
    """A memory store that counts its writes and can be told to fail the next few."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.fail_next = 0

    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise StoreError("the disk is full")
        self.writes += 1
        await super().save(code, snapshot, seen_at)


async def test_a_burst_of_changes_costs_one_write_of_the_latest() -> None:
    store = Counting()
    current = {"version": 0}
    saver = Saver(store, "ANNS", lambda: table(1, version=current["version"]), delay=0.3)
    for version in range(1, 51):  # 50 flips inside the delay
        current["version"] = version
        saver.changed()
    await asyncio.wait_for(saver.flush(), WAIT_SECONDS)
    assert store.writes == 1
    assert (await store.load("ANNS")) == table(1, version=50)
    await saver.close()


async def test_an_urgent_change_is_written_at_once() -> None:
    store, clock = Counting(), ManualClock()
    saver = Saver(store, "ANNS", lambda: table(1), delay=3600, clock=clock)
    saver.changed()
    assert saver._due is not None and saver._due <= clock.now() + 3600
    await clock.advance_to(saver._due - 0.001)
    assert store.writes == 0 and saver.pending  # waiting out its (long) delay
    saver.changed(urgent=True)  # the game ended
    await settle()  # no time passes
    assert store.writes == 1 and not saver.pending
    await saver.close()


async def test_a_change_is_written_within_the_delay_without_a_flush() -> None:
    store, clock = Counting(), ManualClock()
    saver = Saver(store, "ANNS", lambda: table(1), delay=0.5, clock=clock)
    saver.changed()
    await clock.advance(0.49)
    assert store.writes == 0
    await clock.advance(0.01)
    assert store.writes == 1 and not saver.pending
    await saver.close()


async def test_a_failed_write_is_retried_with_the_latest_snapshot(logged: Logged) -> None:
    store, clock = Counting(), ManualClock()
    store.fail_next = 3
    current = {"seed": 1}
    saver = Saver(
        store, "ANNS", lambda: table(current["seed"]), delay=0.5, first_retry=0.2, clock=clock
    )
    saver.changed()
    await clock.advance(0.5)
    assert saver.failures == 1
    current["seed"] = 2
    await clock.advance(0.3)  # retried 0.2 s after the failure
    assert saver.failures == 2
    await clock.advance(0.4)  # the backoff doubles: 0.4 s
    assert saver.failures == 3 and store.writes == 0
    await clock.advance(0.6)  # and 0.8 s
    assert store.writes == 0
    await clock.advance(0.2)
    assert saver.failures == 3 and store.writes == 1 and not saver.pending
    assert await store.load("ANNS") == table(2)
    assert logged.events.count("save_failed") == 3
    await saver.close()


async def test_a_discarded_room_is_deleted_and_stays_deleted() -> None:
    store, clock = Counting(), ManualClock()
    await store.save("ANNS", table(1))
    saver = Saver(store, "ANNS", lambda: table(2), delay=0.05, clock=clock)
    saver.changed()
    await saver.discard()
    saver.changed(urgent=True)  # a late change of a closed room
    await clock.advance(60)
    assert await store.codes() == []
    assert store.writes == 1  # only the save before the saver


async def test_the_saver_passes_when_someone_was_last_connected() -> None:
    store = Counting()
    saver = Saver(store, "ANNS", lambda: table(1), delay=0.01, seen_at=lambda: wall_clock() - 900)
    saver.changed(urgent=True)
    await asyncio.wait_for(saver.flush(), WAIT_SECONDS)
    assert await store.purge_expired(600) == ["ANNS"]
    await saver.close()
