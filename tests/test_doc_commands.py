"""The commands the README and docs/ give are real: every `make TARGET` is a target of the
Makefile, every `python -m MODULE --option` names a module that exists and an option it
declares, and the README's own commands are the ones listed here, so changing one fails
until it has been tried and the list below brought along."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from doc_commands import commands

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# The README's shell commands, in order, without their comments. A newcomer runs these
# first: the set-up (`make run`, `make test`), the lock, Docker and the cluster.
README_COMMANDS = [
    "sudo apt-get install python3-venv git make nodejs npm redis-server redis-sentinel nginx"
    " chromium firefox-esr webkit2gtk-driver xvfb fonts-noto-color-emoji",
    "make run",
    "make test",
    "make lock",
    "make test",
    "git commit uv.lock",
    "docker build -t slapjack .",
    "docker run -d --name slapjack -p 8000:8000 -v slapjack-data:/data --restart"
    " unless-stopped --stop-timeout 15 slapjack",
    "make cluster",
    ".venv/bin/python -m deploy.cluster --processes 3 --port 8080",
    "docker compose -f deploy/compose.cluster.yaml up -d --build",
]

# What `make check` runs, as the README and docs/development.md describe it.
CHECK_STEPS = {"lint", "typecheck", "jslint", "jstest", "unit"}


def makefile_variables(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([A-Z_]+)\s*:?=\s*(\S.*?)\s*$", text, re.MULTILINE))


def expand(word: str, variables: dict[str, str]) -> str:
    for _ in range(5):  # variables name variables: $(STAMP) is $(VENV)/.installed
        word = re.sub(r"\$\((\w+)\)", lambda m: variables.get(m.group(1), m.group(0)), word)
    return word


def makefile_rules() -> dict[str, str]:
    """Each target of the Makefile, with the rest of its rule line and its recipe."""
    text = (ROOT / "Makefile").read_text()
    variables = makefile_variables(text)
    rules: dict[str, str] = {}
    rule = re.compile(r"^([^\s#:=][^:=]*?):(?![=:])(.*(?:\n\t.*)*)", re.MULTILINE)
    for found in rule.finditer(text):
        for target in found.group(1).split():
            rules[expand(target, variables)] = found.group(2)
    return rules


def make_targets(command: str) -> list[str]:
    words = shlex.split(command)
    if not words or words[0] != "make":
        return []
    return [word for word in words[1:] if "=" not in word and not word.startswith("-")]


def python_module(command: str) -> tuple[str, list[str]] | None:
    """`python -m MODULE --option ...` -> (MODULE, its long options)."""
    words = shlex.split(command)
    for i, word in enumerate(words[:-1]):
        if word == "-m" and words[i - 1].endswith("python"):
            return words[i + 1], [w.split("=")[0] for w in words[i + 2 :] if w.startswith("--")]
    return None


def test_the_readme_gives_the_commands_this_test_knows() -> None:
    assert commands(ROOT / "README.md")[: len(README_COMMANDS)] == README_COMMANDS, (
        "the README's commands changed: try each, then bring README_COMMANDS along"
    )


def test_the_two_set_up_commands_are_make_targets() -> None:
    rules = makefile_rules()
    assert {"run", "test"} <= set(rules)
    # What the brief of a new worktree runs to set up without testing.
    assert {".venv/.installed", "static/vendor/socket.io.esm.min.js", "catalogs", "bundle"} <= (
        set(rules)
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_make_target_a_page_names_exists(page: Path) -> None:
    rules = makefile_rules()
    missing = [
        command
        for command in commands(page)
        for target in make_targets(command)
        if target not in rules
    ]
    assert missing == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_python_module_a_page_runs_exists_with_its_options(page: Path) -> None:
    wrong = []
    for command in commands(page):
        found = python_module(command)
        if found is None:
            continue
        module, options = found
        if module != module.lower():  # a placeholder: tools.NAME
            continue
        if module == "pytest":
            paths = [w for w in shlex.split(command) if w.startswith("tests/")]
            wrong += [f"{command}: no {path}" for path in paths if not (ROOT / path).exists()]
            continue
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            wrong.append(f"{command}: no module {module}")
            continue
        source = Path(spec.origin)
        if source.name == "__init__.py" and (source.parent / "__main__.py").exists():
            source = source.parent / "__main__.py"
        text = source.read_text()
        wrong += [f"{command}: {module} has no {o}" for o in options if f'"{o}"' not in text]
    assert wrong == []


def test_make_check_runs_what_the_docs_say() -> None:
    rules = makefile_rules()
    recipe = rules["check"]
    steps = set(re.findall(r"\b(\w+)\b", recipe.split("--output-sync=target", 1)[1]))
    assert steps == CHECK_STEPS, "make check changed: say what it runs in README and docs"
    assert "-m unit" in rules["unit"]
    for page in (ROOT / "README.md", ROOT / "docs" / "development.md"):
        said = " ".join(page.read_text().split())
        assert re.search(r"`make check`[^.]*marked `unit`", said), page.name
