"""The `todo_write` rules, standard library only: the one home of what a call may hold.

Both paths that run the tool ask this module: `compaction.tools.todos.parse_todo_write` (a
`Session`, `call_tool`, the integrations) and the CLI's fast path (`plain_todo_write`, which
writes an accepted call on a JSONL file without loading pydantic). It owns the argument shape
(exactly ``todos``, items with exactly ``content`` and ``status``), the content rules (trimmed,
not blank or invisible, at most `MAX_ITEM_CHARS`, valid Unicode, no duplicate), the in-progress
policy, every model-facing string of a rejection and the JSON Schema a model is shown.

Invariants: `todo_check` never raises anything but `ToolInputError`, whatever it is given; it
lists every violation in the order: the top-level ``todos`` (missing, or each item's content,
status, unknown fields), unknown parameters, then duplicates and the in-progress rule.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Final

from compaction.contract import (
    MAX_ITEM_CHARS,
    TODO_STATUSES,
    TODO_WRITE,
    TodoStatus,
    lone_surrogate,
)
from compaction.errors import ToolInputError
from compaction.tools.arguments import Arguments, load_arguments, show, too_long

ARGUMENT_EXAMPLE: Final = '{"todos": [{"content": "Run the tests", "status": "in_progress"}]}'
"""A valid call's arguments, quoted in the messages."""
MAX_REPORTED: Final = 20
"""Violations listed in one rejection; the rest are counted."""
INVISIBLE_FILLERS: Final = frozenset("\u115f\u1160\u2800\u3164\uffa0")
"""Characters that render as nothing though Unicode does not class them as format characters."""

Todo = tuple[str, TodoStatus]
"""One accepted item: its trimmed content and its status."""


def is_blank(content: str) -> bool:
    """Tell whether `content` shows nothing: only whitespace and invisible characters.

    Invisible: Unicode format characters (category Cf: zero-width space and joiners, the BOM,
    bidi marks and isolates, the soft hyphen...), control characters (category Cc: NUL, the
    other C0 and C1 controls) and the blank fillers (Hangul fillers, the blank braille pattern).
    """
    return all(
        ch.isspace() or ch in INVISIBLE_FILLERS or unicodedata.category(ch) in ("Cf", "Cc")
        for ch in content
    )


def todo_check(arguments: Arguments, *, allow_parallel: bool) -> list[Todo]:
    """Return the list a `todo_write` call records, or raise `ToolInputError` listing why not.

    Args:
        arguments: JSON text, bytes, or an already parsed mapping, as the model sent them.
        allow_parallel: accept several ``in_progress`` items (the mode's policy).
    """
    obj = load_arguments(
        arguments, TODO_WRITE, example=ARGUMENT_EXAMPLE, shape='with one key "todos"', short="list"
    )
    try:
        todos, problems = _checked(obj)
        if isinstance(obj.get("todos"), (list, tuple)):
            problems += _semantic(list(obj["todos"]), allow_parallel)
    except RecursionError:
        todos, problems = [], [f"arguments are nested too deeply; send {ARGUMENT_EXAMPLE}"]
    except (MemoryError, ValueError, TypeError) as exc:
        todos, problems = [], [f"arguments could not be read ({type(exc).__name__})"]
    if problems:
        if len(problems) > MAX_REPORTED:
            extra = len(problems) - MAX_REPORTED
            problems = [*problems[:MAX_REPORTED], f"...and {extra} more problems"]
        # Keys the model sent are quoted as they came; escape lone surrogates so the text prints.
        problems = [p.encode("utf-8", "backslashreplace").decode() for p in problems]
        raise ToolInputError(TODO_WRITE, problems)
    return todos


def _checked(obj: dict[Any, Any]) -> tuple[list[Todo], list[str]]:
    """Check the shape and each item; return the items read and the problems met."""
    todos: list[Todo] = []
    problems: list[str] = []
    if "todos" not in obj:
        problems.append('missing the required parameter "todos" (an array of {content, status})')
    elif not isinstance(obj["todos"], (list, tuple)):
        problems.append('"todos" must be an array of {content, status} objects')
    else:
        for i, item in enumerate(obj["todos"]):
            todo = _item(f"todos[{i}]", item, problems)
            if todo is not None:
                todos.append(todo)
    problems += [
        _unknown(key, "arguments", f'unknown parameter "{key}"; the only parameter is "todos"')
        for key in obj
        if key != "todos"
    ]
    return todos, problems


def _item(where: str, item: object, problems: list[str]) -> Todo | None:
    """Check one item; return it, or None after adding its problems."""
    if not isinstance(item, Mapping):
        problems.append(f'{where} must be an object with "content" and "status"')
        return None
    before = len(problems)
    content = _content(where, item, problems)
    status = item.get("status")
    if "status" not in item:
        problems.append(f'{where} is missing "status"')
    elif isinstance(status, str) and lone_surrogate(status) is not None:
        problems.append(f"{where}.status must be valid Unicode text")
    elif not isinstance(status, str) or status not in TODO_STATUSES:
        statuses = ", ".join(TODO_STATUSES)
        problems.append(f"{where}.status must be one of {statuses}, not {show(status)}")
    problems += [
        _unknown(
            key, where, f'{where}: unknown field "{key}"; an item has only "content" and "status"'
        )
        for key in item
        if key not in ("content", "status")
    ]
    if len(problems) > before or content is None:
        return None
    return content, TODO_STATUSES[TODO_STATUSES.index(status)]


