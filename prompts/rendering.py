"""Template rendering: the package's own templates, and users' templates in a sandbox.

Built-in templates ship under ``prompts/templates/`` and render in a plain jinja2 environment.
A user's templates (from a folder beside their mode file) render in jinja2's
`SandboxedEnvironment`, which can fall back to the built-in templates by name. Both use
`StrictUndefined`, no autoescaping, kept trailing newlines and trimmed block lines.

Invariants: values are data, never template source: a value holding ``{{ }}``, ``{% %}`` or a
markdown heading renders as the literal text it is (through the `literal` filter it cannot even
start a new line), and nothing here reads the clock or iterates an unordered collection.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from compaction.errors import ConfigError

_OPTIONS: dict[str, Any] = {
    "undefined": jinja2.StrictUndefined,
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}


_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
"""Line breaks that JSON leaves unescaped but `str.splitlines` (and some renderers) honour."""


def literal(value: object) -> str:
    """Return `value` as a one-line JSON string, so it can never start a heading or a block."""
    text = json.dumps(str(value), ensure_ascii=False)
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text


def _configure(env: jinja2.Environment) -> jinja2.Environment:
    env.filters["literal"] = literal
    return env


@cache
def package_environment() -> jinja2.Environment:
    """Return the environment of the built-in templates (loaded once per process)."""
    return _configure(
        jinja2.Environment(loader=jinja2.PackageLoader("prompts", "templates"), **_OPTIONS)
    )


@cache
def user_environment(folder: Path) -> jinja2.Environment:
    """Return a sandboxed environment over a user's template folder, then the built-in ones."""
    loader = jinja2.ChoiceLoader(
        [jinja2.FileSystemLoader(str(folder)), jinja2.PackageLoader("prompts", "templates")]
    )
    return _configure(SandboxedEnvironment(loader=loader, **_OPTIONS))


def render(name: str, context: Mapping[str, Any], *, folder: Path | None = None) -> str:
    """Render the template `name` with `context`.

    Args:
        name: the template's path inside the template folder, e.g. ``modes/plan.md.j2``.
        context: the variables the template may use; a missing one is an error.
        folder: a user's template folder (sandboxed); None for the built-in templates.

    Raises:
        ConfigError: the template is missing, malformed, uses an undefined variable, or breaks
            the sandbox; the message names the template and the fix.
    """
    env = package_environment() if folder is None else user_environment(folder.resolve())
    where = f"{folder}/{name}" if folder is not None else f"prompts/templates/{name}"
    try:
        return env.get_template(name).render(**context)
    except jinja2.TemplateNotFound:
        raise ConfigError(f"template {where} not found; check the mode's blocks") from None
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"{where}:{exc.lineno}: template syntax error: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise ConfigError(
            f"{where}: {exc.message}; templates may use only the documented variables"
        ) from None
    except jinja2.exceptions.SecurityError as exc:
        raise ConfigError(f"{where}: blocked by the template sandbox: {exc}") from None
