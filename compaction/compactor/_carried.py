"""What a Checkpoint carries from the log, by code: the unfinished todo items and shared tasks.

Every ``pending`` item goes into Pending Jobs and every ``in_progress`` item into Current Work,
verbatim and in list order; the shared list's tasks follow, in creation order. Only when a
Checkpoint cannot fit the window at all does an item longer than the tools now accept
(`MAX_ITEM_CHARS`) travel as its head and a note naming its length and where it is whole
(`clip_carried`), so one item can never disable compaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from compaction.contract import MAX_ITEM_CHARS
from compaction.events import TaskRef, TodoItem
from compaction.views.board import TaskBoard


def unfinished(todos: Sequence[TodoItem]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return the pending and the in-progress item texts of a list, each in list order."""
    pending = tuple(t.content for t in todos if t.status == "pending")
    current = tuple(t.content for t in todos if t.status == "in_progress")
    return pending, current


CARRIED_HEAD: Final = 1000
"""Characters of an over-long carried item the Checkpoint keeps, before the clipping note."""


def clip_carried(text: str, seq: int | None) -> str:
    """Return a carried item as the Checkpoint holds it: whole, or head and note when too long.

    An item over `MAX_ITEM_CHARS` (one recorded before the tools capped items, or imported)
    keeps its first `CARRIED_HEAD` characters and a note with its length and the seq of the
    event that holds it whole, so one item can never make the carried list outgrow the window.
    """
    if len(text) <= MAX_ITEM_CHARS:
        return text
    where = f"harness log LOG --seq {seq}" if seq is not None else "the session log"
    note = f"[... clipped: the item has {len(text)} characters; read it whole with {where}]"
    return f"{text[:CARRIED_HEAD]} {note}"


def clip_task(task: TaskRef) -> TaskRef:
    """Return a carried task with its subject clipped as `clip_carried` clips an item."""
    if len(task.subject) <= MAX_ITEM_CHARS:
        return task
    text = clip_carried(task.subject, None).replace(
        "the session log", f"task_list (task {task.id})"
    )
    return task.model_copy(update={"subject": text})


def unfinished_tasks(board: TaskBoard) -> tuple[tuple[TaskRef, ...], tuple[TaskRef, ...]]:
    """Return the shared list's pending and in-progress tasks, each in creation order."""
    return board.unfinished("pending"), board.unfinished("in_progress")
