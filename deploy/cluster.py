"""A Slapjack cluster on this machine, without Docker: Redis, N app processes and nginx.

`make cluster` (or `.venv/bin/python -m deploy.cluster --processes 3 --port 8080`) starts
`redis-server` (append-only file on), N `python -m app` processes on consecutive ports
sharing `SLAPJACK_STORE=redis://...`, and nginx in front with `hash $arg_room consistent`,
then prints the one address to open. Ctrl-C stops everything. The tests use `Cluster`
directly to start the same thing on free ports and to kill or pause single processes.

Debian packages: `redis-server` and `nginx` (their binaries are looked up on PATH and in
/usr/sbin, /usr/bin).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from app.ops.config import Settings, lan_address
from deploy.redis import RedisServer

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
START_SECONDS = 60.0  # generous: a shared 2-core machine may be very busy
MOST_PER_ADDRESS = 65535  # nginx refuses a limit_conn of more ("must be less 65536")
# Settings for processes that scripted players drive (the tests, bench/faults.py): nobody's
# seat is flipped for them or handed over while a script looks at it, and a script's players
# act far faster (a false start, from a person), and connect far more often from one address,
# than people do.
SCRIPTED = {
    "SLAPJACK_IDLE_AUTOFLIP_SECONDS": "600",
    "SLAPJACK_DISCONNECTED_AUTOFLIP_SECONDS": "600",
    "SLAPJACK_HOST_HANDOVER_SECONDS": "600",
    "SLAPJACK_RATE_PER_SECOND": "10000",
    "SLAPJACK_RATE_BURST": "10000",
    "SLAPJACK_CONNECTS_PER_MINUTE": "100000",
    "SLAPJACK_FALSE_START_MS": "0",
    "SLAPJACK_LOG_LEVEL": "info",
}


def find_binary(name: str) -> str:
    for candidate in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit(f"cluster: `{name}` not found: apt-get install {name.split('-')[0]}")


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct ports nobody listens on. Every probe stays bound until all are
    chosen: the kernel may hand a closed probe's port out again at once, and two processes
    given one port would leave one of them unable to listen."""
    with contextlib.ExitStack() as probes:
        sockets = [probes.enter_context(socket.socket()) for _ in range(count)]
        for probe in sockets:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in sockets]


