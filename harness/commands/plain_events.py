"""A JSONL log folded without pydantic, for `harness todo-write`: only lines of an exact shape.

`fold_log` takes a log whose every line is exactly what `compaction.events.dump_event` writes
for a valid ``turn/start``, ``turn/end``, ``todo/write`` or ``message`` event (a message without
``provider_fields``), with seqs 1, 2, 3... and a final newline; it returns what `todo-write`
needs: the next seq, the mode of the latest turn and the calls of the context's messages. Any
other log (another event type, a blank or torn line, a line in any other form, even one the
models would read) returns None, and the command takes the full path, which reads the log
through the one `LogReader` and refuses a malformed log with its usual message.

Invariants: when `fold_log` returns a state, every line parses with the models into an event
whose dump is that line, and the state is what a `Session` replaying the log gives
(`tests/e2e/test_todo_write_plain.py` checks both over generated logs); it never writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

TODO_STATUSES = ("pending", "in_progress", "completed")
"""The statuses of a todo item (a test keeps them equal to the models')."""
ROLES = ("system", "user", "assistant", "tool")
ORIGINS = (
    "user",
    "injected",
    "command",
    "skill",
    "interruption",
    "mode_switch",
    "recorded_summary",
    "shell",
    "hook",
    "reminder",
    "subagent",
)
"""A message's origins (a test keeps them equal to `compaction.events.ORIGINS`)."""
ENVELOPE = ["v", "seq", "type", "data"]
"""The envelope's fields, in the order `dump_event` writes them."""
MESSAGE_FIELDS = (
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
"""The message fields this fold reads, in the models' order (``provider_fields`` is not one)."""
OPEN_FIELDS = ["todos_pending", "todos_in_progress", "tasks_pending", "tasks_in_progress"]
CLIP_FIELDS = ["head_chars", "tail_chars", "omitted_tokens"]
MAX_INT = 2**63 - 1
"""Largest integer taken (a larger one is left to the models)."""

Call = tuple[str, str]
"""A recorded tool call: its id and its function's name."""


@dataclass
class LogState:
    """What `todo-write` needs of a log: where it ends, its mode, its context's calls."""

    next_seq: int = 1
    """The seq the next event gets."""
    mode: str | None = None
    """The mode of the latest ``turn/start`` (None: no turn, or a turn without one)."""
    messages: list[tuple[str, str | None, list[Call]]] = field(default_factory=list)
    """The context's messages (not system ones): role, tool_call_id, tool calls."""


def canonical(obj: object) -> bytes:
    """Return `obj` as one line of compact JSON, the form `dump_event` writes (UTF-8)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def fold_log(data: bytes) -> LogState | None:
    """Return the state of the log `data`, or None when the full path must read it."""
    if data and not data.endswith(b"\n"):
        return None
    state = LogState()
    for line in data.split(b"\n")[:-1] if data else ():
        if not _take(state, line):
            return None
    return state


def _take(state: LogState, line: bytes) -> bool:
    """Fold one line into `state`; return False when it is not of an exact known shape."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict) or list(obj) != ENVELOPE:
        return False
    v, seq, kind, data = obj["v"], obj["seq"], obj["type"], obj["data"]
    if type(v) is not int or v != 1 or type(seq) is not int or seq != state.next_seq:
        return False
    shape = SHAPES.get(kind) if isinstance(kind, str) else None
    if shape is None or not isinstance(data, dict) or not shape(data):
        return False
    try:
        if canonical(obj) != line:
            return False
    except UnicodeEncodeError:  # a lone surrogate: the models' business
        return False
    state.next_seq = seq + 1
    if kind == "turn/start":
        state.mode = data.get("mode")
    elif kind == "message" and data["role"] != "system":
        calls = [(c["id"], c["function"]["name"]) for c in data.get("tool_calls", ())]
        state.messages.append((data["role"], data.get("tool_call_id"), calls))
    return True


def calls_in_one_response(messages: Sequence[tuple[str, str | None, list[Call]]]) -> int:
    """Count the todo_write calls of the latest assistant message while one is unanswered.

    The rule of `compaction.tools.todos.calls_in_one_response`, over the recorded fields.
    """
    answered: set[str] = set()
    for role, call_id, calls in reversed(messages):
        if role == "tool" and call_id is not None:
            answered.add(call_id)
        elif role == "assistant" and calls:
            ids = [i for i, name in calls if name == "todo_write"]
            return len(ids) if any(i not in answered for i in ids) else 0
        elif role == "user":
            return 0
    return 0


def _ordered(data: Mapping[str, Any], order: Sequence[str]) -> bool:
    """Tell whether `data`'s keys are some of `order`, in that order, none of them null."""
    rest = iter(order)
    return all(key in rest for key in data) and None not in data.values()


def _count(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_INT


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(type(s) is str for s in value)


def _turn_start(data: dict[str, Any]) -> bool:
    at = data.get("at", 0.0)
    timed = type(at) in (int, float) and 0 <= at <= MAX_INT
    strings = all(type(v) is str for k, v in data.items() if k != "at")
    return _ordered(data, ("mode", "cwd", "at")) and strings and timed


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


def _todo_write(data: dict[str, Any]) -> bool:
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


SHAPES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "turn/start": _turn_start,
    "turn/end": _turn_end,
    "todo/write": _todo_write,
    "message": _message,
}
"""The event types this fold reads, each with the check of its data's exact shape."""
