"""Claude Code's shared task tools (``TaskCreate`` / ``TaskUpdate``) as task events.

Claude Code 2.1 keeps a shared task list with its own ids: ``TaskCreate`` (``subject``,
``description``, ``activeForm``) and ``TaskUpdate`` (``taskId``, ``status``, ``owner``,
``addBlockedBy``...). `TaskFolder` writes each call as a `task/create` or `task/update` event
carrying the task's whole new state, under Claude Code's own ids.

Invariants: a call naming an unknown id, or changing nothing, writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compaction.events import (
    TASK_ID_PATTERN,
    TASK_STATUSES,
    Task,
    TaskCreateData,
    TaskUpdateData,
)
from compaction.importers._base import EventBuilder
from compaction.importers._recorded_calls import RecordedCall

_TASK_CREATED = re.compile(r"Task #(\S+?) created")


AGENT = "main"
"""The agent that task events of the main conversation name (sidechains are skipped)."""


@dataclass
class TaskFolder:
    """Claude Code's task tools written as `task/create` / `task/update` events, by its own ids.

    ``TaskCreate`` creates a task under the id its result gave (``toolUseResult.task.id``, or
    ``Task #N created`` in the text); ``TaskUpdate`` changes status (``deleted`` included),
    subject, description and owner, and ``addBlockedBy`` / ``addBlocks`` add blockers, each event
    carrying the task's whole new state. A call naming an unknown id, or changing nothing,
    writes nothing.
    """

    builder: EventBuilder

    def create(self, call: RecordedCall) -> None:
        """Write the task a TaskCreate call made."""
        args = call.input if isinstance(call.input, Mapping) else {}
        subject, description = args.get("subject"), args.get("description")
        task_id = self._new_id(call)
        report = self.builder.report
        if not isinstance(subject, str):
            report.skip("TaskCreate call without a subject")
        elif not re.match(TASK_ID_PATTERN, task_id) or self.builder.tasks().get(task_id):
            report.skip("TaskCreate call with an unusable or repeated id")
        else:
            desc = description if isinstance(description, str) and description.strip() else None
            task = Task(id=task_id, subject=subject, description=desc)
            self.builder.task(TaskCreateData(agent=AGENT, task=task))

    def _new_id(self, call: RecordedCall) -> str:
        meta = call.meta if isinstance(call.meta, Mapping) else {}
        task = meta.get("task")
        if isinstance(task, Mapping) and task.get("id") is not None:
            return str(task["id"])
        found = _TASK_CREATED.search(call.result_text())
        if found:
            return found.group(1)
        return self.builder.tasks().next_id

    def update(self, call: RecordedCall) -> None:
        """Write the changes of a TaskUpdate call, and of the tasks its ``addBlocks`` blocks."""
        args = call.input if isinstance(call.input, Mapping) else {}
        task_id = str(args.get("taskId", ""))
        board = self.builder.tasks()
        task = board.get(task_id)
        if task is None:
            self.builder.report.skip("TaskUpdate call for an unknown task id")
            return
        changes: dict[str, Any] = {}
        if args.get("status") in TASK_STATUSES:
            changes["status"] = args["status"]
        for key in ("subject", "description", "owner"):
            if isinstance(args.get(key), str):
                changes[key] = args[key]
        added = [str(b) for b in _ids(args.get("addBlockedBy")) if board.get(str(b))]
        if added:
            changes["blocked_by"] = tuple(dict.fromkeys([*task.blocked_by, *added]))
        self._write(task, changes)
        for other_id in _ids(args.get("addBlocks")):
            other = board.get(str(other_id))
            if other is not None and task_id not in other.blocked_by:
                self._write(other, {"blocked_by": (*other.blocked_by, task_id)})

    def _write(self, task: Task, changes: Mapping[str, Any]) -> None:
        new = task.model_copy(update=dict(changes))
        if new != task:
            new = new.model_copy(update={"version": task.version + 1})
            self.builder.task(TaskUpdateData(agent=AGENT, task=new))


def _ids(raw: object) -> list[object]:
    return [v for v in raw if isinstance(v, str | int)] if isinstance(raw, list) else []
