"""Template rendering: the package's own templates, and users' templates, all sandboxed.

Built-in templates ship under ``prompts/templates/``; a user's templates live in a folder beside
their mode file and can fall back to the built-in templates by name. Every template renders in
`prompts.sandbox.BoundedSandbox` (jinja2's immutable sandbox with size, loop, include and time
limits) from plain data only, with `StrictUndefined`, no autoescaping, kept trailing newlines and
trimmed block lines. Whatever goes wrong inside a template (a sandbox breach, a limit, a
ZeroDivisionError, a RecursionError...) comes out as one `ConfigError` line naming the template.

Invariants: values are data, never template source: a value holding ``{{ }}``, ``{% %}`` or a
markdown heading renders as the literal text it is (through the `literal` filter it cannot even
start a new line), and nothing here reads the clock into output or iterates an unordered
collection; templates receive plain data only (`check_plain`).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from compaction.errors import ConfigError
from prompts.sandbox import (
    BUILTIN_TEMPLATES,
    BoundedSandbox,
    ConfinedLoader,
    check_plain,
    rendering,
)

_OPTIONS: dict[str, Any] = {
    "undefined": jinja2.StrictUndefined,
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}

_TEMPLATE_FAILURES = (
    ArithmeticError,
    TypeError,
    ValueError,
    LookupError,
    AttributeError,
    RecursionError,
    MemoryError,
)
"""Errors a template can raise by computing (1/0, a huge int, deep recursion...)."""


_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
"""Line breaks that JSON leaves unescaped but `str.splitlines` (and some renderers) honour."""


def literal(value: object) -> str:
    """Return `value` as a one-line JSON string, so it can never start a heading or a block."""
    text = json.dumps(str(value), ensure_ascii=False)
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text


def _configure(env: BoundedSandbox) -> BoundedSandbox:
    env.add_filter("literal", literal)
    return env


@cache
def package_environment() -> jinja2.Environment:
    """Return the sandbox of the built-in templates (loaded once per process)."""
    loader = ConfinedLoader((BUILTIN_TEMPLATES,))
    return _configure(BoundedSandbox(loader, **_OPTIONS))


@cache
def user_environment(folder: Path) -> jinja2.Environment:
    """Return the sandbox over a user's template folder, then the built-in templates.

    A template file must resolve (symlinks followed) inside `folder` or the built-in templates.
    """
    loader = ConfinedLoader((folder, BUILTIN_TEMPLATES), allowed=(folder, BUILTIN_TEMPLATES))
    return _configure(BoundedSandbox(loader, **_OPTIONS))


def render(name: str, context: Mapping[str, Any], *, folder: Path | None = None) -> str:
    """Render the template `name` with `context`, in the bounded sandbox.

    Args:
        name: the template's path inside the template folder, e.g. ``modes/plan.md.j2``.
        context: the variables the template may use, plain data only (see `check_plain`);
            a missing one is an error.
        folder: a user's template folder; None for the built-in templates.

    Raises:
        ConfigError: the template is missing, malformed, outside its folder, uses an undefined
            variable, breaks the sandbox or a limit, or fails while computing; the message is
            one line naming the template.
        TypeError: `context` holds something other than plain data (a programming error).
    """
    check_plain(dict(context))
    env = package_environment() if folder is None else user_environment(folder.resolve())
    where = f"{folder}/{name}" if folder is not None else f"prompts/templates/{name}"
    try:
        with rendering():
            return env.get_template(name).render(**context)
    except jinja2.TemplateNotFound as exc:
        missing = "" if exc.name == name else f" (needs {exc.name})"
        raise ConfigError(f"template {where} not found{missing}; check the mode's blocks") from None
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"{where}:{exc.lineno}: template syntax error: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise ConfigError(
            f"{where}{_line(exc, name)}: {exc.message}; "
            "templates may use only the documented variables"
        ) from None
    except jinja2.exceptions.SecurityError as exc:
        raise ConfigError(
            f"{where}{_line(exc, name)}: blocked by the template sandbox: {exc}"
        ) from None
    except jinja2.TemplateError as exc:
        raise ConfigError(f"{where}{_line(exc, name)}: template error: {_one_line(exc)}") from None
    except _TEMPLATE_FAILURES as exc:
        raise ConfigError(
            f"{where}{_line(exc, name)}: template failed: {type(exc).__name__}: {_one_line(exc)}"
        ) from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("..." if len(text) > 300 else "")


def _line(exc: BaseException, name: str) -> str:
    """Return where in the templates `exc` arose: ``":N"`` in `name`, else ``" (in F:N)"``."""
    try:
        frames = traceback.extract_tb(exc.__traceback__)
    except RecursionError:
        return ""
    for frame in reversed(frames[-500:]):
        if frame.filename.endswith(".j2") or "/templates/" in frame.filename:
            if frame.filename.endswith(name):
                return f":{frame.lineno}"
            return f" (in {Path(frame.filename).name}:{frame.lineno})"
    return ""
