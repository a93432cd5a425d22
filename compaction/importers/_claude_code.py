"""Claude Code session JSONL (``~/.claude/projects/<dir>/<session>.jsonl``) into session events.

One JSON record a line. What each record becomes:

- ``user`` with text: a real request (`turn/start` + user message), except a tool result, an
  ``isMeta`` record, a local command's caveat or output, an interruption notice and a background
  task notification, which are kept as user messages that start no turn. A slash command the
  user typed (``<command-name>``) is a request: the user acted; with arguments it is written as
  the user typed it (``/review this branch``, origin ``user``: the arguments are the user's own
  words). Shell escapes (``<bash-input>``, ``<bash-stdout>``, origin ``shell``) and hook notices
  ("Operation stopped by hook", origin ``hook``) are never requests. Each user message records
  its `origin`: ``user`` for typed text, ``command`` for argument-less slash-command tags and
  local command output,
  ``skill`` for an ``isMeta`` body the tool expanded, ``interruption`` for interruption notices,
  ``injected`` for caveats, reminders, notifications and text beside tool results.
- ``user`` with ``tool_result`` blocks: the `tool` messages answering the calls.
- ``assistant``: Claude Code writes one record per content block; records with the same
  ``message.id`` merge into one assistant message. ``text`` is kept, ``tool_use`` becomes an
  OpenAI tool call, ``thinking`` is dropped (counted).
- ``TodoWrite`` calls become `todo/write` events (``activeForm`` dropped); ``TaskCreate`` and
  ``TaskUpdate`` calls become `task/create` and `task/update` events of the shared task list,
  under Claude Code's own task ids, so a team session replays with its ids (see `TaskFolder`);
  ``TaskList``/``TaskGet`` only read it.
- ``system`` ``compact_boundary`` then a ``user`` record with ``isCompactSummary``: Claude Code's
  own compaction, kept as a `compaction/checkpoint` event with summarizer ``claude-code`` whose
  span is everything since the previous one and whose text is Claude Code's summary.
- ``message.usage`` of an assistant record: the provider's figures for that model call, written
  once per message as a `usage/report` event (purpose ``turn``): ``prompt_tokens`` is
  ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``, ``cached_tokens`` the
  cache reads and ``cache_write_tokens`` the cache writes, so `harness log` shows the session's
  real cache-hit share. Claude Code's ``<synthetic>`` messages (made up locally) carry none.
- Jobs and the approved plan (`compaction.importers._jobs`): a background command or async
  agent started becomes `job/start`, its notification, ``BashOutput``/``TaskOutput`` with a final
  status or ``KillShell`` `job/end`; an approved ``ExitPlanMode`` becomes `plan/approve`; a
  Plan-mode turn followed by another turn approves the Plan turn's last answer.
- ``permission-mode`` (Claude Code 2.1.x): the permission mode from then on; a request with no
  ``permissionMode`` of its own takes it (``plan`` starts a plan-mode turn). Counted as handled.
- Skipped on purpose and counted: sidechain records (a sub-agent's own conversation; its answer
  reaches the main one as the Task tool's result), ``progress``, ``file-history-snapshot``,
  ``queue-operation``, ``summary`` (a session title), other ``system`` records, API error notices.
  Any other record type is counted as unknown, by type.
"""

from __future__ import annotations

import re
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
from compaction.importers._claude_code_tasks import TaskFolder
from compaction.importers._import_report import ImportReport
from compaction.importers._jobs import claude_code_call, claude_code_notice
from compaction.importers._reader import RecordReader
from compaction.importers._recorded_calls import (
    Content,
    RecordedCall,
    call_from,
    content_text,
    timestamp_of,
    todo_items,
    token_figure,
    unknown,
)
from compaction.importers._records import iter_jsonl
from compaction.importers._tool_status import exit_code_in
from compaction.tokens import Tokenizer

SUMMARIZER = "claude-code"

SKIPPED_TYPES: dict[str, str] = {
    "progress": "progress (live tool, hook and sub-agent updates)",
    "file-history-snapshot": "file-history-snapshot (file backups)",
    "queue-operation": "queue-operation (input queued while busy)",
    "summary": "summary (a session title)",
    "custom-title": "custom-title (a session title)",
    "attachment": "attachment (files, hook output and reminders Claude Code attached; not kept)",
    "agent-name": "agent-name (the session's agent name)",
    "last-prompt": "last-prompt (a copy of the latest prompt, for the UI)",
    "pr-link": "pr-link (a pull request the session opened)",
}
"""Record types that never reach the model's context, with the reason they are skipped."""

NOT_REQUESTS: tuple[tuple[str, str], ...] = (
    ("[Request interrupted by user", "interruption notice"),
    ("<local-command-caveat>", "local command caveat"),
    ("<local-command-stdout>", "local command output"),
    ("<local-command-stderr>", "local command output"),
    ("<task-notification>", "background task notification"),
    ("<system-reminder>", "system reminder"),
    ("<bash-input>", "shell escape"),
    ("<bash-stdout>", "shell escape output"),
    ("<bash-stderr>", "shell escape output"),
    ("Operation stopped by hook", "hook notice"),
    ("[Operation stopped by hook", "hook notice"),
)
"""User text that the tool wrote, not the user: kept as a message, starts no turn."""

