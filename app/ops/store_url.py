"""Where tables are kept, as `SLAPJACK_STORE` names it: parsed once, checked by the settings
and opened by app/stores."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


@dataclass(frozen=True)
class StoreUrl:
    kind: str  # "memory" | "sqlite" | "redis"
    url: str
    path: Path | None = None  # sqlite only


def parse_store_url(url: str) -> StoreUrl:
    """The store a `SLAPJACK_STORE` value names; ValueError (naming the value) if none.

    SQLite paths follow SQLAlchemy: `sqlite:///x.db` is relative to the working directory,
    `sqlite:////var/lib/x.db` absolute (the path is what follows the third slash)."""
    url = url.strip()
    if url == "memory":
        return StoreUrl("memory", url)
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")
        if not path or path.endswith("/") or path == ":memory:":
            raise ValueError(f"{url!r}: name a database file, e.g. sqlite:///slapjack.db")
        return StoreUrl("sqlite", url, Path(path))
    parts = urlsplit(url)
    if parts.scheme in ("redis", "rediss"):
        try:
            port = parts.port  # raises on a port that is not a number
        except ValueError:
            port = -1
        db = parts.path.strip("/")
        if not parts.hostname or port == -1 or (db and not db.isdigit()):
            raise ValueError(
                f"{_shown(url)!r}: expected redis://HOST:PORT/DB, e.g. redis://127.0.0.1:6379/0"
            )
        return StoreUrl("redis", url)
    raise ValueError(
        f"{_shown(url)!r} is not a store: use memory, sqlite:///PATH (sqlite:////ABSOLUTE/PATH) "
        "or redis://HOST:PORT/DB"
    )


def _shown(url: str) -> str:
    """The URL without its password, for an error line or a log."""
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    return url.replace(f":{password}@", ":***@", 1) if password else url
