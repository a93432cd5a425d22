"""The budget of one render: its limits, what it has used so far, and the checks that spend it.

`rendering(limits)` opens a fresh budget for one top-level render (a context variable, so nested
and concurrent renders each see their own); the sandbox's hooks charge it: a loop step
(`loop_guard`), a template load (`count_load`), a joined text (`bounded_concat`), a built value.

Invariants: a render never runs past ``max_seconds`` of wall time, ``max_iterations`` loop steps,
``max_templates`` loads or ``max_work`` characters built; each limit, once passed, raises
`TemplateLimitError` (a jinja2 `SecurityError`) at once.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from jinja2.exceptions import SecurityError


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
class RenderBudget:
    """What one render has used so far."""

    limits: RenderLimits
    deadline: float
    work: int = 0
    iterations: int = 0
    templates: int = 0

    def tick(self) -> None:
        """Raise `TemplateLimitError` once the render is past its wall time."""
        if time.monotonic() > self.deadline:
            raise TemplateLimitError(
                f"rendering took more than {self.limits.max_seconds:g} seconds"
            )

    def charge(self, size: int) -> None:
        """Count `size` built characters; raise past the size or the total-work limit."""
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


_BUDGET: contextvars.ContextVar[RenderBudget | None] = contextvars.ContextVar(
    "harness_render_budget", default=None
)


def current_budget() -> RenderBudget:
    """Return the running render's budget (a fresh one outside `rendering`)."""
    budget = _BUDGET.get()
    return budget if budget is not None else _new_budget(LIMITS)


def _new_budget(limits: RenderLimits) -> RenderBudget:
    return RenderBudget(limits=limits, deadline=time.monotonic() + limits.max_seconds)


class rendering:
    """Open a fresh budget for one top-level render."""

    def __init__(self, limits: RenderLimits = LIMITS) -> None:
        self._limits = limits
        self._token: contextvars.Token[RenderBudget | None] | None = None

    def __enter__(self) -> None:
        self._token = _BUDGET.set(_new_budget(self._limits))

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _BUDGET.reset(self._token)


def check_bits(value: int, limits: RenderLimits) -> None:
    """Refuse an integer wider than the limit."""
    if value.bit_length() > limits.max_int_bits:
        raise TemplateLimitError(
            f"an integer of {value.bit_length()} bits is above the limit of {limits.max_int_bits}"
        )


def loop_guard(iterable: Iterable[object]) -> Iterator[object]:
    """Yield the items of a template loop, counting each step against the budget."""
    budget = current_budget()
    for item in iterable:
        budget.iterations += 1
        if budget.iterations > budget.limits.max_iterations:
            raise TemplateLimitError(
                f"loops ran more than {budget.limits.max_iterations} steps in all"
            )
        budget.tick()
        yield item


def bounded_concat(parts: Iterable[Any]) -> str:
    """Join template output (and ``~``), refusing a result past the size limit."""
    budget = current_budget()
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


def count_load() -> None:
    """Count one template load against the render's budget (a self-include stops)."""
    budget = current_budget()
    budget.templates += 1
    if budget.templates > budget.limits.max_templates:
        raise TemplateLimitError(
            f"more than {budget.limits.max_templates} template loads (does a template include "
            "itself?)"
        )
    budget.tick()
