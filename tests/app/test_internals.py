"""The internals of python-engineio, python-socketio, uvicorn and asyncio that our code relies
on (app/realtime/internals.py) are there, as listed, in what is installed; no class of ours
defines a private name of its library's classes without the list saying so (a release that
adds a name we already use would otherwise change our class silently); each says why, what
it buys and what would remove it; and pyproject.toml caps exactly the libraries they are
of, so that `make lock` takes every other release at once."""

from __future__ import annotations

import ast
import inspect
import io
import re
import tokenize
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from app.ops.timers import WatchedLock
from app.realtime import internals
from app.realtime.clients import ClientList
from app.realtime.internals import INTERNALS, Internal
from app.realtime.serving import DeadlineHttp
from app.realtime.transport import GameEngineIO, GameServer
from tools import check_internals
from tools.check_internals import find, problem, problems

ROOT = Path(__file__).resolve().parents[2]
OURS = [GameEngineIO, GameServer, ClientList, DeadlineHttp, WatchedLock]
LIBRARIES = ("engineio", "socketio", "uvicorn", "asyncio")
MOST_NAMES = 30  # overridden, called, read or set (the classes we derive from aside)
MOST_OVERRIDE_LINES = 700  # code lines of internals.OVERRIDE_MODULES
ASSIGNED = re.compile(r"self\.(_[a-z]\w*)\b[^=\n(]*=(?!=)")


def test_every_internal_we_rely_on_is_installed_as_listed() -> None:
    found = problems()
    assert not found, "\n".join(found)


def listed_on(cls: type) -> set[str]:
    """The names the list holds for `cls` or a class it derives from."""
    names = set()
    for internal in INTERNALS:
        owner, _, attribute = internal.name.rpartition(".")
        if not owner:
            continue
        owned = Internal(internal.library, internal.module, owner, "reads", "", internal.why)
        located, target = find(owned)
        if located and target in cls.__mro__:
            names.add(attribute)
    return names


def library_bases(cls: type) -> list[type]:
    return [base for base in cls.__mro__[1:] if base.__module__.split(".")[0] in LIBRARIES]


def library_has(bases: list[type], name: str) -> bool:
    return any(name in vars(base) or check_internals.assigns(base, name) for base in bases)


@pytest.mark.parametrize("cls", OURS, ids=lambda cls: cls.__name__)
def test_each_private_name_our_classes_share_with_their_library_is_listed(cls: type) -> None:
    bases = library_bases(cls)
    assert bases, f"{cls.__name__} derives from no library class"
    ours = {name for name in vars(cls) if name.startswith("_") and not name.startswith("__")}
    ours |= set(getattr(cls, "__annotations__", {})) & {
        name for name in dir(cls) if name.startswith("_")
    }
    ours |= set(ASSIGNED.findall(inspect.getsource(cls)))
    shared = {name for name in ours if not name.startswith("__") and library_has(bases, name)}
    unlisted = sorted(shared - listed_on(cls))
    assert not unlisted, (
        f"{cls.__name__} defines {', '.join(unlisted)}, which {bases[0].__module__} defines"
        " too: list each in app/realtime/internals.py (or rename ours)"
    )


def test_a_name_gone_is_told_with_the_library_the_name_and_what_to_do() -> None:
    version = metadata.version("python-engineio")
    gone = Internal(
        "python-engineio",
        "engineio.async_socket",
        "AsyncSocket._gone",
        "overrides",
        "app/realtime/transport.py",
        internals.OWN_WEBSOCKETS,
        "(self)",
    )
    assert problem(gone) == (
        f"python-engineio {version} no longer has AsyncSocket._gone(self);"
        " app/realtime/transport.py overrides it: pin python-engineio<"
        f"{version} in pyproject.toml or port the override, then make lock"
    )


def test_a_signature_changed_is_told_too() -> None:
    version = metadata.version("python-socketio")
    changed = Internal(
        "python-socketio",
        "socketio.async_server",
        "AsyncServer._handle_eio_message",
        "overrides",
        "app/realtime/transport.py",
        internals.FAST_EVENTS,
        "(self, eio_sid, data, extra)",
    )
    assert problem(changed) == (
        f"python-socketio {version} changed AsyncServer._handle_eio_message(self, eio_sid,"
        " data, extra) to AsyncServer._handle_eio_message(self, eio_sid, data);"
        " app/realtime/transport.py overrides it: pin python-socketio<"
        f"{version} in pyproject.toml or port the override, then make lock"
    )


