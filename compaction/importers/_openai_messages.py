"""OpenAI chat-completions messages into session events.

The file holds a JSON array of messages, an object with a ``messages`` array, or one message a
line (JSONL). Every ``user`` message is a real request (chat format gives tool results their own
``tool`` role); ``system`` and ``developer`` messages become system messages; an ``assistant``
message keeps its text and ``tool_calls`` (a legacy ``function_call`` gets a made-up id), and each
``tool`` message answers its call by ``tool_call_id`` (a legacy ``function`` message answers the
last call of that name).

Calls named ``todo_write``, ``TodoWrite``, ``write_todos`` or ``update_plan`` become `todo/write`
events: ``{"todos": [{content, status, ...}]}`` or ``{"plan": [{step, status}]}``, other fields
dropped. A call whose recorded result is this toolkit's own rejection text changed nothing and
writes no list.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compaction.events import Event, ImagePart, ImageURL, Message, TextPart, TodoItem
from compaction.importers._base import EventBuilder
from compaction.importers._import_report import ImportReport
from compaction.importers._reader import RecordReader
from compaction.importers._recorded_calls import (
    Content,
    RecordedCall,
    call_from,
    todo_items,
    unknown,
)
from compaction.importers._records import (
    MAX_DOCUMENT_BYTES,
    iter_json_array,
    iter_jsonl,
    read_document_bytes,
    repair_surrogates,
    too_deep,
)
from compaction.tokens import Tokenizer
from compaction.tools.todos import TOOL_NAME

TODO_TOOLS = frozenset({"todo_write", "TodoWrite", "write_todos", "update_plan"})
"""Tool names recognised as writing the whole todo list."""

_REJECTED = f"{TOOL_NAME}: rejected"


def todo_hook(call: RecordedCall) -> tuple[TodoItem, ...] | None:
    """Return the list a todo call leaves, or None for other calls and rejected ones."""
    if call.name not in TODO_TOOLS or call.result_text().startswith(_REJECTED):
        return None
    args = call.input if isinstance(call.input, Mapping) else {}
    if "todos" in args:
        return todo_items(args["todos"])
    return todo_items(args.get("plan"), text_key="step")


def content_of(content: object) -> Content | None:
    """Read chat content: a string, or parts of text and images (other parts dropped)."""
    if content is None or isinstance(content, str):
        return content
    parts: list[TextPart | ImagePart] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            parts.append(TextPart(text=part["text"]))
        elif part.get("type") == "image_url":
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, Mapping) else url
            if isinstance(url, str):
                parts.append(ImagePart(image_url=ImageURL(url=url)))
    if all(isinstance(p, TextPart) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, TextPart))
    return tuple(parts)


def texts_of(content: Content | None) -> list[str]:
    """The texts of read content (`content_of`): the string, or its text parts (images left out)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    return [p.text for p in content if isinstance(p, TextPart)]


@dataclass
class _Reader(RecordReader):
    legacy_calls: int = 0

    def record(self, lineno: int, raw: object) -> None:
        msg = self.as_object(lineno, raw, "message")
        if msg is None:
            return
        role = msg.get("role")
        content = content_of(msg.get("content"))
        if role in ("system", "developer"):
            self.builder.message(Message(role="system", content=content), f"{role} message")
        elif role == "user":
            self.builder.request(content if content is not None else "")
        elif role == "assistant":
            self.assistant(msg, content)
        elif role == "tool":
            self.builder.result(str(msg.get("tool_call_id")), content or "")
        elif role == "function":
            self.function_result(msg, content)
        else:
            unknown(
                self.report, self.path, lineno, f"message with role {role!r}", strict=self.strict
            )

    def assistant(self, msg: Mapping[str, Any], content: Content | None) -> None:
        calls: list[RecordedCall] = []
        raw_calls = msg.get("tool_calls")
        for raw in raw_calls if isinstance(raw_calls, list) else ():
            fn = raw.get("function") if isinstance(raw, Mapping) else None
            if not isinstance(fn, Mapping):
                self.report.skip("tool call without a function")
                continue
            calls.append(call_from(str(raw.get("id")), str(fn.get("name")), fn.get("arguments")))
        legacy = msg.get("function_call")
        if isinstance(legacy, Mapping):
            self.legacy_calls += 1
            call_id = f"function_call_{self.legacy_calls}"
            calls.append(call_from(call_id, str(legacy.get("name")), legacy.get("arguments")))
        self.builder.assistant(None, texts_of(content), calls)

    def function_result(self, msg: Mapping[str, Any], content: Content | None) -> None:
        name = msg.get("name")
        open_calls = [c for c in self.builder.open_calls() if c.name == name]
        call_id = open_calls[-1].id if open_calls else f"function:{name}"
        self.builder.result(call_id, content or "")


def _records(path: Path, report: ImportReport, strict: bool) -> Iterator[tuple[int, Any]]:
    first = _first_byte(path)
    if first == b"[" and _is_one_array(path):
        yield from iter_json_array(path, report, strict=strict)
        return
    document = _one_document(path) if first == b"{" else None
    if isinstance(document, Mapping) and isinstance(document.get("messages"), list):
        report.records += len(document["messages"])
        for msg in document["messages"]:
            yield 1, msg
        return
    yield from iter_jsonl(path, report, strict=strict)


def _first_byte(path: Path) -> bytes:
    """Return the file's first byte after leading whitespace (empty for a blank file)."""
    with open(path, "rb") as fh:
        while chunk := fh.read(4096):
            head = chunk.lstrip()
            if head:
                return head[:1]
    return b""


def _is_one_array(path: Path) -> bool:
    """Tell a file holding one JSON array (maybe truncated) from JSONL whose first line is one."""
    try:
        json.loads(read_document_bytes(path))
    except json.JSONDecodeError as exc:
        return exc.msg != "Extra data"
    except (ValueError, UnicodeDecodeError, RecursionError):
        return True
    return True


def _one_document(path: Path) -> object:
    """The file as one JSON value, or None when it is not one (JSONL, or broken)."""
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        return None  # streamed as JSONL instead, one bounded line at a time
    try:
        value = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return None if too_deep(value) else repair_surrogates(value)


def load_openai(
    path: Path, report: ImportReport, tokenizer: Tokenizer, *, strict: bool
) -> Iterator[Event]:
    """Stream the events of a file of OpenAI chat messages."""
    builder = EventBuilder(report, tokenizer, todo_hook)
    reader = _Reader(builder, report, path, strict)
    for lineno, msg in _records(path, report, strict):
        reader.record(lineno, msg)
        yield from builder.take()
    yield from builder.finish()
