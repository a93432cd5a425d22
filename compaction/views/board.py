"""The shared task list as a view: a fold of `task/create` and `task/update` events.

The board holds every task ever created, in creation order, each in its latest recorded state
(events carry a task's whole state, so replay is last-write-wins per id). Unlike the todo
panel, it does not empty on `turn/start`: it is shared by several agents across requests.
Deleted tasks stay on the board (an update naming one is told it was deleted) but are never
shown or carried.

Invariants: replaying the same events gives the same board; `apply` is O(1) in the log's length;
ids are deterministic (`next_id`: one more than the largest numeric id seen, from ``1``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from compaction.events import (
    TASK_STATUSES,
    Event,
    Task,
    TaskCreated,
    TaskRef,
    TaskStatus,
    TaskUpdated,
)
from compaction.views._panel_text import counts_line

TASK_MARKS: dict[TaskStatus, str] = {
    "completed": "✓",
    "in_progress": "◉",
    "pending": "○",
    "deleted": "✗",
}
"""The status dot shown before each task of the shared panel."""

UNFINISHED: tuple[TaskStatus, ...] = ("pending", "in_progress")


def quoted(text: str) -> str:
    """Quote free text as a one-line JSON string, so no subject can forge a line of its own."""
    return json.dumps(text, ensure_ascii=False).encode("utf-8", "backslashreplace").decode()


class TaskBoard(BaseModel):
    """The shared task list: every task by id, in creation order."""

    model_config = ConfigDict(frozen=True)

    tasks: tuple[Task, ...] = ()
    """Every task, deleted ones included, in creation order."""
    next_id: str = "1"
    """The id the next `task_create` gets."""

    def get(self, task_id: str) -> Task | None:
        """Return the task with this id, or None."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        return None

    def live(self) -> tuple[Task, ...]:
        """Return the tasks that are not deleted, in creation order."""
        return tuple(t for t in self.tasks if t.status != "deleted")

    def counts(self) -> dict[TaskStatus, int]:
        """Count the live tasks by status (pending, in_progress, completed)."""
        counts: dict[TaskStatus, int] = {s: 0 for s in TASK_STATUSES if s != "deleted"}
        for task in self.live():
            counts[task.status] += 1
        return counts

    def counts_line(self) -> str:
        """Return e.g. ``2 completed, 1 in progress, 3 pending``."""
        return counts_line(t.status for t in self.live())

    def unfinished(self, status: TaskStatus) -> tuple[TaskRef, ...]:
        """Return the live tasks of one unfinished status as Checkpoint references.

        A reference keeps the blockers still unfinished (a finished, deleted or unknown
        blocker no longer holds the task back), in recorded order.
        """
        open_ids = {t.id for t in self.tasks if t.status in UNFINISHED}
        return tuple(
            TaskRef(
                id=t.id,
                owner=t.owner,
                subject=t.subject,
                blocked_by=tuple(b for b in t.blocked_by if b in open_ids),
            )
            for t in self.tasks
            if t.status == status
        )

    def render(self) -> str:
        """Return the panel as plain text: the counts line, then one line per live task."""
        return "\n".join([self.counts_line(), *(panel_line(t) for t in self.live())])


def panel_line(task: Task) -> str:
    """Return one task as a panel line: mark, id, subject, owner, blockers."""
    owner = f" · {task.owner}" if task.owner else " · unowned"
    blockers = f" · blocked by {', '.join('#' + b for b in task.blocked_by)}"
    return f"{TASK_MARKS[task.status]} #{task.id} {quoted(task.subject)}{owner}" + (
        blockers if task.blocked_by else ""
    )


@dataclass
class TasksState:
    """The board as a fold state: tasks by id (insertion order is creation order)."""

    tasks: dict[str, Task] = field(default_factory=dict)
    largest_number: int = 0


class TasksProjection:
    """The shared task list: follows `task/create` and `task/update`; ignores turns."""

    name: ClassVar[str] = "tasks"
    state_version: ClassVar[int] = 1

    def init(self) -> TasksState:
        """Return an empty board."""
        return TasksState()

    def apply(self, state: TasksState, event: Event) -> TasksState:
        """Record the task's whole new state under its id."""
        if isinstance(event, TaskCreated | TaskUpdated):
            task = event.data.task
            state.tasks[task.id] = task
            if task.id.isdigit() and task.id.isascii():
                state.largest_number = max(state.largest_number, int(task.id))
        return state

    def view(self, state: TasksState) -> TaskBoard:
        """Return an immutable snapshot of the board."""
        return TaskBoard(tasks=tuple(state.tasks.values()), next_id=str(state.largest_number + 1))
