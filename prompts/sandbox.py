"""The template sandbox: untrusted templates render in bounded time and memory, from plain data.

Every template (built-in or a user's) renders in `BoundedSandbox`, a jinja2
`ImmutableSandboxedEnvironment` with hard limits, through `ConfinedLoader`, which reads only
regular files that resolve (symlinks followed) inside the allowed template folders.

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

import contextvars
import functools
import re
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment

from compaction.errors import ConfigError

BUILTIN_TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The folder of the built-in templates."""


@dataclass(frozen=True)
class RenderLimits:
    """The bounds of one render (see the module's invariants)."""

    max_text: int = 1_000_000
    """Longest string, list or output, in characters (or items)."""
    max_work: int = 20_000_000
    """Characters all the strings and lists built in one render may add up to."""
    max_iterations: int = 100_000
    """Loop steps in one render, all loops together."""
    max_templates: int = 64
    """Template loads (the top one, includes, imports, extends) in one render."""
    max_int_bits: int = 4096
    """Largest integer a template may compute, in bits."""
    max_seconds: float = 10.0
    """Wall time of one render."""
    max_template_bytes: int = 256 * 1024
    """Largest template file."""


LIMITS = RenderLimits()
"""The limits every render uses."""


class TemplateLimitError(SecurityError):
    """A template went past one of the `RenderLimits`."""


@dataclass
class _Budget:
    """What one render has used so far."""

    limits: RenderLimits
    deadline: float
    work: int = 0
    iterations: int = 0
    templates: int = 0

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise TemplateLimitError(
                f"rendering took more than {self.limits.max_seconds:g} seconds"
            )

    def charge(self, size: int) -> None:
        self.tick()
        if size > self.limits.max_text:
            raise TemplateLimitError(
                f"a value of {size} characters is above the limit of {self.limits.max_text}"
            )
        self.work += size
        if self.work > self.limits.max_work:
            raise TemplateLimitError(
                f"the template built more than {self.limits.max_work} characters in all"
            )


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "harness_render_budget", default=None
)


def _budget() -> _Budget:
    """Return the running render's budget (a fresh one outside `rendering`)."""
    budget = _BUDGET.get()
    return budget if budget is not None else _new_budget(LIMITS)


def _new_budget(limits: RenderLimits) -> _Budget:
    return _Budget(limits=limits, deadline=time.monotonic() + limits.max_seconds)


class rendering:
    """Open a fresh budget for one top-level render."""

    def __init__(self, limits: RenderLimits = LIMITS) -> None:
        self._limits = limits
        self._token: contextvars.Token[_Budget | None] | None = None

    def __enter__(self) -> None:
        self._token = _BUDGET.set(_new_budget(self._limits))

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _BUDGET.reset(self._token)


def size_of(value: object, limit: int) -> int:
    """Return the characters (or items) `value` holds, counting nested values; stop past `limit`."""
    total = 0
    stack: list[object] = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, Mapping):
            total += len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            total += len(item)
            stack.extend(item)
    return total


def _is_sequence(value: object) -> bool:
    return isinstance(value, str | list | tuple)


def _int_bits(value: object) -> int:
    return value.bit_length() if isinstance(value, int) and not isinstance(value, bool) else 0


_FORMAT_NUMBER = re.compile(r"\d+")


def _format_estimate(fmt: str, args: Iterable[object], limit: int) -> int:
    """Bound the length of ``fmt % args`` or ``fmt.format(*args)``: widths and fields count."""
    widths = sum(int(n) for n in _FORMAT_NUMBER.findall(fmt[: limit + 1])[:10_000])
    fields = fmt.count("%") + fmt.count("{") + 1
    largest = max((size_of(a, limit) for a in args), default=0)
    return len(fmt) + widths + fields * largest


def _call_estimate(receiver: object, args: Sequence[object], name: str, limit: int) -> int:
    """Bound the size a call can build: its inputs, times its largest count and inserted string."""
    inputs = [receiver, *args] if receiver is not None else list(args)
    total = sum(size_of(a, limit) for a in inputs) + 1
    counts = [abs(a) for a in args if isinstance(a, int) and not isinstance(a, bool)]
    inserted = [len(a) for a in args[1 if receiver is None else 0 :] if isinstance(a, str)]
    if name == "join" and isinstance(receiver, str):
        inserted.append(len(receiver))
    if name in ("format", "format_map") and isinstance(receiver, str):
        return _format_estimate(receiver, args, limit)
    factor = max([1, *counts]) * max([1, *inserted])
    return total * factor