ORIGIN_BY_KIND: dict[str, Origin] = {
    "interruption notice": "interruption",
    "local command caveat": "injected",
    "local command output": "command",
    "background task notification": "injected",
    "system reminder": "injected",
    "shell escape": "shell",
    "shell escape output": "shell",
    "hook notice": "hook",
}
"""The `Message.origin` of each kind of user text the tool wrote (default ``injected``)."""

COMMAND_TAGS: tuple[str, ...] = ("<command-name>", "<command-message>")
"""A user record opening with one of these is a slash command the user ran (origin ``command``)."""


@dataclass
class _Reader(RecordReader):
    """The state of one Claude Code import: the builder, a pending boundary."""

    boundary_line: int | None = None
    permission_mode: str | None = None
    """The latest ``permission-mode`` record's mode."""

    def todo_hook(self, call: RecordedCall) -> tuple[TodoItem, ...] | None:
        if call.name == "TodoWrite":
            args = call.input if isinstance(call.input, Mapping) else {}
            return todo_items(args.get("todos"))
        if call.name == "TaskCreate":
            TaskFolder(self.builder).create(call)
        elif call.name == "TaskUpdate":
            TaskFolder(self.builder).update(call)
        return None

    def record(self, lineno: int, raw: object) -> None:
        rec = self.as_object(lineno, raw, "record")
        if rec is None:
            return
        kind = rec.get("type")
        self.builder.at = timestamp_of(rec.get("timestamp"))
        boundary = self.boundary_line is not None and not rec.get("isCompactSummary")
        if boundary and kind in ("user", "assistant"):
            self.report.skip("compact_boundary with no summary after it")
            self.boundary_line = None
        if rec.get("isSidechain"):
            self.report.skip("sidechain (a sub-agent's own conversation)")
        elif kind == "user":
            self.user(rec)
        elif kind == "assistant":
            self.assistant(rec)
        elif kind == "system":
            self.system(rec)
        elif kind == "permission-mode":
            mode = rec.get("permissionMode")
            self.permission_mode = mode if isinstance(mode, str) else None
            self.report.handled["permission-mode"] += 1
        elif isinstance(kind, str) and kind in SKIPPED_TYPES:
            self.report.skip(SKIPPED_TYPES[kind])
        else:
            reason = f"unknown record type {kind!r}"
            unknown(self.report, self.path, lineno, reason, strict=self.strict)

    def system(self, rec: Mapping[str, Any]) -> None:
        subtype = rec.get("subtype")
        if subtype == "compact_boundary":
            self.boundary_line = self.report.lines
            self.report.handled["compact_boundary"] += 1
        else:
            self.report.skip(f"system/{subtype} (not shown to the model)")

    def assistant(self, rec: Mapping[str, Any]) -> None:
        if rec.get("isApiErrorMessage"):
            self.report.skip("API error notice (not model output)")
            return
        msg = rec.get("message")
        if not isinstance(msg, Mapping):
            self.report.skip("assistant record without a message")
            return
        texts: list[str] = []
        calls: list[RecordedCall] = []
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            btype = block.get("type") if isinstance(block, Mapping) else None
            if btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif btype == "tool_use":
                calls.append(
                    call_from(str(block.get("id")), str(block.get("name")), block.get("input"))
                )
            else:
                self.report.skip(f"assistant {btype} block (not kept)")
        key = msg.get("id") if isinstance(msg.get("id"), str) else rec.get("uuid")
        self.builder.assistant(key if isinstance(key, str) else None, texts, calls)
        usage = usage_of(msg)
        if usage is not None:
            self.builder.usage(usage)

    def user(self, rec: Mapping[str, Any]) -> None:
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, Mapping) else None
        if rec.get("isCompactSummary"):
            self.builder.checkpoint(content_text(content), SUMMARIZER)
            self.boundary_line = None
            return
        if isinstance(content, str):
            self.user_text(rec, content, with_results=False)
            return
        if not isinstance(content, list):
            self.report.skip("user record without content")
            return
        parts: list[TextPart | ImagePart] = []
        with_results = False
        for block in content:
            btype = block.get("type") if isinstance(block, Mapping) else None
            if btype == "tool_result":
                with_results = True
                result, is_error = _content(block.get("content")), bool(block.get("is_error"))
                self.builder.result(
                    str(block.get("tool_use_id")),
                    result,
                    is_error=is_error,
                    meta=rec.get("toolUseResult"),
                    exit_code=_exit_code(result) if is_error else None,
                    failed=is_error,
                )
            elif btype == "text" and isinstance(block.get("text"), str):
                parts.append(TextPart(text=block["text"]))
            elif btype == "image" and (image := _image(block)) is not None:
                parts.append(image)
            else:
                self.report.skip(f"user {btype} block (not kept)")
        if parts:
            body: Content = (
                parts[0].text
                if len(parts) == 1 and isinstance(parts[0], TextPart)
                else tuple(parts)
            )
            self.user_text(rec, body, with_results=with_results)

    def user_text(self, rec: Mapping[str, Any], content: Content, *, with_results: bool) -> None:
        text = content if isinstance(content, str) else ""
        if not isinstance(content, str):
            text = "\n".join(p.text for p in content if isinstance(p, TextPart))
        kind = _not_request_kind(text)
        origin: Origin = ORIGIN_BY_KIND.get(kind or "", "injected")
        if with_results:
            message = Message(role="user", content=content, origin=origin)
            self.builder.trailing(message, kind or "user text beside results")
        elif rec.get("isMeta"):
            origin = "injected" if kind else "skill"
            message = Message(role="user", content=content, origin=origin)
            self.builder.message(message, "meta (kept as context, not a request)")
        elif kind is not None:
            self.builder.message(Message(role="user", content=content, origin=origin), kind)
            self.builder.carry(claude_code_notice(text))
        else:
            mode = "plan" if rec.get("permissionMode", self.permission_mode) == "plan" else None
            command = text.lstrip().startswith(COMMAND_TAGS)
            typed = command_typed(text) if command else None
            raw_cwd = rec.get("cwd")
            cwd = raw_cwd if isinstance(raw_cwd, str) and raw_cwd.startswith("/") else None
            cwd = cwd if cwd and len(cwd) < 4096 else None
            if typed is not None:
                self.builder.request(typed, mode=mode, origin="user", cwd=cwd)
            else:
                origin = "command" if command else "user"
                self.builder.request(content, mode=mode, origin=origin, cwd=cwd)

    def finish(self) -> None:
        if self.boundary_line is not None:
            self.report.skip("compact_boundary with no summary after it")


