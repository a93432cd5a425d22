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
    if isinstance(arguments, (str, bytes)) and len(arguments) > MAX_ARGUMENT_BYTES:
        raise ToolInputError(
            tool, [f"arguments are larger than {MAX_ARGUMENT_BYTES} bytes; send a short {short}"]
        )
    try:
        obj = json.loads(arguments)
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
