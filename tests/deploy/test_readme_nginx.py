"""The README's nginx block, pasted as a reader would, in front of `python -m app` on a port
of its own: a page's websocket gets through (its Origin names the host and port the page
was served from, which the app compares with Host), and so does its client address."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from deploy.cluster import find_binary, free_ports

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 30.0


def readme_block() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Behind nginx")[1]
    found = re.search(r"```nginx\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


def wait_until(url: str, process: subprocess.Popen[bytes]) -> None:
    ends = time.monotonic() + START_SECONDS
    while time.monotonic() < ends:
        assert process.poll() is None, f"{process.args!r} exited"
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(url)


@pytest.fixture
def behind_nginx(tmp_path: Path) -> Iterator[int]:
    """The app, and nginx in front of it with the README's block: nginx's port."""
    app_port, port = free_ports(2)
    env = {
        **os.environ,
        "SLAPJACK_STORE": "memory",
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(app_port),
        "SLAPJACK_TRUSTED_PROXIES": "127.0.0.1",
        "SLAPJACK_WRONG_CODES_BURST": "2",
        "SLAPJACK_WRONG_CODES_PER_MINUTE": "1",
        "SLAPJACK_LOG_LEVEL": "warning",
    }
    app = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env)
    block = readme_block().replace("127.0.0.1:8000", f"127.0.0.1:{app_port}")
    user = "user root;\n" if os.geteuid() == 0 else ""
    paths = "\n".join(
        f"{name}_temp_path {tmp_path / name};"
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        f"{user}pid {tmp_path / 'nginx.pid'};\nerror_log {tmp_path / 'error.log'} warn;\n"
        "events {}\n"
        f"http {{\naccess_log off;\n{paths}\nserver {{\nlisten 127.0.0.1:{port};\n{block}}}\n}}\n"
    )
    nginx = subprocess.Popen(
        [find_binary("nginx"), "-p", str(tmp_path), "-c", str(conf), "-g", "daemon off;"]
    )
    try:
        wait_until(f"http://127.0.0.1:{app_port}/healthz", app)
        wait_until(f"http://127.0.0.1:{port}/healthz", nginx)
        yield port
    finally:
        for process in (nginx, app):
            process.terminate()
            process.wait(30)


async def join_missing(port: int, address: str) -> str:
    """A page on 127.0.0.1:`port` asks for a table that does not exist, on a websocket from
    `address`: the refusal's code."""
    url = f"ws://127.0.0.1:{port}/socket.io/?EIO=4&transport=websocket&room=ZZZZZZ"
    origin = f"http://127.0.0.1:{port}"
    async with connect(url, origin=origin, local_addr=(address, 0)) as page:
        assert str(await page.recv()).startswith("0{")
        await page.send('40{"room":"ZZZZZZ","name":"Eve"}')
        refusal = str(await page.recv())
    assert refusal.startswith("44"), refusal
    return refusal


async def test_the_readmes_nginx_block_lets_pages_in_each_with_its_address(
    behind_nginx: int,
) -> None:
    refusals = [await join_missing(behind_nginx, "127.0.0.20") for _ in range(3)]
    assert "rate_limited" not in refusals[0] + refusals[1]
    assert "rate_limited" in refusals[2]  # that address's budget of wrong codes spent
    assert "rate_limited" not in await join_missing(behind_nginx, "127.0.0.21")
