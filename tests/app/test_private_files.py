"""The store's files hold every hidden hand and shuffle seed: its owner's alone (0600),
whatever the umask, and an existing world-readable store is made private when opened.
`python -m app` sets a umask of 077 for anything else it writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.stores.sqlite import SqliteStore


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


async def test_the_sqlite_store_and_its_journal_are_private(tmp_path: Path) -> None:
    path = tmp_path / "tables.db"
    path.touch(mode=0o644)
    path.chmod(0o644)  # as an earlier release left it
    before = os.umask(0o022)
    try:
        store = SqliteStore(path)
        await store.open()
        try:
            files = [path, tmp_path / "tables.db-wal", tmp_path / "tables.db-shm"]
            assert all(f.exists() for f in files)
            assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
        finally:
            await store.close()
        fresh = SqliteStore(tmp_path / "new" / "fresh.db")
        await fresh.open()
        assert mode(tmp_path / "new" / "fresh.db") == 0o600
        await fresh.close()
    finally:
        os.umask(before)


def test_python_m_app_writes_private_files(tmp_path: Path) -> None:
    """The process's umask, as `python -m app` sets it before anything is written."""
    script = (
        "import os, app.__main__ as m\n"
        "m.load_settings = lambda: (_ for _ in ()).throw(SystemExit(os.umask(0)))\n"
        "m.main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=Path(__file__).parents[2], env={**os.environ}
    )
    assert done.returncode == 0o077
