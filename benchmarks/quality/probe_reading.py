"""What the Checkpoint probes read, written apart from the code they check.

`read_checkpoint` splits a rendered Checkpoint by its ``## `` headings and decodes its item and
task lines with a regex written from the format's description (never `parse_checkpoint`);
`LogSoFar` reads the log the plain way: the latest todo list, the shared tasks folded by id,
the working directory each turn recorded.

Invariants: pure functions of their input; nothing here imports the summarizers.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction import (
    CheckpointData,
    Event,
    Message,
    MessageAdded,
    TaskCreated,
    TaskUpdated,
    TodoWritten,
    TurnStarted,
)

HEAD = 50
"""Characters of a text's head that show it is present."""
_TASK_LINE = re.compile(
    r'^- task (\S+) \((?:owner ("(?:[^"\\]|\\.)*")|no owner)(?:, blocked by ([^)]*))?\): (".*")$'
)


def norm(text: str) -> str:
    """Collapse whitespace."""
    return " ".join(text.split())


def head(text: str, n: int = HEAD) -> str:
    """The first `n` characters of the text, whitespace collapsed."""
    return norm(text)[:n]


_MACHINE_TEXT = re.compile(
    r"^\s*(?:<[a-z][\w-]*>"  # a tag an agent wraps its own text in: <task-notification>...
    r"|\[Request interrupted"
    r"|\[Operation stopped by hook"
    r"|Caveat: The messages below were generated"
    r"|This session is being continued from a previous conversation"
    r"|Base directory for this skill:)"
)
"""Text an agent or its hooks wrote into a user record, recognised by the text itself."""


def machine_text(text: str) -> bool:
    """Tell whether a user record's text was written by the agent or a hook, not a person.

    Judged from the text alone, never from the importer's ``origin``: a probe that trusted the
    importer would share its blind spots (a notification imported as a request would pass).
    """
    return _MACHINE_TEXT.match(text) is not None


def typed(message: Message) -> bool:
    """Tell whether a user message is text a person typed, judged from its text (`machine_text`)."""
    return message.role == "user" and not machine_text(message.text())


# --- reading a rendered Checkpoint (the probes' own parser) -----------------------------------


@dataclass
class ReadCheckpoint:
    """A rendered Checkpoint read plainly: sections by heading, code-owned lines decoded."""

    sections: dict[str, str]
    items: dict[str, list[str]]
    """Todo items of Pending Jobs and Current Work."""
    tasks: dict[str, list[tuple[str, str | None, str, tuple[str, ...]]]]
    """Task lines of Pending Jobs and Current Work: id, owner, subject, blockers."""
    raw: dict[str, list[str]] = field(default_factory=dict)
    """Each section's lines as rendered (the plan and job lines of Current Work)."""


def unescape(text: str) -> str:
    """Drop the backslash a Checkpoint puts before a line that would read as Markdown syntax."""
    return re.sub(r"(?m)^([ \t]*)\\", r"\1", text)


def read_checkpoint(text: str) -> ReadCheckpoint:
    """Split a Checkpoint by its ``## `` headings and decode its item and task lines."""
    raw: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        if line.startswith("## "):
            current = raw.setdefault(line[3:].strip(), [])
        elif current is not None:
            current.append(line)
    sections = {k: unescape("\n".join(v).strip()) for k, v in raw.items()}
    items: dict[str, list[str]] = {}
    tasks: dict[str, list[tuple[str, str | None, str, tuple[str, ...]]]] = {}
    for name in ("Pending Jobs", "Current Work"):
        items[name], tasks[name] = [], []
        for line in raw.get(name, []):
            if line.startswith('- "'):
                items[name].append(json.loads(line[2:]))
            elif (match := _TASK_LINE.match(line)) is not None:
                owner = json.loads(match.group(2)) if match.group(2) else None
                blockers = tuple(match.group(3).split(", ")) if match.group(3) else ()
                tasks[name].append((match.group(1), owner, json.loads(match.group(4)), blockers))
    for name, body in sections.items():
        if body == "(none)":
            sections[name] = ""
    return ReadCheckpoint(sections=sections, items=items, tasks=tasks, raw=raw)


# --- the log, read the plain way ----------------------------------------------------------------


@dataclass
class LogSoFar:
    """What the replay appended so far."""

    events: list[Event] = field(default_factory=list)

    def messages(self, first: int = 1, last: int | None = None) -> list[tuple[int, Message]]:
        """Return the messages with seqs in ``first..last``."""
        top = last if last is not None else 10**12
        return [
            (e.seq, e.data)
            for e in self.events
            if isinstance(e, MessageAdded) and first <= e.seq <= top
        ]

    def mode_at(self, seq: int) -> str | None:
        """Return the mode of the turn `seq` belongs to."""
        turns = [(e.seq, e.data.mode) for e in self.events if isinstance(e, TurnStarted)]
        i = bisect_right([t[0] for t in turns], seq)
        return turns[i - 1][1] if i else None

    def cwd_at(self, seq: int) -> str | None:
        """Return the working directory the latest turn up to `seq` recorded."""
        found = None
        for e in self.events:
            if isinstance(e, TurnStarted) and e.seq <= seq and e.data.cwd:
                found = e.data.cwd
        return found

    def latest_todos(self) -> list[tuple[str, str]]:
        """Return the latest todo list written anywhere in the log: (content, status)."""
        todos: list[tuple[str, str]] = []
        for e in self.events:
            if isinstance(e, TodoWritten):
                todos = [(t.content, t.status) for t in e.data.todos]
        return todos

    def board(self) -> dict[str, dict[str, Any]]:
        """Return the shared tasks by id, each in its latest recorded state."""
        tasks: dict[str, dict[str, Any]] = {}
        for e in self.events:
            if isinstance(e, TaskCreated | TaskUpdated):
                tasks[e.data.task.id] = e.data.task.model_dump()
        return tasks

    def approved_plan(self) -> str | None:
        """Return the latest approved plan's text (None: none was approved)."""
        plan = None
        for e in self.events:
            if e.type == "plan/approve":
                plan = e.data.text
        return plan

    def running_jobs(self) -> list[str]:
        """Return the ids of the jobs started and not ended, in start order."""
        running: dict[str, None] = {}
        for e in self.events:
            if e.type == "job/start":
                running.pop(e.data.id, None)
                running[e.data.id] = None
            elif e.type == "job/end":
                running.pop(e.data.id, None)
        return list(running)

    def foreign_checkpoints(self) -> list[CheckpointData]:
        """Return the checkpoints another agent recorded."""
        return [
            e.data
            for e in self.events
            if isinstance(e.data, CheckpointData) and e.data.summarizer in ("claude-code", "codex")
        ]


@dataclass
class Compaction:
    """One compaction as the probes see it: its text and span, and what was kept after it."""

    text: str
    first_seq: int
    last_seq: int
    kept: Sequence[Message]
    agent: str = "main"

    @property
    def tail(self) -> str:
        """The kept messages' text, whitespace collapsed."""
        return norm("\n".join(m.text() for m in self.kept))
