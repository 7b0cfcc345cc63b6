"""How uvicorn serves the app: the one configuration `python -m app` and the tests use.

uvloop and httptools, in production and in the tests alike (plain asyncio never fires a
timer early, so it would hide a bug only uvloop shows), and the limits a public server
needs against slow or greedy clients: a deadline on reading each request (slowloris), a
cap on connections served at once, the trusted proxies whose X-Forwarded-For is believed.
Only uvicorn's documented options: what overrides its protocols is app/realtime/serving.py.
"""

from __future__ import annotations

from typing import Any

import uvicorn

from app.ops.config import Settings
from app.realtime.doors import Doors
from app.realtime.serving import deadline_http

KEEP_ALIVE_SECONDS = 5  # an idle kept-alive connection between requests (uvicorn's default)


def server_config(app: Any, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """uvicorn's configuration for `app`. The HTTP protocol is DeadlineHttp: uvicorn has no
    deadline on reading a request (docs/protocol.md)."""
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "loop": "uvloop",
        # Every connection counted from its open (app/realtime/doors.py).
        "http": deadline_http(settings.request_timeout_seconds, Doors(settings)),
        "ws": "websockets-sansio",  # what uvicorn's "auto" picks where websockets is installed
        "ws_max_size": settings.max_message_bytes,  # the same cap engine.io applies
        # No permessage-deflate (Socket.IO's own server has it off by default too): every
        # browser offers it, and it would cost each connection a compressor and a
        # decompressor (60 KB idle, against 23 KB without) and each state a compression
        # per recipient, for messages of a few hundred bytes on a LAN or a phone network.
        "ws_per_message_deflate": False,
        # No websocket-level keepalive: Engine.IO's own pings (SLAPJACK_PING_INTERVAL_SECONDS)
        # already find a vanished peer, sooner, and keep proxies' idle timers fed. uvicorn's
        # would add two timers per connection, and a ping written and a pong read per
        # connection every 20 s.
        "ws_ping_interval": None,
        "ws_ping_timeout": None,
        "proxy_headers": True,
        "forwarded_allow_ips": settings.trusted_proxies,
        "limit_concurrency": settings.max_connections,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "timeout_graceful_shutdown": settings.shutdown_seconds,
        "log_config": None,  # uvicorn's own lines go through our JSON log too
        "access_log": False,  # one line per request is noise; metrics count what matters
        **overrides,
    }
    return uvicorn.Config(app, **options)