def wait_until(check: object, what: str, seconds: float = START_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            if callable(check) and check():
                return
        time.sleep(0.05)
    raise RuntimeError(f"cluster: {what} did not start within {seconds:.0f} s")


def answers(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=1) as reply:
        return bool(reply.status == 200)


def accepts(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True


def nginx_config(
    listen: str,
    servers: list[str],
    prefix: Path | None,
    per_address: int | None = None,
    websockets: int | None = None,
) -> str:
    """The nginx configuration for app processes at `servers` ("host:port"); with a
    `prefix`, nginx keeps its pid, log and temporary files there (a local, unprivileged run).
    `per_address`: the connections one client address may hold through nginx at once (the
    apps' SLAPJACK_CONNECTIONS_PER_ADDRESS, which nginx applies for them), and `websockets`
    of those to /socket.io/ (SLAPJACK_WEBSOCKETS_PER_ADDRESS); their defaults if None."""
    if per_address is None:
        per_address = Settings.model_fields["connections_per_address"].default
    if websockets is None:
        websockets = Settings.model_fields["websockets_per_address"].default
    for name, cap in (("CONNECTIONS", per_address), ("WEBSOCKETS", websockets)):
        if not 1 <= cap <= MOST_PER_ADDRESS:
            raise ValueError(
                f"SLAPJACK_{name}_PER_ADDRESS={cap}: nginx's limit_conn, which applies it in "
                f"front of the apps, takes 1 to {MOST_PER_ADDRESS}"
            )
    # Rooms: never marked down (max_fails=0). A request tries the room's own process and,
    # only if that refuses or times out, the next one on the ring; once the process is back
    # every request goes to it again. A process marked down for fail_timeout was probed by
    # one request at a time when it came back, and the room's table moved with each answer.
    rooms = "\n".join(f"        server {server} max_fails=0;" for server in servers)
    lines = "\n".join(f"        server {server} max_fails=1 fail_timeout=3s;" for server in servers)
    global_lines, paths = "", ""
    if prefix is not None:
        # As root, workers would otherwise run as `nobody`, unable to write in the prefix.
        user = "user root;\n" if os.geteuid() == 0 else ""
        global_lines = f"{user}pid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} warn;"
        paths = "\n    ".join(
            f"{name}_temp_path {prefix / name};"
            for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
    return (
        TEMPLATE.read_text()
        .replace("{{GLOBAL}}", global_lines)
        .replace("{{HTTP_PATHS}}", paths)
        .replace("{{ROOM_SERVERS}}", rooms)
        .replace("{{SERVERS}}", lines)
        .replace("{{LISTEN}}", listen)
        .replace("{{CONNECTIONS_PER_ADDRESS}}", str(per_address))
        .replace("{{WEBSOCKETS_PER_ADDRESS}}", str(websockets))
    )


def compose_nginx_config(replicas: int = 3) -> str:
    """deploy/nginx.compose.conf: the same configuration for deploy/compose.cluster.yaml."""
    header = "# Generated by `python -m deploy.cluster --compose-config`: do not edit by hand.\n"
    servers = [f"app{i}:8000" for i in range(1, replicas + 1)]
    return header + nginx_config("80", servers, None)


@dataclass
class Cluster:
    """Redis + N app processes + nginx, on loopback ports, in a temporary folder."""

    processes: int = 2
    port: int = 0  # nginx; 0 picks a free port
    app_ports: list[int] = field(default_factory=list)
    redis_port: int = 0
    env: dict[str, str] = field(default_factory=dict)  # extra SLAPJACK_* settings
    store_url: str = ""  # a Redis of one's own (Sentinel, TLS): none is started here
    host: str = "127.0.0.1"  # where the app processes listen (nginx reaches them there)
    listen_host: str = "127.0.0.1"  # where nginx listens: 0.0.0.0 to serve phones on the LAN
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="slapjack-")))
    redis: RedisServer | None = None
    nginx: subprocess.Popen[bytes] | None = None
    apps: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def store(self) -> str:
        return self.store_url or f"redis://127.0.0.1:{self.redis_port}/0"

    def app_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.app_ports[index]}"

    def start(self) -> Cluster:
        ports = free_ports(2 + self.processes)
        self.port = self.port or ports[0]
        self.redis_port = self.redis_port or ports[1]
        if not self.app_ports:
            self.app_ports = ports[2:]
        self.write_nginx_config()  # before anything starts: it checks the apps' settings
        if not self.store_url:
            self.start_redis()
        # The apps (each a second or more of imports) and nginx start side by side: nginx
        # needs no app to be up, each app needs only Redis.
        for index in range(len(self.app_ports)):
            self.launch_app(index)
        self.launch_nginx()
        for index in range(len(self.app_ports)):
            self.wait_for_app(index)
        self.wait_for_nginx()
        return self

    def start_redis(self) -> None:
        """Redis with its append-only file on (deploy/redis.py), on `redis_port`: started,
        or started again on the same port and files after `stop_redis`."""
        if self.redis is None:
            data = self.workdir / "redis"
            self.redis = RedisServer(data, append_only=True, port=self.redis_port)
        self.redis.start()

    def app_env(self, index: int) -> dict[str, str]:
        return {
            **os.environ,
            "SLAPJACK_HOST": self.host,
            "SLAPJACK_PORT": str(self.app_ports[index]),
            "SLAPJACK_STORE": self.store,
            "SLAPJACK_NODE_ID": f"node-{index + 1}",
            "SLAPJACK_TRUSTED_PROXIES": "127.0.0.1",
            **self.env,
        }

    def start_app(self, index: int) -> None:
        self.launch_app(index)
        self.wait_for_app(index)

    def launch_app(self, index: int) -> None:
        with (self.workdir / f"app-{index + 1}.log").open("ab") as log:
            self.apps[index] = subprocess.Popen(
                [sys.executable, "-m", "app"],
                cwd=ROOT,
                env=self.app_env(index),
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def wait_for_app(self, index: int) -> None:
        process = self.apps[index]

        def up() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"cluster: app process {index + 1} exited at start")
            return answers(f"{self.app_url(index)}/healthz")

        wait_until(up, f"app process {index + 1}")

    def write_nginx_config(self) -> Path:
        prefix = self.workdir / "nginx"
        prefix.mkdir(exist_ok=True)
        conf = prefix / "nginx.conf"
        servers = [f"127.0.0.1:{port}" for port in self.app_ports]
        env = self.app_env(0)  # the apps' own caps, which nginx applies for them
        cap = env.get("SLAPJACK_CONNECTIONS_PER_ADDRESS")
        websockets = env.get("SLAPJACK_WEBSOCKETS_PER_ADDRESS")
        listen = f"{self.listen_host}:{self.port}"
        conf.write_text(
            nginx_config(
                listen,
                servers,
                prefix,
                int(cap) if cap else None,
                int(websockets) if websockets else None,
            )
        )
        return conf

    def launch_nginx(self) -> None:
        conf = self.write_nginx_config()
        prefix = conf.parent
        # What nginx says before its error log is open (a configuration it refuses) goes to
        # its stderr: kept, and shown if it does not start.
        with (prefix / "output.log").open("ab") as output:
            self.nginx = subprocess.Popen(
                [find_binary("nginx"), "-p", str(prefix), "-c", str(conf), "-g", "daemon off;"],
                stdout=output,
                stderr=subprocess.STDOUT,
            )

    def wait_for_nginx(self) -> None:
        process = self.nginx

        def up() -> bool:
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"cluster: nginx exited at start:\n{self.nginx_said()}")
            return answers(f"{self.url}/healthz")

        try:
            wait_until(up, "nginx")
        except RuntimeError as error:
            if process is not None and process.poll() is None:
                raise RuntimeError(f"{error}; nginx said:\n{self.nginx_said()}") from None
            raise

    def nginx_said(self) -> str:
        """The end of nginx's own output and error log (its reason for not starting)."""
        prefix = self.workdir / "nginx"
        said = []
        for name in ("output.log", "error.log"):
            with contextlib.suppress(OSError):
                said += (prefix / name).read_text(errors="replace").splitlines()[-20:]
        return "\n".join(said) or "(nothing)"

    def kill(self, index: int, sig: int = signal.SIGKILL) -> None:
        """Stop one app process the hard way (or pause it with SIGSTOP)."""
        self.apps[index].send_signal(sig)
        if sig in (signal.SIGKILL, signal.SIGTERM):
            self.apps[index].wait(timeout=START_SECONDS)

    def stop_redis(self) -> None:
        """Redis stops (SIGTERM: its append-only file is written); `start_redis` brings it
        back on the same port and files."""
        if self.redis is not None:
            self.redis.stop()

    def hang_redis(self) -> None:
        """Redis stops answering, every connection left open (SIGSTOP)."""
        assert self.redis is not None
        self.redis.hang()

    def wake_redis(self) -> None:
        assert self.redis is not None
        self.redis.wake()

    def stop(self) -> None:
        """The apps first, each writing its tables (to a Redis still there), then nginx and
        Redis: stopped together, an app's last save would find no Redis."""
        _stop(list(self.apps.values()))
        _stop([self.nginx])
        self.stop_redis()

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _stop(processes: list[subprocess.Popen[bytes] | None]) -> None:
    """SIGTERM to each (a paused one woken first), then waits for them all."""
    for process in processes:
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGCONT)  # a paused process cannot stop
                process.terminate()
    for process in processes:
        if process is not None:
            try:
                process.wait(timeout=START_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=2, help="app processes (default 2)")
    parser.add_argument("--port", type=int, default=8080, help="nginx's port (default 8080)")
    parser.add_argument("--first-app-port", type=int, default=8101)
    parser.add_argument("--redis-port", type=int, default=6390)
    parser.add_argument(
        "--compose-config", action="store_true", help="print deploy/nginx.compose.conf and exit"
    )
    args = parser.parse_args()
    if args.compose_config:
        print(compose_nginx_config(), end="")
        return
    cluster = Cluster(
        processes=args.processes,
        port=args.port,
        app_ports=[args.first_app_port + i for i in range(args.processes)],
        redis_port=args.redis_port,
        listen_host="0.0.0.0",
        workdir=ROOT / ".cluster",
    )
    cluster.workdir.mkdir(exist_ok=True)
    stop = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with cluster:
        print(
            f"\n  Slapjack cluster: {args.processes} processes behind nginx on port {cluster.port}:"
            f" open http://{lan_address()}:{cluster.port}/"
            f"\n  Redis {cluster.store}, logs in {cluster.workdir}/. Ctrl-C stops it.\n",
            flush=True,
        )
        while not stop and all(p.poll() is None for p in cluster.apps.values()):
            time.sleep(0.5)


if __name__ == "__main__":
    main()
