"""When rooms are written to the store, and when they leave it: after each change (a burst
in one write, a phase change at once), a new room before its link is given out, a closed
room deleted, a store outage ridden out while the game goes on, and at start every saved
table back (the unreadable ones logged and skipped).

Time is a ManualClock the tests turn wherever the point is when a write comes: a beat, a
delay, a retry's backoff come when the test says, exactly, not a busy machine's moment later.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import random
import socket
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any

import pytest
from app_harness import (
    WAIT,
    Client,
    Logged,
    Recorder,
    Server,
    close_all,
    deal,
    join,
    serving,
    turn_until,
    until,
)

from app.ops.clock import ManualClock, settle
from app.ops.config import Settings
from app.stores import SCHEMA_KEY, SnapshotText, StoreError, encode_snapshot, wall_clock
from app.stores import saver as saver_module
from app.stores.memory import MemoryStore
from app.stores.saver import (
    LAST_RETRY_SECONDS,
    SNAPSHOTS_AT_ONCE,
    Saver,
    beat_at_or_before,
    beat_due,
)
from app.stores.sqlite import SqliteStore
from app.tables import registry
from app.tables import room as rooms_module
from app.tables.notation import SCHEMA_VERSION
from app.tables.registry import SAVE_BEATS, Rooms
from app.tables.table import Table
from deploy.redis import RedisServer

ROOT = Path(__file__).resolve().parents[2]


async def saved_version(server: Server, code: str) -> int | None:
    snapshot = await server.rooms.store.load(code)
    return None if snapshot is None else int(snapshot["version"])


async def a_game(server: Server) -> tuple[str, list[Client]]:
    code = await server.new_room()
    clients = await join(server, code, "Ann", "Bob")
    await deal(clients)
    return code, clients


async def test_a_new_room_is_written_before_its_link_is_given_out(server: Server) -> None:
    code = await server.new_room()
    assert await server.rooms.store.exists(code)
    assert await saved_version(server, code) == 0


async def test_a_new_code_is_never_one_a_stored_table_has(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A table another release wrote (a schema this code cannot read) still holds its code.
    await server.rooms.store.save("TAKEN2", {SCHEMA_KEY: 1, "code": "TAKEN2"})
    drawn = iter(["TAKEN2", "FRESH3"])
    monkeypatch.setattr(registry, "new_code", lambda: next(drawn))
    assert await server.new_room() == "FRESH3"


async def test_every_change_is_saved_after_it_is_sent_a_burst_in_one_write() -> None:
    clock = ManualClock()
    async with serving(clock, save_seconds=0.5) as server:
        code, clients = await a_game(server)
        room = server.room(code)
        saver = room.saver
        assert saver is not None
        await until(lambda: not saver.pending, "the start's save")  # urgent: no time passes
        assert await saved_version(server, code) == room.version  # the start: written at once
        writes = saver.saves
        ann = clients[0] if clients[0].state["next"] == clients[0].seat else clients[1]
        bob = clients[1] if ann is clients[0] else clients[0]
        assert (await ann.call("flip", {}))["ok"]
        # Judged and sent before it is written: the store still has the version before it.
        assert await saved_version(server, code) == room.version - 1
        await clock.advance(0.2)
        await bob.call("flip", {})  # within the delay: the same write carries both
        await clock.advance(0.2)
        assert saver.pending and saver.saves == writes
        await turn_until(clock, lambda: not saver.pending, "the flips' save", step=0.05)
        assert await saved_version(server, code) == room.version
        assert saver.saves == writes + 1
        await close_all(clients)


async def test_a_room_hands_its_store_its_own_encoding_unless_a_time_is_no_number(
    server: Server,
) -> None:
    code, clients = await a_game(server)
    room = server.room(code)
    room.write_whole()  # the start was written: the next save would be a journal of it
    saved = room.snapshot_now()
    assert isinstance(saved, SnapshotText)  # encoded once, by the room, not by the store
    assert saved.version == room.version and saved.schema == SCHEMA_VERSION
    assert (
        Table.from_dict(json.loads(saved.text), 0.0).to_dict(0.0)["game"]["hands"]
        == (room.snapshot(time.monotonic())["game"]["hands"])
    )
    kept = room.table.turn_started_at
    room.table.turn_started_at = math.nan  # a bug's NaN: never written as null
    try:
        room.write_whole()  # the NaN is no move: only a whole snapshot holds it
        unsure = room.snapshot_now()
        assert isinstance(unsure, dict) and math.isnan(unsure["turn_started_ago"])
        with pytest.raises(ValueError):
            encode_snapshot(code, unsure)  # the store's checked encoding refuses it
    finally:
        room.table.turn_started_at = kept
    await close_all(clients)


async def test_a_phase_change_is_saved_at_once() -> None:
    # The clock stands still: only the urgent write of a phase change can land.
    async with serving(ManualClock(), save_seconds=30.0) as server:
        code = await server.new_room()
        clients = await join(server, code, "Ann", "Bob")
        for client in clients:
            await client.ok("sit", {"seat": None})
        room = server.room(code)
        await clients[0].ok("start")
        await until(lambda: room.saver is not None and not room.saver.pending, "the save")
        snapshot = await server.rooms.store.load(code)
        assert snapshot is not None and snapshot["phase"] == "playing"
        await close_all(clients)


async def test_a_room_that_closes_is_deleted_from_the_store() -> None:
    clock = ManualClock()
    async with serving(clock, unused_room_seconds=60) as server:
        code = await server.new_room()
        room = server.room(code)
        gone = weakref.ref(room)
        del room
        assert await server.rooms.store.exists(code)
        # Freed by reference count, with no collection: in no cycle with its saver, which
        # would leave it for a full collection under `python -m app` (app/ops/collector.py).
        gc.disable()
        try:
            await clock.advance(59.9)
            assert server.rooms.get(code) is not None
            await clock.advance(0.1)
            await until(lambda: server.rooms.get(code) is None, "the unused room to close")
            store = server.rooms.store
            await until(lambda: code not in store._tables, "the stored table's deletion")  # type: ignore[attr-defined]
            await until(lambda: gone() is None, "the closed room freed")
        finally:
            gc.enable()


async def test_a_redis_outage_is_logged_and_retried_while_the_game_goes_on(
    tmp_path: Path, logged: Logged
) -> None:
    clock = ManualClock()
    with RedisServer(tmp_path / "redis") as redis:
        async with serving(clock, store=redis.url, save_seconds=0.5) as server:
            code, clients = await a_game(server)
            room = server.room(code)
            saver = room.saver
            assert saver is not None
            await until(lambda: not saver.pending, "a save")

            redis.stop()
            played = 0
            for _ in range(6):  # flips judged and sent while nothing can be written
                state = clients[0].state
                if state["phase"] != "playing" or state["slap_open"]:
                    break
                mover = next(c for c in clients if c.seat == state["next"])
                reply = await mover.call("flip", {})
                assert reply["ok"], reply
                played += 1
                await clients[0].wait_state(
                    lambda s, v=reply["events"][0]["version"]: s["version"] >= v
                )  # type: ignore[misc]
            assert played > 0
            await turn_until(clock, lambda: "save_failed" in logged.events, "a failed save")
            # Retried with backoff (0.2 s, doubling up to 5 s) while Redis stays away: a
            # minute of the clock, and the game went on from memory all along.
            await turn_until(clock, lambda: saver.failures >= 6, "retries", step=1, most=60)
            assert room.version == clients[0].state["version"]

            redis.start()  # the same address, empty: the next save writes the whole table
            await turn_until(clock, lambda: "save_recovered" in logged.events, "the save", step=1)
            # The table paused while its lease could not be renewed may resume just after
            # that save: what the resume changed is written on the next save's clock.
            await turn_until(clock, lambda: not saver.pending, "nothing left to write", most=10)
            assert await saved_version(server, code) == room.version
            await close_all(clients)


async def test_at_start_every_saved_table_is_back_and_an_unreadable_one_is_skipped(
    logged: Logged,
) -> None:
    class Unchecked(MemoryStore):
        """Hands back a table whose version is an infinity, as no JSON reader of ours
        would (decode_snapshot refuses `1e999`): Table.from_dict's int() overflows."""

        async def load(self, code: str) -> dict[str, Any] | None:
            loaded = await super().load(code)
            if code == "INFIN9" and loaded is not None:
                loaded["version"] = math.inf
            return loaded

    store = Unchecked()
    old = Rooms(Settings(store="memory"), Recorder(), store=store)
    room = old.create()
    await old.save(room)
    saved = await store.load(room.code) or {}
    await store.save("BROKEN", {SCHEMA_KEY: 1, "code": "BROKEN", "seats": "not a table"})
    await store.save("OTHER9", {**saved, "code": "ELSE99"})
    await store.save("INFIN9", {**saved, "code": "INFIN9"})
    huge = json.dumps({**saved, "code": "HUGE99"}).replace(
        f'"version": {saved["version"]}', '"version": 1e999'
    )
    assert "1e999" in huge
    store._tables["HUGE99"] = (huge, wall_clock())  # a number too big for a float
    old.close_all()

    rooms = Rooms(Settings(store="memory"), Recorder(), store=store)
    await rooms.start()
    assert rooms.get(room.code) is not None and len(rooms) == 1
    unreadable = [r for r in logged.records if r.getMessage() == "snapshot_unreadable"]
    assert {r.fields["room"] for r in unreadable} == {"BROKEN", "OTHER9", "INFIN9", "HUGE99"}  # type: ignore[attr-defined]
    assert await store.exists("BROKEN")  # kept: a later release may read it
    await rooms.shutdown(1.0)


