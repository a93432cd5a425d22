"""Rooms of a livable size: no product module over 400 lines, no function over 50 lines of code.

The limits are the ones `docs/architecture.md` ("Sizes") documents. A module's size is its
physical line count; a function's is its lines of code: from its first statement after the
docstring to its last line, blank and comment-only lines not counted (a nested function counts
inside its parent, and on its own). There is no allow-list: a module or function over a limit
is split by concept before it lands.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PRODUCT_FOLDERS = ("compaction", "prompts", "harness", "benchmarks", "scripts", "examples")
"""The folders whose Python modules are product code (tests are not held to these limits)."""

MAX_MODULE_LINES = 400
"""The most lines a product module may have (docs/architecture.md, "Sizes")."""

MAX_FUNCTION_LINES = 50
"""The most lines of code a function may have, its docstring, blanks and comments not counted."""


def code_lines(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Return the lines of code of a function: its body after the docstring, no blank or comment."""
    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
        body = body[1:]
    if not body:
        return 0
    start = body[0].lineno
    decorators = getattr(body[0], "decorator_list", [])
    if decorators:
        start = min(start, *(d.lineno for d in decorators))
    end = node.end_lineno or node.lineno
    kept = (line.strip() for line in lines[start - 1 : end])
    return sum(1 for line in kept if line and not line.startswith("#"))


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> Iterator[tuple[str, int]]:
    """Yield (qualified name, lines of code) of every function in `source` over `limit`."""
    lines = source.splitlines()

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                size = code_lines(lines, child)
                if size > limit:
                    yield name, size
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(source), "")


def product_modules() -> list[Path]:
    """Return every Python module of the product folders, sorted."""
    return sorted(p for folder in PRODUCT_FOLDERS for p in (ROOT / folder).rglob("*.py"))


@functools.cache
def oversized() -> dict[str, str]:
    """Return every module and function over its limit, keyed by path or path:qualified name."""
    found: dict[str, str] = {}
    for path in product_modules():
        name = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        count = len(source.splitlines())
        if count > MAX_MODULE_LINES:
            found[name] = f"{count} lines (limit {MAX_MODULE_LINES})"
        for function, size in long_functions(source):
            found[f"{name}:{function}"] = f"{size} lines of code (limit {MAX_FUNCTION_LINES})"
    return found


class TestTheCounter:
    """The counter itself: it finds a planted long function and passes a short one."""

    def test_a_long_function_is_found_with_its_qualified_name(self) -> None:
        body = "".join(f"        x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES + 1))
        source = f"class A:\n    def f(self) -> None:\n{body}"
        assert list(long_functions(source)) == [("A.f", MAX_FUNCTION_LINES + 1)]

    def test_docstring_blank_lines_and_comments_do_not_count(self) -> None:
        doc = '    """Doc.\n\n' + "    more doc\n" * 60 + '    """\n'
        body = "".join(f"    # note {i}\n\n    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
        source = f"def f() -> None:\n{doc}{body}"
        assert list(long_functions(source)) == []
        assert list(long_functions(source + "    y = 0\n")) == [("f", MAX_FUNCTION_LINES + 1)]

    def test_a_nested_function_is_counted_on_its_own_too(self) -> None:
        inner = "".join(f"        y{i} = {i}\n" for i in range(MAX_FUNCTION_LINES + 1))
        source = f"def outer() -> None:\n    def inner() -> None:\n{inner}"
        found = dict(long_functions(source))
        assert found == {"outer": MAX_FUNCTION_LINES + 2, "outer.inner": MAX_FUNCTION_LINES + 1}


def test_no_product_module_or_function_is_over_its_limit() -> None:
    """Every module is at most 400 lines and every function 50 lines of code."""
    over = oversized()
    assert not over, "split these by concept (docs/architecture.md, Sizes):\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(over.items())
    )
