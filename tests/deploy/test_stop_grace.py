"""The deploy files give the app time to write its tables on a stop, and check its health the
same whatever built the image (podman drops an image's HEALTHCHECK unless `--format docker`)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from app.ops.config import Settings

ROOT = Path(__file__).resolve().parents[2]
# On SIGTERM: the drain, then closing the connections (their defaults, in seconds).
STOPPING = (
    Settings.model_fields["drain_seconds"].default
    + Settings.model_fields["shutdown_seconds"].default
)


def apps(compose_file: Path) -> dict[str, dict[str, object]]:
    services = yaml.safe_load(compose_file.read_text())["services"]
    return {
        name: spec for name, spec in services.items() if "redis" not in name and "nginx" not in name
    }


def seconds(text: object) -> float:
    match = re.fullmatch(r"(\d+)s", str(text))
    assert match is not None, text
    return float(match.group(1))


def test_every_compose_app_stops_with_time_to_spare_and_checks_its_health() -> None:
    for compose_file in (ROOT / "compose.yaml", ROOT / "deploy" / "compose.cluster.yaml"):
        services = apps(compose_file)
        assert services, compose_file
        for name, spec in services.items():
            assert seconds(spec["stop_grace_period"]) > STOPPING, (compose_file, name)
            check = spec["healthcheck"]
            assert isinstance(check, dict) and "/healthz" in " ".join(check["test"]), name


def test_the_readmes_docker_run_waits_for_the_drain_and_podman_keeps_the_health_check() -> None:
    readme = (ROOT / "README.md").read_text()
    run = re.search(r"docker run (?:[^\n]*\\\n)*[^\n]*", readme)
    assert run is not None
    timeout = re.search(r"--stop-timeout (\d+)", run.group(0))
    assert timeout is not None and float(timeout.group(1)) > STOPPING, run.group(0)
    assert "podman build --format docker" in readme
