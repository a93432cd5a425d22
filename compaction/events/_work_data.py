"""The payloads of turns, todo lists and the shared task list.

Invariants: a payload carries the whole new state it records (a whole todo list, a task's
whole state), never a delta, so a replay is last-write-wins.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from compaction.contract import TASK_STATUSES as TASK_STATUSES
from compaction.contract import TODO_STATUSES as TODO_STATUSES
from compaction.contract import TaskStatus as TaskStatus
from compaction.contract import TodoStatus as TodoStatus
from compaction.events._base import MAX_INT, _Frozen

TASK_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
"""A task id: a short token (``3``, or an imported agent's own id), never free text."""


class TodoItem(_Frozen):
    """One recorded todo: exactly a content and a status."""

    content: str
    status: TodoStatus


class TurnStartData(_Frozen):
    """A new user request begins (the task panel empties here)."""

    mode: str | None = None
    """The mode the agent works in for this turn, when known."""
    cwd: str | None = None
    """The working directory of the turn, when the writer knows it (an imported transcript's
    ``cwd``): Files and Code shows paths relative to it. Absent in older logs."""
    at: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """When the request was made, in seconds since the epoch, as the writer recorded it (an
    imported transcript's own timestamp); None when it did not say. `harness sessions` shows
    when a session ran from these. Never part of the model's context."""


class OpenWork(_Frozen):
    """The unfinished work a turn ended with: todo counts, shared task counts and ids."""

    todos_pending: int = Field(default=0, ge=0, le=MAX_INT)
    """Items of the latest todo list still ``pending``."""
    todos_in_progress: int = Field(default=0, ge=0, le=MAX_INT)
    """Items of the latest todo list still ``in_progress``."""
    tasks_pending: int = Field(default=0, ge=0, le=MAX_INT)
    """Shared tasks still ``pending``."""
    tasks_in_progress: int = Field(default=0, ge=0, le=MAX_INT)
    """Shared tasks still ``in_progress``."""
    task_ids: tuple[str, ...] = ()
    """Ids of the unfinished shared tasks, in creation order."""

    @property
    def total(self) -> int:
        """Return how many todo items and tasks are unfinished."""
        return (
            self.todos_pending
            + self.todos_in_progress
            + self.tasks_pending
            + self.tasks_in_progress
        )


class TurnEndData(_Frozen):
    """The agent finished answering the current request."""

    reason: str | None = None
    open: OpenWork | None = None
    """The unfinished todos and tasks at the end of the turn (`Session.end_turn`); None when
    none were open, or the writer did not say."""


class TodoWriteData(_Frozen):
    """The whole todo list after a `todo_write` call.

    Recorded history may break today's validation rules (an imported list with two items in
    progress); the strict rules apply to new calls, in `compaction.tools.todos`.
    """

    todos: tuple[TodoItem, ...]


class Task(_Frozen):
    """One task of the shared task list, as recorded: its whole state after a change."""

    id: str = Field(pattern=TASK_ID_PATTERN)
    """Short, stable, deterministic: ``1``, ``2``... in creation order (imports keep theirs)."""
    subject: str
    """What to do, as an imperative sentence."""
    description: str | None = None
    """More detail, when the creator gave it."""
    status: TaskStatus = "pending"
    owner: str | None = None
    """The agent working on it (or assigned it); None while unclaimed."""
    blocked_by: tuple[str, ...] = ()
    """Ids of the tasks that must be finished before this one can start."""
    version: int = Field(default=1, ge=1, le=MAX_INT)
    """1 at creation, one more at each recorded update."""


class TaskCreateData(_Frozen):
    """A task was added to the shared list (`task_create`)."""

    agent: str = Field(min_length=1)
    """The agent that created it."""
    task: Task


class TaskUpdateData(_Frozen):
    """A task of the shared list changed (`task_update`): its whole new state."""

    agent: str = Field(min_length=1)
    """The agent that changed it."""
    task: Task


class TaskRef(_Frozen):
    """An unfinished shared task as a Checkpoint carries it: id, owner, subject, open blockers."""

    id: str = Field(pattern=TASK_ID_PATTERN)
    owner: str | None = None
    subject: str
    blocked_by: tuple[Annotated[str, Field(pattern=TASK_ID_PATTERN)], ...] = Field(
        default=(), exclude_if=lambda ids: not ids
    )
    """Ids of the tasks it still waits on (unfinished when the Checkpoint was written); left
    out of the log line when empty, so a log written before the field re-dumps unchanged."""