def usage_of(msg: Mapping[str, Any]) -> UsageReportData | None:
    """Read an Anthropic ``usage`` object of an assistant message; None when it has none.

    Anthropic's ``input_tokens`` counts only the uncached part of the prompt, so the prompt is
    the sum of the three input figures.
    """
    usage, model = msg.get("usage"), msg.get("model")
    if not isinstance(usage, Mapping) or model == "<synthetic>":
        return None
    read = token_figure(usage.get("cache_read_input_tokens"))
    written = token_figure(usage.get("cache_creation_input_tokens"))
    return UsageReportData(
        purpose="turn",
        model=model if isinstance(model, str) else "unknown",
        prompt_tokens=token_figure(usage.get("input_tokens")) + read + written,
        completion_tokens=token_figure(usage.get("output_tokens")),
        cached_tokens=read,
        cache_write_tokens=written,
    )


_COMMAND_NAME = re.compile(r"<command-name>\s*(/?[^<\s]+)\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)


def command_typed(tags: str) -> str | None:
    """Return what the user typed for a slash command with arguments (``/review this branch``).

    Claude Code records ``/review this branch`` as ``<command-name>/review</command-name>`` and
    ``<command-args>this branch</command-args>``: the arguments are the user's own words, a
    request. None when the command has no arguments (``/exit``, ``/clear``): then the tags stay
    a command.
    """
    args = _COMMAND_ARGS.search(tags)
    if args is None or not args.group(1).strip():
        return None
    name = _COMMAND_NAME.search(tags)
    head = name.group(1) if name else "/command"
    return f"{head if head.startswith('/') else '/' + head} {args.group(1).strip()}"


def _exit_code(result: Content) -> int | None:
    """The ``Exit code N`` a failed Bash result opens with (Claude Code writes no other)."""
    text = (
        result
        if isinstance(result, str)
        else "\n".join(p.text for p in result if isinstance(p, TextPart))
    )
    head = text.lstrip()[:80]
    return exit_code_in(head) if head.startswith("Exit code") else None


def _not_request_kind(text: str) -> str | None:
    stripped = text.lstrip()
    for prefix, kind in NOT_REQUESTS:
        if stripped.startswith(prefix):
            return kind
    return None


def _content(content: object) -> Content:
    """A tool_result's content: a string, or blocks of text and images."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts: list[TextPart | ImagePart] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(TextPart(text=block["text"]))
        elif block.get("type") == "image" and (image := _image(block)) is not None:
            parts.append(image)
    if all(isinstance(p, TextPart) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, TextPart))
    return tuple(parts)


def _image(block: Mapping[str, Any]) -> ImagePart | None:
    source = block.get("source")
    if not isinstance(source, Mapping):
        return None
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type')};base64,{source.get('data')}"
    elif isinstance(source.get("url"), str):
        url = source["url"]
    else:
        return None
    return ImagePart(image_url=ImageURL(url=url))


def load_claude_code(
    path: Path, report: ImportReport, tokenizer: Tokenizer, *, strict: bool
) -> Iterator[Event]:
    """Stream the events of a Claude Code session file."""
    reader: _Reader
    builder = EventBuilder(report, tokenizer, lambda call: reader.todo_hook(call), claude_code_call)
    reader = _Reader(builder, report, path, strict=strict)
    for lineno, rec in iter_jsonl(path, report, strict=strict):
        reader.record(lineno, rec)
        yield from builder.take()
    reader.finish()
    yield from builder.finish()
