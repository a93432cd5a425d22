"""The rules a `task_update` must keep, checked against the board as stored.

`plan_update` returns a task's new state or raises `ToolInputError` naming every rule the call
breaks (the rules are listed in `compaction.tools.tasks`): the task exists and is live, the
caller saw its current version, another agent's task is taken in the same call, blockers exist,
make no cycle and are done before a task starts or completes.

Invariant: a rejected update changes nothing; an accepted one is the old task with the changes
applied and its version one higher.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from compaction.errors import ToolInputError
from compaction.events import Task
from compaction.tools.tasks import TASK_UPDATE, list_line
from compaction.views.board import TaskBoard, quoted

_SHOWN_IDS: Final = 20
"""Task ids a no-such-task rejection lists before ``...``."""


def plan_update(
    board: TaskBoard,
    task_id: str,
    changes: Mapping[str, Any],
    agent: str,
    seen_version: int | None = None,
) -> Task | None:
    """Check an update against the board; return the task's new state (None: nothing changes).

    Args:
        board: the current board, read under the log's lock.
        task_id: the task to change.
        changes: the fields to set (from `read_update`); a ``version`` in it is the version the
            caller says it saw, checked instead of `seen_version`.
        agent: the agent making the call.
        seen_version: the version of the task this agent was last shown, if any.

    Raises:
        ToolInputError: the update breaks a rule; nothing may be appended.
    """
    task = board.get(task_id)
    if task is None:
        ids = [t.id for t in board.live()]
        known = ", ".join(ids[:_SHOWN_IDS]) + (", ..." if len(ids) > _SHOWN_IDS else "")
        where = f"the tasks are {known}" if ids else "there are no tasks yet"
        raise ToolInputError(TASK_UPDATE, [f"no task {quoted(task_id)}; {where} (call task_list)"])
    if task.status == "deleted":
        raise ToolInputError(TASK_UPDATE, [f"task {task.id} was deleted; it can no longer change"])
    changes = dict(changes)
    claimed = changes.pop("version", None)
    if claimed is not None and claimed != task.version:
        raise ToolInputError(
            TASK_UPDATE,
            [
                f"task {task.id} is at v{task.version}, not v{claimed}: it changed since you saw "
                f"it; it is now: {list_line(task)}. Check the new state and call again with "
                f'"version": {task.version} if your change still applies'
            ],
        )
    if claimed is None and seen_version is not None and seen_version != task.version:
        raise ToolInputError(
            TASK_UPDATE,
            [
                f"task {task.id} changed since you last listed it; it is now: {list_line(task)}. "
                "Check the new state and call again if your change still applies"
            ],
        )
    new = task.model_copy(update=dict(changes))
    if new.status == "in_progress" and new.owner is None:
        new = new.model_copy(update={"owner": agent})
    problems = _ownership(task, changes, agent) + _blocker_rules(
        board, new, checked="blocked_by" in changes
    )
    if problems:
        raise ToolInputError(TASK_UPDATE, problems)
    if new == task:
        return None
    return new.model_copy(update={"version": task.version + 1})


def _ownership(task: Task, changes: Mapping[str, Any], agent: str) -> list[str]:
    if task.owner is None or task.owner == agent:
        return []
    if set(changes) <= {"owner"} or changes.get("owner") == agent:
        return []
    return [
        f"task {task.id} is owned by {quoted(task.owner)}; to change it, take it in the same "
        f'call ("owner": {quoted(agent)}) or leave it to its owner'
    ]


def _blocker_rules(board: TaskBoard, new: Task, *, checked: bool) -> list[str]:
    """Check the blockers: the ids given now (`checked`) exist and make no cycle; all are done.

    A blocker deleted after it was set counts as done, so a task never gets stuck behind it.
    """
    problems: list[str] = []
    for blocker in new.blocked_by if checked else ():
        other = board.get(blocker)
        if blocker == new.id:
            problems.append(f"blocked_by: task {new.id} cannot block itself")
        elif other is None:
            problems.append(f"blocked_by: no task {quoted(blocker)}")
        elif other.status == "deleted":
            problems.append(f"blocked_by: task {blocker} was deleted")
    if problems:
        return problems
    cycle = find_cycle(board, new)
    if cycle:
        return [f"blocked_by would make a cycle: {' -> '.join(cycle)}"]
    if new.status in ("in_progress", "completed"):
        waiting = [
            f"{b} ({other.status})"
            for b in new.blocked_by
            if (other := board.get(b)) is not None and other.status in ("pending", "in_progress")
        ]
        if waiting:
            return [
                f"task {new.id} is blocked by {', '.join(waiting)}; finish those first or remove "
                'them from "blocked_by"'
            ]
    return []


def find_cycle(board: TaskBoard, new: Task) -> list[str]:
    """Return a cycle through `new` in the blocked-by graph (ids, closing on `new`), or []."""
    edges = {t.id: t.blocked_by for t in board.live()}
    edges[new.id] = new.blocked_by
    parent = dict.fromkeys(new.blocked_by, new.id)
    queue = list(new.blocked_by)
    while queue:
        current = queue.pop(0)
        if current == new.id:
            path, node = [new.id], parent[new.id]
            while node != new.id:
                path.append(node)
                node = parent[node]
            return [new.id, *reversed(path)]
        for nxt in edges.get(current, ()):
            if nxt not in parent:
                parent[nxt] = current
                queue.append(nxt)
    return []
