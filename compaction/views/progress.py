"""The progress view: how the lists moved against the conversation, for reminders and triggers.

One fold counts the assistant messages of the log and notes the count at the latest
``todo/write``, the latest shared-task write (``task/create``, ``task/update``) and the latest
stale-list reminder (a message of origin ``reminder``); so "assistant messages since the list was
last written" is a subtraction. It also counts the todo items and shared tasks that turned
``completed`` since the latest ``compaction/checkpoint`` (an item that was not completed in the
previous list, by its content; a task whose previous state was not completed), and those since
the latest assistant message (the previous model call), which the task-boundary trigger reads:
it fires only right after a completion.

Invariants: a pure fold of the log, O(1) per event in the log's length; replaying the same events
gives the same view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from compaction.events import (
    CheckpointRecorded,
    Event,
    MessageAdded,
    TaskCreated,
    TaskStatus,
    TaskUpdated,
    TodoStatus,
    TodoWritten,
)


@dataclass
class Progress:
    """The progress fold's state (and view): counts of assistant messages and completions."""

    assistant_messages: int = 0
    """Assistant messages in the whole log."""
    at_todo_write: int = 0
    """`assistant_messages` when the latest ``todo/write`` was recorded."""
    at_task_write: int = 0
    """`assistant_messages` when the latest shared-task write was recorded."""
    at_reminder: int | None = None
    """`assistant_messages` at the latest reminder (None: never reminded)."""
    completed_since_checkpoint: int = 0
    """Todo items and tasks that turned completed since the latest checkpoint."""
    completed_since_call: int = 0
    """Todo items and tasks that turned completed since the latest assistant message (the
    previous model call): the task-boundary trigger fires only right after a completion."""
    todo_statuses: dict[str, TodoStatus] = field(default_factory=dict)
    """Content -> status of the latest todo list."""
    task_statuses: dict[str, TaskStatus] = field(default_factory=dict)
    """Task id -> its latest status."""

    def since_todo_write(self) -> int:
        """Return the assistant messages since the latest todo write or reminder."""
        return self.assistant_messages - max(self.at_todo_write, self.at_reminder or 0)

    def since_task_write(self) -> int:
        """Return the assistant messages since the latest task write or reminder."""
        return self.assistant_messages - max(self.at_task_write, self.at_reminder or 0)


class ProgressProjection:
    """Fold the log into its `Progress` (see the module docstring)."""

    name: ClassVar[str] = "progress"
    state_version: ClassVar[int] = 1

    def init(self) -> Progress:
        """Return the progress of an empty log."""
        return Progress()

    def apply(self, state: Progress, event: Event) -> Progress:
        """Count an assistant message, a list write, a reminder, a completion or a checkpoint."""
        if isinstance(event, MessageAdded):
            if event.data.role == "assistant":
                state.assistant_messages += 1
                state.completed_since_call = 0
            elif event.data.origin == "reminder":
                state.at_reminder = state.assistant_messages
        elif isinstance(event, TodoWritten):
            before = state.todo_statuses
            done = sum(
                1
                for t in event.data.todos
                if t.status == "completed" and before.get(t.content) != "completed"
            )
            state.completed_since_checkpoint += done
            state.completed_since_call += done
            state.todo_statuses = {t.content: t.status for t in event.data.todos}
            state.at_todo_write = state.assistant_messages
        elif isinstance(event, TaskCreated | TaskUpdated):
            task = event.data.task
            if task.status == "completed" and state.task_statuses.get(task.id) != "completed":
                state.completed_since_checkpoint += 1
                state.completed_since_call += 1
            state.task_statuses[task.id] = task.status
            state.at_task_write = state.assistant_messages
        elif isinstance(event, CheckpointRecorded):
            state.completed_since_checkpoint = state.completed_since_call = 0
        return state

    def view(self, state: Progress) -> Progress:
        """Return the state (read it, never change it)."""
        return state