def test_an_attribute_is_found_where_its_class_assigns_it() -> None:
    socket = internals.SOCKET.split(":")[0]
    assert find(Internal("python-engineio", socket, "X", "reads", "", internals.OUTBOX))[0] is False
    entry = next(i for i in INTERNALS if i.name == "AsyncSocket.queue")
    assert find(entry) == (True, None)  # set in BaseSocket.__init__, not a class attribute
    missing = Internal(entry.library, entry.module, entry.name + "_gone", "reads", "", entry.why)
    assert find(missing) == (False, None)


def test_each_says_why_what_it_buys_and_what_would_remove_it() -> None:
    for internal in INTERNALS:
        why = internal.why
        assert why.reason and why.gain and why.hook, internal.name
        assert "GAIN_" not in why.gain, f"{internal.name}: its gain is not measured yet"


def test_few_names_and_only_where_they_are_listed() -> None:
    names = {(i.module, i.name) for i in INTERNALS if i.use != "subclasses"}
    assert len(names) <= MOST_NAMES, len(names)
    for internal in INTERNALS:
        for where in internal.where.split(", "):
            assert (ROOT / where).exists(), (internal.name, where)


def test_exactly_the_libraries_whose_internals_we_use_are_capped() -> None:
    """A cap (`<`) on a library whose internals we use keeps `make lock` from taking a
    release nobody checked; on any other it only keeps the fixes away."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    capped = {
        re.split(r"[\[<>=~!; ]", requirement, maxsplit=1)[0]
        for requirement in project["dependencies"]
        if "<" in requirement.split(";")[0]
    }
    ours = {internal.library for internal in INTERNALS if internal.library != "python"}
    assert capped == ours


def code_lines(source: str) -> int:
    """Lines holding code: docstrings, comments and blank lines aside."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if isinstance(node.value.value, str):
            docstrings.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT}
    skipped |= {tokenize.DEDENT, tokenize.ENDMARKER}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skipped:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def test_code_lines_count_code_only() -> None:
    source = (
        '"""A module."""\n\n# a comment\nX = (\n    1,  # one\n)\n\n\n'
        'def f():\n    """Doc."""\n    return X\n'
    )
    assert code_lines(source) == 5  # X = ( / 1, / ) / def f(): / return X


def test_the_overrides_fit_in_their_lines() -> None:
    counted = sum(code_lines((ROOT / where).read_text()) for where in internals.OVERRIDE_MODULES)
    assert counted <= MOST_OVERRIDE_LINES, f"{counted} code lines of overrides"


def test_uvicorn_s_configuration_is_no_override() -> None:
    """app/realtime/uvicorn_config.py is left out of the count: it passes uvicorn's documented
    options only, and reaches no name of a library's beyond them (internals.py lists none
    for it, and it reads or sets no private attribute)."""
    where = "app/realtime/uvicorn_config.py"
    assert where not in {internal.where for internal in INTERNALS}
    private = [
        node.attr
        for node in ast.walk(ast.parse((ROOT / where).read_text()))
        if isinstance(node, ast.Attribute) and node.attr.startswith("_")
    ]
    assert private == []


def test_the_client_list_overrides_only_what_python_socketio_documents() -> None:
    """app/realtime/clients.py is no override either: each method of python-socketio's
    manager it defines is one the library documents (its API reference lists the members
    with a docstring, `:members:` and `:inherited-members:`), and it reaches no other name."""
    where = "app/realtime/clients.py"
    assert where not in internals.OVERRIDE_MODULES
    assert where not in {place for i in INTERNALS for place in i.where.split(", ")}
    bases = library_bases(ClientList)
    for name, ours in vars(ClientList).items():
        if callable(ours) and not name.startswith("__") and library_has(bases, name):
            theirs = next(vars(base)[name] for base in bases if name in vars(base))
            assert inspect.getdoc(theirs), f"{name} is not documented by python-socketio"
