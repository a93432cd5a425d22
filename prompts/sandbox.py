"""The template sandbox: untrusted templates render in bounded time and memory, from plain data.

Every template (built-in or a user's) renders in `BoundedSandbox`, a jinja2
`ImmutableSandboxedEnvironment` with hard limits, through `ConfinedLoader`, which reads only
regular files that resolve (symlinks followed) inside the allowed template folders. The parts
have their own modules: the budget of one render (`render_budget`), the sizes checked before
they are built (`size_estimates`), the loader (`template_loader`) and the plain-data rule
(`plain_data`); this one holds the sandbox that hooks them into jinja2.

Invariants:
- A template reads no file outside its template folders and the built-in templates: ``..``,
  absolute names and symlinks that point out are refused with a `ConfigError` naming the file.
- One render stays inside `RenderLimits`: no string, list or output longer than ``max_text``;
  no more than ``max_work`` characters built in all; no more than ``max_iterations`` loop steps,
  ``max_templates`` template loads (a template that includes itself stops), integers of at most
  ``max_int_bits`` bits, and ``max_seconds`` of wall time. A size is checked *before* the
  operation that would build it (``"a" * 4000000000`` never allocates), so an attack fails fast.
- Templates see plain data only (`check_plain`): strings, numbers, booleans, None, and lists,
  tuples and dicts of those; never a path, a model object or a callable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from prompts.plain_data import PLAIN_SCALARS, check_plain
from prompts.render_budget import (
    LIMITS,
    RenderLimits,
    TemplateLimitError,
    bounded_concat,
    count_load,
    current_budget,
    loop_guard,
    rendering,
)
from prompts.size_estimates import (
    call_estimate,
    charge_result,
    check_binop,
    check_estimate,
    format_estimate,
    size_of,
)
from prompts.template_loader import ConfinedLoader

__all__ = [
    "BUILTIN_TEMPLATES",
    "LIMITS",
    "PLAIN_SCALARS",
    "BoundedSandbox",
    "ConfinedLoader",
    "RenderLimits",
    "TemplateLimitError",
    "check_plain",
    "rendering",
    "size_of",
]


BUILTIN_TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The folder of the built-in templates."""


_INTERNAL = (jinja2.Environment, jinja2.runtime.Context, jinja2.nodes.EvalContext)


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a filter so that its likely result size is checked before it runs."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - wraps any jinja2 filter
        values = [a for a in args if not isinstance(a, _INTERNAL)] + list(kwargs.values())
        limits = current_budget().limits
        if name == "format" and values and isinstance(values[0], str):
            estimate = format_estimate(values[0], values[1:], limits.max_text)
        else:
            estimate = call_estimate(None, values, name, limits.max_text)
        check_estimate(estimate, f"filter {name}", limits)
        return charge_result(func(*args, **kwargs))

    return wrapper


class _Guard(jinja2.visitor.NodeTransformer):
    """Route every loop through `loop_guard` and every ``~`` through `bounded_concat`."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, "harness_loop", [], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        items = nodes.List(node.nodes, lineno=node.lineno)
        return nodes.Filter(items, "harness_concat", [], [], None, None, lineno=node.lineno)


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """An immutable jinja2 sandbox whose every render stays inside `RenderLimits`."""

    intercepted_binops = frozenset({"*", "**", "+", "%", "//", "/", "-"})

    def __init__(self, loader: jinja2.BaseLoader, **options: Any) -> None:  # noqa: ANN401 - jinja2 options
        super().__init__(loader=loader, optimized=False, **options)
        self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}
        self.filters.pop("random", None)  # output must not depend on chance
        self.filters["harness_loop"] = loop_guard
        self.filters["harness_concat"] = bounded_concat
        self.globals.pop("lipsum", None)  # generates text of any size
        self.concat = bounded_concat  # type: ignore[method-assign]

    def add_filter(self, name: str, func: Callable[..., Any]) -> None:
        """Add the filter `name`, bounded like the built-in ones."""
        self.filters[name] = _bounded_filter(name, func)

    def _generate(
        self,
        source: nodes.Template,
        name: str | None,
        filename: str | None,
        defer_init: bool = False,
    ) -> str:
        guarded = _Guard().visit(source)
        return super()._generate(guarded, name, filename, defer_init)

    def call_binop(
        self, context: jinja2.runtime.Context, operator: str, left: object, right: object
    ) -> object:
        """Run an operator after checking the size of what it would build."""
        limits = current_budget().limits
        check_binop(operator, left, right, limits)
        return charge_result(super().call_binop(context, operator, left, right))

    def call(
        __self,
        __context: jinja2.runtime.Context,
        __obj: object,
        *args: object,
        **kwargs: object,
    ) -> object:
        """Call an object from a template after checking the size of what it could build."""
        if isinstance(__obj, jinja2.Undefined):
            return super().call(__context, __obj, *args, **kwargs)  # raises UndefinedError
        limits = current_budget().limits
        wrapped = getattr(__obj, "__wrapped__", __obj)
        receiver = getattr(wrapped, "__self__", None)
        name = getattr(wrapped, "__name__", "")
        if name != "safe_range":
            receiver = receiver if isinstance(receiver, str | list | tuple | dict) else None
            estimate = call_estimate(receiver, [*args, *kwargs.values()], name, limits.max_text)
            check_estimate(estimate, f"{name or 'a call'}()", limits)
        return charge_result(super().call(__context, __obj, *args, **kwargs))

    def get_template(
        self,
        name: str | jinja2.Template,
        parent: str | None = None,
        globals: Mapping[str, Any] | None = None,
    ) -> jinja2.Template:
        """Load a template, counting the load against the render's budget."""
        count_load()
        return super().get_template(name, parent, globals)  # type: ignore[arg-type]

    def select_template(
        self,
        names: Iterable[str | jinja2.Template],
        parent: str | None = None,
        globals: Mapping[str, Any] | None = None,
    ) -> jinja2.Template:
        """Load the first existing template of `names`, counting the load."""
        count_load()
        return super().select_template(names, parent, globals)  # type: ignore[arg-type]
