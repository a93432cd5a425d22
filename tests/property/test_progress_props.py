"""The progress view equals a plain-Python reference over generated logs."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from strategies import progress_payloads

from compaction import CheckpointData, Message, TodoWriteData
from compaction.events import Event, TaskCreateData, TaskUpdateData, make_event
from compaction.views.progress import ProgressProjection


def events_of(payloads: list[Any]) -> list[Event]:
    """Turn payloads into events, the "checkpoint" placeholder into a checkpoint event."""
    out: list[Event] = []
    for i, p in enumerate(payloads, start=1):
        if p == "checkpoint":
            p = CheckpointData(
                text="x", first_seq=1, last_seq=i, tokens_before=1, tokens_after=1, summarizer="x"
            )
        out.append(make_event(i, p))
    return out


def reference(payloads: list[Any]) -> tuple[int, int, int, int]:
    """The slow, obvious way: (since todo write, since task write, completions, assistants)."""
    assistants = 0
    last_todo = last_task = last_reminder = 0
    completed = 0
    todo_before: dict[str, str] = {}
    task_before: dict[str, str] = {}
    for p in payloads:
        if isinstance(p, Message) and p.role == "assistant":
            assistants += 1
        elif isinstance(p, Message) and p.origin == "reminder":
            last_reminder = assistants
        elif isinstance(p, TodoWriteData):
            for t in p.todos:
                if t.status == "completed" and todo_before.get(t.content) != "completed":
                    completed += 1
            todo_before = {t.content: t.status for t in p.todos}
            last_todo = assistants
        elif isinstance(p, TaskCreateData | TaskUpdateData):
            if p.task.status == "completed" and task_before.get(p.task.id) != "completed":
                completed += 1
            task_before[p.task.id] = p.task.status
            last_task = assistants
        elif p == "checkpoint":
            completed = 0
    return (
        assistants - max(last_todo, last_reminder),
        assistants - max(last_task, last_reminder),
        completed,
        assistants,
    )


@given(progress_payloads())
def test_progress_matches_the_reference(payloads: list[Any]) -> None:
    """Counts since each write and completions since the last checkpoint, as the reference."""
    projection = ProgressProjection()
    state = projection.init()
    for event in events_of(payloads):
        state = projection.apply(state, event)
    view = projection.view(state)
    got = (
        view.since_todo_write(),
        view.since_task_write(),
        view.completed_since_checkpoint,
        view.assistant_messages,
    )
    assert got == reference(payloads)
