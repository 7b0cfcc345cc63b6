"""Where tables are kept, as `SLAPJACK_STORE` names it: parsed once, checked by the settings
and opened by app/stores."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class StoreUrl:
    kind: str  # "memory" | "sqlite" | "redis"
    url: str
    path: Path | None = None  # sqlite only
    # redis+sentinel only: the sentinels, the primary's service name, the database number
    # and the password of the Redis servers (the sentinels' own, if any, is the same).
    sentinels: tuple[tuple[str, int], ...] = ()
    service: str = ""
    db: int = 0
    password: str | None = None


SENTINEL_PORT = 26379  # a sentinel named without a port


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
    if url.startswith("redis+sentinel://"):
        return _sentinel_url(url)
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
        f"{_shown(url)!r} is not a store: use memory, sqlite:///PATH (sqlite:////ABSOLUTE/PATH), "
        "redis://[:PASSWORD@]HOST:PORT/DB (rediss:// with TLS) or "
        "redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/SERVICE/DB"
    )


def _sentinel_url(url: str) -> StoreUrl:
    """`redis+sentinel://[:PASSWORD@]HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB]`: the Redis
    primary that Sentinel names SERVICE, followed through failovers."""
    rest = url.removeprefix("redis+sentinel://")
    password = None
    if "@" in rest:
        credentials, rest = rest.rsplit("@", 1)
        password = unquote(credentials.split(":", 1)[1]) if ":" in credentials else None
    where, _, path = rest.partition("/")
    service, _, db = path.partition("/")
    sentinels: list[tuple[str, int]] = []
    for host in where.split(","):
        name, _, port = host.partition(":")
        if not name or (port and not port.isdigit()):
            sentinels = []
            break
        sentinels.append((name, int(port) if port else SENTINEL_PORT))
    db = db.strip("/")
    if not sentinels or not service or (db and not db.isdigit()):
        raise ValueError(
            f"{_shown(url)!r}: expected redis+sentinel://HOST:PORT[,HOST:PORT...]/SERVICE/DB, "
            "e.g. redis+sentinel://10.0.0.5:26379,10.0.0.6:26379/mymaster/0"
        )
    return StoreUrl(
        "redis",
        url,
        sentinels=tuple(sentinels),
        service=unquote(service),
        db=int(db or 0),
        password=password,
    )


def _shown(url: str) -> str:
    """The URL without its password, for an error line or a log."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    credentials, _, where = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{where}" if ":" in credentials else url


shown = _shown
