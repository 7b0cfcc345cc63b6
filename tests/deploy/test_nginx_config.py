"""The shipped nginx configurations: valid for nginx, routing rooms by hash, and in sync."""

from __future__ import annotations

import subprocess
from pathlib import Path

from deploy.cluster import compose_nginx_config, find_binary, nginx_config

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


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


def test_every_process_of_the_compose_file_is_in_the_nginx_upstream() -> None:
    compose = (DEPLOY / "compose.cluster.yaml").read_text()
    conf = compose_nginx_config()
    for app in ("app1", "app2", "app3"):
        assert f"\n  {app}:" in compose
        assert f"server {app}:8000" in conf