async def test_a_table_nobody_was_at_for_the_expiry_is_purged_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = MemoryStore()
    old = Rooms(Settings(store="memory"), Recorder(), store=store)
    left_long_ago = old.create()
    someone_here = old.create()
    await someone_here.join("sid-1", "Ann", None)
    # Its last person left (well) over the expiry ago, by the wall clock.
    monkeypatch.setattr(rooms_module, "wall_clock", lambda: time.time() - 700)
    await left_long_ago.join("sid-2", "Bob", None)
    await left_long_ago.drop("sid-2", left=False)
    monkeypatch.undo()
    assert left_long_ago.seen_at() is not None and someone_here.seen_at() is None
    await old.flush()
    old.close_all()

    rooms = Rooms(Settings(store="memory", room_expiry_seconds=600), Recorder(), store=store)
    await rooms.start()
    assert rooms.get(someone_here.code) is not None and rooms.get(left_long_ago.code) is None
    assert not await store.exists(left_long_ago.code)
    await rooms.shutdown(1.0)


@pytest.mark.realtime  # a real process, its real connection timeouts
def test_a_store_that_cannot_be_reached_stops_the_server_at_start_naming_it() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "SLAPJACK_STORE": f"redis://127.0.0.1:{port}/0",
        "SLAPJACK_PORT": str(port),
    }
    finished = subprocess.run(
        [sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert finished.returncode != 0
    output = finished.stdout + finished.stderr
    assert "store_unavailable" in output and f"127.0.0.1:{port}" in output


async def test_rooms_changed_within_one_beat_are_written_in_one_sqlite_transaction(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "tables.db")
    await store.open()
    trips = 0
    run = store._run

    async def counted(work: Any) -> Any:
        nonlocal trips
        trips += 1
        return await run(work)

    store._run = counted  # type: ignore[method-assign]
    snapshots = {f"ROOM{i:02d}": {SCHEMA_KEY: 1, "code": f"ROOM{i:02d}"} for i in range(10)}
    clock = ManualClock(start=1000.0)  # on a beat: all ten changes fall in the next one
    savers = [
        Saver(store, code, lambda c=code: snapshots[c], delay=0.5, clock=clock)
        for code in snapshots
    ]
    for saver in savers:  # changes at different moments of the same beat
        saver.changed()
        await clock.advance(0.01)
    assert trips == 0
    await clock.advance(0.5)
    await until(lambda: not any(saver.pending for saver in savers), "the beat's writes")
    assert trips == 1, trips  # one trip to the SQLite thread for all ten
    assert sum(saver.saves for saver in savers) == 10
    assert sorted(await store.codes()) == sorted(snapshots)
    await store.close()


def test_a_save_falls_on_the_last_beat_no_later_than_a_delay_after_the_change() -> None:
    for beat in (0.5, 0.125, 0.1, 0.03):
        for step in range(2000):
            now = 1000.0 + step * 0.00037  # changes all through several beats
            due = beat_due(now, 0.5, beat)
            assert now < due <= now + 0.5 + 1e-9, (beat, now, due)
            assert due > now + 0.5 - beat - 1e-9, (beat, now, due)  # as late as allowed
            assert abs(due / beat - round(due / beat)) < 1e-6  # on a beat
    # A clock that has counted for months (it counts from boot) and beats no float holds
    # exactly: a division alone rounds across a beat now and then.
    rng = random.Random(3)
    for beat, delay in ((0.075, 0.3), (0.05, 0.2), (0.025, 0.1), (0.125, 0.5)):
        for _ in range(20000):
            k = rng.randrange(10**7, 10**9)
            assert beat_at_or_before(k * beat, beat) == k  # a beat's own time is that beat
            now = k * beat + rng.uniform(-2 * beat, 2 * beat)
            due = beat_due(now, delay, beat)
            assert due <= now + delay  # never past the promise
            assert (round(due / beat) + 1) * beat > now + delay  # the last beat before it
    for beat in (0.0, -0.1, 0.6):
        with pytest.raises(ValueError):
            Saver(MemoryStore(), "ROOM", dict, delay=0.5, beat=beat)


async def test_a_room_is_written_as_late_as_the_delay_allows_so_changes_share_writes() -> None:
    """Changes at uneven moments: each write comes no later than `delay` after the first
    change it carries, and no sooner than a beat before that (so the changes of the
    meantime ride along: before, a change just before its room's beat was written moments
    later, alone, and the next one waited a whole delay)."""
    delay, beat = 0.2, 0.05
    clock = ManualClock()
    changes: list[float] = []
    writes: list[tuple[float, int]] = []  # when each snapshot was taken, and its changes

    def snapshot() -> dict[str, Any]:
        writes.append((clock.now(), len(changes)))
        return {SCHEMA_KEY: 1, "code": "ROOM", "changes": len(changes)}

    saver = Saver(MemoryStore(), "ROOM", snapshot, delay=delay, beat=beat, clock=clock)
    rng = random.Random(7)
    ends = clock.now() + 15
    while clock.now() < ends:
        changes.append(clock.now())
        saver.changed()
        await clock.advance(rng.expovariate(1 / (delay / 2)))
    await clock.advance(delay)
    assert not saver.pending
    assert writes[-1][1] == len(changes)  # the last change is written
    assert len(writes) < len(changes) * 0.6  # changes share writes
    carried = 0
    for taken, upto in writes:
        first = changes[carried]  # the first change this write carries
        assert first + delay - beat < taken <= first + delay, (first, taken)
        assert beat_at_or_before(taken, beat) * beat == taken  # on a beat
        carried = upto


async def test_rooms_due_on_the_same_beat_are_one_batch(tmp_path: Path) -> None:
    """A busy server's snapshots come in SAVE_BEATS small batches per delay, the rooms due
    on each beat together, instead of every room's at once."""
    delay = 0.5
    rooms = Rooms(Settings(allowed_origins=["http://127.0.0.1"], save_seconds=delay), Recorder())
    room = rooms.create()
    assert room.saver is not None and room.saver.beat == delay / SAVE_BEATS
    rooms.close_all()
    # Through SQLite: rooms changed between the same two beats are written in one batch,
    # those changed a beat later in another, each on its beat.
    store = SqliteStore(tmp_path / "tables.db")
    await store.open()
    written: list[tuple[float, list[str]]] = []
    run = store._run

    async def counted(work: Any) -> Any:
        rows = getattr(work, "args", [[]])[0]
        written.append((clock.now(), sorted(row[0] for row in rows)))
        return await run(work)

    store._run = counted  # type: ignore[method-assign]
    beat = delay / SAVE_BEATS
    clock = ManualClock(start=1000.01)

    def saver(code: str) -> Saver:
        snapshot = {SCHEMA_KEY: 1, "code": code}
        return Saver(store, code, lambda: snapshot, delay=delay, beat=beat, clock=clock)

    first = [saver(f"A{i}") for i in range(5)]
    for one in first:
        one.changed()
    due = beat_due(clock.now(), delay, beat)
    assert due == 1000.5  # the last beat no later than the delay
    # Into the next beat's changes: its rooms are due one beat later.
    await clock.advance_to(due - delay + beat + 0.01)
    later = [saver(f"B{i}") for i in range(5)]
    for one in later:
        one.changed()
    everyone = first + later
    await clock.advance_to(due)
    await until(lambda: not first[0].pending, "the first beat's write")
    await clock.advance_to(due + beat)
    await until(lambda: not any(one.pending for one in everyone), "the beats' writes")
    batches = [names for _, names in written]
    assert batches == [[f"A{i}" for i in range(5)], [f"B{i}" for i in range(5)]]
    assert [when for when, _ in written] == [due, due + beat]  # each on its beat
    await store.close()


class Batched(MemoryStore):
    """A memory store that keeps the room codes of each `save_many` call, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    async def save_many(self, items: Any) -> list[BaseException | None]:
        self.calls.append([code for code, _, _ in items])
        return await super().save_many(items)


async def test_a_big_beat_takes_its_snapshots_a_few_at_a_time_and_writes_them_once() -> None:
    """A beat of many rooms lets the loop go between every SNAPSHOTS_AT_ONCE snapshots (a
    flip waiting runs in between, and a room that changes meanwhile is written as it is
    then), and still hands all of them to its store in one call."""
    store = Batched()
    calls = store.calls
    rooms = 3 * SNAPSHOTS_AT_ONCE
    taken: list[int] = []  # the snapshots taken, in order, as the loop sees them
    seen: list[int] = []  # how many were taken when the loop's other work ran
    moves = {"R0": 0}  # what the first room's table holds

    def snapshot_of(index: int) -> Any:
        def snapshot() -> dict[str, Any]:
            taken.append(index)
            return {SCHEMA_KEY: 1, "code": f"R{index}", "moves": moves["R0"]}

        return snapshot

    savers = [Saver(store, f"R{i}", snapshot_of(i), delay=0.05) for i in range(rooms)]
    # The room taken last: its table changes while the beat is under way.
    savers.reverse()
    for saver in savers:
        saver.changed()
    loop = asyncio.get_running_loop()

    def other_work() -> None:  # a flip on the loop while the beat is taking snapshots
        seen.append(len(taken))
        if 0 < len(taken) < rooms:
            moves["R0"] += 1
        if len(taken) < rooms:
            loop.call_soon(other_work)

    # A callback that keeps itself queued, at every turn of the loop until the beat is over.
    loop.call_soon(other_work)
    await until(lambda: not any(saver.pending for saver in savers), "the beat's write")
    assert calls == [[f"R{i}" for i in reversed(range(rooms))]]  # one call, every room
    between = [n for n in seen if 0 < n < rooms]
    assert between and all(n % SNAPSHOTS_AT_ONCE == 0 for n in between), seen
    assert (await store.load("R0"))["moves"] > 0  # taken after the loop's work went on
    for saver in savers:
        await saver.close()


async def test_a_beat_cancelled_between_two_chunks_lets_every_room_go() -> None:
    """The process ending while a beat is letting the loop go between its snapshots: the
    rooms taken and those not reached yet alike are let go (nothing pending for ever), and
    a room changed after that is saved on a beat of its own."""
    store = MemoryStore()
    loop = asyncio.get_running_loop()
    rooms = 3 * SNAPSHOTS_AT_ONCE
    cancelled: list[asyncio.Task[Any]] = []

    def cancel_the_beat() -> None:
        for task in list(saver_module._HELD):
            task.cancel()
            cancelled.append(task)

    def snapshot_of(index: int) -> Any:
        def snapshot() -> dict[str, Any]:
            if index == 0 and not cancelled:
                loop.call_soon(cancel_the_beat)  # runs at the beat's first yield
            return {SCHEMA_KEY: 1, "code": f"R{index}"}

        return snapshot

    savers = [Saver(store, f"R{i}", snapshot_of(i), delay=0.05) for i in range(rooms)]
    for saver in savers:
        saver.changed()
    await until(lambda: bool(cancelled), "the beat to begin")
    await until(lambda: not any(saver.pending for saver in savers), "every room let go")
    assert await store.codes() == []  # the beat's write never happened
    last = savers[-1]  # never reached by the cancelled beat
    last.changed()
    await until(lambda: not last.pending, "its own next beat")
    assert await store.codes() == [last.code]
    for saver in savers:
        await saver.close()


async def test_a_pending_save_waits_in_its_beat_and_the_beat_writes_its_rooms_together() -> None:
    """A change waits for its beat with the other rooms due on it: no task of its own;
    the beat takes their snapshots and makes one store call (`save_many`) for them."""
    store = Batched()
    calls = store.calls
    clock = ManualClock()
    savers = [
        Saver(store, code, lambda c=code: {SCHEMA_KEY: 1, "code": c}, delay=0.2, clock=clock)
        for code in ("ROOM", "MORE", "LAST")
    ]
    saver = savers[0]
    saver.changed()
    saver.changed()  # a burst: one write
    savers[1].changed()
    assert saver.pending and saver._task is None and saver._beat is not None
    assert savers[1]._beat is saver._beat and savers[2]._beat is None
    await clock.advance(0.2)
    assert not saver.pending
    assert calls == [["ROOM", "MORE"]]  # one call for the beat's rooms, in order
    assert saver.saves == 1 and savers[1].saves == 1 and savers[2].saves == 0
    assert await store.load("ROOM") is not None and await store.load("LAST") is None
    saver.changed()
    beat = saver._beat
    assert beat is not None
    saver.changed(urgent=True)  # sooner: written at once by its own writer, off the beat
    assert saver._beat is None and saver not in beat.savers and saver._task is not None
    await settle()  # no time passes
    assert not saver.pending
    assert saver.saves == 2 and calls == [["ROOM", "MORE"]]
    saver.changed()
    await saver.close()  # pending changes dropped: it leaves its beat
    assert saver._beat is None and saver._task is None
    await clock.advance(0.3)
    assert saver.saves == 2 and calls == [["ROOM", "MORE"]]


async def test_a_change_during_a_beats_write_waits_for_the_next_beat_or_goes_at_once() -> None:
    """The beat's write under way holds the room: a change meanwhile is written on the
    next beat, an urgent one as soon as the write lands; a failed write is retried by the
    room's own writer with the latest snapshot."""
    gate = asyncio.Event()
    written: list[tuple[str, int]] = []
    written_at: list[float] = []
    current = {"n": 1}

    class Slow(MemoryStore):
        fail = 0

        async def save(self, code: str, snapshot: Any, seen_at: float | None = None) -> None:
            await gate.wait()
            if self.fail:
                self.fail -= 1
                raise StoreError("the disk is full")
            written.append((code, snapshot["n"]))
            written_at.append(clock.now())
            await super().save(code, snapshot, seen_at)

    store = Slow()
    clock = ManualClock()
    saver = Saver(
        store,
        "ROOM",
        lambda: {SCHEMA_KEY: 1, "n": current["n"]},
        delay=0.1,
        first_retry=0.02,
        clock=clock,
    )
    saver.changed()
    await clock.advance(0.1)
    assert saver._in_batch  # the beat's write, held at the gate
    current["n"] = 2
    await clock.advance(0.03)
    its_beat = beat_due(clock.now(), 0.1, 0.1)
    saver.changed()  # during the write: not a second writer, the next beat
    assert saver._task is None and saver._beat is None
    gate.set()
    await settle()  # the first write lands: the change joins its beat
    assert written == [("ROOM", 1)] and saver._beat is not None
    await clock.advance_to(its_beat - 0.001)
    assert written == [("ROOM", 1)]
    await clock.advance_to(its_beat)
    assert not saver.pending
    assert written_at[1] == its_beat  # on the change's beat, not before
    assert written == [("ROOM", 1), ("ROOM", 2)] and saver.saves == 2
    gate.clear()
    current["n"] = 3
    saver.changed()
    await clock.advance(0.1)
    assert saver._in_batch  # the third write
    current["n"] = 4
    saver.changed(urgent=True)  # the game ended while the beat's write was under way
    store.fail = 1  # and that write fails
    gate.set()
    await settle()
    assert saver.failures == 1 and saver.pending  # failed: retried after its backoff
    await clock.advance(0.02)
    assert written[-1] == ("ROOM", 4)  # retried with the latest
    assert saver.saves == 3 and not saver.pending
    await saver.close()


async def test_a_room_discarded_during_its_beats_write_stays_deleted() -> None:
    gate = asyncio.Event()

    class Slow(MemoryStore):
        async def save(self, code: str, snapshot: Any, seen_at: float | None = None) -> None:
            await gate.wait()
            await super().save(code, snapshot, seen_at)

    store, clock = Slow(), ManualClock()
    saver = Saver(store, "ROOM", lambda: {SCHEMA_KEY: 1, "code": "ROOM"}, delay=0.05, clock=clock)
    saver.changed()
    await clock.advance(0.05)
    assert saver._in_batch  # the beat's write, held at the gate
    discarding = asyncio.create_task(saver.discard())
    await clock.advance(60)
    assert not discarding.done()  # the delete waits for the write under way
    gate.set()
    await asyncio.wait_for(discarding, WAIT)
    assert await store.load("ROOM") is None and await store.codes() == []


async def test_a_room_deleted_from_a_sqlite_batch_leaves_the_others_answered_by_the_write(
    tmp_path: Path,
) -> None:
    """The rows of one `save_many` share their answer: deleting one of them must not answer
    the others before their transaction has, and a failed transaction fails them."""
    store = SqliteStore(tmp_path / "tables.db")
    await store.open()
    run = store._run

    async def failing(work: Any) -> Any:
        if getattr(work, "func", None) is not None:  # the batch's upsert (a partial)
            raise StoreError("the disk is full")
        return await run(work)

    store._run = failing  # type: ignore[method-assign]
    items = [(code, {SCHEMA_KEY: 1, "code": code}, None) for code in ("ROOMA", "ROOMB")]
    saving = asyncio.create_task(store.save_many(items))
    await asyncio.sleep(0)  # queued, the writer gathering its beat
    assert len(store._queued) == 2
    await store.delete("ROOMA")
    outcomes = await asyncio.wait_for(saving, WAIT)
    assert outcomes[0] is None or isinstance(outcomes[0], StoreError)
    assert isinstance(outcomes[1], StoreError)  # not "saved": it never was
    await store.close()


async def test_a_store_that_fails_a_beat_strands_no_room_of_another_store() -> None:
    """Rooms of the same beat on two stores: one store's `save_many` raising is that store's
    rooms' failure (retried one by one), and the other store's rooms are written."""

    class Broken(MemoryStore):
        async def save_many(self, items: Any) -> list[BaseException | None]:
            raise RuntimeError("the batch call broke")

    broken, fine = Broken(), MemoryStore()
    savers = [
        Saver(store, code, lambda c=code: {SCHEMA_KEY: 1, "code": c}, delay=0.1, first_retry=0.01)
        for store, code in ((broken, "ROOMA"), (fine, "ROOMB"))
    ]
    for saver in savers:
        saver.changed()
    assert savers[0]._beat is savers[1]._beat
    await until(lambda: not any(saver.pending for saver in savers), "both rooms written")
    assert savers[0].failures == 1 and savers[0].saves == 1  # retried by its own writer
    assert savers[1].failures == 0 and savers[1].saves == 1
    assert await broken.load("ROOMA") is not None and await fine.load("ROOMB") is not None


async def test_what_is_not_written_shows_its_age_and_a_busy_table_never_falls_behind() -> None:
    """`unsaved_since` of a busy table stays within the delay (every write takes the changes
    made so far); while the store fails, the oldest change ages, the room is `failing` and
    each failure is told; once a write lands nothing is behind."""
    delay, beat = 0.2, 0.05
    clock = ManualClock()

    class Full(MemoryStore):
        full = False

        async def save_many(self, items: Any) -> list[BaseException | None]:
            if self.full:
                return [StoreError("database or disk is full")] * len(items)
            return await super().save_many(items)

        async def save(self, code: str, snapshot: Any, seen_at: float | None = None) -> None:
            if self.full:
                raise StoreError("database or disk is full")
            await super().save(code, snapshot, seen_at)

    store, failed = Full(), []
    saver = Saver(
        store,
        "ROOM",
        lambda: {SCHEMA_KEY: 1, "code": "ROOM"},
        delay=delay,
        beat=beat,
        clock=clock,
        on_failed=lambda: failed.append(clock.now()),
    )
    rng = random.Random(3)

    async def play(seconds: float) -> float:
        """Changes at a busy table's pace; the most any change waited unwritten."""
        behind, ends = 0.0, clock.now() + seconds
        while clock.now() < ends:
            saver.changed()
            await clock.advance(rng.uniform(0.02, 0.12))
            if saver.unsaved_since is not None:
                behind = max(behind, clock.now() - saver.unsaved_since)
        return behind

    assert await play(5.0) <= delay + 1e-9
    assert failed == [] and not saver.failing

    store.full = True
    full_at = clock.now()
    await play(3.0)
    assert saver.failing and len(failed) >= 2  # retried with backoff, each failure told
    assert saver.unsaved_since is not None and saver.unsaved_since <= full_at + beat

    store.full = False
    await clock.advance(LAST_RETRY_SECONDS + delay)
    assert not saver.failing and saver.unsaved_since is None and not saver.pending
