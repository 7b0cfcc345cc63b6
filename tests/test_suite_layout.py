"""The suite's own layout: a test module imports helper modules (app_harness, app_steps,
played, golden, browser_table ...), never another test module or a conftest, so each can
move, run alone or be removed without breaking another."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_test_module_imports_another_or_a_conftest() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for name in imported_modules(path):
            last = name.rsplit(".", 1)[-1]
            if last.startswith("test_") or last == "conftest":
                found.append(f"{path.relative_to(TESTS)} imports {name}")
    assert not found, found
