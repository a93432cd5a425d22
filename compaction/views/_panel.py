"""The todos view: the task panel a user sees above the input box, a fold of `todo/write`.

It follows `todo/write` events and empties itself on `turn/start`, so an old list never lingers
under a new question; `LatestTodosProjection` keeps the latest list across turns (for compaction).

Invariants: a `todo/write` event never enters the context view; compaction never changes this view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from compaction.events import (
    TODO_STATUSES,
    Event,
    TodoItem,
    TodoStatus,
    TodoWritten,
    TurnStarted,
)
from compaction.views._panel_text import STATUS_MARKS, counts_line


class TodoPanel(BaseModel):
    """The task panel a user sees above the input box."""

    model_config = ConfigDict(frozen=True)

    todos: tuple[TodoItem, ...] = ()
    """The latest list, in the model's order."""
    seq: int | None = None
    """Seq of the `todo/write` event it comes from, if any in this turn."""

    def counts(self) -> dict[TodoStatus, int]:
        """Count items by status, every status present."""
        return count_statuses(self.todos)

    def counts_line(self) -> str:
        """Return e.g. ``2 completed, 1 in progress, 3 pending``."""
        return counts_line(t.status for t in self.todos)

    def render(self) -> str:
        """Return the panel as plain text: the counts line, then one marked line per item."""
        lines = [self.counts_line()]
        lines += [f"{STATUS_MARKS[t.status]} {t.content}" for t in self.todos]
        return "\n".join(lines)


class TodosProjection:
    """The task panel: follows `todo/write`, empties on `turn/start`, ignores compaction."""

    name: ClassVar[str] = "todos"
    state_version: ClassVar[int] = 1
    empties_on_turn_start: ClassVar[bool] = True
    """A new user request clears the panel, so an old list never lingers under a new question."""

    def init(self) -> TodoPanel:
        """Return an empty panel."""
        return TodoPanel()

    def apply(self, state: TodoPanel, event: Event) -> TodoPanel:
        """Replace the list on `todo/write`; empty it on `turn/start` (when the view does)."""
        if isinstance(event, TodoWritten):
            return TodoPanel(todos=event.data.todos, seq=event.seq)
        if self.empties_on_turn_start and isinstance(event, TurnStarted):
            return TodoPanel()
        return state

    def view(self, state: TodoPanel) -> TodoPanel:
        """Return the panel (it is immutable)."""
        return state


class LatestTodosProjection(TodosProjection):
    """The latest recorded todo list, across turns: what the compactor copies from."""

    name: ClassVar[str] = "latest_todos"
    empties_on_turn_start: ClassVar[bool] = False


def count_statuses(todos: Sequence[TodoItem]) -> dict[TodoStatus, int]:
    """Count items by status, every status present."""
    counts: dict[TodoStatus, int] = dict.fromkeys(TODO_STATUSES, 0)
    for t in todos:
        counts[t.status] += 1
    return counts
