"""All settings, read once from the environment (prefix SLAPJACK_)."""

import os
import socket
from functools import lru_cache
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.ops.store_url import parse_store_url

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


class Settings(BaseSettings):
    """Every setting, with the description docs/settings.md is generated from
    (`python -m tools.settings_doc`)."""

    model_config = SettingsConfigDict(env_prefix="SLAPJACK_")

    host: str = Field(default="0.0.0.0", description="The address `python -m app` listens on.")
    port: int = Field(
        default=8000, ge=1, le=65535, description="The port `python -m app` listens on."
    )
    tls_cert: str = Field(
        default="",
        description="A certificate (a PEM file) for `python -m app` to serve HTTPS itself, "
        "with `SLAPJACK_TLS_KEY`: on an https:// address phones keep their screens on with the "
        "Wake Lock API and have the share sheet and the clipboard ([Serving HTTPS]"
        "(operations.md#serving-https)). Empty: plain HTTP.",
    )
    tls_key: str = Field(
        default="", description="The private key (a PEM file) of `SLAPJACK_TLS_CERT`."
    )
    log_level: str = Field(
        default="info",
        description="`critical`, `error`, `warning`, `info` or `debug`. The app logs one JSON "
        "line per event worth knowing (a room opened or closed, a game started or over, a "
        "refused or failed message, a save failed, the store unavailable...), never a token "
        "or a face-down card.",
    )
    # Set by the Docker image: the address seen inside a container is not the one to share.
    in_container: bool = Field(
        default=False,
        description="Set by the Docker image: the start-up line then does not print the "
        "container's own address.",
    )

    # "*" would switch python-socketio's Origin check off: refused by a validator below.
    allowed_origins: list[str] = Field(
        default=[],
        description="A page may always connect to the server that served it, at whatever "
        "address, port or name it was opened. This JSON list adds the origins of pages served "
        "from elsewhere, e.g. `'[\"https://slap.example\"]'`. `*` is refused.",
    )
    trusted_proxies: str = Field(
        default="127.0.0.1",
        description="Comma-separated addresses (or `*`) whose `X-Forwarded-For` and "
        "`X-Forwarded-Proto` headers are believed: your reverse proxy. Per-address limits and "
        "logs use the client address derived through them; everyone else's headers are "
        "ignored.",
    )
    drain_seconds: float = Field(
        default=2.0,
        ge=0,
        le=60,
        description="On SIGTERM: at most this long to save every table, tell every connection "
        "the server is restarting and refuse new rooms (a last bounded save follows the "
        "close, within this again).",
    )
    shutdown_seconds: int = Field(
        default=8,
        ge=1,
        le=300,
        description="On SIGTERM, after the drain: at most this long to close the connections. "
        "Keep a container's stop grace period above drain + shutdown.",
    )

    max_message_bytes: int = Field(
        default=4096,
        ge=256,
        le=65536,
        description="The largest incoming message (Engine.IO and the WebSocket) and HTTP "
        "body. Served by `uvicorn app.main:app` instead of `python -m app`, add "
        "`--ws-max-size 4096 --ws-per-message-deflate false` for the WebSocket side.",
    )
    rate_per_second: float = Field(
        default=20.0,
        gt=0,
        description="Per connection: incoming frames a second (a token bucket).",
    )
    rate_burst: int = Field(
        default=40, ge=1, description="Per connection: the token bucket's burst."
    )
    rooms_per_minute: float = Field(
        default=30.0,
        gt=0,
        description="New rooms one client address may open a minute (bursts of as many).",
    )
    # A reconnect loop must not flood a room with states.
    connects_per_minute: float = Field(
        default=120.0,
        gt=0,
        description="Connections one client address may open a minute (bursts of as many).",
    )
    # A loop of bare connections costs the server, and its log, little.
    opens_per_minute: float = Field(
        default=600.0,
        gt=0,
        description="Engine.IO sessions (a websocket, or a long-polling session) one client "
        "address may open a minute, joined or not (bursts of as many); beyond, refused (`401`).",
    )
    flood_cutoff: int = Field(
        default=40,
        ge=1,
        description="Refused (rate-limited or malformed) frames in a row before the "
        "connection is closed at the transport.",
    )
    # The arithmetic of these three: docs/operations.md, "What one address, and a botnet,
    # can do" (bench/guessing.py measures it).
    wrong_codes_per_minute: float = Field(
        default=1.0,
        gt=0,
        description="Room codes that do not exist one client address may try a minute on "
        "average, every way there is to try one (`GET /api/rooms/{code}`, the room, TV and QR "
        "pages, a Socket.IO connection); right codes cost nothing. Beyond, every look-up "
        "from the address is refused (`429` `rate_limited`) until its budget comes back. In "
        "a cluster, counted in Redis across the processes.",
    )
    wrong_codes_burst: int = Field(
        default=10,
        ge=1,
        description="Wrong room codes one client address may try at once before "
        "`SLAPJACK_WRONG_CODES_PER_MINUTE` applies, and the most one wrong code can cost "
        "during a wave of them.",
    )
    guess_wave_per_minute: float = Field(
        default=100.0,
        gt=0,
        description="Wrong room codes a minute from everyone together (in a cluster, across "
        "the processes) beyond which each further wrong code costs its address more: as many "
        "times one as the rate is this, up to `SLAPJACK_WRONG_CODES_BURST`. Right codes never "
        "cost anything.",
    )
    send_queue_limit: int = Field(
        default=500,
        ge=10,
        description="Messages waiting to be sent to one connection before it counts as a "
        "client that never reads and is dropped (the room goes on without it).",
    )

    request_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description="A request's headers and body must arrive within this (against "
        "slowloris clients).",
    )
    # Counted from each connection's open (app/realtime/doors.py), whichever transport
    # serves it: trickled requests and websockets that never join count.
    max_connections: int = Field(
        default=4000,
        ge=1,
        description="Connections and requests served at once; beyond, `503`. 3,600 websockets "
        "at about 29 KB each is ~105 MB. Keep the process's file limit (`ulimit -n`) above it.",
    )
    http_reserve: int = Field(
        default=400,
        ge=0,
        description="Of `SLAPJACK_MAX_CONNECTIONS`, the connections websockets never take: pages, "
        "the API and `/healthz` answer whatever websockets are open (a websocket past its "
        "share is answered `503` at its upgrade).",
    )
    connections_per_address: int = Field(
        default=500,
        ge=1,
        description="Connections one client address (an IPv6 one: its /64) may hold open at "
        "once, HTTP and websocket, counted from the moment each opens (before a byte of it is "
        "read); beyond, a connection is closed as it opens. A trusted proxy's own address has "
        "no cap of its own: cap per address in the proxy (nginx `limit_conn`).",
    )
    websockets_per_address: int = Field(
        default=300,
        ge=1,
        description="Of those, websockets (beyond, `503` at the upgrade). A school behind one "
        "NAT playing 40 tables of 4 with a TV each holds 200 websockets, and a few HTTP "
        "connections each for a moment while pages load: raise both for a bigger crowd "
        "behind one address.",
    )
    connect_deadline_seconds: float = Field(
        default=5.0,
        gt=0,
        description="A connection that has not joined a room (its Socket.IO `CONNECT`, "
        "refused or not) this long after it opened is closed.",
    )
    allowed_hosts: list[str] = Field(
        default=[],
        description="JSON list of the host names served, against DNS rebinding "
        "(e.g. `'[\"slap.example\"]'`): a request for any other `Host` gets `400`. Empty: any "
        "host is served.",
    )
    expose_metrics: bool = Field(
        default=True,
        description="Serve Prometheus metrics at `/metrics`; `false` answers `404` (keep them "
        "private on a public address).",
    )
    api_docs: bool = Field(
        default=False,
        description="Serve the HTTP API's description at `/docs`, `/redoc` and "
        "`/openapi.json` (off on a public server).",
    )

    ping_interval_seconds: float = Field(
        default=10.0,
        gt=0,
        description="How often each connection is pinged, to notice one that vanished.",
    )
    ping_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        description="A connection whose pong is this late is dropped.",
    )

    disconnected_autoflip_seconds: float = Field(
        default=5.0,
        ge=0,
        description="The server flips for a disconnected seat whose turn it is after this long.",
    )
    idle_autoflip_seconds: float = Field(
        default=10.0,
        gt=0,
        description="The server flips for the seat to play once its turn has lasted this long.",
    )
    autoflip_pause_seconds: float = Field(
        default=1.0,
        ge=0,
        description="The least time a disconnected seat's turn lasts before the server flips "
        "for it.",
    )
    host_handover_seconds: float = Field(
        default=10.0,
        ge=0,
        description="How long a disconnected host keeps the role before it passes on.",
    )
    room_expiry_seconds: float = Field(
        default=600.0,
        gt=0,
        description="A room with nobody connected this long is closed (and deleted from the "
        "store; at start, a saved table nobody was at for this long is dropped).",
    )
    unused_room_seconds: float = Field(
        default=300.0,
        gt=0,
        description="A room no game was dealt at closes once nobody came in or sent a command "
        "for this long, whoever is connected to it (a link never opened, a script's room, "
        "idle sockets holding a room); and one only its opener came to, this long after they "
        "left.",
    )
    open_rooms_per_address: int = Field(
        default=5,
        ge=1,
        description="Rooms one client address may hold open (it opened them, and they have not "
        "closed), used or not; beyond, `POST /api/rooms` answers `429` `rate_limited` (in a "
        "cluster, counted in Redis across the processes). With every room taken "
        "(`SLAPJACK_MAX_ROOMS`), a room nobody is in (never used first, then the oldest) of "
        "the address that opened the most gives way to an address that opened fewer (one "
        "process). A school opening 40 tables from one NAT address raises this.",
    )
    abandon_seconds: float = Field(
        default=60.0,
        gt=0,
        description="A game in which every seat still in belongs to a person who is gone ends "
        "after this long.",
    )
    bot_time_scale: float = Field(
        default=1.0,
        gt=0,
        description="Multiplies every bot delay (the tests use about 0.02).",
    )
    lag_ping_seconds: float = Field(
        default=2.0,
        gt=0,
        le=60,
        description="While a room judges lag-fair or false starts (its house rules `lag_fair`, "
        "`false_starts`: docs/protocol.md), a person's round trip is measured on every state "
        "that shows a new trigger, and this often until it has 3 samples: a `ping` riding on "
        "the next state they are sent, or alone from a quiet table.",
    )
    # What a player holding back pongs gains in every race: docs/protocol.md, "Lag-fair
    # judging", says why 50 ms (bench/photo_finish.py).
    lag_cap_ms: int = Field(
        default=50,
        ge=0,
        le=1000,
        description="Lag-fair judging: the longest network delay (ms) any player is credited "
        "with, and so what a player who holds back pongs gains in every race.",
    )

    # Why 100 ms: docs/protocol.md, "False starts".
    false_start_ms: int = Field(
        default=100,
        ge=0,
        le=1000,
        description="A person's slap that reaches the server sooner than this (ms) after the "
        "trigger was sent to them, less their smallest recent round trip, is a false start: "
        "it takes nothing ([False starts](protocol.md#false-starts)). `0`: never (the house "
        "rule `false_starts` turns it off for one table).",
    )

    store: str = Field(
        default="sqlite:///slapjack.db",
        description="Where tables are kept so that a restart, a deploy or a crash loses no "
        "game: `sqlite:///PATH` (a SQLite file; three slashes: relative to the working "
        "directory, four: absolute; the Docker image sets `sqlite:////data/slapjack.db`), "
        "`redis://[:PASSWORD@]HOST:PORT/DB` (Redis, which also turns the cluster on; "
        "`rediss://` with TLS, `redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/SERVICE/DB` "
        "through Redis Sentinel: docs/operations.md), or `memory` (nowhere: gone with the "
        "process). A store that cannot be reached at start stops the server.",
    )
    store_damaged: Literal["move", "refuse"] = Field(
        default="move",
        description="A SQLite file that is no database, or a damaged one (`PRAGMA quick_check` "
        "at start): `move` renames it (and its `-wal`, `-shm`) to its name with the time added, "
        "`slapjack.db.damaged-20260101T120000Z`, logs `store_damaged` (critical, with both "
        "paths) and starts with an empty store; `refuse` does not start (`store_unavailable`), "
        "as with a store that cannot be opened. A zero-length file is logged "
        "(`store_file_empty`) and used as an empty store.",
    )
    save_seconds: float = Field(
        default=0.5,
        gt=0,
        le=60,
        description="A changed table is saved at most this long after the change (at once "
        "when a game starts or ends): the most play a crash can lose.",
    )

    # The collector's schedule is app/ops/collector.py's.
    gc_young_seconds: float = Field(
        default=0.025,
        ge=0,
        le=10,
        description="The garbage collector under `python -m app`: a young collection at "
        "least every this many seconds while each takes 0.5 ms of CPU or more, up to 8 times "
        "that apart while each takes less, what survives it frozen; a full collection once "
        "the heap grew by a quarter. `0`: CPython's own collector with `SLAPJACK_GC_THRESHOLDS`.",
    )
    gc_thresholds: tuple[int, int, int] = Field(
        default=(5_000, 100, 10),
        description="With `SLAPJACK_GC_YOUNG_SECONDS=0` only: the collector's thresholds "
        "(`gc.set_threshold`), as a JSON list, set once start-up is done.",
    )

    node_id: str = Field(
        default="",
        description="A cluster (`redis://` store, several processes behind one router): this "
        "process's name in table leases, unique per process. Empty: `hostname:port`.",
    )
    lease_seconds: float = Field(
        default=5.0,
        ge=1.5,
        le=120,
        description="A cluster: how long a table's lease outlives its owner's last renewal "
        "(about every second). A process that dies loses its tables to another this long "
        "after.",
    )
    redis_connections: int = Field(
        default=32,
        ge=2,
        le=1000,
        description="A Redis store: the most connections each of the process's Redis clients "
        "opens (the tables' store; the leases, with the hand-over channel; the shared "
        "limits). A command that finds them all busy waits up to 20 s for one rather than "
        "failing: hundreds of tables saved, restored or handed over at once queue.",
    )

    max_rooms: int = Field(
        default=1000,
        ge=1,
        description="Open rooms at once (in a cluster, across the processes: the tables in "
        "Redis that someone was at within `SLAPJACK_ROOM_EXPIRY_SECONDS`); beyond, room "
        "creation answers `503`.",
    )
    max_people_per_room: int = Field(
        default=40, ge=1, description="People connected to one room at once (players and watchers)."
    )

    @field_validator("allowed_origins")
    @classmethod
    def _origin_checks_stay_on(cls, origins: list[str]) -> list[str]:
        if "*" in origins:
            raise ValueError("list the origins allowed; '*' is refused")
        return origins

    @field_validator("store")
    @classmethod
    def _known_store(cls, url: str) -> str:
        parse_store_url(url)  # ValueError naming the value
        return url.strip()

    @model_validator(mode="after")
    def _tls_pair(self) -> "Settings":
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("tls_cert and tls_key go together: set both or neither")
        for path in (self.tls_cert, self.tls_key):
            if path and not os.path.isfile(path):
                raise ValueError(f"no such file: {path}")
        return self

    @model_validator(mode="after")
    def _default_node_id(self) -> "Settings":
        if not self.node_id.strip():
            self.node_id = f"{socket.gethostname()}:{self.port}"
        self.node_id = self.node_id.strip()
        return self

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, level: str) -> str:
        if level.lower() not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {', '.join(LOG_LEVELS)}")
        return level.lower()


def lan_address() -> str:
    """The machine's address on the local network, for the link friends open."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: UDP connect only picks a route
        return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"
    finally:
        probe.close()


@lru_cache
def get_settings() -> Settings:
    return Settings()
