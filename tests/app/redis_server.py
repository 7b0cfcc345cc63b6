"""A real `redis-server` (Debian's package) on a free loopback port in a temp dir, for tests.

    with RedisServer(tmp_path) as server:   # started; server.url -> "redis://127.0.0.1:PORT/0"
        server.stop(); server.start()       # an outage, then the same server back
        server.hang(); server.wake()        # a hung server (SIGSTOP), then answering again

A missing binary fails the test (CI installs it: .ci/run), it never skips.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import pytest

START_SECONDS = 20.0  # a loaded 2-core machine starts redis-server in well under a second


def redis_binary() -> str:
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if found is None:
        pytest.fail("redis-server is not installed: apt-get install redis-server (.ci/run does)")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    def __init__(self, workdir: Path, *, append_only: bool = False) -> None:
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.append_only = append_only
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                redis_binary(),
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(self.workdir),
                "--save", "",  # no RDB snapshots: the append-only file, if any, is the record
                "--appendonly", "yes" if self.append_only else "no",
                "--logfile", str(self.workdir / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while not self._answers():
            if self.process.poll() is not None:
                log = (self.workdir / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server exited ({self.process.returncode}):\n{log}")
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not answer PING")
            time.sleep(0.05)

    def hang(self) -> None:
        """Redis stops answering with every connection left open (SIGSTOP): a hung server."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def wake(self) -> None:
        """A hung Redis answers again (SIGCONT), everything it was sent meanwhile included."""
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a hung server cannot stop
            self.process.terminate()
            self.process.wait(timeout=20)
        self.process = None

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
