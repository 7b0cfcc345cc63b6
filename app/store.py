"""Where a table's snapshot is kept between processes: the `RoomStore` seam.

A snapshot is `Table.to_dict(now)`: plain JSON-able data, with no usable token. The Room
never cares which store holds it; the memory store serves the tests and a single process,
durable stores (SQLite, Redis) implement the same four calls.
"""

from __future__ import annotations

import json
from typing import Any, Protocol


class RoomStore(Protocol):
    async def save(self, code: str, snapshot: dict[str, Any]) -> None: ...

    async def load(self, code: str) -> dict[str, Any] | None: ...

    async def delete(self, code: str) -> None: ...

    async def codes(self) -> list[str]: ...


class MemoryStore:
    """Snapshots in a dict, kept as JSON text so what comes back is what a durable store
    would give: a copy, and only what JSON can carry."""

    def __init__(self) -> None:
        self._saved: dict[str, str] = {}

    async def save(self, code: str, snapshot: dict[str, Any]) -> None:
        self._saved[code] = json.dumps(snapshot, allow_nan=False)

    async def load(self, code: str) -> dict[str, Any] | None:
        text = self._saved.get(code)
        if text is None:
            return None
        snapshot: dict[str, Any] = json.loads(text)
        return snapshot

    async def delete(self, code: str) -> None:
        self._saved.pop(code, None)

    async def codes(self) -> list[str]:
        return sorted(self._saved)
