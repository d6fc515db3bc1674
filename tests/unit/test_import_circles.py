"""No import circles in the package, lazy and type-checking imports included.

Every `import` and `from ... import` anywhere in a module (top level, inside a
function, under `if TYPE_CHECKING:`) is an edge from that module to the module
it names; a package's `__init__` counts as the package. A strongly connected
group of more than one module is a circle, and the test names its members.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("protocol", "daemon", "client")


def module_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            parts = [folder, *path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(["coding_harness", *parts])] = path
    return found


def imported(module: str, path: Path, known: set[str]) -> Iterator[str]:
    """The package modules `module` imports, wherever in the file."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                child = f"{base}.{alias.name}"
                target = child if child in known else base
                if target in known and target != module:
                    yield target


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {module: set(imported(module, path, known)) for module, path in files.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_circles() -> None:
    graph = import_graph()
    # The walk found the package (an empty graph has no circles either).
    assert len(graph) > 150
    assert "coding_harness.daemon.agent.seams" in graph["coding_harness.daemon.agent.loop"]
    assert circles(graph) == []


def test_a_circle_is_found_lazy_or_not() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_lazy_and_type_checking_imports_are_edges(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .b import B\n"
        "def f() -> None:\n"
        "    from coding_harness.daemon import c\n"
    )
    path = tmp_path / "a.py"
    path.write_text(source)
    known = {"coding_harness.daemon.a", "coding_harness.daemon.b", "coding_harness.daemon.c"}
    edges = set(imported("coding_harness.daemon.a", path, known))
    assert edges == {"coding_harness.daemon.b", "coding_harness.daemon.c"}
