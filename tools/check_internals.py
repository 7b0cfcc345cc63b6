"""Checks every internal of a library that app/realtime/internals.py lists against what is
installed: the name is still there, and a callable's parameters are as listed. Run it after
`make lock` brings new releases (tests/app/test_internals.py runs the same check):

    .venv/bin/python -m tools.check_internals

A failure names the library, the name and what to do: pin the library below the release in
pyproject.toml, or port our use of the name, then `make lock`.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from importlib import metadata
from typing import Any

from app.realtime.internals import INTERNALS, Internal


def version_of(library: str) -> str:
    if library == "python":
        return ".".join(map(str, sys.version_info[:3]))
    return metadata.version(library)


def plain_signature(target: Any) -> str:
    """`target`'s parameters as `(a, b=1, *args, **kwargs)`: names, kinds and defaults,
    without annotations (a release that only re-annotates changes nothing for us)."""
    parts: list[str] = []
    star_written = False
    for parameter in inspect.signature(target).parameters.values():
        kind = parameter.kind
        if kind is parameter.KEYWORD_ONLY and not star_written:
            parts.append("*")
            star_written = True
        if kind is parameter.VAR_POSITIONAL:
            parts.append(f"*{parameter.name}")
            star_written = True
        elif kind is parameter.VAR_KEYWORD:
            parts.append(f"**{parameter.name}")
        elif parameter.default is parameter.empty:
            parts.append(parameter.name)
        else:
            parts.append(f"{parameter.name}={parameter.default!r}")
    return f"({', '.join(parts)})"


def assigns(owner: type, attribute: str) -> bool:
    """Whether the source of `owner` or a class it derives from (but `object`) assigns
    `self.<attribute>`."""
    # `self.x = `, `self.x: T = `, `self.x, self.y = ` (not `==`, nor a call's `x=`)
    pattern = re.compile(rf"self\.{re.escape(attribute)}\b[^=\n(]*=(?!=)")
    for cls in owner.__mro__[:-1]:
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):  # built in: no source
            continue
        if pattern.search(source):
            return True
    return False


def find(internal: Internal) -> tuple[bool, Any]:
    """(found, the object), the object None for an attribute found only in source."""
    try:
        found: Any = importlib.import_module(internal.module)
    except ImportError:
        return False, None
    parts = internal.name.split(".")
    for at, part in enumerate(parts):
        if hasattr(found, part):
            found = getattr(found, part)
        elif at == len(parts) - 1 and inspect.isclass(found) and assigns(found, part):
            return True, None
        else:
            return False, None
    return True, found


def problem(internal: Internal) -> str | None:
    """None, or the sentence saying what changed and what to do."""
    library, version = internal.library, version_of(internal.library)
    named = f"{internal.name}{internal.signature or ''}"
    verb = {"overrides": "override", "calls": "call", "subclasses": "subclass"}.get(
        internal.use, "use"
    )
    if library == "python":
        todo = f"port the {verb} (or keep to the Python versions it was written for)"
    else:
        floor = version.split("+")[0]
        todo = f"pin {library}<{floor} in pyproject.toml or port the {verb}, then make lock"
    found, target = find(internal)
    if not found:
        where = f"{internal.where} {internal.use} it"
        return f"{library} {version} no longer has {named}; {where}: {todo}"
    if internal.signature is not None and target is not None:
        try:
            installed = plain_signature(target)
        except (TypeError, ValueError):  # no signature to read (a C function): found is all
            return None
        if installed != internal.signature:
            return (
                f"{library} {version} changed {internal.name}{internal.signature} to"
                f" {internal.name}{installed}; {internal.where} {internal.use} it: {todo}"
            )
    return None


def problems() -> list[str]:
    return [sentence for internal in INTERNALS if (sentence := problem(internal)) is not None]


def main() -> None:
    found = problems()
    print("\n".join(found) if found else f"all {len(INTERNALS)} internals as listed")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
