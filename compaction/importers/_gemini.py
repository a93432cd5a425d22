"""Gemini CLI session files (``~/.gemini/tmp/<project>/chats/session-*.json[l]``) into events.

The older file is one JSON document: ``sessionId``, ``projectHash``, ``startTime``,
``lastUpdated`` and ``messages``. Gemini CLI 0.61 writes a JSONL chat file instead: a header
record (``sessionId``, ``projectHash``...; again on each resume), message records appended as
they happen (a message rewritten later, with its tool calls, repeats its ``id``: the last
record of an id wins), and ``{"$set": {...}}`` patches. A ``$set`` of ``messages`` whose text
holds a ``<state_snapshot>`` not seen before is Gemini CLI's own compression, kept as a
`compaction/checkpoint` event (summarizer ``gemini-cli``, the snapshot as text); other patches
(a resume's history, ``lastUpdated``) are skipped and counted. What each message (by ``type``)
becomes:

- ``user``: a real request (`turn/start` + user message); ``content`` is text or a list of parts.
- ``gemini``: one assistant message with its ``content`` and ``toolCalls`` (``name``, ``args``);
  each call's ``result`` (``functionResponse.response``: ``output`` or ``error``) becomes the
  `tool` message answering it, an error when ``status`` is not ``success``. ``thoughts`` are
  dropped (counted). ``tokens`` (``input``, of which ``cached`` came from the cache; ``output``
  and ``thoughts``) become a `usage/report` event (purpose ``turn``).
- ``write_todos`` calls become `todo/write` events: ``description`` becomes ``content``; a
  ``cancelled`` item is no longer work to do and leaves the list (counted).
- ``info``, ``error`` and ``warning`` messages are the CLI's own notices (update available,
  quota...), never sent to the model: skipped and counted. Any other type is counted as unknown.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compaction.errors import TranscriptError
from compaction.events import Event, TodoItem, UsageReportData
from compaction.importers._base import EventBuilder
from compaction.importers._import_report import ImportReport
from compaction.importers._jobs import gemini_call
from compaction.importers._reader import RecordReader
from compaction.importers._recorded_calls import (
    RecordedCall,
    call_from,
    content_text,
    timestamp_of,
    todo_items,
    token_figure,
    unknown,
)
from compaction.importers._records import iter_jsonl, load_document
from compaction.importers._tool_status import exit_code_in, failed_by
from compaction.tokens import Tokenizer

TODO_TOOL = "write_todos"
NOTICE_TYPES = frozenset({"info", "error", "warning"})
"""Message types the CLI shows the user and never sends to the model."""


@dataclass
class _Reader(RecordReader):
    def todo_hook(self, call: RecordedCall) -> tuple[TodoItem, ...] | None:
        if call.name != TODO_TOOL:
            return None
        args = call.input if isinstance(call.input, Mapping) else {}
        raw = args.get("todos")
        if isinstance(raw, list):
            kept = [
                t for t in raw if not (isinstance(t, Mapping) and t.get("status") == "cancelled")
            ]
            if len(kept) < len(raw):
                self.report.skip("cancelled todo (left out of the list)", len(raw) - len(kept))
            raw = kept
        return todo_items(raw, text_key="description")

    def message(self, index: int, raw: object) -> None:
        if not isinstance(raw, Mapping):
            reason = f"messages[{index}] is not an object"
            unknown(self.report, self.path, 1, reason, strict=self.strict)
            return
        msg: Mapping[str, Any] = raw
        kind = msg.get("type")
        self.builder.at = timestamp_of(msg.get("timestamp"))
        if kind == "user":
            self.builder.request(content_text(msg.get("content")))
        elif kind == "gemini":
            self.gemini(msg)
        elif isinstance(kind, str) and kind in NOTICE_TYPES:
            self.report.skip(f"{kind} message (a CLI notice, not sent to the model)")
        else:
            reason = f"messages[{index}] has unknown type {kind!r}"
            unknown(self.report, self.path, 1, reason, strict=self.strict)

    def gemini(self, msg: Mapping[str, Any]) -> None:
        calls: list[tuple[RecordedCall, Mapping[str, Any]]] = []
        for raw in msg.get("toolCalls") or []:
            if not isinstance(raw, Mapping):
                self.report.skip("tool call that is not an object")
                continue
            calls.append(
                (call_from(str(raw.get("id")), str(raw.get("name")), raw.get("args")), raw)
            )
        if msg.get("thoughts"):
            self.report.skip("gemini thoughts (not kept)")
        text = content_text(msg.get("content"))
        key = msg.get("id") if isinstance(msg.get("id"), str) else None
        self.builder.assistant(key, [text] if isinstance(text, str) else [], [c for c, _ in calls])
        usage = _usage(msg)
        if usage is not None:
            self.builder.usage(usage)
        for call, raw in calls:
            if "result" in raw:
                status = raw.get("status")
                ok = status in (None, "success")
                text = _result(raw.get("result"))
                exit_code = exit_code_in(text, last=True)
                failed = failed_by(exit_code, None if status is None else not ok)
                self.builder.result(
                    call.id, text, is_error=not ok, exit_code=exit_code, failed=failed
                )


def _result(result: object) -> str:
    """A call's result: each ``functionResponse.response`` output (or error), joined."""
    texts: list[str] = []
    for part in result if isinstance(result, list) else [result]:
        response = part.get("functionResponse") if isinstance(part, Mapping) else None
        body = response.get("response") if isinstance(response, Mapping) else part
        if isinstance(body, Mapping) and isinstance(body.get("output"), str):
            texts.append(body["output"])
        elif isinstance(body, Mapping) and isinstance(body.get("error"), str):
            texts.append(body["error"])
        elif isinstance(body, str):
            texts.append(body)
        elif body is not None:
            texts.append(json.dumps(body, ensure_ascii=False, sort_keys=True))
    return "\n".join(texts)


