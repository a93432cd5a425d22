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

__all__ = [
    "COMPACT_CONTEXT",
    "TASK_CREATE",
    "TASK_LIST",
    "TASK_UPDATE",
    "TODO_WRITE",
]
