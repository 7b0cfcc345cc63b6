"""Every command docs/performance.md gives runs as written: each one starts, and runs for a
few seconds without failing (a benchmark that trips one of the app's limits fails at once).
A command that ends sooner must end well."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from doc_commands import commands  # tests/: how the docs' commands are read

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "performance.md"
SECONDS = 12.0  # long enough for the servers to start and the first tables to play
STOP_SECONDS = 30.0  # a Ctrl-C's clean-up: servers stopped, their tables written
# A command that runs something (not `make test`, `make check`, a clone's set-up).
RUNS = re.compile(r"^(?:[A-Z_]+=\S+ )*(?:taskset -c \d+ )?(?:\.venv/bin/python -m |make bench)")


def documented() -> list[str]:
    return list(dict.fromkeys(c for c in commands(DOC) if RUNS.match(c)))


def test_the_doc_names_the_benchmarks() -> None:
    commands = documented()
    assert any("bench.load" in command for command in commands)
    assert any("--together" in command for command in commands)
    assert any("--ablate" in command for command in commands)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", documented())
def test_a_documented_command_runs(command: str, tmp_path: Path) -> None:
    output = tmp_path / "output.txt"
    # Its temporary files in a short directory of its own: Chromium's profile puts a unix
    # socket in it, and pytest's tmp_path under xdist is longer than a socket path may be.
    scratch = Path(tempfile.mkdtemp(prefix="sj-bench-"))
    with output.open("wb") as sink:
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its servers too: stopped together below
            env={**os.environ, "TMPDIR": str(scratch)},
        )
        deadline = time.monotonic() + SECONDS
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        ended = process.poll()
        said = output.read_text(errors="replace")  # before the stop's own traceback
        if ended is None:
            os.killpg(process.pid, signal.SIGINT)  # as Ctrl-C: each cleans up after itself
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    shutil.rmtree(scratch, ignore_errors=True)
    assert ended in (None, 0), f"{command!r} ended with {ended}:\n{said[-3000:]}"
    assert "Traceback" not in said, f"{command!r}:\n{said[-3000:]}"
