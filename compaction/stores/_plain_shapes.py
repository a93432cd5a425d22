"""The exact shapes of the lines the standard-library fold reads (`plain_log`, strict mode).

A line is taken only if it is exactly what `compaction.events.dump_event` writes for a valid
``turn/start``, ``turn/end``, ``todo/write`` or ``message`` event (a message without
``provider_fields``): the fields in the models' order, none null, of the models' types, with the
models' role rules. Anything else is refused, and the caller takes the full path, which reads
the log through the one `LogReader`.

Invariants: a line these checks accept parses with the models into an event whose dump is that
line (`tests/e2e/test_todo_write_plain.py` checks it over generated logs); the names
and statuses come from `compaction.contract`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from compaction.contract import (
    MAX_INT,
    MESSAGE,
    ORIGINS,
    ROLES,
    TODO_STATUSES,
    TODO_WRITE_EVENT,
    TURN_END,
    TURN_START,
)

MESSAGE_FIELDS: Final = (
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "origin",
    "clip",
    "exit_code",
    "failed",
)
"""The message fields read, in the models' order (``provider_fields`` is not one)."""
OPEN_FIELDS: Final = ["todos_pending", "todos_in_progress", "tasks_pending", "tasks_in_progress"]
CLIP_FIELDS: Final = ["head_chars", "tail_chars", "omitted_tokens"]


def _ordered(data: Mapping[str, Any], order: Sequence[str]) -> bool:
    """Tell whether `data`'s keys are some of `order`, in that order, none of them null."""
    rest = iter(order)
    return all(key in rest for key in data) and None not in data.values()


def _count(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_INT


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(type(s) is str for s in value)


def _turn_start(data: dict[str, Any]) -> bool:
    return _ordered(data, ("mode", "cwd")) and all(type(v) is str for v in data.values())


def _turn_end(data: dict[str, Any]) -> bool:
    if not _ordered(data, ("reason", "open")) or type(data.get("reason", "")) is not str:
        return False
    if "open" not in data:
        return True
    work = data["open"]
    return (
        isinstance(work, dict)
        and list(work) == [*OPEN_FIELDS, "task_ids"]
        and all(_count(work[k]) for k in OPEN_FIELDS)
        and _strings(work["task_ids"])
    )


def todo_list_shape(data: dict[str, Any]) -> bool:
    """Tell whether a ``todo/write`` event's data is exactly a recorded list."""
    items = data.get("todos")
    return (
        list(data) == ["todos"]
        and isinstance(items, list)
        and all(
            isinstance(item, dict)
            and list(item) == ["content", "status"]
            and type(item["content"]) is str
            and item["status"] in TODO_STATUSES
            for item in items
        )
    )


def _part(part: object) -> str | None:
    """Return the text of a content part (``""`` for an image), or None for another shape."""
    if not isinstance(part, dict):
        return None
    if list(part) == ["type", "text"] and part["type"] == "text" and type(part["text"]) is str:
        return str(part["text"])
    image = part.get("image_url")
    if list(part) != ["type", "image_url"] or part["type"] != "image_url":
        return None
    if not isinstance(image, dict) or "url" not in image or not _ordered(image, ("url", "detail")):
        return None
    return "" if all(type(v) is str for v in image.values()) else None


def _text(content: object) -> str | None:
    """Return a message's text (text parts joined by newlines), or None for another shape."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    for part in content:
        text = _part(part)
        if text is None:
            return None
        if part["type"] == "text":
            texts.append(text)
    return "\n".join(texts)


def _tool_call(call: object) -> bool:
    if not isinstance(call, dict) or list(call) != ["id", "type", "function"]:
        return False
    function = call["function"]
    return (
        type(call["id"]) is str
        and call["type"] == "function"
        and isinstance(function, dict)
        and list(function) == ["name", "arguments"]
        and all(type(v) is str for v in function.values())
    )


def _message(data: dict[str, Any]) -> bool:
    if "role" not in data or not _ordered(data, MESSAGE_FIELDS) or data["role"] not in ROLES:
        return False
    text = _text(data.get("content"))
    calls = data.get("tool_calls", [])
    clip = data.get("clip")
    if text is None or not isinstance(calls, list) or not all(map(_tool_call, calls)):
        return False
    for key in ("tool_call_id", "name"):
        if type(data.get(key, "")) is not str:
            return False
    if data.get("origin", "user") not in ORIGINS or type(data.get("failed", True)) is not bool:
        return False
    code = data.get("exit_code", 0)
    if type(code) is not int or abs(code) > MAX_INT:
        return False
    if clip is not None and not (
        isinstance(clip, dict)
        and list(clip) == CLIP_FIELDS
        and all(_count(clip[k]) for k in CLIP_FIELDS)
        and clip["head_chars"] + clip["tail_chars"] <= len(text)
    ):
        return False
    return _roles_agree(data, bool(calls))


def _roles_agree(data: dict[str, Any], has_calls: bool) -> bool:
    """The models' role rules: calls on assistants only; ids, exit codes, clips on tools only."""
    tool = data["role"] == "tool"
    if has_calls and data["role"] != "assistant":
        return False
    if tool != ("tool_call_id" in data) or (tool and not data["tool_call_id"]):
        return False
    return tool or not {"exit_code", "failed", "clip"} & data.keys()


SHAPES: Final[dict[str, Callable[[dict[str, Any]], bool]]] = {
    TURN_START: _turn_start,
    TURN_END: _turn_end,
    TODO_WRITE_EVENT: todo_list_shape,
    MESSAGE: _message,
}
"""The event types the strict fold reads, each with the check of its data's exact shape."""
