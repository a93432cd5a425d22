"""The layers stay layered: harness -> prompts -> compaction; benchmarks -> the package roots.

Static checks read every module's imports with `ast` (function-level and TYPE_CHECKING imports
included); runtime checks import a package in a fresh interpreter and look at `sys.modules`.
Each checker is also run on small bad sources, so a checker that stopped finding anything fails.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN: dict[str, frozenset[str]] = {
    "compaction": frozenset({"prompts", "harness", "benchmarks"}),
    "prompts": frozenset({"harness", "benchmarks"}),
    "harness": frozenset({"benchmarks"}),
}
"""Top-level packages each package must never import (harness runs benchmarks from a checkout,
through `importlib`, only when `harness bench` runs)."""

_ABOVE_VIEWS = frozenset(
    {
        "compaction.compactor",
        "compaction.session",
        "compaction.summarizers",
        "compaction.importers",
        "compaction.llm",
    }
)
"""The rooms above the views: the session, the compactor and what feeds it."""

_RECORDS = frozenset(
    {
        "compaction.views",
        "compaction.tools",
        "compaction.stores",
        "compaction.checkpoint",
        "compaction.backends",
        "compaction.providers",
        "compaction.policy",
    }
)
"""The rooms that work on events (folds, tools, storage, the Checkpoint, provider shapes)."""

INNER_WALLS: dict[str, frozenset[str]] = {
    "compaction.stores": _ABOVE_VIEWS | _RECORDS,
    "compaction.views": _ABOVE_VIEWS
    | {"compaction.tools", "compaction.stores"}
    | {"compaction.backends", "compaction.providers"},
    "compaction.tools": _ABOVE_VIEWS
    | {"compaction.stores", "compaction.backends"}
    | {"compaction.checkpoint", "compaction.providers"},
    "compaction.checkpoint": _ABOVE_VIEWS | _RECORDS,
    "compaction.providers": _ABOVE_VIEWS | _RECORDS,
    "compaction.backends": _ABOVE_VIEWS - {"compaction.llm"}
    | {"compaction.tools", "compaction.stores", "compaction.providers"},
    "compaction.session": _ABOVE_VIEWS | {"compaction.checkpoint", "compaction.backends"},
    "compaction.summarizers": frozenset(
        {"compaction.compactor", "compaction.importers", "compaction.stores", "compaction.backends"}
    ),
    "compaction.compactor": frozenset({"compaction.importers", "compaction.stores"}),
    "compaction.llm": _ABOVE_VIEWS | _RECORDS,
}
"""Rooms of `compaction` and the rooms they must never import: stores hold bytes and know no
view, tool or compaction; views are pure folds over events; tools use views but no store,
session or compactor (the session runs them, through the `ToolHost` protocol); the Checkpoint
and the provider shapes sit on the events alone; backends know no session or compactor (the
compactor calls them); the session's parts know no compactor or summarizer above them; the
summarizers read a session but no store; the compactor reads no store directly and no importer
(the importers replay through it); the LLM client sits below its summarizer."""

CORE_MODULES = (
    "compaction.contract",
    "compaction.cuts",
    "compaction.events",
    "compaction.invariants",
    "compaction.secrets",
    "compaction.tokens",
)
"""Core modules with an `__all__` of their own: the advanced names the host API at the root
leaves out (issue 29 §3) are imported from these, as from a sub-package root."""

ROOTS = (
    "compaction",
    "compaction.backends",
    "compaction.checkpoint",
    "compaction.compactor",
    "compaction.importers",
    "compaction.llm",
    "compaction.providers",
    "compaction.session",
    "compaction.stores",
    "compaction.summarizers",
    "compaction.tools",
    "compaction.views",
    "prompts",
    "harness.simulation",
    "harness.testing",
    "harness.hooks",
    *CORE_MODULES,
)
"""Package roots: the CLI and the benchmarks import these packages' `__all__`, nothing deeper.
A name a shallower root exports is imported from that root, not from the module it lives in."""

CONVENTIONAL_NAMES = frozenset({"__init__", "__main__", "conftest", "base", "_base", "_common"})
"""Module names that may repeat across folders: they mean the same kind of thing everywhere."""


def imported_modules(source: str) -> Iterator[tuple[str, tuple[str, ...], int]]:
    """Yield (module, names, line) for every absolute import in `source`, at any depth."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, (), node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, tuple(a.name for a in node.names), node.lineno