def _check_estimate(estimate: int, what: str, limits: RenderLimits) -> None:
    if estimate > limits.max_text:
        raise TemplateLimitError(
            f"{what} could build about {estimate} characters, above the limit of {limits.max_text}"
        )


def _charge_result(result: object) -> object:
    """Count a built value against the budget (generators are left unread)."""
    budget = _budget()
    if isinstance(result, str | list | tuple | dict):
        budget.charge(size_of(result, budget.limits.max_text))
    elif isinstance(result, int) and not isinstance(result, bool):
        _check_bits(result, budget.limits)
    else:
        budget.tick()
    return result


def _check_bits(value: int, limits: RenderLimits) -> None:
    if value.bit_length() > limits.max_int_bits:
        raise TemplateLimitError(
            f"an integer of {value.bit_length()} bits is above the limit of {limits.max_int_bits}"
        )


def _check_binop(operator: str, left: object, right: object, limits: RenderLimits) -> None:
    """Refuse an operator whose result would pass a limit, before it runs."""
    text = limits.max_text
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if _is_sequence(seq) and isinstance(n, int):
                _check_estimate(size_of(seq, text) * max(n, 0), "`*`", limits)
        if _int_bits(left) + _int_bits(right) > limits.max_int_bits:
            raise TemplateLimitError(f"`*` of integers above {limits.max_int_bits} bits")
    elif operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0:
            bits = max(_int_bits(left), 1) * right
            if abs(left) > 1 and bits > limits.max_int_bits:
                raise TemplateLimitError(f"`**` of an integer above {limits.max_int_bits} bits")
    elif operator == "+":
        if _is_sequence(left) and _is_sequence(right):
            _check_estimate(size_of(left, text) + size_of(right, text), "`+`", limits)
    elif operator == "%" and isinstance(left, str):
        values = right if isinstance(right, tuple) else (right,)
        _check_estimate(_format_estimate(left, values, text), "`%` formatting", limits)


def _loop_guard(iterable: Iterable[object]) -> Iterator[object]:
    """Yield the items of a template loop, counting each step against the budget."""
    budget = _budget()
    for item in iterable:
        budget.iterations += 1
        if budget.iterations > budget.limits.max_iterations:
            raise TemplateLimitError(
                f"loops ran more than {budget.limits.max_iterations} steps in all"
            )
        budget.tick()
        yield item


def _bounded_concat(parts: Iterable[Any]) -> str:
    """Join template output (and ``~``), refusing a result past the size limit."""
    budget = _budget()
    out: list[str] = []
    length = 0
    for part in parts:
        text = str(part)
        length += len(text)
        if length > budget.limits.max_text:
            raise TemplateLimitError(
                f"a text passed the limit of {budget.limits.max_text} characters"
            )
        out.append(text)
    budget.charge(length)
    return "".join(out)


_INTERNAL = (jinja2.Environment, jinja2.runtime.Context, jinja2.nodes.EvalContext)


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a filter so that its likely result size is checked before it runs."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - wraps any jinja2 filter
        values = [a for a in args if not isinstance(a, _INTERNAL)] + list(kwargs.values())
        limits = _budget().limits
        if name == "format" and values and isinstance(values[0], str):
            estimate = _format_estimate(values[0], values[1:], limits.max_text)
        else:
            estimate = _call_estimate(None, values, name, limits.max_text)
        _check_estimate(estimate, f"filter {name}", limits)
        return _charge_result(func(*args, **kwargs))

    return wrapper