def _content(where: str, item: Mapping[Any, Any], problems: list[str]) -> str | None:
    """Return the item's trimmed content, or None after adding its problem."""
    if "content" not in item:
        problems.append(f'{where} is missing "content"')
        return None
    text = _text(item["content"])
    if text is None:
        problems.append(f"{where}.content must be a string")
        return None
    if lone_surrogate(text) is not None:  # JSON "\ud800" cannot be written to the log
        problems.append(f"{where}.content must be valid Unicode text")
        return None
    text = text.strip()
    if is_blank(text):
        problems.append(f"{where}.content is blank")
        return None
    if len(text) > MAX_ITEM_CHARS:
        problems.append(too_long(f"{where}.content", len(text)))
        return None
    return text


def _text(value: object) -> str | None:
    """Return `value` as text: a string, or UTF-8 bytes as a host may pass (None: neither)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return "\ud800"  # reported as invalid Unicode, as a lone surrogate is
    return None


def _unknown(key: object, where: str, problem: str) -> str:
    """Return the problem of an unknown key, or that the key is not text (a lone surrogate)."""
    if isinstance(key, str) and lone_surrogate(key) is not None:
        return f"{where} must be valid Unicode text"
    return problem


def _semantic(raw_items: list[Any], allow_parallel: bool) -> list[str]:
    """Check duplicates and the in-progress rule over the items that are objects."""
    problems: list[str] = []
    first_at: dict[str, int] = {}
    in_progress: list[int] = []
    for i, item in enumerate(raw_items):
        if not isinstance(item, Mapping):
            continue
        content, status = item.get("content"), item.get("status")
        if isinstance(content, str) and content.strip():
            key = content.strip()
            if key in first_at:
                problems.append(
                    f"todos[{i}].content duplicates todos[{first_at[key]}]: {show(key)}"
                )
            else:
                first_at[key] = i
        if status == "in_progress":
            in_progress.append(i)
    if len(in_progress) > 1 and not allow_parallel:
        where = ", ".join(f"todos[{i}]" for i in in_progress)
        problems.append(
            f"{len(in_progress)} items are in_progress ({where}); keep exactly one in_progress "
            "and mark the others pending or completed"
        )
    return problems


Call = tuple[str, str]
"""A recorded tool call: its id and its function's name."""
Turn = tuple[str, str | None, Sequence[Call]]
"""A context message as the one-call rule reads it: role, tool_call_id, tool calls."""


def calls_in_one_response(messages: Sequence[Turn]) -> int:
    """Count the `todo_write` calls of the latest assistant message while one is unanswered.

    Walks back from the end of the context to the latest assistant message that made tool
    calls, noting the results seen after it; returns how many of its calls are `todo_write`
    when at least one of those has no result yet (0 otherwise: an old message whose calls
    were all answered never blocks a later call).
    """
    answered: set[str] = set()
    for role, call_id, calls in reversed(messages):
        if role == "tool" and call_id is not None:
            answered.add(call_id)
        elif role == "assistant" and calls:
            ids = [i for i, name in calls if name == TODO_WRITE]
            return len(ids) if any(i not in answered for i in ids) else 0
        elif role == "user":
            return 0
    return 0


def one_list_per_response(calls: int) -> ToolInputError:
    """Return the rejection of a `todo_write` made beside others in one model response."""
    return ToolInputError(
        TODO_WRITE,
        [
            f"this response makes {calls} todo_write calls; each is refused, so no list was "
            "lost. Send one todo_write call per response, holding the whole updated list"
        ],
    )


def summary_line(statuses: Sequence[str]) -> str:
    """Return the one line of counts the model gets back from an accepted call."""
    return (
        f"Todo list updated: {statuses.count('pending')} pending, "
        f"{statuses.count('in_progress')} in progress, {statuses.count('completed')} completed."
    )


def parameters_schema() -> dict[str, Any]:
    """Return the JSON Schema of the arguments, inlined and closed (`additionalProperties: false`).

    It fits the subset of JSON Schema that strict function calling accepts. Each call returns a
    new dict (a caller may change it).
    """
    item = {
        "additionalProperties": False,
        "description": "One task: what to do and where it stands.",
        "properties": {
            "content": {"description": "What to do, as an imperative sentence.", "type": "string"},
            "status": {
                "description": "pending, in_progress or completed.",
                "enum": list(TODO_STATUSES),
                "type": "string",
            },
        },
        "required": ["content", "status"],
        "type": "object",
    }
    todos = {"description": "The complete updated todo list.", "items": item, "type": "array"}
    return {
        "type": "object",
        "properties": {"todos": todos},
        "required": ["todos"],
        "additionalProperties": False,
    }
