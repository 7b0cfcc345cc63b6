"""Where tables are kept between restarts: one `SLAPJACK_STORE` URL picks memory, SQLite or Redis.

    store = open_store("sqlite:///slapjack.db")   # or "redis://127.0.0.1:6379/0", or "memory"
    await store.open()
    await store.save("ABCD", table.to_dict(now))  # one atomic write: never a half-written table
    snapshots = await restore_all(store, expiry_seconds=600)

Every store keeps, per room code, the latest snapshot (a JSON-able dict carrying its schema
version under `SCHEMA_KEY`), the wall-clock time it was saved and the wall-clock time someone
was last connected to it (`seen_at`, for expiry). A snapshot that cannot be read back (bad
JSON, not a table, a schema newer than this code) is logged and skipped, never fatal.
`Saver` (app/stores/saver.py) coalesces a room's saves and retries them while a store is down.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from app.ops.logs import log_event
from app.ops.store_url import StoreUrl as StoreUrl
from app.ops.store_url import parse_store_url as parse_store_url

Snapshot = dict[str, Any]

# The key under which Table.to_dict() writes its schema version, and the newest version this
# code can read. A snapshot written by a newer release (a rollback after a deploy) is skipped
# rather than misread.
SCHEMA_KEY = "schema"
NEWEST_SCHEMA = 2  # 1: a whole table; 2: a whole table and the moves since (app/tables/table.py)


class RoomStore(Protocol):
    """The four calls a table's snapshots go through (a cluster node's fenced view of Redis,
    `ClusterStore` in app/cluster/store.py, is one); `Store` below is what the server opens."""

    async def save(self, code: str, snapshot: Savable) -> None: ...

    async def load(self, code: str) -> Snapshot | None: ...

    async def delete(self, code: str) -> None: ...

    async def codes(self) -> list[str]: ...


class Store(Protocol):
    """A store as the server opens it: the seam, plus opening, expiry and `seen_at`."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> None: ...

    async def load(self, code: str) -> Snapshot | None: ...

    async def delete(self, code: str) -> None: ...

    async def codes(self) -> list[str]: ...

    async def exists(self, code: str) -> bool:
        """Whether a table is stored under `code`, readable or not (a new room must not
        take the code of one a newer release wrote, or of one another process owns)."""
        ...

    async def purge_expired(self, older_than_seconds: float) -> list[str]:
        """Deletes the tables nobody was connected to for this long; returns their codes."""
        ...


class StoreError(Exception):
    """The store could not be reached or written: retried by the Saver, never fatal to a game."""


class LeaseLost(StoreError):
    """A fenced save refused: another node holds (or took over) the table's lease."""


@dataclass(frozen=True, slots=True)
class SnapshotText:
    """A snapshot encoded by the one who made it, who vouches that every float in it is
    finite (orjson would write a NaN as null): a store writes `text` as it is. Made by
    `vouched`; a store's `save` takes one wherever it takes a snapshot."""

    text: str
    schema: int
    version: Any = None  # the table's `version`, for a store that keeps track (cluster)


Savable = Snapshot | SnapshotText  # what a store's `save` takes

# orjson refuses (through `_not_plain_json`) what it would otherwise write in a shape of
# its own: dataclasses, datetimes, and subclasses of str, int, dict and list. Enums (an
# IntEnum too), UUIDs and orjson.Fragment it still writes as it sees fit.
_PLAIN_JSON = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _not_plain_json(value: Any) -> Any:
    raise TypeError(f"not plain JSON: {type(value).__name__}")


def vouched(code: str, snapshot: Snapshot) -> SnapshotText:
    """`snapshot`, whose floats its caller has checked are finite, encoded once, without
    `encode_snapshot`'s read-back (which cost more than the encoding: a save's every
    object built again, then compared). Anything but JSON's own types goes the checked
    way (`encode_snapshot`), except what orjson writes without asking: enums, UUIDs and
    orjson.Fragment, which a table's snapshot never holds (tests/app/test_snapshot_golden.py
    checks thousands against their golden copies)."""
    schema, version = _schema(code, snapshot), snapshot.get("version")
    try:
        text = orjson.dumps(snapshot, default=_not_plain_json, option=_PLAIN_JSON).decode()
    except TypeError:  # orjson.JSONEncodeError too: a type, a key or an int it will not write
        text, schema = encode_snapshot(code, snapshot)
    return SnapshotText(text, schema, version)