class _Guard(jinja2.visitor.NodeTransformer):
    """Route every loop through `_loop_guard` and every ``~`` through `_bounded_concat`."""

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
        self.filters["harness_loop"] = _loop_guard
        self.filters["harness_concat"] = _bounded_concat
        self.globals.pop("lipsum", None)  # generates text of any size
        self.concat = _bounded_concat  # type: ignore[method-assign]

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
        limits = _budget().limits
        _check_binop(operator, left, right, limits)
        return _charge_result(super().call_binop(context, operator, left, right))

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
        limits = _budget().limits
        wrapped = getattr(__obj, "__wrapped__", __obj)
        receiver = getattr(wrapped, "__self__", None)
        name = getattr(wrapped, "__name__", "")
        if name != "safe_range":
            receiver = receiver if isinstance(receiver, str | list | tuple | dict) else None
            estimate = _call_estimate(receiver, [*args, *kwargs.values()], name, limits.max_text)
            _check_estimate(estimate, f"{name or 'a call'}()", limits)
        return _charge_result(super().call(__context, __obj, *args, **kwargs))

    def get_template(
        self,
        name: str | jinja2.Template,
        parent: str | None = None,
        globals: Mapping[str, Any] | None = None,
    ) -> jinja2.Template:
        """Load a template, counting the load against the render's budget."""
        _count_load()
        return super().get_template(name, parent, globals)  # type: ignore[arg-type]

    def select_template(
        self,
        names: Iterable[str | jinja2.Template],
        parent: str | None = None,
        globals: Mapping[str, Any] | None = None,
    ) -> jinja2.Template:
        """Load the first existing template of `names`, counting the load."""
        _count_load()
        return super().select_template(names, parent, globals)  # type: ignore[arg-type]


def _count_load() -> None:
    budget = _budget()
    budget.templates += 1
    if budget.templates > budget.limits.max_templates:
        raise TemplateLimitError(
            f"more than {budget.limits.max_templates} template loads (does a template include "
            "itself?)"
        )
    budget.tick()


@dataclass(frozen=True)
class ConfinedLoader(jinja2.BaseLoader):
    """Loads templates from `folders` in order; each file must resolve inside `allowed`.

    Args:
        folders: where names are looked up, first match wins.
        allowed: the folders a template file may resolve into (symlinks followed).
    """

    folders: tuple[Path, ...]
    allowed: tuple[Path, ...] = field(default=())

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        """Return the source of `template`, refusing files outside the allowed folders."""
        pieces = split_template_path(template)
        for folder in self.folders:
            candidate = folder.joinpath(*pieces)
            if not (candidate.exists() or candidate.is_symlink()):
                continue
            return self._read(candidate)
        raise jinja2.TemplateNotFound(template)

    def _read(self, candidate: Path) -> tuple[str, str, Callable[[], bool]]:
        resolved = candidate.resolve()
        roots = self.allowed or self.folders
        if not any(resolved.is_relative_to(root.resolve()) for root in roots):
            shown = ", ".join(str(r) for r in roots)
            raise ConfigError(
                f"template {candidate} resolves to {resolved}, outside the template folders "
                f"({shown}); templates may only include files inside them"
            )
        try:
            info = resolved.stat()
        except OSError as exc:
            raise ConfigError(f"cannot read template {candidate}: {exc.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"template {candidate} is not a regular file")
        if info.st_size > LIMITS.max_template_bytes:
            raise ConfigError(
                f"template {candidate} has {info.st_size} bytes, above the limit of "
                f"{LIMITS.max_template_bytes}"
            )
        try:
            source = resolved.read_bytes()[: LIMITS.max_template_bytes + 1].decode("utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read template {candidate}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"template {candidate} is not UTF-8: {exc.reason}") from None
        mtime = info.st_mtime_ns

        def uptodate() -> bool:
            try:
                return resolved.stat().st_mtime_ns == mtime
            except OSError:
                return False

        return source, str(candidate), uptodate


PLAIN_SCALARS = (str, int, float, bool, type(None))


def check_plain(value: object, where: str = "context") -> None:
    """Raise TypeError unless `value` is plain data (str, numbers, bool, None, lists, dicts).

    Templates are untrusted: a path, a model object or a callable handed to one exposes its
    methods (``path.read_text()``); only plain values cross into a template.
    """
    stack: list[tuple[str, object]] = [(where, value)]
    while stack:
        at, item = stack.pop()
        if type(item) in PLAIN_SCALARS:
            continue
        if type(item) in (list, tuple):
            assert isinstance(item, list | tuple)
            stack.extend((f"{at}[{i}]", v) for i, v in enumerate(item))
        elif type(item) is dict:
            assert isinstance(item, dict)
            for k, v in item.items():
                if type(k) is not str:
                    raise TypeError(f"template data {at}: key {k!r} is not a string")
                stack.append((f"{at}.{k}", v))
        else:
            raise TypeError(
                f"template data {at} is a {type(item).__name__}; templates receive plain data "
                "only (str, int, float, bool, None, lists and dicts of those)"
            )
