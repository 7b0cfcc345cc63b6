"""Which web pages may open a Socket.IO connection (the Origin check, always on).

A page may connect to the server that served it: its Origin names the same host and port
as the request's Host header, whatever address the server is reached by (a LAN address, a
port Docker maps, a name behind a proxy that passes Host on). Browsers set both headers
themselves, so another site's page cannot pass for ours. Pages served elsewhere must be
listed in SLAPJACK_ALLOWED_ORIGINS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

OriginCheck = Callable[[str | None, dict[str, Any]], bool]


def origin_check(extra_origins: Iterable[str]) -> OriginCheck:
    listed = {origin.rstrip("/").lower() for origin in extra_origins}

    def allowed(origin: str | None, environ: dict[str, Any]) -> bool:
        # No Origin: python-engineio asks only to build CORS headers, for a request no
        # browser made cross-origin (a same-origin long-poll GET sends none). Nothing to
        # allow; python-engineio checks a present Origin before anything else.
        if origin is None:
            return False
        if origin.rstrip("/").lower() in listed:
            return True
        host = str(environ.get("HTTP_HOST", "")).lower()
        return bool(host) and _netloc(origin) == host

    return allowed


def _netloc(origin: str) -> str:
    try:
        parts = urlsplit(origin)
    except ValueError:
        return ""
    return parts.netloc.lower() if parts.scheme in ("http", "https") else ""
