"""Who imports what from each package root: the callers the public-API tests derive lists from.

A caller is a product module (`compaction`, `prompts`, `harness`, `benchmarks`, `examples`,
`scripts`) outside the root's own package, or a Python block of the README or of `docs/`
(what a user is told to write). Tests are not callers: a name only tests use is no reason to
export it (tests may import private modules).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("compaction", "prompts", "harness", "benchmarks", "examples", "scripts")
"""The folders whose modules are callers."""
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _sources() -> list[tuple[str, str]]:
    """Return (module name or document, source) of every caller."""
    out: list[tuple[str, str]] = []
    for folder in PRODUCT:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out.append((".".join(parts), path.read_text(encoding="utf-8")))
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in BLOCK.findall(doc.read_text(encoding="utf-8")):
            out.append((f"doc:{doc.name}", block))
    return out


@cache
def used_names() -> dict[str, dict[str, set[str]]]:
    """Return root -> name -> the callers that import the name from that root."""
    uses: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for caller, source in _sources():
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    uses[node.module][alias.name].add(caller)
                    if _is_module(f"{node.module}.{alias.name}"):  # from harness import hooks
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    aliases[alias.asname or alias.name] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                dotted = _dotted(node.value)
                head = None if dotted is None else dotted.split(".")[0]
                if dotted is not None and head in aliases:
                    module = aliases[head] + dotted[len(head) :]
                    uses[module][node.attr].add(caller)
    return uses


def _is_module(dotted: str) -> bool:
    """Tell whether `dotted` names a module or package of the checkout."""
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def outside_callers(root: str, name: str) -> set[str]:
    """Return the callers outside `root`'s package that import `name` from `root`."""
    callers = used_names().get(root, {}).get(name, set())
    return {c for c in callers if c != root and not c.startswith(root + ".")}


def roots() -> list[str]:
    """Return every package root with an ``__all__`` (the sub-packages' and the top ones)."""
    found = []
    for folder in ("compaction", "prompts", "harness"):
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            if "__all__" in init.read_text(encoding="utf-8"):
                found.append(".".join(init.relative_to(ROOT).parts[:-1]))
    return found
