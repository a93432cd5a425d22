"""The import graph has no cycle, and every module imports on its own in a fresh interpreter.

The graph is read from the source (AST), counting every import, those under
``if TYPE_CHECKING:`` included: a cycle hidden behind a type-only import (the old
``session -> todos -> session``) is still a cycle in the design.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("compaction", "prompts", "harness")


def module_name(path: Path) -> str:
    """Return the dotted name of a source file under ROOT."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Return the known modules `name` imports.

    ``from pkg import sub`` is an edge to the submodule ``pkg.sub`` (Python finds the package
    already importing); a name that is not a submodule makes it an edge to ``pkg`` itself.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            submodules = {f"{base}.{a.name}" for a in node.names} & known
            out |= submodules
            if base in known and len(submodules) < len(node.names):
                out.add(base)
    out.discard(name)
    return out


def graph() -> dict[str, set[str]]:
    """Return module -> modules it imports, for every module of the packages."""
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


@pytest.fixture(scope="module")
def edges() -> dict[str, set[str]]:
    """The packages' import graph, read once per module (parsing every source costs 0.5 s)."""
    return graph()


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    """Return one import cycle (a path that closes on its start), or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


class TestImportGraph:
    def test_no_cycle(self, edges: dict[str, set[str]]) -> None:
        """No module reaches itself through its imports, type-only imports included."""
        cycle = find_cycle(edges)
        assert cycle == [], " -> ".join(cycle)

    def test_the_checker_finds_a_cycle(self) -> None:
        """The cycle finder is not vacuous: it reports a planted session -> todos -> session."""
        edges = {"a.session": {"a.todos"}, "a.todos": {"a.session"}, "a.views": {"a.todos"}}
        assert find_cycle(edges) == ["a.session", "a.todos", "a.session"]

    def test_graph_sees_type_only_imports(self, tmp_path: Path) -> None:
        """An import under `if TYPE_CHECKING:` is an edge of the graph."""
        source = tmp_path / "m.py"
        source.write_text(
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.session import S\n"
        )
        assert imports_of("p.todos", source, {"p.session", "p.todos"}) == {"p.session"}

    def test_todos_and_tasks_never_import_the_session(self, edges: dict[str, set[str]]) -> None:
        """The tool modules own schema and validation only; the session runs them."""
        for module in (
            "compaction.tools.todos",
            "compaction.tools.tasks",
            "compaction.views.board",
        ):
            assert "compaction.session" not in edges[module], module


TOOL_MODULES = (
    "compaction.tools.todos",
    "compaction.tools.tasks",
    "compaction.views.board",
    "compaction.session",
    "compaction.tools",
    "compaction.tools.mode_policy",
    "compaction.policy",
    "prompts.refusals",
)
"""The modules of the tools and their policy, where the old cycle lived."""


@pytest.mark.parametrize("name", TOOL_MODULES)
def test_module_imports_alone(name: str) -> None:
    """Each tool module imports first in a fresh interpreter (no order-dependent cycle)."""
    subprocess.run([sys.executable, "-c", f"import {name}"], check=True, cwd=ROOT, timeout=120)


def reach(edges: dict[str, set[str]], start: str) -> set[str]:
    """Return every module `start` loads, directly or through others (itself excluded)."""
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += edges.get(node, ())
    return seen - {start}


class TestRoomsReach:
    @pytest.mark.parametrize(
        ("room", "never"),
        [
            (
                "compaction.stores",
                ("compaction.views", "compaction.tools", "compaction.compactor"),
            ),
            (
                "compaction.views",
                ("compaction.tools", "compaction.stores", "compaction.compactor"),
            ),
            ("compaction.tools", ("compaction.compactor", "compaction.summarizers")),
            ("compaction.llm", ("compaction.summarizers", "compaction.session")),
        ],
    )
    def test_a_room_never_reaches_a_room_above(
        self, edges: dict[str, set[str]], room: str, never: tuple[str, ...]
    ) -> None:
        """Following imports transitively, no module of a room loads a room above it."""
        for module in (m for m in edges if m == room or m.startswith(room + ".")):
            above = {m for m in reach(edges, module) if m.startswith(never)}
            assert above == set(), module

    def test_reach_follows_chains(self) -> None:
        """Following is transitive, so a wall climbed two steps away is still seen."""
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
        assert reach(edges, "a") == {"b", "c"}