def layer_violations(package: str, source: str) -> list[str]:
    """Return the imports in a module of `package` that point up or sideways."""
    banned = FORBIDDEN.get(package, frozenset())
    return [
        f"line {line}: imports {module}"
        for module, _, line in imported_modules(source)
        if module.split(".")[0] in banned
    ]


def wall_violations(package: str, source: str) -> list[str]:
    """Return the imports in a module of the `compaction` room `package` that climb a wall."""
    banned = INNER_WALLS.get(package, frozenset()) - {package}
    return [
        f"line {line}: imports {module}"
        for module, _, line in imported_modules(source)
        if any(module == b or module.startswith(b + ".") for b in banned)
    ]


def owning_root(module: str) -> str | None:
    """Return the deepest package root that `module` belongs to, if any."""
    parts = module.split(".")
    owners = [r for r in ROOTS if parts[: len(r.split("."))] == r.split(".")]
    return max(owners, key=len) if owners else None


def shallower_roots(root: str) -> list[str]:
    """Return the package roots above `root` (compaction above compaction.tokens)."""
    return [r for r in ROOTS if r != root and root.startswith(r + ".")]


def root_violations(module_name: str, source: str) -> list[str]:
    """Return the imports of `module_name` that bypass a package root or take a private name."""
    found = []
    for module, names, line in imported_modules(source):
        root = owning_root(module)
        if root is None or module_name == root or module_name.startswith(root + "."):
            continue  # not a root's module, or a module importing inside its own package
        if module != root:
            found.append(f"line {line}: from {module} (use the root, {root})")
            continue
        exported = set(importlib.import_module(root).__all__)
        found += [f"line {line}: {root}.{n} is not in __all__" for n in names if n not in exported]
        for upper in shallower_roots(root):
            shared = sorted(set(names) & set(importlib.import_module(upper).__all__))
            found += [f"line {line}: {root}.{n} (use the root, {upper})" for n in shared]
    return found


def modules_of(*folders: str) -> Iterator[tuple[str, Path]]:
    """Yield (dotted name, path) of every module under the given top-level folders."""
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(p for p in parts if p != "__init__"), path


