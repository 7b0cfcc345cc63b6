"""Where tables are kept between moves and across restarts: memory, SQLite (the embedded
default) or Redis behind one small protocol (app/stores/base.py), opened from `SLAPJACK_STORE`."""

from __future__ import annotations

from app.ops.store_url import StoreUrl, parse_store_url
from app.stores.base import (
    _PLAIN_JSON,
    NEWEST_SCHEMA,
    SCHEMA_KEY,
    LeaseLost,
    RoomStore,
    Savable,
    Snapshot,
    SnapshotText,
    Store,
    StoreError,
    decode_snapshot,
    encode_snapshot,
    restore_all,
    snapshot_version,
    vouched,
    wall_clock,
)

__all__ = [
    "NEWEST_SCHEMA",
    "SCHEMA_KEY",
    "_PLAIN_JSON",
    "LeaseLost",
    "RoomStore",
    "Savable",
    "Snapshot",
    "SnapshotText",
    "Store",
    "StoreError",
    "StoreUrl",
    "decode_snapshot",
    "encode_snapshot",
    "open_store",
    "parse_store_url",
    "restore_all",
    "snapshot_version",
    "vouched",
    "wall_clock",
]


def open_store(
    url: str, *, newest_schema: int = NEWEST_SCHEMA, damaged: str = "move", connections: int = 32
) -> Store:
    """The store for a `SLAPJACK_STORE` value (not yet opened: `await store.open()`);
    `damaged` (SQLite): `move` a file that is no database aside, or `refuse` it;
    `connections` (Redis): each client's connections at most."""
    where = parse_store_url(url)
    if where.kind == "memory":
        from app.stores.memory import MemoryStore

        return MemoryStore(newest_schema=newest_schema)
    if where.kind == "sqlite":
        from app.stores.sqlite import SqliteStore

        assert where.path is not None
        return SqliteStore(where.path, newest_schema=newest_schema, damaged=damaged)
    from app.stores.redis import RedisStore

    return RedisStore(where.url, newest_schema=newest_schema, connections=connections)
