"""SWE-agent trajectories (``.traj``: one JSON object with a ``history``) into session events.

The ``history`` holds the chat as the model saw it. What each message becomes:

- ``system``: a system message.
- ``user`` marked ``is_demo``: the demonstration SWE-agent puts in the prompt, kept as a user
  message (origin ``injected``) that starts no turn.
- ``assistant`` with an ``action``: the model's thought as text, plus one tool call named
  ``bash`` whose ``command`` is the action (SWE-agent runs every action, its own commands
  included, in its shell). SWE-agent 1.x messages that carry ``tool_calls`` keep them.
- the ``user`` (or ``tool``) message after an action: the observation, i.e. the call's result.
  It is stored as a user message but it is not a request and starts no turn.
- any other ``user`` message: a real request (`turn/start`).

A trajectory without a ``history`` is read from its ``trajectory`` steps (thought, action,
observation), with no request. SWE-agent has no todo tool, so no `todo/write` is written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compaction.errors import TranscriptError
from compaction.events import Event, Message, TodoItem
from compaction.importers._base import EventBuilder
from compaction.importers._import_report import ImportReport
from compaction.importers._openai_messages import content_of, texts_of
from compaction.importers._reader import RecordReader
from compaction.importers._recorded_calls import RecordedCall, call_from, unknown
from compaction.importers._records import load_document
from compaction.tokens import Tokenizer

ACTION_TOOL = "bash"
"""Name of the tool call an action becomes."""


def _no_todos(call: RecordedCall) -> tuple[TodoItem, ...] | None:
    return None


@dataclass
class _Reader(RecordReader):
    """The state of one SWE-agent import."""

    def message(self, index: int, msg: object) -> None:
        if not isinstance(msg, Mapping):
            reason = f"history[{index}] is a JSON {type(msg).__name__}, not a message"
            unknown(self.report, self.path, 1, reason, strict=self.strict)
            return
        role = msg.get("role")
        content = content_of(msg.get("content"))
        text = "\n".join(texts_of(content))
        waiting = self.builder.open_calls()
        if role == "system":
            self.builder.message(Message(role="system", content=content), "system message")
        elif role == "assistant":
            self.assistant(index, msg, text)
        elif role == "tool" or (role == "user" and waiting and not _is_demo(msg)):
            ids = msg.get("tool_call_ids")
            targets = [str(i) for i in ids] if isinstance(ids, list) and ids else []
            for call_id in targets or [c.id for c in waiting[:1]] or ["(none)"]:
                self.builder.result(call_id, content or "")
        elif role == "user" and _is_demo(msg):
            message = Message(role="user", content=content, origin="injected")
            self.builder.message(message, "demonstration")
        elif role == "user":
            self.builder.request(content if content is not None else "")
        else:
            reason = f"history[{index}] has role {role!r}"
            unknown(self.report, self.path, 1, reason, strict=self.strict)

    def assistant(self, index: int, msg: Mapping[str, Any], text: str) -> None:
        calls: list[RecordedCall] = []
        raw_calls = msg.get("tool_calls")
        for raw in raw_calls if isinstance(raw_calls, list) else ():
            fn = raw.get("function") if isinstance(raw, Mapping) else None
            if isinstance(fn, Mapping):
                calls.append(
                    call_from(str(raw.get("id")), str(fn.get("name")), fn.get("arguments"))
                )
        action = msg.get("action")
        thought = msg.get("thought")
        if not calls and isinstance(action, str) and action.strip():
            calls.append(call_from(f"swe-agent-{index}", ACTION_TOOL, {"command": action}))
            text = thought if isinstance(thought, str) else text
        self.builder.assistant(None, [text] if text else [], calls)

    def step(self, index: int, step: object) -> None:
        if not isinstance(step, Mapping):
            unknown(
                self.report, self.path, 1, f"trajectory[{index}] is not a step", strict=self.strict
            )
            return
        thought = step.get("thought")
        text = thought if isinstance(thought, str) else ""  # kept when the step ran no action
        self.assistant(index, {"action": step.get("action")}, text)
        for call in self.builder.open_calls():
            self.builder.result(call.id, str(step.get("observation") or ""))


def _is_demo(msg: Mapping[str, Any]) -> bool:
    return str(msg.get("is_demo", "")).lower() == "true"


def load_swe_agent(
    path: Path, report: ImportReport, tokenizer: Tokenizer, *, strict: bool
) -> Iterator[Event]:
    """Stream the events of a SWE-agent trajectory."""
    doc = load_document(path)
    if not isinstance(doc, Mapping):
        raise TranscriptError(path, 1, "a SWE-agent trajectory is a JSON object")
    report.lines = 1
    builder = EventBuilder(report, tokenizer, _no_todos)
    reader = _Reader(builder, report, path, strict)
    history, steps = doc.get("history"), doc.get("trajectory")
    for key in sorted(k for k in doc if k not in ("history", "trajectory")):
        report.skip(f"{key} (trajectory metadata)")
    if isinstance(history, list):
        if isinstance(steps, list) and steps:
            report.skip("trajectory steps (the history holds the same turns)", len(steps))
        for index, msg in enumerate(history):
            report.records += 1
            reader.message(index, msg)
            yield from builder.take()
    elif isinstance(steps, list):
        for index, step in enumerate(steps):
            report.records += 1
            reader.step(index, step)
            yield from builder.take()
    else:
        raise TranscriptError(path, 1, "no 'history' or 'trajectory' list in this trajectory")
    yield from builder.finish()
