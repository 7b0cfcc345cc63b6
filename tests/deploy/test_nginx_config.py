"""The shipped nginx configurations: valid for nginx, routing rooms by hash, and in sync."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from app.ops.config import Settings
from deploy.cluster import Cluster, compose_nginx_config, find_binary, free_port, nginx_config

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_local_cluster_config_passes_nginx_own_check(tmp_path: Path) -> None:
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_config("127.0.0.1:1", ["127.0.0.1:2", "127.0.0.1:3"], tmp_path))
    checked = subprocess.run(
        [find_binary("nginx"), "-t", "-p", str(tmp_path), "-c", str(conf)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert checked.returncode == 0, checked.stderr
    assert "hash $arg_room consistent;" in conf.read_text()


def test_the_compose_config_is_the_generated_one() -> None:
    # Regenerate: .venv/bin/python -m deploy.cluster --compose-config > deploy/nginx.compose.conf
    assert (DEPLOY / "nginx.compose.conf").read_text() == compose_nginx_config()


def test_every_location_keeps_the_servers_forwarded_headers() -> None:
    # nginx: a location with any proxy_set_header of its own inherits none of the server's.
    # /socket.io/ then reached the apps with nginx's upstream name for Host (every browser's
    # Origin refused) and no client address (tests/app/test_cluster_strangers.py).
    for conf in (compose_nginx_config(), nginx_config("80", ["app:8000"], None)):
        server, *locations = re.split(r"\n\s*location ", conf)
        assert len(locations) == 2
        assert all("proxy_set_header" not in location for location in locations)
        for header in ("Host $http_host", "X-Forwarded-For $remote_addr", "Upgrade $upgrade_to"):
            assert f"proxy_set_header {header}" in server


def test_every_process_of_the_compose_file_is_in_the_nginx_upstream() -> None:
    compose = (DEPLOY / "compose.cluster.yaml").read_text()
    conf = compose_nginx_config()
    for app in ("app1", "app2", "app3"):
        assert f"\n  {app}:" in compose
        assert f"server {app}:8000" in conf


def test_nginx_caps_connections_per_address_as_the_app_would() -> None:
    # Behind nginx the app sees one address, nginx's: the cap per client is nginx's
    # (tests/app/test_nginx_limits.py shows it at work).
    conf = compose_nginx_config()
    cap = Settings().connections_per_address
    assert "limit_conn_zone $binary_remote_addr zone=per_address:" in conf
    assert f"limit_conn per_address {cap};" in conf
    assert "limit_conn_status 429;" in conf
    assert "limit_conn per_address 7;" in nginx_config("80", ["app:8000"], None, per_address=7)
    assert "limit_conn" in (DOCS / "operations.md").read_text()


def test_a_per_address_cap_nginx_would_refuse_is_refused_before_anything_starts() -> None:
    # nginx: "connection limit must be less 65536"; the apps would start and nginx not.
    assert "limit_conn per_address 65535;" in nginx_config("80", ["app:8000"], None, 65535)
    with pytest.raises(ValueError, match="SLAPJACK_CONNECTIONS_PER_ADDRESS=65536"):
        nginx_config("80", ["app:8000"], None, per_address=65536)
    with pytest.raises(ValueError, match="1 to 65535"):
        Cluster(processes=1, env={"SLAPJACK_CONNECTIONS_PER_ADDRESS": "100000"}).start()


def test_nginx_that_does_not_start_says_why(tmp_path: Path) -> None:
    # An address nginx cannot listen on (TEST-NET-3, not this machine's): nginx exits, and
    # the cluster's error carries nginx's own words at once, not a timeout a minute later.
    cluster = Cluster(processes=1, workdir=tmp_path, listen_host="203.0.113.9")
    cluster.port, cluster.app_ports = free_port(), [free_port()]
    cluster.launch_nginx()
    try:
        with pytest.raises(RuntimeError, match=r"nginx exited at start:\n.*bind\(\) to 203"):
            cluster.wait_for_nginx()
    finally:
        cluster.stop()