def snapshot_version(snapshot: Savable) -> Any:
    """The table version a snapshot holds (None if it holds none)."""
    if isinstance(snapshot, SnapshotText):
        return snapshot.version
    return snapshot.get("version")


def _schema(code: str, snapshot: Snapshot) -> int:
    schema = snapshot.get(SCHEMA_KEY)
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise ValueError(f"table {code}: a snapshot carries an int {SCHEMA_KEY!r}")
    return schema


def encode_snapshot(code: str, snapshot: Savable) -> tuple[str, int]:
    """The snapshot as compact JSON, and its schema version (refused here if it has none:
    an unversioned snapshot could never be told apart from a newer one). A `SnapshotText`
    is its own text.

    Written by orjson (a tenth of the stdlib's cost) and read straight back: orjson writes
    NaN and infinities as null, and dataclasses, datetimes and the like as it sees fit, so
    a text that does not read back as the snapshot itself is left to the stdlib encoder,
    which refuses what JSON cannot hold (a NaN time: ValueError) and writes what orjson
    will not (int keys, integers beyond 64 bits) or what does not read back as itself (a
    tuple, as a list) as it always did. Either way, what is stored reads back as this
    snapshot (a tuple as a list)."""
    if isinstance(snapshot, SnapshotText):
        return snapshot.text, snapshot.schema
    schema = _schema(code, snapshot)
    try:
        text = orjson.dumps(snapshot)
        if orjson.loads(text) == snapshot:
            return text.decode(), schema
    except (TypeError, ValueError):  # orjson.JSONEncodeError: not JSON as orjson sees it
        pass
    return json.dumps(snapshot, separators=(",", ":"), allow_nan=False), schema


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is no JSON number")


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or an exponent, refused if it is too big for a float
    (`1e999` would read as an infinity)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is beyond a float")
    return value


def decode_snapshot(code: str, raw: str | bytes | None, newest_schema: int) -> Snapshot | None:
    """A stored snapshot back as a dict, or None (logged) when it cannot be used (a NaN
    or an infinity in it too, written as such or as a number too big for a float: JSON
    has none, no table time is one, and a save would write it as null)."""
    if raw is None:
        return None
    try:
        snapshot = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except (ValueError, UnicodeDecodeError) as error:
        log_event("snapshot_unreadable", level=logging.ERROR, room=code, reason=str(error)[:200])
        return None
    if not isinstance(snapshot, dict):
        log_event("snapshot_unreadable", level=logging.ERROR, room=code, reason="not a table")
        return None
    schema = snapshot.get(SCHEMA_KEY)
    if not isinstance(schema, int) or isinstance(schema, bool):
        log_event("snapshot_unreadable", level=logging.ERROR, room=code, reason="no schema")
        return None
    if schema > newest_schema:
        log_event(
            "snapshot_too_new", level=logging.ERROR, room=code, schema=schema, newest=newest_schema
        )
        return None
    return snapshot


async def restore_all(store: Store, expiry_seconds: float) -> dict[str, Snapshot]:
    """At start: drop the tables nobody was connected to for `expiry_seconds` (wall clock),
    then load every other one. An unreadable snapshot is logged and left out; it never stops
    the server from starting."""
    for code in await store.purge_expired(expiry_seconds):
        log_event("room_expired_in_store", room=code)
    restored: dict[str, Snapshot] = {}
    for code in await store.codes():
        snapshot = await store.load(code)
        if snapshot is not None:
            restored[code] = snapshot
    return restored


def wall_clock() -> float:
    """Seconds since the epoch: stored times must mean the same after a restart."""
    return time.time()
