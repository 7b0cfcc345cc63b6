"""The image runs the Python minor version the suite runs on, so what the suite proves
(the internals of the libraries we rely on among it: tests/app/test_internals.py, and
app/ops/timers.py's of asyncio) holds where the app is deployed."""

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_stage_of_the_image_is_on_the_suites_python() -> None:
    suite = f"{sys.version_info.major}.{sys.version_info.minor}"
    stages = re.findall(r"^FROM python:(\d+\.\d+)-slim\b", (ROOT / "Dockerfile").read_text(), re.M)
    assert stages and set(stages) == {suite}, (stages, suite)


def test_the_type_checker_and_the_linter_read_that_python() -> None:
    suite = f"{sys.version_info.major}.{sys.version_info.minor}"
    tools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    assert tools["mypy"]["python_version"] == suite
    assert tools["ruff"]["target-version"] == "py" + suite.replace(".", "")
