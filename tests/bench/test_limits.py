"""The benchmarks lift every limit the app puts on one client address, or on the whole
server's rooms and connections (bench/limits.py): each of their players comes from one
address, and a limit left in place fails a benchmark at once (`429 rate_limited`). And the
servers they start keep their compiled bytecode (bench/__init__.py)."""

from __future__ import annotations

import importlib
import os
import re

import pytest

import bench
from app.ops.config import Settings
from bench.limits import LIFTED_LIMITS
from deploy.cluster import MOST_PER_ADDRESS

# A setting that caps what one address, or the server, may open or hold.
LIMIT = re.compile(r"_per_minute$|_per_address$|^wrong_codes_burst$|^max_rooms$|^max_connections$")


def test_every_per_address_and_server_wide_limit_is_lifted() -> None:
    limits = {name for name in Settings.model_fields if LIMIT.search(name)}
    assert "open_rooms_per_address" in limits and "wrong_codes_per_minute" in limits
    assert {f"SLAPJACK_{name.upper()}" for name in limits} <= set(LIFTED_LIMITS)


def test_the_lifted_limits_are_valid_settings_and_nginx_takes_them() -> None:
    lifted = Settings(**{key[len("SLAPJACK_") :].lower(): v for key, v in LIFTED_LIMITS.items()})
    # bench.cluster runs behind nginx, whose limit_conn applies the apps' per-address cap.
    assert lifted.connections_per_address <= MOST_PER_ADDRESS
    assert lifted.websockets_per_address <= MOST_PER_ADDRESS
    assert lifted.open_rooms_per_address >= 1000 and lifted.max_rooms >= 1000


def test_a_server_a_benchmark_starts_keeps_its_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shell's PYTHONDONTWRITEBYTECODE never reaches the servers a benchmark starts: each
    would compile every module again, and a restart's time to answer is a measured figure."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    importlib.reload(bench)
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ
