"""Sizes checked before they are built: what a template's call, filter or operator could make.

A size is estimated from the inputs *before* the operation runs (``"a" * 4000000000`` never
allocates): `check_binop` for an operator, `call_estimate` for a call or a filter,
`format_estimate` for ``%`` and ``format``; `charge_result` counts what was built against the
running render's budget (`prompts.render_budget`).

Invariants: an estimate bounds the real size from above; a refused operation has not run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from prompts.render_budget import RenderLimits, TemplateLimitError, check_bits, current_budget


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


def format_estimate(fmt: str, args: Iterable[object], limit: int) -> int:
    """Bound the length of ``fmt % args`` or ``fmt.format(*args)``: widths and fields count."""
    widths = sum(int(n) for n in _FORMAT_NUMBER.findall(fmt[: limit + 1])[:10_000])
    fields = fmt.count("%") + fmt.count("{") + 1
    largest = max((size_of(a, limit) for a in args), default=0)
    return len(fmt) + widths + fields * largest


def call_estimate(receiver: object, args: Sequence[object], name: str, limit: int) -> int:
    """Bound the size a call can build: its inputs, times its largest count and inserted string."""
    inputs = [receiver, *args] if receiver is not None else list(args)
    total = sum(size_of(a, limit) for a in inputs) + 1
    counts = [abs(a) for a in args if isinstance(a, int) and not isinstance(a, bool)]
    inserted = [len(a) for a in args[1 if receiver is None else 0 :] if isinstance(a, str)]
    if name == "join" and isinstance(receiver, str):
        inserted.append(len(receiver))
    if name in ("format", "format_map") and isinstance(receiver, str):
        return format_estimate(receiver, args, limit)
    factor = max([1, *counts]) * max([1, *inserted])
    return total * factor


def check_estimate(estimate: int, what: str, limits: RenderLimits) -> None:
    """Refuse what an operation could build when its estimate is past the size limit."""
    if estimate > limits.max_text:
        raise TemplateLimitError(
            f"{what} could build about {estimate} characters, above the limit of {limits.max_text}"
        )


def charge_result(result: object) -> object:
    """Count a built value against the budget (generators are left unread)."""
    budget = current_budget()
    if isinstance(result, str | list | tuple | dict):
        budget.charge(size_of(result, budget.limits.max_text))
    elif isinstance(result, int) and not isinstance(result, bool):
        check_bits(result, budget.limits)
    else:
        budget.tick()
    return result


def check_binop(operator: str, left: object, right: object, limits: RenderLimits) -> None:
    """Refuse an operator whose result would pass a limit, before it runs."""
    text = limits.max_text
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if _is_sequence(seq) and isinstance(n, int):
                check_estimate(size_of(seq, text) * max(n, 0), "`*`", limits)
        if _int_bits(left) + _int_bits(right) > limits.max_int_bits:
            raise TemplateLimitError(f"`*` of integers above {limits.max_int_bits} bits")
    elif operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0:
            bits = max(_int_bits(left), 1) * right
            if abs(left) > 1 and bits > limits.max_int_bits:
                raise TemplateLimitError(f"`**` of an integer above {limits.max_int_bits} bits")
    elif operator == "+":
        if _is_sequence(left) and _is_sequence(right):
            check_estimate(size_of(left, text) + size_of(right, text), "`+`", limits)
    elif operator == "%" and isinstance(left, str):
        values = right if isinstance(right, tuple) else (right,)
        check_estimate(format_estimate(left, values, text), "`%` formatting", limits)
