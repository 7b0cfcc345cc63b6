"""The Python packages come from one lock, the same for `make` and the image."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_make_and_the_image_install_the_same_uv() -> None:
    make = re.search(r"^UV_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    image = re.search(r"pip install uv==(\S+)", (ROOT / "Dockerfile").read_text())
    assert make and image, "Makefile's UV_VERSION and the Dockerfile's `pip install uv==`"
    assert make.group(1) == image.group(1)


def test_the_image_installs_from_the_lock_and_nothing_else() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "COPY pyproject.toml uv.lock" in dockerfile
    assert "uv sync --frozen" in dockerfile
    assert not re.search(r"pip install (?!uv==)", dockerfile), "every package through uv.lock"


def test_every_locked_package_has_hashes() -> None:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    unhashed = [
        p["name"]
        for p in lock["package"]
        if p.get("source", {}).get("registry")
        and not all("hash" in f for f in [*p.get("wheels", []), p.get("sdist", {"hash": 1})])
    ]
    assert unhashed == []
