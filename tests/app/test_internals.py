"""The internals of python-engineio, python-socketio, uvicorn, websockets and asyncio that our
code relies on (app/realtime/internals.py) are there, as listed, in what is installed; and
no class of ours defines a private name of its library's classes without the list saying so
(a release that adds a name we already use would otherwise change our class silently)."""

from __future__ import annotations

import inspect
import re
from importlib import metadata

import pytest

from app.ops.timers import WatchedLock
from app.realtime import internals
from app.realtime.internals import INTERNALS, Internal
from app.realtime.outgoing import Assembled
from app.realtime.serving import DeadlineHttp, LeanWebSocket
from app.realtime.stock import StockServer
from app.realtime.transport import GameEngineIO, GameServer, GameSocket
from tools import check_internals
from tools.check_internals import find, problem, problems

OURS = [
    GameSocket,
    GameEngineIO,
    GameServer,
    StockServer,
    LeanWebSocket,
    DeadlineHttp,
    WatchedLock,
    Assembled,
]
LIBRARIES = ("engineio", "socketio", "uvicorn", "websockets", "asyncio")
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
        located, target = find(Internal(internal.library, internal.module, owner, "reads", ""))
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
        "(self, eio_sid, data, extra)",
    )
    assert problem(changed) == (
        f"python-socketio {version} changed AsyncServer._handle_eio_message(self, eio_sid,"
        " data, extra) to AsyncServer._handle_eio_message(self, eio_sid, data);"
        " app/realtime/transport.py overrides it: pin python-socketio<"
        f"{version} in pyproject.toml or port the override, then make lock"
    )


def test_an_attribute_is_found_where_its_class_assigns_it() -> None:
    assert find(Internal("uvicorn", internals.WS.split(":")[0], "X", "reads", ""))[0] is False
    entry = next(i for i in INTERNALS if i.name.endswith("WebSocketsSansIOProtocol.frames"))
    assert find(entry) == (True, None)  # set in __init__, not a class attribute
    missing = Internal(entry.library, entry.module, entry.name + "_gone", "reads", "")
    assert find(missing) == (False, None)
