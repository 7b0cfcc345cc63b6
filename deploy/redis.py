"""A real `redis-server` (Debian's package) on a loopback port with its files in a folder:
the one Redis that `make cluster` (deploy/cluster.py), the tests and the benchmarks start.

    with RedisServer(tmp_path) as server:   # started; server.url -> "redis://127.0.0.1:PORT/0"
        server.stop(); server.start()       # an outage, then the same server back
        server.hang(); server.wake()        # a hung server (SIGSTOP), then answering again

Also Sentinel (`SentinelServer`) and a TLS certificate authority (`certificates`) for the
production set-ups. A missing binary raises (a test fails, it never skips).
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

START_SECONDS = 20.0  # a loaded 2-core machine starts redis-server in well under a second


def binary(name: str) -> str:
    """Where Debian's `name` (redis-server, redis-sentinel) is installed."""
    for candidate in (shutil.which(name), f"/usr/bin/{name}", f"/usr/sbin/{name}"):
        if candidate and Path(candidate).exists():
            return candidate
    raise RuntimeError(f"{name} is not installed: apt-get install {name}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def certificates(folder: Path) -> Path:
    """A certificate authority and a server certificate for 127.0.0.1 signed by it (ca.crt,
    redis.crt, redis.key in `folder`), made with openssl; returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=slapjack test CA", "-keyout", "ca.key", "-out", "ca.crt")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "redis.key", "-out", "redis.csr")  # fmt: skip
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "redis.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.cnf",
            "-out", "redis.crt")  # fmt: skip
    return folder


class RedisServer:
    def __init__(
        self,
        workdir: Path,
        *,
        append_only: bool = False,
        password: str | None = None,
        tls: Path | None = None,
        replica_of: int | None = None,
        port: int = 0,
    ) -> None:
        """`password`: clients must give it (and a replica gives it to its primary); `tls`:
        a folder from `certificates`, and the server speaks TLS only; `replica_of`: the
        port of the primary this server replicates; `port`: 0 picks a free one."""
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.append_only = append_only
        self.password, self.tls, self.replica_of = password, tls, replica_of
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        if self.tls is not None:
            return f"rediss://{auth}127.0.0.1:{self.port}/0?ssl_ca_certs={self.tls / 'ca.crt'}"
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> None:
        options: list[str] = []
        if self.password:
            options += ["--requirepass", self.password, "--masterauth", self.password]
        if self.tls is not None:
            options += [
                "--port", "0", "--tls-port", str(self.port),
                "--tls-cert-file", str(self.tls / "redis.crt"),
                "--tls-key-file", str(self.tls / "redis.key"),
                "--tls-ca-cert-file", str(self.tls / "ca.crt"),
                "--tls-auth-clients", "no",
            ]  # fmt: skip
        else:
            options += ["--port", str(self.port)]
        if self.replica_of is not None:
            options += ["--replicaof", "127.0.0.1", str(self.replica_of)]
        self.process = subprocess.Popen(
            [
                binary("redis-server"),
                *options,
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
                if self.tls is not None:
                    return True  # listening; the TLS handshake is the client's to do
                conn.sendall(b"PING\r\n")
                return conn.recv(64).startswith((b"+PONG", b"-NOAUTH"))
        except OSError:
            return False

    def kill(self) -> None:
        """The server dies (SIGKILL): nothing written, nothing said."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=20)
        self.process = None

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


class SentinelServer:
    """Debian's `redis-sentinel` watching one primary (`service`, quorum 1), quick to decide:
    the primary is down after `down_after_ms` without an answer."""

    def __init__(
        self,
        workdir: Path,
        primary_port: int,
        *,
        service: str = "mymaster",
        password: str | None = None,
        down_after_ms: int = 1000,
    ) -> None:
        self.workdir, self.service, self.password = workdir, service, password
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.primary_port, self.down_after_ms = primary_port, down_after_ms
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis+sentinel://{auth}127.0.0.1:{self.port}/{self.service}/{db}"

    def start(self) -> None:
        conf = self.workdir / "sentinel.conf"  # sentinel rewrites it: a file of its own
        lines = [
            f"port {self.port}",
            "bind 127.0.0.1",
            f"dir {self.workdir}",
            f"logfile {self.workdir / 'sentinel.log'}",
            f"sentinel monitor {self.service} 127.0.0.1 {self.primary_port} 1",
            f"sentinel down-after-milliseconds {self.service} {self.down_after_ms}",
            f"sentinel failover-timeout {self.service} 5000",
        ]
        if self.password:
            lines.append(f"sentinel auth-pass {self.service} {self.password}")
        conf.write_text("\n".join(lines) + "\n")
        self.process = subprocess.Popen(
            [binary("redis-sentinel"), str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("redis-sentinel did not answer PING")
            time.sleep(0.05)

    def primary(self) -> int:
        """The port Sentinel names as the primary now."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as conn:
            name = self.service.encode()
            conn.sendall(b"SENTINEL get-master-addr-by-name " + name + b"\r\n")
            reply = conn.recv(256).split(b"\r\n")
        return int(reply[4])

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)
        self.process = None