def fresh_modules(code: str) -> set[str]:
    """Run `code` in a fresh interpreter and return the names in its `sys.modules`."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


class TestCheckersFindViolations:
    """The checkers themselves: each finds a planted violation and passes clean code."""

    @pytest.mark.parametrize(
        ("package", "source"),
        [
            ("compaction", "from prompts import get_mode\n"),
            ("compaction", "def f():\n    import harness.cli\n"),
            (
                "compaction",
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import benchmarks\n",
            ),
            ("prompts", "from harness.simulation import generate\n"),
            ("prompts", "import benchmarks.report.results_report\n"),
            ("harness", "from benchmarks.report.results_report import run_bench\n"),
        ],
    )
    def test_layer_checker_flags(self, package: str, source: str) -> None:
        """An import pointing up a layer is reported."""
        assert layer_violations(package, source)

    @pytest.mark.parametrize(
        ("package", "source"),
        [
            ("compaction.views", "from compaction.tools.todos import TOOL_NAME\n"),
            ("compaction.views", "from compaction.stores import open_store\n"),
            ("compaction.views", "def f():\n    import compaction.compactor\n"),
            ("compaction.stores", "from compaction.views._panel import TodoPanel\n"),
            ("compaction.stores", "from compaction.tools import call_tool\n"),
            ("compaction.tools", "from compaction.compactor import compact\n"),
            ("compaction.tools", "from compaction.session import Session\n"),
            ("compaction.backends", "from compaction.session import Session\n"),
            ("compaction.checkpoint", "from compaction.views import TodoPanel\n"),
            ("compaction.llm", "from compaction.summarizers._llm import OpenAISummarizer\n"),
        ],
    )
    def test_wall_checker_flags(self, package: str, source: str) -> None:
        """An import across an inner wall of compaction is reported."""
        assert wall_violations(package, source)

    def test_wall_checker_passes_downward_imports(self) -> None:
        """A room may import the core below it, and a name that merely starts alike."""
        source = "from compaction.events import Event\nimport compaction.viewsx\n"
        assert not wall_violations("compaction.stores", source)

    def test_layer_checker_passes_downward_imports(self) -> None:
        """Imports pointing down, or at a name merely containing a package name, pass."""
        assert not layer_violations("prompts", "from compaction import Session\nimport harnessx\n")

    @pytest.mark.parametrize(
        ("source", "reason"),
        [
            ("from compaction.tokens import get_tokenizer\n", "use the root, compaction"),
            ("from compaction.tokens import _tiktoken_encoding\n", "not in __all__"),
            ("from compaction import _tiktoken_encoding\n", "not in __all__"),
            ("from compaction.importers._session_replay import replay\n", "compaction.importers"),
            ("from harness.simulation._sessions import generate\n", "harness.simulation"),
            ("from prompts.requests import openai_message\n", "use the root, prompts"),
            (
                "def f():\n    from compaction.views._panel import STATUS_MARKS\n",
                "compaction.views",
            ),
        ],
    )
    def test_root_checker_flags(self, source: str, reason: str) -> None:
        """An import past a package root, or of a name the root does not export, is reported."""
        found = root_violations("benchmarks.example", source)
        assert len(found) == 1
        assert reason in found[0]

    def test_root_checker_allows_own_package(self) -> None:
        """A module inside a root imports its siblings directly."""
        source = "from harness.simulation._sessions import generate\n"
        assert not root_violations("harness.simulation._demo", source)
        assert not root_violations("harness.commands.demo_cmd", "from harness.output import x\n")


class TestLayers:
    @pytest.mark.parametrize("package", sorted(FORBIDDEN))
    def test_no_upward_imports(self, package: str) -> None:
        """No module of compaction, prompts or harness imports a layer above it (or benchmarks)."""
        found = {
            name: bad
            for name, path in modules_of(package)
            if (bad := layer_violations(package, path.read_text(encoding="utf-8")))
        }
        assert found == {}

    @pytest.mark.parametrize(
        ("package", "banned"),
        [
            ("compaction", ("prompts", "harness", "benchmarks")),
            ("prompts", ("harness", "benchmarks")),
        ],
    )
    def test_import_pulls_in_no_upper_layer(self, package: str, banned: tuple[str, ...]) -> None:
        """Importing a package (and everything its root imports) loads no upper layer."""
        loaded = fresh_modules(f"import {package}")
        assert package in loaded
        assert {m for m in loaded if m.split(".")[0] in banned} == set()

    def test_cli_start_imports_no_benchmarks_no_tokenizer(self) -> None:
        """Building the CLI's parser loads neither benchmarks, nor the simulation, nor tiktoken."""
        loaded = fresh_modules("from harness.cli import build_parser\nbuild_parser()")
        assert "harness.commands.bench_cmd" in loaded
        heavy = {"benchmarks", "harness.simulation", "tiktoken", "tokenizers", "matplotlib"}
        assert {m for m in loaded if m in heavy or m.split(".")[0] in heavy} == set()


class TestInnerWalls:
    @pytest.mark.parametrize("package", sorted(INNER_WALLS))
    def test_rooms_import_no_room_above(self, package: str) -> None:
        """stores, views, tools and llm import no room above them (see INNER_WALLS)."""
        folder = package.replace(".", "/")
        found = {
            name: bad
            for name, path in modules_of(folder)
            if (bad := wall_violations(package, path.read_text(encoding="utf-8")))
        }
        assert found == {}

    def test_every_room_has_modules(self) -> None:
        """Each walled room exists and holds modules, so the wall test checks something."""
        for package in INNER_WALLS:
            assert len(list(modules_of(package.replace(".", "/")))) >= 2, package


class TestRootImports:
    def test_cli_and_benchmarks_import_only_root_names(self) -> None:
        """Harness (integrations too), benchmarks and examples import only root names in __all__."""
        found = {
            name: bad
            for name, path in modules_of("harness", "benchmarks", "examples")
            if (bad := root_violations(name, path.read_text(encoding="utf-8")))
        }
        assert found == {}


class TestModuleNames:
    def test_module_names_are_distinct(self) -> None:
        """No two modules share a name across folders (but the conventional ones)."""
        seen: dict[str, list[str]] = {}
        for name, path in modules_of("compaction", "prompts", "harness", "benchmarks", "tests"):
            if path.stem not in CONVENTIONAL_NAMES:
                seen.setdefault(path.stem, []).append(name)
        assert {stem: names for stem, names in seen.items() if len(names) > 1} == {}

    def test_renamed_modules_are_gone(self) -> None:
        """The modules that meant different things under one name carry distinct names now."""
        for old in (
            "compaction/importers/replay.py",
            "compaction/importers/report.py",
            "benchmarks/replay.py",
            "benchmarks/report.py",
            "benchmarks/strategies.py",
        ):
            assert not (ROOT / old).exists(), old
        assert (ROOT / "tests" / "strategies.py").is_file()
