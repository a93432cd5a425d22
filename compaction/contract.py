"""The wire contract: the names every layer reads, standard library only.

One home for the strings and limits that the events, the tools, the invariants and the CLI's
fast path all read: tool names, event names, statuses, origins, size limits and the seq rule.
It imports nothing but the standard library, so the CLI's fast path can read it without
loading pydantic.

Invariants: a name here is the only definition of its value; every other module imports it.
"""

from __future__ import annotations

from typing import Final

TODO_WRITE: Final = "todo_write"
"""The todo tool's name."""
TASK_CREATE: Final = "task_create"
"""The shared task list's create tool."""
TASK_UPDATE: Final = "task_update"
"""The shared task list's update tool."""
TASK_LIST: Final = "task_list"
"""The shared task list's read tool."""
COMPACT_CONTEXT: Final = "compact_context"
"""The model's own compaction tool."""
PLAN_MODE: Final = "plan"
"""The mode whose turns plan: a Plan-mode turn followed by another turn approves its answer."""
PLAN_APPROVE: Final = "plan/approve"
"""The event that records an approved plan."""
JOB_START: Final = "job/start"
"""The event that records a sub-agent or background command started."""
JOB_END: Final = "job/end"
"""The event that records a job ended."""
CARRY_EVENTS: Final = (PLAN_APPROVE, JOB_START, JOB_END)
"""Events a Checkpoint carries from by code and the model's context never shows."""

__all__ = [
    "CARRY_EVENTS",
    "COMPACT_CONTEXT",
    "JOB_END",
    "JOB_START",
    "PLAN_APPROVE",
    "PLAN_MODE",
    "TASK_CREATE",
    "TASK_LIST",
    "TASK_UPDATE",
    "TODO_WRITE",
]
