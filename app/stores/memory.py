"""The `memory` store: tables kept in this process only (no durability; for tests and trials).

Snapshots are kept as JSON text, as the durable stores keep them, so a loaded table never
shares a list with the live one and a snapshot that is not JSON-able fails here too.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.stores.base import (
    NEWEST_SCHEMA,
    Savable,
    Snapshot,
    decode_snapshot,
    encode_snapshot,
    wall_clock,
)


class MemoryStore:
    def __init__(self, *, newest_schema: int = NEWEST_SCHEMA) -> None:
        self.newest_schema = newest_schema
        self._tables: dict[str, tuple[str, float]] = {}  # code -> (snapshot JSON, seen_at)

    async def open(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> None:
        text, _schema = encode_snapshot(code, snapshot)
        self._tables[code] = (text, wall_clock() if seen_at is None else seen_at)

    async def save_many(
        self, items: Sequence[tuple[str, Savable, float | None]]
    ) -> list[BaseException | None]:
        """`save` of each (code, snapshot, seen_at): what each came to (None: saved)."""
        outcomes: list[BaseException | None] = []
        for code, snapshot, seen_at in items:
            try:
                await self.save(code, snapshot, seen_at)
            except Exception as error:
                outcomes.append(error)
            else:
                outcomes.append(None)
        return outcomes

    async def load(self, code: str) -> Snapshot | None:
        stored = self._tables.get(code)
        return decode_snapshot(code, stored[0] if stored else None, self.newest_schema)

    async def delete(self, code: str) -> None:
        self._tables.pop(code, None)

    async def codes(self) -> list[str]:
        return sorted(self._tables)

    async def exists(self, code: str) -> bool:
        return code in self._tables

    async def purge_expired(self, older_than_seconds: float) -> list[str]:
        cutoff = wall_clock() - older_than_seconds
        gone = sorted(code for code, (_, seen) in self._tables.items() if seen < cutoff)
        for code in gone:
            del self._tables[code]
        return gone
