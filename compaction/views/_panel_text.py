"""The task panel's words, standard library only: the status marks and the counts line.

`TodoPanel` (and the shared task board) words its lines with these, and so does the CLI's fast
path, which draws `harness todos LOG` without loading pydantic or rich.

Invariants: a panel's counts line names every status, in the order completed, in progress,
pending; each item's line is its status mark, a space and its content.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from compaction.contract import TodoStatus

STATUS_MARKS: Final[dict[TodoStatus, str]] = {
    "completed": "✓",
    "in_progress": "◉",
    "pending": "○",
}
"""The status dot shown before each item of the task panel."""


def counts_line(statuses: Iterable[str]) -> str:
    """Return e.g. ``2 completed, 1 in progress, 3 pending`` for the items' statuses."""
    seen = list(statuses)
    return (
        f"{seen.count('completed')} completed, {seen.count('in_progress')} in progress, "
        f"{seen.count('pending')} pending"
    )
