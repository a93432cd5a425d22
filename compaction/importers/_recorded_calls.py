"""A transcript's records as the importers read them: calls, todo lists, texts, token figures.

The helpers every format module shares before it drives an `EventBuilder` (`base`): a recorded
tool call waiting for its result, a recorded todo list read into `TodoItem`s, a message's text,
a recorded token count, and the count-or-raise rule for a record no importer knows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compaction.errors import ToolInputError, TranscriptError
from compaction.events import ImagePart, TextPart, TodoItem
from compaction.importers._import_report import ImportReport
from compaction.tools.todos import parse_todo_write

Content = str | tuple[TextPart | ImagePart, ...]
"""A message's content: text, or text and image parts."""

TODO_STATUS_NAMES = frozenset({"pending", "in_progress", "completed"})


STRICT_FIX = "Import without --strict to count and skip it"


def unknown(report: ImportReport, path: Path, line: int, reason: str, *, strict: bool) -> None:
    """Count a record this importer does not know; with `strict`, raise naming its line."""
    if strict:
        raise TranscriptError(path, line, reason, fix=STRICT_FIX)
    report.skip(reason)


@dataclass
class RecordedCall:
    """A tool call read from a transcript, waiting for its result."""

    id: str
    name: str
    arguments: str
    """The arguments as a JSON string (OpenAI chat format)."""
    input: Any = None
    """The arguments parsed, when they are JSON."""
    result: Content | None = None
    is_error: bool = False
    """True when the transcript marks the result as an error (the call changed nothing)."""
    meta: object = None
    """Format-specific details of the result (Claude Code's ``toolUseResult``)."""
    exit_code: int | None = None
    """The exit status the transcript recorded for the call, when it has one."""
    failed: bool | None = None
    """Whether the transcript marks the call failed; None when it says nothing."""

    def result_text(self) -> str:
        """Return the result's text (image parts left out)."""
        if self.result is None:
            return ""
        if isinstance(self.result, str):
            return self.result
        return "\n".join(p.text for p in self.result if isinstance(p, TextPart))


TodoHook = Callable[[RecordedCall], "tuple[TodoItem, ...] | None"]
"""Return the whole todo list after a call, or None when the call is not a todo call."""


class UnreadableTodos(ValueError):
    """A recorded todo list that cannot be held by `TodoItem` (say, an unknown status)."""


def call_from(call_id: str, name: str, arguments: object) -> RecordedCall:
    """Build a call from arguments given as a JSON string or as parsed JSON."""
    if isinstance(arguments, str):
        try:
            parsed: Any = json.loads(arguments)
        except ValueError:
            parsed = None
        return RecordedCall(id=call_id, name=name, arguments=arguments, input=parsed)
    text = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return RecordedCall(id=call_id, name=name, arguments=text, input=arguments)


def todo_items(raw: object, text_key: str = "content") -> tuple[TodoItem, ...]:
    """Read a recorded list of ``{<text_key>, status, ...}``; other fields (activeForm) dropped.

    Raises `UnreadableTodos` when an item has no text or a status outside the three.
    """
    if not isinstance(raw, list):
        raise UnreadableTodos("the list is not an array")
    items: list[TodoItem] = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise UnreadableTodos(f"item {i} is not an object")
        text, status = item.get(text_key), item.get("status")
        if not isinstance(text, str):
            raise UnreadableTodos(f"item {i} has no {text_key!r} text")
        if status not in TODO_STATUS_NAMES:
            raise UnreadableTodos(f"item {i} has status {status!r}")
        items.append(TodoItem(content=text, status=status))
    return tuple(items)


def content_text(content: object) -> str:
    """Return the text of a message's content: a string, or its text parts joined by newlines.

    Parts are Anthropic content blocks or Gemini parts; any other content has no text.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    return ""


def token_figure(value: object) -> int:
    """Return a recorded token count, or 0 when it is missing or not a non-negative int."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def rule_breaks(items: Sequence[TodoItem]) -> list[str]:
    """Return what today's `todo_write` validation says about a recorded list (empty: fine)."""
    args = {"todos": [{"content": t.content, "status": t.status} for t in items]}
    try:
        parse_todo_write(args)
    except ToolInputError as exc:
        return exc.violations
    return []


__all__ = [
    "STRICT_FIX",
    "TODO_STATUS_NAMES",
    "Content",
    "RecordedCall",
    "TodoHook",
    "UnreadableTodos",
    "call_from",
    "content_text",
    "rule_breaks",
    "todo_items",
    "token_figure",
    "unknown",
]


def timestamp_of(value: object) -> float | None:
    """Return an ISO 8601 timestamp (``2026-01-23T15:37:47.029Z``) as seconds since the epoch.

    None when the value is not such a text; a time without a zone is read as UTC.
    """
    if not isinstance(value, str) or not value[:4].isdigit():
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = when.timestamp()
    return seconds if seconds >= 0 else None
