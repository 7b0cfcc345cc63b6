"""The code's layers, read from the syntax tree of every module of `app/` and `engine/`: which
package may import which, no module importing itself back through others, and the Table
below the shell around it.

Imports under `if TYPE_CHECKING:` count: a cycle hidden from the interpreter is still two
modules that must change together.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Each package, and what it may import besides itself. From the bottom up: the engine is the
# rules alone; ops (settings, logs, metrics, timers) serves everyone; a store keeps values and
# knows nothing of tables; the wire is shapes and codes; the realtime transport moves bytes;
# tables are the rooms; the cluster moves tables between processes; the web is the edge.
# An entry ending in a module (say app.ops.clock) allows that module alone.
MAY_IMPORT: dict[str, set[str]] = {
    "engine": set(),
    "app.ops": set(),
    "app.stores": {"app.ops"},
    "app.wire": {"app.ops", "engine"},
    "app.realtime": {"app.ops", "app.wire"},
    # A room hands its messages, encoded (app.wire.encoded), to a transport it is given: it
    # imports nothing of app.realtime.
    "app.tables": {"app.ops", "app.stores", "app.wire", "engine"},
    "app.cluster": {"app.ops", "app.stores", "app.wire", "app.tables", "engine"},
    "app.web": {
        "app.ops",
        "app.stores",
        "app.wire",
        "app.realtime",
        "app.tables",
        "app.cluster",
        "engine",
    },
    # The wiring: builds the app from every part.
    "app.main": {"app"},
    "app.__main__": {"app"},
}
# The Table is a value: it may import its own events, values, notation (snapshots) and lag
# meter, the wire's shapes, the engine, and nothing of the shell (room, registry, timers,
# stores, transport). Its notation and values are held to the same.
TABLE_MAY_IMPORT = {
    "app.ops.config",  # the settings' defaults a table's Policy takes, never the environment
    "app.tables.door",
    "app.tables.events",
    "app.tables.lag",
    "app.tables.notation",
    "app.tables.reflexes",
    "app.tables.state",
    "app.tables.values",
    "app.wire",
    "engine",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """The modules of ours that `path` imports (`from app.x import y` counts `app.x.y` when
    `y` is a module, else `app.x`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.split(".")[0] in ("app", "engine", "tools")}


PATHS = sorted([*ROOT.joinpath("app").rglob("*.py"), *ROOT.joinpath("engine").rglob("*.py")])
MODULES = {module_name(path) for path in PATHS}
GRAPH = {module_name(path): imports_of(path) for path in PATHS}


def package_of(module: str) -> str:
    for name in sorted(MAY_IMPORT, key=len, reverse=True):
        if module == name or module.startswith(name + "."):
            return name
    raise AssertionError(f"{module} belongs to no package of MAY_IMPORT: add it there")


def within(module: str, allowed: set[str]) -> bool:
    return any(module == a or module.startswith(a + ".") for a in allowed)


def forbidden_imports(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, imported in sorted(graph.items()):
        if module in ("app", "engine"):
            continue
        package = package_of(module)
        allowed = MAY_IMPORT[package] | {package}
        wrong += [
            f"{module} imports {name}" for name in sorted(imported) if not within(name, allowed)
        ]
    return wrong


def test_every_module_belongs_to_a_package_with_its_rules() -> None:
    for module in MODULES - {"app", "engine"}:
        package_of(module)


def test_each_package_imports_only_the_layers_below_it() -> None:
    assert forbidden_imports(GRAPH) == []


def test_a_forbidden_import_is_caught() -> None:
    """The check itself, on a graph with one wrong edge: a store reaching into the tables."""
    graph = {**GRAPH, "app.stores.sqlite": GRAPH["app.stores.sqlite"] | {"app.tables.table"}}
    assert forbidden_imports(graph) == ["app.stores.sqlite imports app.tables.table"]


def test_the_app_never_imports_a_developer_tool() -> None:
    """tools/ (generators, checks) sits beside the app, never under it."""
    graph = {**GRAPH, "app.wire.names": GRAPH["app.wire.names"] | {"tools.make_prototypes"}}
    assert forbidden_imports(graph) == ["app.wire.names imports tools.make_prototypes"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_itself_back_through_others(module: str) -> None:
    seen: set[str] = set()
    todo = [name for name in GRAPH[module] if name in GRAPH]
    while todo:
        name = todo.pop()
        assert name != module, f"{module} imports itself back through {sorted(seen)}"
        if name not in seen:
            seen.add(name)
            todo += [n for n in GRAPH.get(name, ()) if n in GRAPH]


@pytest.mark.parametrize(
    "module",
    [
        "app.tables.door",
        "app.tables.notation",
        "app.tables.reflexes",
        "app.tables.state",
        "app.tables.table",
        "app.tables.values",
    ],
)
def test_the_table_knows_nothing_of_the_shell_around_it(module: str) -> None:
    wrong = sorted(n for n in GRAPH[module] if not within(n, TABLE_MAY_IMPORT))
    assert wrong == []


# A module that does one job stays readable whole; generated data lives in data files
# (app/wire/data/), not in modules.
MOST_LINES = 600


@pytest.mark.parametrize(
    "path",
    [p for p in PATHS if p.is_relative_to(ROOT / "app")],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_module_of_the_app_is_over_600_lines(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    assert lines <= MOST_LINES, f"{path.relative_to(ROOT)}: {lines} lines"
