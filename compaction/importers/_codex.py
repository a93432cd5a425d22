"""Codex CLI rollout JSONL (``~/.codex/sessions/.../rollout-*.jsonl``) into session events.

Each line is ``{"timestamp", "type", "payload"}``. What each record becomes:

- ``response_item`` ``message``: a ``user`` message is a real request (`turn/start`), except the
  context Codex injects itself (``<environment_context>``, ``<user_instructions>``, AGENTS.md,
  ``<user_shell_command>``, ``<turn_aborted>``, ``<subagent_notification>``), kept as user
  messages that start no turn, with origin ``injected`` (``command`` for a shell command,
  ``interruption`` for an abort, ``subagent`` for a sub-agent's notice, never a request);
  ``developer`` and ``system`` messages become system messages; ``assistant`` text, with the
  calls that follow it, becomes one assistant message.
- ``response_item`` ``function_call`` / ``custom_tool_call`` / ``local_shell_call``: tool calls;
  ``function_call_output`` / ``custom_tool_call_output``: their results, paired by ``call_id``.
  ``update_plan`` calls become `todo/write` events (``step`` becomes ``content``).
- ``compacted``: Codex's own compaction, kept as a `compaction/checkpoint` event with summarizer
  ``codex`` and Codex's summary as text, replacing everything since the previous one. Newer
  rollouts leave ``message`` empty and keep the ``replacement_history``: its typed requests, its
  summary and its last answer become the text (`compacted_text`); the items are not replayed.
- Jobs (`compaction.importers._jobs`): ``spawn_agent`` and a background ``exec_command``
  become `job/start`; ``close_agent``, a final ``<subagent_notification>`` and a ``write_stdin``
  whose terminal exited become `job/end`.
- ``event_msg`` ``token_count``: the token counts of the model call just made
  (``info.last_token_usage``: ``input_tokens``, of which ``cached_input_tokens`` came from the
  cache, and ``output_tokens``), written as a `usage/report` event (purpose ``turn``, the model of
  the latest ``turn_context``). Codex repeats a count when nothing new was used (same
  ``total_token_usage``); a repeat is skipped and counted.
- Skipped on purpose and counted: ``session_meta``, ``turn_context``, other ``event_msg`` (UI
  events that repeat the response items), ``reasoning`` items (encrypted or summaries), web searches
  and snapshots. The older rollout shape (bare response items after a metadata line, with
  ``record_type: state`` markers) is read too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compaction.events import (
    Event,
    ImagePart,
    ImageURL,
    Message,
    Origin,
    TextPart,
    TodoItem,
    UsageReportData,
)
from compaction.importers._base import EventBuilder
from compaction.importers._import_report import ImportReport
from compaction.importers._jobs import codex_call, codex_notice
from compaction.importers._reader import RecordReader
from compaction.importers._recorded_calls import (
    Content,
    RecordedCall,
    call_from,
    timestamp_of,
    todo_items,
    token_figure,
    unknown,
)
from compaction.importers._records import iter_jsonl
from compaction.importers._tool_status import codex_exit_code, failed_by
from compaction.tokens import Tokenizer

SUMMARIZER = "codex"
PLAN_TOOL = "update_plan"

INJECTED_PREFIXES: tuple[str, ...] = (
    "<subagent_notification>",
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
)
"""User-role text that Codex writes itself: context, not a request."""

ORIGIN_BY_PREFIX: dict[str, Origin] = {
    "<subagent_notification>": "subagent",
    "<user_shell_command>": "command",
    "<turn_aborted>": "interruption",
}
"""The `Message.origin` of injected text by its opening (default ``injected``)."""

ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
    }
)
"""Response item types of the older, unwrapped rollout shape."""

SKIPPED_TYPES: dict[str, str] = {
    "session_meta": "session_meta (session metadata)",
    "turn_context": "turn_context (model and sandbox settings)",
}


def todo_hook(call: RecordedCall) -> tuple[TodoItem, ...] | None:
    """Return the list an ``update_plan`` call leaves (``step`` becomes ``content``)."""
    if call.name != PLAN_TOOL:
        return None
    args = call.input if isinstance(call.input, Mapping) else {}
    return todo_items(args.get("plan"), text_key="step")


@dataclass
class _Reader(RecordReader):
    answer: int = 0
    """Bumped at every non-assistant item, so the items of one model answer merge."""
    model: str = "unknown"
    """The model of the latest ``turn_context``."""
    last_total: object = None
    """The latest ``total_token_usage`` seen, to skip repeated counts."""
    cwd: str | None = None
    """The working directory of the latest ``session_meta`` or ``turn_context``."""

    def record(self, lineno: int, raw: object) -> None:
        rec = self.as_object(lineno, raw, "record")
        if rec is None:
            return
        kind = rec.get("type")
        self.builder.at = timestamp_of(rec.get("timestamp"))
        payload = rec.get("payload")
        if "payload" not in rec and (kind in ITEM_TYPES or "record_type" in rec or lineno == 1):
            self.legacy(lineno, rec)
        elif kind == "response_item" and isinstance(payload, Mapping):
            self.item(lineno, payload)
        elif kind == "compacted" and isinstance(payload, Mapping):
            self.builder.checkpoint(compacted_text(payload), SUMMARIZER)
        elif kind == "event_msg":
            sub = payload.get("type") if isinstance(payload, Mapping) else None
            if sub == "token_count" and isinstance(payload, Mapping):
                self.token_count(payload)
            else:
                self.report.skip(f"event_msg/{sub} (UI event)")
        elif kind == "turn_context" and isinstance(payload, Mapping):
            model = payload.get("model")
            self.model = model if isinstance(model, str) else self.model
            self.take_cwd(payload)
            self.report.skip(SKIPPED_TYPES["turn_context"])
        elif kind == "session_meta" and isinstance(payload, Mapping):
            self.take_cwd(payload)
            self.report.skip(SKIPPED_TYPES["session_meta"])
        elif isinstance(kind, str) and kind in SKIPPED_TYPES:
            self.report.skip(SKIPPED_TYPES[kind])
        else:
            unknown(
                self.report, self.path, lineno, f"unknown record type {kind!r}", strict=self.strict
            )

    def take_cwd(self, payload: Mapping[str, Any]) -> None:
        """Keep the working directory a ``session_meta`` or ``turn_context`` records."""
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd.startswith("/") and len(cwd) < 4096:
            self.cwd = cwd

    def legacy(self, lineno: int, rec: Mapping[str, Any]) -> None:
        if "record_type" in rec:
            self.report.skip("record_type state marker (older rollout)")
        elif rec.get("type") in ITEM_TYPES:
            self.item(lineno, rec)
        else:
            self.report.skip("session metadata (older rollout)")

    def item(self, lineno: int, item: Mapping[str, Any]) -> None:
        itype = item.get("type")
        if itype == "message":
            self.message(item)
        elif itype == "function_call":
            call = call_from(str(item.get("call_id")), str(item.get("name")), item.get("arguments"))
            self.builder.assistant(f"answer-{self.answer}", [], [call])
        elif itype == "custom_tool_call":
            call = call_from(
                str(item.get("call_id")), str(item.get("name")), {"input": item.get("input")}
            )
            self.builder.assistant(f"answer-{self.answer}", [], [call])
        elif itype == "local_shell_call":
            call_id = item.get("call_id") or item.get("id")
            call = call_from(str(call_id), "local_shell", item.get("action"))
            self.builder.assistant(f"answer-{self.answer}", [], [call])
        elif itype in ("function_call_output", "custom_tool_call_output"):
            self.output(item)
        elif itype == "reasoning":
            self.report.skip("reasoning item (not kept)")
        elif itype in ITEM_TYPES:
            self.report.skip(f"response_item/{itype} (not kept)")
        else:
            unknown(
                self.report,
                self.path,
                lineno,
                f"unknown response item {itype!r}",
                strict=self.strict,
            )

    def token_count(self, payload: Mapping[str, Any]) -> None:
        info = payload.get("info")
        last = info.get("last_token_usage") if isinstance(info, Mapping) else None
        if not isinstance(info, Mapping) or not isinstance(last, Mapping):
            self.report.skip("event_msg/token_count without counts")
            return
        total = info.get("total_token_usage")
        if total is not None and total == self.last_total:
            self.report.skip("event_msg/token_count repeating the previous count")
            return
        self.last_total = total
        self.builder.usage(
            UsageReportData(
                purpose="turn",
                model=self.model,
                prompt_tokens=token_figure(last.get("input_tokens")),
                completion_tokens=token_figure(last.get("output_tokens")),
                cached_tokens=token_figure(last.get("cached_input_tokens")),
            )
        )
        self.report.handled["event_msg/token_count"] += 1

    def output(self, item: Mapping[str, Any]) -> None:
        self.answer += 1
        content, is_error = _output(item.get("output"))
        text = content if isinstance(content, str) else ""
        exit_code = codex_exit_code(text)
        failed = failed_by(exit_code, True if is_error else None)
        self.builder.result(
            str(item.get("call_id")), content, is_error=is_error, exit_code=exit_code, failed=failed
        )

    def message(self, item: Mapping[str, Any]) -> None:
        role = item.get("role")
        content = _content(item.get("content"))
        text = content if isinstance(content, str) else ""
        if role == "assistant":
            self.builder.assistant(f"answer-{self.answer}", [text] if text else [], [])
            return
        self.answer += 1
        if role in ("developer", "system"):
            self.builder.message(Message(role="system", content=content), f"{role} message")
        elif role == "user" and text.lstrip().startswith(INJECTED_PREFIXES):
            origin = next(
                (o for p, o in ORIGIN_BY_PREFIX.items() if text.lstrip().startswith(p)), "injected"
            )
            message = Message(role="user", content=content, origin=origin)
            self.builder.message(message, "context Codex injected")
            self.builder.carry(codex_notice(text))
        elif role == "user":
            self.builder.request(content, cwd=self.cwd)
        else:
            self.report.skip(f"message with role {role!r}")


SUMMARY_PREFIX = "Another language model started to solve this problem"
"""How Codex opens the summary it hands the next turn after a local compaction."""


def compacted_text(payload: Mapping[str, Any]) -> str:
    """Return the text of a Codex ``compacted`` record: its ``message``, or what it kept.

    Newer rollouts leave ``message`` empty and keep the conversation in
    ``replacement_history``: Codex's own summary goes under ``# Primary Request and Intent``,
    its typed requests under ``# User messages`` (one a line, as the recorded-summary reader
    takes them) and the last assistant answer under ``# Current Work``; injected context and
    sub-agent notices are left out, and an opaque (encrypted) compaction item is named, never
    copied.
    """
    message = payload.get("message")
    history = payload.get("replacement_history")
    if (isinstance(message, str) and message.strip()) or not isinstance(history, list):
        return str(message or "")
    requests: list[str] = []
    summaries: list[str] = []
    answer = ""
    for item in history:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "compaction" or "encrypted_content" in item:
            summaries.append("(the provider's encrypted compaction item)")
            continue
        content = _content(item.get("content"))
        text = (content if isinstance(content, str) else "").strip()
        if item.get("type") != "message" or not text:
            continue
        if item.get("role") == "assistant":
            answer = text
        elif item.get("role") == "user" and text.startswith(SUMMARY_PREFIX):
            summaries.append(text.split("\n", 1)[-1].strip())
        elif item.get("role") == "user" and not text.startswith(INJECTED_PREFIXES):
            requests.append(" ".join(text.split()))
    parts = [f"# Primary Request and Intent\n{text}" for text in summaries[-1:]]
    parts += ["# User messages\n" + "\n".join(f"- {r}" for r in requests)] if requests else []
    parts += [f"# Current Work\n{answer}"] if answer else []
    return "\n\n".join(parts)


def _content(content: object) -> Content:
    """Join a message's text parts; keep images as image parts."""
    if isinstance(content, str):
        return content
    parts: list[TextPart | ImagePart] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            parts.append(TextPart(text=part["text"]))
        elif part.get("type") == "input_image" and isinstance(part.get("image_url"), str):
            parts.append(ImagePart(image_url=ImageURL(url=part["image_url"])))
    if all(isinstance(p, TextPart) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, TextPart))
    return tuple(parts)


def _output(output: object) -> tuple[Content, bool]:
    """A call's output: a string, content items, or (older) ``{content, success}``."""
    if isinstance(output, Mapping):
        return _output_text(output.get("content")), output.get("success") is False
    return _output_text(output), False


def _output_text(output: object) -> Content:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return _content(output)
    return "" if output is None else json.dumps(output, ensure_ascii=False)


def load_codex(
    path: Path, report: ImportReport, tokenizer: Tokenizer, *, strict: bool
) -> Iterator[Event]:
    """Stream the events of a Codex rollout file."""
    builder = EventBuilder(report, tokenizer, todo_hook, codex_call)
    reader = _Reader(builder, report, path, strict)
    for lineno, rec in iter_jsonl(path, report, strict=strict):
        reader.record(lineno, rec)
        yield from builder.take()
    yield from builder.finish()
