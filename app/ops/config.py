"""All settings, read once from the environment (prefix SLAPJACK_)."""

import socket
from functools import lru_cache

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.ops.store_url import parse_store_url

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLAPJACK_")

    host: str = "0.0.0.0"
    port: int = Field(default=8000, ge=1, le=65535)
    log_level: str = "info"
    # Set by the Docker image: the address seen inside a container is not the one to share.
    in_container: bool = False

    # A page may always connect to the server that served it (its Origin matches the Host
    # it asked). List any other origin allowed to connect as JSON, for a page served from
    # elsewhere: SLAPJACK_ALLOWED_ORIGINS='["https://slap.example"]'. "*" is refused.
    allowed_origins: list[str] = []
    # Addresses (comma-separated, "*" for any) whose X-Forwarded-For/-Proto headers are
    # believed: the reverse proxy in front, if any. Others' are ignored.
    trusted_proxies: str = "127.0.0.1"
    # On SIGTERM: at most this long to tell every room and stop taking new ones, then at
    # most shutdown_seconds more to close the connections.
    drain_seconds: float = Field(default=2.0, ge=0, le=60)
    shutdown_seconds: int = Field(default=8, ge=1, le=300)

    max_message_bytes: int = Field(default=4096, ge=256, le=65536)
    rate_per_second: float = Field(default=20.0, gt=0)
    rate_burst: int = Field(default=40, ge=1)
    rooms_per_minute: float = Field(default=30.0, gt=0)  # new rooms per client address
    # Connections per client address: a reconnect loop must not flood a room with states.
    connects_per_minute: float = Field(default=120.0, gt=0)
    # Engine.IO sessions (websocket or long-polling) one client address may open a minute,
    # joined or not: a loop of bare connections costs the server, and its log, little.
    opens_per_minute: float = Field(default=600.0, gt=0)
    # Refused (rate-limited or malformed) frames in a row before the connection is closed
    # at the transport.
    flood_cutoff: int = Field(default=40, ge=1)
    # Room look-ups (GET /api/rooms/{code}) per client address.
    lookups_per_minute: float = Field(default=120.0, gt=0)
    # Messages waiting to be sent to one connection before it counts as a client that never
    # reads, and is dropped (the room goes on without it).
    send_queue_limit: int = Field(default=500, ge=10)

    # The HTTP server (see docs/protocol.md, "Settings"): a request's headers and body must
    # arrive within request_timeout_seconds (slowloris), and at most max_connections
    # connections and requests are served at once (beyond: 503), of which websockets never
    # take the last http_reserve (pages, the API and /healthz keep room). Per client address
    # (IPv6: per /64), counted from the connection's open: at most connections_per_address
    # open at once, websockets_per_address of them websockets (a school behind one NAT:
    # 40 tables of 4 and a TV each is 200). A trusted proxy's own address has no cap of its
    # own. A connection that has not joined a room (a Socket.IO CONNECT) within
    # connect_deadline_seconds of opening is closed.
    request_timeout_seconds: float = Field(default=10.0, gt=0)
    max_connections: int = Field(default=4000, ge=1)
    http_reserve: int = Field(default=400, ge=0)
    connections_per_address: int = Field(default=500, ge=1)
    websockets_per_address: int = Field(default=300, ge=1)
    connect_deadline_seconds: float = Field(default=5.0, gt=0)
    # Host names the server answers to (JSON list), against DNS rebinding: a page from an
    # attacker's name resolving to this server is refused. Empty: any Host is served.
    allowed_hosts: list[str] = []
    # Serve Prometheus metrics at /metrics. Off to keep them private on a public address.
    expose_metrics: bool = True
    # Serve the HTTP API's description (/docs, /redoc, /openapi.json). Off on a public server.
    api_docs: bool = False

    # How soon a vanished connection is noticed: a ping every interval, gone after the timeout.
    ping_interval_seconds: float = Field(default=10.0, gt=0)
    ping_timeout_seconds: float = Field(default=5.0, gt=0)

    disconnected_autoflip_seconds: float = Field(default=5.0, ge=0)
    idle_autoflip_seconds: float = Field(default=10.0, gt=0)
    # The least time a disconnected seat's turn lasts before the autopilot flips for it.
    autoflip_pause_seconds: float = Field(default=1.0, ge=0)
    host_handover_seconds: float = Field(default=10.0, ge=0)
    room_expiry_seconds: float = Field(default=600.0, gt=0)
    # A room nobody ever joined (created by a script, or a link never opened), or whose one
    # person left before a second came: closed this long after.
    unused_room_seconds: float = Field(default=60.0, gt=0)
    # Rooms one client address may hold open that have not had two people in them yet; when
    # every room (max_rooms) is taken, a room nobody is in is closed for an address holding
    # fewer than the one that opened it.
    open_rooms_per_address: int = Field(default=5, ge=1)
    # A game whose every seat still in belongs to a person who is gone ends after this long.
    abandon_seconds: float = Field(default=60.0, gt=0)
    bot_time_scale: float = Field(default=1.0, gt=0)  # multiplies every bot delay; tests: ~0.02
    # Lag-fair judging (house rule lag_fair): while a room has the rule on, each connection's
    # round trip is measured with an app-level ping this often, and no one is credited with
    # more than the cap.
    lag_ping_seconds: float = Field(default=2.0, gt=0, le=60)
    # The cap is what a player holding back pongs gains in every race: see docs/protocol.md,
    # "Lag-fair judging", for why 50 ms (bench/photo_finish.py).
    lag_cap_ms: int = Field(default=50, ge=0, le=1000)

    # Where tables are kept across restarts (app/stores): memory, sqlite:///PATH (relative to
    # the working directory; sqlite:////PATH absolute) or redis://HOST:PORT/DB.
    store: str = "sqlite:///slapjack.db"
    # A changed table is saved at most this long after the change (at once on a phase change).
    save_seconds: float = Field(default=0.5, gt=0, le=60)

    # The garbage collector (`python -m app`, app/ops/collector.py): a young collection at least
    # every this many seconds under load (up to 8 times that apart while each takes under
    # a quarter of a millisecond), what survives it frozen, a full collection once the
    # frozen heap grew by a quarter. 0: CPython's own automatic collector with `gc_thresholds`
    # (gc.set_threshold), set once start-up is done and what it left alive is frozen.
    gc_young_seconds: float = Field(default=0.025, ge=0, le=10)
    gc_thresholds: tuple[int, int, int] = (5_000, 100, 10)

    # A cluster (SLAPJACK_STORE=redis://..., several processes behind one router): this
    # process's name in table leases (default: hostname:port, unique per process and machine),
    # and how long a lease outlives the last renewal (about every second) of a process that
    # died: its tables are back on another process that much later.
    node_id: str = ""
    lease_seconds: float = Field(default=5.0, ge=1.5, le=120)

    max_rooms: int = Field(default=1000, ge=1)
    max_people_per_room: int = Field(default=40, ge=1)

    @field_validator("allowed_origins")
    @classmethod
    def _origin_checks_stay_on(cls, origins: list[str]) -> list[str]:
        # "*" would switch python-socketio's Origin check off.
        if "*" in origins:
            raise ValueError("list the origins allowed; '*' is refused")
        return origins

    @field_validator("store")
    @classmethod
    def _known_store(cls, url: str) -> str:
        parse_store_url(url)  # ValueError naming the value
        return url.strip()

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
