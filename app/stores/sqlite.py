"""The `sqlite:///PATH` store: the embedded default, one file, durable across restarts and crashes.

The stdlib `sqlite3` runs on one thread of its own (a single-thread executor owning the
connection), so the event loop never waits on the disk. WAL mode lets reads go on beside a
write; each save is one upsert in one transaction, so a kill at any moment leaves either the
previous snapshot or the new one, never half of one. `synchronous=FULL`: a save that
returned survives a power cut too (in WAL mode that is one fsync of the log per commit).

Saves that arrive together (the Savers of many rooms wake on the same beat) are written in
one transaction by one trip to the thread: a trip and a commit cost far more than a row.

The thread gives way to the event loop (`STORE_THREAD_NICE`): where the two share a core
(one vCPU, every core busy, or a server pinned to one), a beat's commit is a few ms of
SQLite's own work without the GIL, and at the same priority the kernel let it run on while
the loop's flips and slaps waited (bench/load.py at 1,000 tables: the collector's pauses read 3-6 ms
of wall time for 1 ms of work, and not at all with a store without a thread). At nice 10
the loop takes the core back as soon as it has work. The thread still has a tenth of the
weight of any other busy process, not nice 19's hundredth: with another process hogging the
core, nice 19's writes landed 0.1 s later at the median and the requests that wait on this
thread (a new room's code check and first save) would wait as long; nice 10's, 10 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TypeVar

from app.ops.logs import log_event
from app.stores.base import (
    NEWEST_SCHEMA,
    Savable,
    Snapshot,
    StoreError,
    decode_snapshot,
    encode_snapshot,
    wall_clock,
)

T = TypeVar("T")
Row = tuple[str, int, float, float, str]  # code, schema, saved_at, seen_at, snapshot

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS tables (
    code     TEXT PRIMARY KEY,
    schema   INTEGER NOT NULL,  -- the snapshot's schema version
    saved_at REAL NOT NULL,     -- wall clock, seconds since the epoch
    seen_at  REAL NOT NULL,     -- wall clock: someone was last connected then (expiry)
    snapshot TEXT NOT NULL      -- Table.to_dict() as JSON, or a journal (docs/table.md)
)
"""

UPSERT_SQL = """
INSERT INTO tables (code, schema, saved_at, seen_at, snapshot) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (code) DO UPDATE SET
    schema = excluded.schema, saved_at = excluded.saved_at,
    seen_at = excluded.seen_at, snapshot = excluded.snapshot
"""

# How long the first save of a batch waits for the others of its beat (the Savers' timers
# and their tasks wake over a few turns of the loop): a few ms on a write nobody waits for.
GATHER_SECONDS = 0.005
BUSY_TIMEOUT_SECONDS = 5.0  # another process (a backup, an old server still closing) holds the file
STORE_THREAD_NICE = 10  # the store's thread, below the event loop's (module docstring)


