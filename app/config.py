"""All settings, read once from the environment (prefix SLAPJACK_)."""

import socket
from functools import lru_cache

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLAPJACK_")

    host: str = "0.0.0.0"
    port: int = Field(default=8000, ge=1, le=65535)
    log_level: str = "info"

    # Origins allowed to open a Socket.IO connection. None (the default) allows the page
    # as served on localhost and on every address this machine has on the LAN, at `port`;
    # set a JSON list (SLAPJACK_ALLOWED_ORIGINS='["https://slap.example"]') behind a proxy.
    allowed_origins: list[str] | None = None

    max_message_bytes: int = Field(default=4096, ge=256, le=65536)
    rate_per_second: float = Field(default=20.0, gt=0)
    rate_burst: int = Field(default=40, ge=1)
    rooms_per_minute: float = Field(default=30.0, gt=0)  # new rooms per client address
    # Refused (rate-limited) events in a row before the connection is closed at the transport.
    flood_cutoff: int = Field(default=40, ge=1)

    # How soon a vanished connection is noticed: a ping every interval, gone after the timeout.
    ping_interval_seconds: float = Field(default=10.0, gt=0)
    ping_timeout_seconds: float = Field(default=5.0, gt=0)

    disconnected_autoflip_seconds: float = Field(default=5.0, ge=0)
    idle_autoflip_seconds: float = Field(default=10.0, gt=0)
    # The least time a disconnected seat's turn lasts before the autopilot flips for it.
    autoflip_pause_seconds: float = Field(default=1.0, ge=0)
    host_handover_seconds: float = Field(default=10.0, ge=0)
    room_expiry_seconds: float = Field(default=600.0, gt=0)
    bot_time_scale: float = Field(default=1.0, gt=0)  # multiplies every bot delay; tests: ~0.02

    max_rooms: int = Field(default=1000, ge=1)
    max_people_per_room: int = Field(default=40, ge=1)

    @field_validator("allowed_origins")
    @classmethod
    def _origin_checks_stay_on(cls, origins: list[str] | None) -> list[str] | None:
        # "*" or [] would switch python-socketio's Origin check off.
        if origins is not None and (not origins or "*" in origins):
            raise ValueError("allowed_origins must list origins; '*' and [] are refused")
        return origins

    def origins(self) -> list[str]:
        if self.allowed_origins is not None:
            return self.allowed_origins
        hosts = ["localhost", "127.0.0.1", "[::1]", *machine_addresses()]
        return [f"http://{host}:{self.port}" for host in dict.fromkeys(hosts)]


def machine_addresses() -> list[str]:
    """This machine's names and IPv4 addresses, as a phone on the LAN would type them."""
    names = [socket.gethostname()]
    names.append(f"{names[0]}.local")
    addresses = [lan_address()]
    try:
        for info in socket.getaddrinfo(names[0], None, socket.AF_INET):
            addresses.append(str(info[4][0]))
    except OSError:
        pass
    return [*names, *addresses]


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
