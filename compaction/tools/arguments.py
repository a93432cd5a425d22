"""Reading a tool call's raw arguments: JSON text, bytes or a parsed mapping, bounded in size.

Shared by every built-in tool (`todo_write`, the task tools), so each says the same thing about
arguments that are too large, not JSON or not an object.

Invariants: never raises anything but `ToolInputError`, whatever bytes it is given; a value the
model sent is quoted back at most 100 characters long, lone surrogates escaped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from compaction.errors import ToolInputError

MAX_ARGUMENT_BYTES: Final = 1_000_000
"""Arguments larger than this are rejected before parsing (a runaway model, not a tool call)."""

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
