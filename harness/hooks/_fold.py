"""What an agent's transcript holds open: its todo list, its shared tasks, its compactions.

The transcript is read through `compaction.importers` (one reader per agent format); the fold
keeps the latest todo list, the shared task board and, at each compaction the agent made, the
items open at that point and the summary the agent wrote.

Invariants: an item is open when its status is ``pending`` or ``in_progress``; items keep the
agent's own text and ids; the fold is a pure function of the events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from compaction import (
    CheckpointRecorded,
    Event,
    MessageAdded,
    TaskBoard,
    TaskCreated,
    TaskUpdated,
    TodoItem,
    TodoWritten,
)
from compaction.views import TasksProjection, TasksState

OPEN = ("in_progress", "pending")
"""The statuses of an item still to do."""

_ID_MENTION = r"(?:#|\btask\s+#?|\bid\s+)\s*{}\b"
"""How a summary names a task by id: ``#3``, ``task 3``, ``Task #3``, ``id 3``."""

OWN_SUMMARIZERS = ("claude-code", "codex", "gemini-cli")
"""The `CheckpointRecorded.summarizer` of the agents' own compactions."""


@dataclass(frozen=True)
class Item:
    """One open item: a todo of the agent's list, or a shared task."""

    kind: str
    """``todo``, ``task``, ``plan`` (the approved plan) or ``job`` (a running job)."""
    status: str
    text: str
    """The item's text (a task's subject), verbatim."""
    id: str | None = None
    """A task's id (todos have none)."""
    owner: str | None = None
    blocked_by: tuple[str, ...] = ()

    def line(self) -> str:
        """Return the item as one line of the restore block, its text and id verbatim."""
        if self.kind in ("todo", "plan"):
            return f"- [{self.status}] {self.text}"
        if self.kind == "job":
            owner = f" (owner: {self.owner})" if self.owner else ""
            return f"- job {self.id} [{self.status}] {self.text}{owner}"
        extras = [f"owner: {self.owner}"] if self.owner else []
        extras += [f"blocked by: {', '.join('#' + b for b in self.blocked_by)}"] * bool(
            self.blocked_by
        )
        tail = f" ({'; '.join(extras)})" if extras else ""
        return f"- #{self.id} [{self.status}] {self.text}{tail}"

    def kept_by(self, summary: str) -> str | None:
        """Return how `summary` keeps the item (``verbatim`` or ``id``), or None."""
        if self.text and self.text in summary:
            return "verbatim"
        if self.id is not None and re.search(
            _ID_MENTION.format(re.escape(self.id)), summary, re.IGNORECASE
        ):
            return "id"
        return None


@dataclass(frozen=True)
class Compaction:
    """One compaction the agent made: the items open at that point and its summary."""

    number: int
    """1 for the transcript's first compaction."""
    summary: str
    open_items: tuple[Item, ...]

    def kept(self) -> list[tuple[Item, str | None]]:
        """Return each open item with how the summary kept it (None: dropped)."""
        return [(item, item.kept_by(self.summary)) for item in self.open_items]


@dataclass
class Fold:
    """The fold of one transcript."""

    todos: tuple[TodoItem, ...] = ()
    tasks: TasksState = field(default_factory=TasksState)
    compactions: list[Compaction] = field(default_factory=list)
    plan: str | None = None
    """The latest approved plan's text (`plan/approve`), carried until replaced."""
    jobs: dict[str, Item] = field(default_factory=dict)
    """The sub-agents and background commands still running (`job/start` without `job/end`)."""

    def open_items(self) -> tuple[Item, ...]:
        """Return the items open now: todos, tasks, the approved plan, the running jobs.

        Todos in list order, tasks in creation order, jobs in start order.
        """
        todos = [Item("todo", t.status, t.content) for t in self.todos if t.status in OPEN]
        board = TasksProjection().view(self.tasks)
        tasks = [
            Item("task", t.status, t.subject, t.id, t.owner, _open_blockers(board, t.blocked_by))
            for t in board.live()
            if t.status in OPEN
        ]
        plan = [Item("plan", "approved", self.plan)] if self.plan else []
        return (*todos, *tasks, *plan, *self.jobs.values())

    @property
    def latest_summary(self) -> str | None:
        """Return the summary of the agent's latest compaction, or None."""
        return self.compactions[-1].summary if self.compactions else None


def _open_blockers(board: TaskBoard, ids: Iterable[str]) -> tuple[str, ...]:
    """Return the blockers still open (a finished or unknown one no longer holds a task)."""
    return tuple(i for i in ids if (t := board.get(i)) is not None and t.status in OPEN)


def fold(events: Iterable[Event]) -> Fold:
    """Fold a transcript's events: the latest list, the tasks, each compaction of the agent."""
    result = Fold()
    projection = TasksProjection()
    for event in events:
        if isinstance(event, TodoWritten):
            result.todos = tuple(event.data.todos)
        elif isinstance(event, TaskCreated | TaskUpdated):
            result.tasks = projection.apply(result.tasks, event)
        elif isinstance(event, CheckpointRecorded) and event.data.summarizer in OWN_SUMMARIZERS:
            _compacted(result, event.data.text)
        elif isinstance(event, MessageAdded) and event.data.origin == "recorded_summary":
            _compacted(result, _text(event))
        else:
            _carried(result, str(getattr(event, "type", "")), getattr(event, "data", None))
    return result


def _carried(result: Fold, kind: str, data: object) -> None:
    """Fold the carry events by wire name: an approved plan, a job started or ended.

    Read by name (``plan/approve``, ``job/start``, ``job/end``: issue 41's events), so a log
    that holds them is folded by an installed harness whose event table already knows them.
    """
    if kind == "plan/approve" and isinstance(text := getattr(data, "text", None), str):
        result.plan = text
    elif kind == "job/start" and isinstance(job := getattr(data, "id", None), str):
        runs, owner = str(getattr(data, "runs", "")), getattr(data, "owner", None)
        job_kind = str(getattr(data, "kind", "job"))
        result.jobs[job] = Item("job", f"running {job_kind}", runs, job, owner)
    elif kind == "job/end" and isinstance(job := getattr(data, "id", None), str):
        result.jobs.pop(job, None)


def _compacted(result: Fold, summary: str) -> None:
    number = len(result.compactions) + 1
    result.compactions.append(Compaction(number, summary, result.open_items()))


def _text(event: MessageAdded) -> str:
    content = event.data.content
    if isinstance(content, str):
        return content
    return "\n".join(getattr(part, "text", "") for part in content or [])
