"""The app's modules import each other in layers: no cycles, and the Table below the shell.

Read from the syntax tree, imports under `if TYPE_CHECKING:` included: a cycle hidden from
the interpreter is still two modules that must change together.
"""

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"


def app_imports(path: Path) -> set[str]:
    """The app modules `path` imports, by module name (`rooms`, `table`, ...)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module == "app":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("app."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("app.")}
    return found


GRAPH = {path.stem: app_imports(path) for path in APP.glob("*.py")}


def test_no_app_module_imports_itself_back_through_others() -> None:
    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for name in GRAPH.get(start, set()):
            if name == target or (name not in seen and reaches(name, target, seen | {name})):
                return True
        return False

    cycles = sorted(name for name in GRAPH if reaches(name, name, set()))
    assert cycles == []


def test_the_table_knows_nothing_of_the_shell_around_it() -> None:
    below: set[str] = set()
    todo = ["table"]
    while todo:  # everything the Table imports, directly or not
        for name in GRAPH[todo.pop()] - below:
            below.add(name)
            todo.append(name)
    assert below <= {"errors", "events", "lag"}  # lag: the pure round-trip meter
