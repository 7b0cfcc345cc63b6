"""SLAPJACK_TLS_CERT/SLAPJACK_TLS_KEY: `python -m app` serves HTTPS itself (a secure context
for the phones: docs/operations.md, Serving HTTPS). The pair goes together, and a file
that is not there stops the start. The certificate in tests/fixtures is a self-signed one
for 127.0.0.1, made for this test alone."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from app.ops.config import Settings

ROOT = Path(__file__).resolve().parents[2]
CERT = ROOT / "tests" / "fixtures" / "tls-cert.pem"
KEY = ROOT / "tests" / "fixtures" / "tls-key.pem"
START_SECONDS = 60  # a bound for a loaded machine, not an expectation


def test_the_certificate_and_its_key_go_together() -> None:
    with pytest.raises(ValidationError, match="set both or neither"):
        Settings(tls_cert=str(CERT))
    with pytest.raises(ValidationError, match="no such file"):
        Settings(tls_cert=str(CERT), tls_key="/nowhere/key.pem")
    assert Settings(tls_cert=str(CERT), tls_key=str(KEY)).tls_key == str(KEY)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_python_m_app_serves_https_with_a_certificate(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(port),
        "SLAPJACK_STORE": "memory",
        "SLAPJACK_TLS_CERT": str(CERT),
        "SLAPJACK_TLS_KEY": str(KEY),
    }
    out = (tmp_path / "out").open("wb")
    server = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=out)
    try:
        trust = ssl.create_default_context(cafile=CERT)
        async with httpx.AsyncClient(verify=trust) as https, asyncio.timeout(START_SECONDS):
            while True:
                assert server.poll() is None, "the server exited"
                try:
                    answer = await https.get(f"https://127.0.0.1:{port}/healthz")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            assert answer.status_code == 200
            page = await https.get(f"https://127.0.0.1:{port}/")
            assert page.status_code == 200
        assert f"https://127.0.0.1:{port}/" in (tmp_path / "out").read_text()
    finally:
        server.terminate()
        server.wait(10)
        out.close()
