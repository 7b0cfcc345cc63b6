"""The server's test harness, for the benchmarks and the soak: they drive the app as its
tests do (tests/app: app_harness.py, raw_client.py; deploy/redis.py), from one place."""

import sys
from pathlib import Path

TESTS_APP = Path(__file__).resolve().parents[1] / "tests" / "app"
if str(TESTS_APP) not in sys.path:
    sys.path.insert(0, str(TESTS_APP))  # the harness modules import each other by name

from app_harness import Client, close_all, join, serving  # noqa: E402
from raw_client import RawClient  # noqa: E402

from deploy.redis import RedisServer  # noqa: E402

__all__ = ["Client", "RawClient", "RedisServer", "close_all", "join", "serving"]
