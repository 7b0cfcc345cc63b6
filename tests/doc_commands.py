"""The shell commands a page of the docs gives, as the tests that try them read them
(tests/test_doc_commands.py, tests/bench/test_documented.py)."""

from __future__ import annotations

import re
from pathlib import Path

SHELL_FENCE = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`\n]+)`")


def commands(page: Path) -> list[str]:
    """The shell commands a page gives: each line of its `sh` blocks (comments dropped,
    continued lines joined), and each code span that starts with `make ` or names a
    `python -m` module."""
    text = page.read_text()
    found = []
    for block in SHELL_FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                found.append(" ".join(line.split()))
    for span in CODE_SPAN.findall(SHELL_FENCE.sub("", text)):
        if span.startswith("make ") or "python -m " in span:
            found.append(span)
    return found