def _usage(msg: Mapping[str, Any]) -> UsageReportData | None:
    """Gemini's ``tokens``: ``input`` holds the cached part; thoughts are billed as output."""
    tokens = msg.get("tokens")
    if not isinstance(tokens, Mapping):
        return None
    model = msg.get("model")
    return UsageReportData(
        purpose="turn",
        model=model if isinstance(model, str) else "unknown",
        prompt_tokens=token_figure(tokens.get("input")),
        completion_tokens=token_figure(tokens.get("output")) + token_figure(tokens.get("thoughts")),
        cached_tokens=token_figure(tokens.get("cached")),
    )


SUMMARIZER = "gemini-cli"
SNAPSHOT = "<state_snapshot>"


def _snapshot_in(patch: Mapping[str, Any]) -> str | None:
    """Return the ``<state_snapshot>`` text a ``$set`` of ``messages`` holds, or None."""
    messages = patch.get("messages")
    for msg in messages if isinstance(messages, list) else []:
        text = content_text(msg.get("content")) if isinstance(msg, Mapping) else None
        if isinstance(text, str) and SNAPSHOT in text:
            return text[text.index(SNAPSHOT) :]
    return None


def _load_chat_lines(
    path: Path, report: ImportReport, tokenizer: Tokenizer, *, strict: bool
) -> Iterator[Event]:
    """Stream the events of a JSONL chat file (Gemini CLI 0.61 and later)."""
    reader: _Reader
    builder = EventBuilder(report, tokenizer, lambda call: reader.todo_hook(call))
    reader = _Reader(builder, report, path, strict)
    held: Mapping[str, Any] | None = None
    snapshots: set[str] = set()
    for lineno, record in iter_jsonl(path, report, strict=strict):
        if not isinstance(record, Mapping):
            continue
        if "type" in record and "id" in record:
            if held is not None and held.get("id") != record.get("id"):
                reader.message(lineno, held)
            held = record
        elif isinstance(record.get("$set"), Mapping):
            snapshot = _snapshot_in(record["$set"])
            if snapshot is None or snapshot in snapshots:
                report.skip("$set patch (metadata or a resumed history)")
                continue
            snapshots.add(snapshot)
            if held is not None:
                reader.message(lineno, held)
                held = None
            builder.checkpoint(snapshot, SUMMARIZER)
        else:
            report.skip("chat file header")
        yield from builder.take()
    if held is not None:
        reader.message(report.lines, held)
    yield from builder.finish()


def load_gemini(
    path: Path, report: ImportReport, tokenizer: Tokenizer, *, strict: bool
) -> Iterator[Event]:
    """Stream the events of a Gemini CLI session file (a JSON document or a JSONL chat file)."""
    if _is_chat_file(path):
        return _load_chat_lines(path, report, tokenizer, strict=strict)
    return _load_document(path, report, tokenizer, strict=strict)


def _is_chat_file(path: Path) -> bool:
    """Tell a JSONL chat file by its header line: ``sessionId`` and ``projectHash``, no messages."""
    with open(path, "rb") as fh:
        first = fh.readline(1 << 20)
    try:
        header = json.loads(first)
    except ValueError:
        return False
    keys = header.keys() if isinstance(header, Mapping) else set()
    return {"sessionId", "projectHash"} <= keys and "messages" not in keys


def _load_document(
    path: Path, report: ImportReport, tokenizer: Tokenizer, *, strict: bool
) -> Iterator[Event]:
    """Stream the events of a Gemini CLI session document."""
    doc = load_document(path)
    messages = doc.get("messages") if isinstance(doc, Mapping) else None
    if not isinstance(doc, Mapping) or not isinstance(messages, list):
        raise TranscriptError(
            path, 1, "not a Gemini CLI session (no messages array)", fix="Name another format"
        )
    builder = EventBuilder(report, tokenizer, lambda call: reader.todo_hook(call), gemini_call)
    builder = EventBuilder(report, tokenizer, lambda call: reader.todo_hook(call))
    reader = _Reader(builder, report, path, strict)
    report.lines = 1
    for key in sorted(k for k in doc if k != "messages"):
        report.skip(f"{key} (session metadata)")
    for index, msg in enumerate(messages):
        report.records += 1
        reader.message(index, msg)
        yield from builder.take()
    yield from builder.finish()
