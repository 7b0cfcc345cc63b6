"""No tracked file speaks of how the work was organised: no issue numbers, no rounds of work,
no pointers into a diary. Comments say why, never when; git keeps the history."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

# The words, as `git grep -n -i -E` would find them.
PROCESS_WORDS = re.compile(
    r"issue ?[0-9]+|\bround [0-9]+|README, [a-z]+ round"
    r"|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    r"|[a-z]+teenth|[a-z]+tieth|[a-z]+ty-first) round\b",
    re.IGNORECASE,
)

# The fan-out benchmark prints "round N:" for each of its repeated measurements
# (bench/load.py `ratio_report`); its test reads those words back.
BENCHMARK_OUTPUT = {
    "tests/bench/test_load.py": ('"  round 2:"', 'split("round 1")'),
    # An event's rounds are the game's own: what its page says of them ("Round 1 of 2").
    "tests/js/eventview.test.js": ('"Round 1 of 2"', '"Class 2B · Round 1 · first to'),
}


def tracked_files() -> list[str]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no tracked files to read")
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return [name for name in listing.decode().split("\0") if name and name != THIS]


def process_words(name: str, text: str) -> list[str]:
    """Each line of `text` with a process word, as `path:line: text`."""
    allowed = BENCHMARK_OUTPUT.get(name, ())
    return [
        f"{name}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if PROCESS_WORDS.search(line) and not any(words in line for words in allowed)
    ]


def test_no_tracked_file_names_an_issue_or_a_round_of_work() -> None:
    found = []
    for name in tracked_files():
        path = ROOT / name
        if path.is_file():
            found += process_words(name, path.read_bytes().decode("utf-8", errors="replace"))
    assert found == [], "process words in product files:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "line",
    [
        "# the snapshot as it was before issue 16",
        "(README, twelfth round)",
        "since the thirteenth round most saves are journals",
        "measured in round 3 of the work",
        "see Issue12",
    ],
)
def test_the_words_are_found(line: str) -> None:
    assert process_words("app/x.py", line) == [f"app/x.py:1: {line}"]


def test_round_trips_and_the_benchmarks_own_rounds_are_not_process_words() -> None:
    assert process_words("app/x.py", "a flip's round trip, `--rounds 4`, 3 rounds") == []
    assert process_words("tests/bench/test_load.py", 'assert "  round 2:" in report') == []
    assert process_words("tests/app/test_x.py", 'assert "  round 2:" in report') != []
