"""Reading a tool call's raw arguments: JSON text, bytes or a parsed mapping, bounded in size.

Shared by every built-in tool (`todo_write`, the task tools), so each says the same thing about
arguments that are too large, not JSON or not an object, and about one text that is too long.

Invariants: never raises anything but `ToolInputError`, whatever bytes it is given; the
`MAX_ARGUMENT_BYTES` cap holds for every argument type (a mapping is measured as the JSON it
stands for); a value the model sent is quoted back at most 100 characters long, lone
surrogates escaped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compaction.contract import MAX_ARGUMENT_BYTES, MAX_ITEM_CHARS
from compaction.errors import ToolInputError

Arguments = str | bytes | Mapping[str, Any]
"""What a host passes as a tool call's arguments."""


def load_arguments(
    arguments: Arguments, tool: str, *, example: str, shape: str, short: str = "call"
) -> dict[str, Any]:
    """Return the arguments as a dict, or raise `ToolInputError` saying how to send them.

    Args:
        arguments: JSON text, bytes, or an already parsed mapping.
        tool: the tool's name, which prefixes every message.
        example: a valid call's arguments, quoted in the messages.
        shape: what the object holds, e.g. ``with one key "todos"``.
        short: what to send instead of oversized arguments (``send a short list``).
    """
    if isinstance(arguments, Mapping):
        if _mapping_over_size_limit(arguments):
            raise ToolInputError(
                tool,
                [f"arguments are larger than {MAX_ARGUMENT_BYTES} bytes; send a short {short}"],
            )
        return dict(arguments)
    if isinstance(arguments, (str, bytes)) and _over_size_limit(arguments):
        raise ToolInputError(
            tool, [f"arguments are larger than {MAX_ARGUMENT_BYTES} bytes; send a short {short}"]
        )
    try:
        obj = json.loads(arguments, object_pairs_hook=_unique_keys)
    except _DuplicateKeyError as exc:
        key = json.dumps(exc.key, ensure_ascii=False)
        problem = f"arguments repeat the key {key}; send each key once"
        raise ToolInputError(tool, [problem]) from None
    except RecursionError:
        raise ToolInputError(tool, [f"arguments are nested too deeply; send {example}"]) from None
    except (ValueError, UnicodeDecodeError):
        raise ToolInputError(
            tool, [f"arguments are not valid JSON; send an object like {example}"]
        ) from None
    except TypeError:
        raise ToolInputError(tool, ["arguments could not be read (TypeError)"]) from None
    if not isinstance(obj, dict):
        raise ToolInputError(tool, [f"arguments must be a JSON object {shape}, like {example}"])
    return obj


def too_long(where: str, length: int, limit: int = MAX_ITEM_CHARS) -> str:
    """Return the model-facing problem for a text over its cap (``todos[0].content is ...``)."""
    return (
        f"{where} is {length} characters long; keep it to at most {limit} characters (a "
        "short sentence: put long detail in a file and name the file)"
    )


def show(value: object) -> str:
    """Quote a value the model sent, cut to 80 characters so a runaway input stays short."""
    if isinstance(value, str) and len(value) > 80:
        value = value[:77] + "..."
    try:
        # Lone surrogates would break printing; show them escaped.
        text = json.dumps(value, ensure_ascii=False).encode("utf-8", "backslashreplace").decode()
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 100 else text[:97] + "..."


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build a JSON object, refusing a key that repeats (JSON would keep the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError(key)
        out[key] = value
    return out


def _over_size_limit(arguments: str | bytes) -> bool:
    """Tell whether the arguments pass `MAX_ARGUMENT_BYTES` in UTF-8 (encoding only if in doubt)."""
    if isinstance(arguments, bytes) or len(arguments) > MAX_ARGUMENT_BYTES:
        return len(arguments) > MAX_ARGUMENT_BYTES
    if len(arguments) * 4 <= MAX_ARGUMENT_BYTES:
        return False  # even at 4 bytes a character it stays under the limit
    return len(arguments.encode("utf-8", "surrogatepass")) > MAX_ARGUMENT_BYTES


def _mapping_over_size_limit(arguments: Mapping[str, Any]) -> bool:
    """Tell whether a parsed mapping stands for more than `MAX_ARGUMENT_BYTES` of JSON.

    Walks the values iteratively (no recursion limit, each container visited once, so a cycle
    ends), counting UTF-8 bytes of strings and a few bytes per other value, and stops as soon as
    the budget is spent: a hostile 3 MB value costs no more than reading the first 1 MB.
    """
    budget = MAX_ARGUMENT_BYTES
    stack: list[object] = [arguments]
    visited: set[int] = set()
    while stack:
        value = stack.pop()
        if isinstance(value, str | bytes):
            budget -= len(value) + 2
            if len(value) * 4 > budget and isinstance(value, str):
                budget -= len(value.encode("utf-8", "surrogatepass")) - len(value)
        elif isinstance(value, Mapping | list | tuple):
            if id(value) in visited:
                continue
            visited.add(id(value))
            items = list(value.items()) if isinstance(value, Mapping) else list(value)
            budget -= 2 + len(items)
            for item in items:
                stack.extend(item if isinstance(value, Mapping) else (item,))
        else:
            budget -= 8
        if budget < 0:
            return True
    return False