class SqliteStore:
    def __init__(
        self, path: Path | str, *, newest_schema: int = NEWEST_SCHEMA, damaged: str = "move"
    ) -> None:
        self.path = Path(path)
        self.newest_schema = newest_schema
        self.damaged = damaged  # "move": a damaged file is moved aside; "refuse": not opened
        self._executor: ThreadPoolExecutor | None = None
        self._db: sqlite3.Connection | None = None  # touched only on the executor's thread
        # Rows waiting for the next batch, each with the future its save() awaits.
        self._queued: list[tuple[Row, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Creates the file (and its folder) and the table; StoreError names the path if not."""
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="sqlite-store", initializer=give_way
        )
        try:
            await self._call(self._connect)
        except BaseException:
            self._executor.shutdown(wait=False)
            self._executor = None
            raise

    async def close(self) -> None:
        if self._executor is None:
            return
        if self._writer is not None and not self._writer.done():
            await asyncio.wait([self._writer])  # the rows already handed in land first
        await self._call(self._disconnect)
        self._executor.shutdown(wait=True)
        self._executor = None

    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> None:
        (outcome,) = await self.save_many([(code, snapshot, seen_at)])
        if outcome is not None:
            raise outcome

    async def save_many(
        self, items: Sequence[tuple[str, Savable, float | None]]
    ) -> list[BaseException | None]:
        """Saves (code, snapshot, seen_at) of several tables, written in one transaction
        (with any others queued meanwhile): what each one came to, in order (None: saved).
        A snapshot that cannot be encoded fails alone; a failed transaction fails them all.
        Each is encoded here, on the loop: its dict may change once this coroutine yields."""
        outcomes: list[BaseException | None] = [None] * len(items)
        now = wall_clock()
        done = asyncio.get_running_loop().create_future()  # one for the whole batch
        queued = []
        for index, (code, snapshot, seen_at) in enumerate(items):
            try:
                text, schema = encode_snapshot(code, snapshot)
            except (TypeError, ValueError) as error:
                outcomes[index] = error
                continue
            row = (code, schema, now, now if seen_at is None else seen_at, text)
            self._queued.append((row, done))
            queued.append(index)
        if not queued:
            return outcomes
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_queued())
        try:
            await done
        except Exception as error:
            for index in queued:
                outcomes[index] = error
        return outcomes

    async def _write_queued(self) -> None:
        """Writes every queued row in one transaction, again while more arrived meanwhile."""
        await asyncio.sleep(GATHER_SECONDS)  # the saves of this same beat join the batch
        while self._queued:
            batch, self._queued = self._queued, []
            rows = list({row[0]: row for row, _ in batch}.values())  # a table twice: its newest
            outcome: BaseException | None = None
            try:
                await self._run(partial(_upsert, rows))
            except BaseException as error:  # the savers hear of it, cancelled or not
                outcome = error
            for _, done in batch:
                if done.done():
                    continue  # its saver gave up waiting (closed)
                if outcome is None:
                    done.set_result(None)
                elif isinstance(outcome, StoreError):
                    done.set_exception(outcome)
                else:
                    done.set_exception(StoreError(f"sqlite store {self.path}: {outcome!r}"))
            if isinstance(outcome, asyncio.CancelledError):
                raise outcome

    async def load(self, code: str) -> Snapshot | None:
        def read(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT snapshot FROM tables WHERE code = ?", (code,)).fetchone()
            return None if row is None else row[0]

        return decode_snapshot(code, await self._run(read), self.newest_schema)

    async def delete(self, code: str) -> None:
        # A save still queued must not bring the table back after this (one already on its
        # way to the thread is written first: the thread takes work in order).
        for row, done in [q for q in self._queued if q[0][0] == code]:
            self._queued.remove((row, done))
            # A batch's rows share their future (`save_many`): it is the writer's to answer
            # while any other row of it still waits, which may yet fail.
            if not done.done() and not any(other is done for _, other in self._queued):
                done.set_result(None)
        await self._run(lambda db: db.execute("DELETE FROM tables WHERE code = ?", (code,)))

    async def codes(self) -> list[str]:
        rows = await self._run(
            lambda db: db.execute("SELECT code FROM tables ORDER BY code").fetchall()
        )
        return [code for (code,) in rows]

    async def exists(self, code: str) -> bool:
        row = await self._run(
            lambda db: db.execute("SELECT 1 FROM tables WHERE code = ?", (code,)).fetchone()
        )
        return row is not None

    async def purge_expired(self, older_than_seconds: float) -> list[str]:
        cutoff = wall_clock() - older_than_seconds

        def purge(db: sqlite3.Connection) -> list[str]:
            rows = db.execute("DELETE FROM tables WHERE seen_at < ? RETURNING code", (cutoff,))
            return sorted(code for (code,) in rows.fetchall())

        return await self._run(purge)

    # ---- the store's own thread --------------------------------------------------------

    async def _call(self, work: Callable[[], T]) -> T:
        if self._executor is None:
            raise StoreError(f"sqlite store {self.path} is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._call(lambda: self._transaction(work))

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if self._db is None:
            raise StoreError(f"sqlite store {self.path} is not open")
        try:
            with self._db:  # one transaction: committed as a whole, or rolled back as a whole
                return work(self._db)
        except sqlite3.Error as error:
            raise StoreError(f"sqlite store {self.path}: {error}") from error

    def _connect(self) -> None:
        with contextlib.suppress(OSError):
            if self.path.stat().st_size == 0:  # SQLite reads it as an empty database
                log_event("store_file_empty", level=logging.WARNING, path=str(self.path))
        try:
            self._db = self._open_file()
        except _Damaged as damaged:
            if self.damaged == "refuse":
                raise StoreError(f"sqlite store {self.path}: {damaged}") from damaged
            moved = self._move_aside()
            log_event(
                "store_damaged",
                level=logging.CRITICAL,
                path=str(self.path),
                moved_to=str(moved),
                reason=str(damaged),
            )
            self._db = self._open_file()  # a new, empty file where the damaged one was

    def _open_file(self) -> sqlite3.Connection:
        """The database at `path`, in WAL mode, with its table; _Damaged if the file is no
        (sound) SQLite database, StoreError if it cannot be opened at all."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            keep_private(self.path)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"sqlite store {self.path}: {error}") from error
        try:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode != "wal":
                raise StoreError(f"sqlite store {self.path}: WAL mode refused ({mode})")
            db.execute("PRAGMA synchronous=FULL")
            with db:
                db.execute(SCHEMA_SQL)
            check = db.execute("PRAGMA quick_check(1)").fetchone()[0]
            if check != "ok":
                raise _Damaged(f"quick_check: {check}")
        except sqlite3.Error as error:
            db.close()
            if _is_damage(error):
                raise _Damaged(str(error)) from error
            raise StoreError(f"sqlite store {self.path}: {error}") from error
        except BaseException:
            db.close()
            raise
        return db

    def _move_aside(self) -> Path:
        """Renames the damaged file (and its -wal and -shm files) to its name with the time
        added, next to it: kept for whoever wants to look, out of the server's way."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(wall_clock()))
        moved = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                try:
                    source.rename(f"{moved}{suffix}")
                except OSError as error:
                    raise StoreError(
                        f"sqlite store {self.path}: moving it aside: {error}"
                    ) from error
        return moved

    def _disconnect(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def give_way() -> None:
    """Run first on the store's thread: lowers that thread's priority to STORE_THREAD_NICE,
    never raising it (a server started under `nice` keeps its own, if lower). Linux only,
    where a thread's priority is its own; elsewhere, and if the system refuses, the thread
    runs at the process's priority as before."""
    if sys.platform != "linux":
        return
    thread = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, thread) < STORE_THREAD_NICE:
            os.setpriority(os.PRIO_PROCESS, thread, STORE_THREAD_NICE)
    except OSError:
        pass


class _Damaged(Exception):
    """The file is no SQLite database, or a damaged one."""


# SQLite's words for a file that is no database or a damaged one (its other errors, a file
# it cannot open or write, a lock held too long, are not the file's fault).
DAMAGE_WORDS = ("file is not a database", "malformed", "file is encrypted")


def _is_damage(error: sqlite3.Error) -> bool:
    return any(words in str(error) for words in DAMAGE_WORDS)


def _upsert(rows: list[Row], db: sqlite3.Connection) -> None:
    db.executemany(UPSERT_SQL, rows)


PRIVATE = 0o600  # every hidden hand and shuffle seed is in the file: its owner's alone


def keep_private(path: Path) -> None:
    """Creates the database file readable and writable by its owner only, and makes an
    existing one (and its -wal and -shm) so. SQLite creates -wal and -shm with the
    database file's own permissions."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE))
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            if file.stat().st_mode & 0o777 != PRIVATE:
                file.chmod(PRIVATE)
