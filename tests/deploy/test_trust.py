"""Whom the shipped cluster believes about a client's address: the apps trust nginx's own
address alone, nginx writes the client's address itself (nothing a client sent), and nginx
caps each address as the apps would (connections, and of those, websockets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from app.ops.config import Settings
from deploy.cluster import compose_nginx_config, nginx_config

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.cluster.yaml").read_text())
    return loaded


def test_the_compose_apps_trust_only_nginxs_own_address() -> None:
    services = compose()["services"]
    nginx = services["nginx"]["networks"]
    (network,) = nginx
    address = nginx[network]["ipv4_address"]
    apps = [name for name in services if name.startswith("app")]
    assert len(apps) == 3
    for name in apps:
        app = services[name]
        trusted = app["environment"]["SLAPJACK_TRUSTED_PROXIES"]
        assert trusted == address, (name, trusted)  # never "*": a client's header believed
        assert network in app["networks"]


def test_nginx_writes_the_clients_address_itself() -> None:
    for conf in (compose_nginx_config(), nginx_config("80", ["app:8000"], None)):
        assert "proxy_set_header X-Forwarded-For $remote_addr;" in conf
        assert "$proxy_add_x_forwarded_for" not in conf  # would keep the client's own entries


def test_nginx_caps_websockets_per_address_as_the_apps_do() -> None:
    settings = Settings()
    conf = compose_nginx_config()
    sockets = conf.split("location /socket.io/")[1].split("}")[0]
    assert f"limit_conn sockets_per_address {settings.websockets_per_address};" in sockets
    assert f"limit_conn per_address {settings.connections_per_address};" in sockets
    assert "limit_conn sockets_per_address 9;" in nginx_config(
        "80", ["app:8000"], None, per_address=20, websockets=9
    )
