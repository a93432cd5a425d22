"""What a Checkpoint carries from the log, by code: unfinished items and tasks, jobs, the plan.

Every ``pending`` item goes into Pending Jobs and every ``in_progress`` item into Current Work,
verbatim and in list order; the shared list's tasks follow, in creation order; Current Work then
lists the jobs still running, in start order, and ends with the approved plan, whole up to
`PLAN_CHARS` and past it clipped around its headings and numbered steps (`clip_plan`). Only when a
Checkpoint cannot fit the window at all does an item longer than the tools now accept
(`MAX_ITEM_CHARS`) travel as its head and a note naming its length and where it is whole
(`clip_carried`), so one item can never disable compaction.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from compaction.checkpoint import Checkpoint
from compaction.contract import MAX_ITEM_CHARS
from compaction.errors import ConfigError
from compaction.events import PlanRef, TaskRef, TodoItem
from compaction.secrets import redact_url
from compaction.views import CarriedWork
from compaction.views.board import TaskBoard

if TYPE_CHECKING:
    from compaction.session import Session


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


PLAN_CHARS: Final = 6000
"""Characters of the approved plan a Checkpoint carries whole; a longer plan keeps its headings
and numbered steps, then what else fits in order (`clip_plan`)."""

_STRUCTURE = re.compile(r"^\s{0,3}(#{1,6}\s|\d{1,3}[.)](\s|$))")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def _structural(lines: Sequence[str]) -> list[bool]:
    """Tell, line by line, whether a line is a heading or a numbered step (not inside a fence)."""
    out: list[bool] = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            out.append(False)
        else:
            out.append(not fenced and bool(_STRUCTURE.match(line)))
    return out


def clip_plan(text: str, seq: int, budget: int = PLAN_CHARS) -> PlanRef:
    """Return the approved plan as a Checkpoint carries it: whole when within `budget`.

    A longer plan keeps every heading and numbered step verbatim (however long they are
    together), then the other lines in order while they fit; each run of lines left out
    becomes one ``[... N lines left out: the whole plan is event SEQ]`` line.
    """
    if len(text) <= budget:
        return PlanRef(seq=seq, chars=len(text), text=text)
    lines = text.split("\n")
    keep = _structural(lines)
    room = budget - sum(len(line) + 1 for line, kept in zip(lines, keep, strict=True) if kept)
    for i, line in enumerate(lines):
        if keep[i]:
            continue
        if len(line) + 1 > room:
            break
        keep[i], room = True, room - len(line) - 1
    out: list[str] = []
    left = 0
    for line, kept in zip(lines, keep, strict=True):
        if not kept:
            left += 1
            continue
        if left:
            out.append(_left_out(left, seq))
            left = 0
        out.append(line)
    if left:
        out.append(_left_out(left, seq))
    return PlanRef(seq=seq, chars=len(text), text="\n".join(out), clipped=True)


def _left_out(count: int, seq: int) -> str:
    lines = "line" if count == 1 else "lines"
    return f"[... {count} {lines} left out: the whole plan is event {seq}]"


def carried_plan(carried: CarriedWork, budget: int = PLAN_CHARS) -> PlanRef | None:
    """Return the approved plan a Checkpoint carries now (None: no plan was approved)."""
    if carried.plan is None or carried.plan_seq is None:
        return None
    return clip_plan(carried.plan.text, carried.plan_seq, budget)


def plan_budget(summary_tokens: int) -> int:
    """Return the characters of the plan a Checkpoint carries whole, for a narrative budget.

    As many characters as the narrative's tokens hold (about 4 a token), at most `PLAN_CHARS`:
    a small window keeps the plan's headings and steps, a large one the plan whole.
    """
    return min(PLAN_CHARS, 4 * summary_tokens)


def carried_checkpoint(
    session: Session, *, clip_items: bool, plan_chars: int = PLAN_CHARS
) -> Checkpoint:
    """Return the Checkpoint with its code-owned parts only (an empty narrative).

    With `clip_items`, an item or task subject over `MAX_ITEM_CHARS` travels as its head and
    a note (`clip_carried`): set only when the Checkpoint cannot fit the window otherwise. The
    approved plan is carried whole up to `plan_chars` (`clip_plan`).
    """
    pending, current = unfinished(session.latest_todos)
    pending_tasks, current_tasks = unfinished_tasks(session.tasks)
    if clip_items:
        seq = session.latest_todos_seq
        pending = tuple(clip_carried(t, seq) for t in pending)
        current = tuple(clip_carried(t, seq) for t in current)
        pending_tasks = tuple(clip_task(t) for t in pending_tasks)
        current_tasks = tuple(clip_task(t) for t in current_tasks)
    return Checkpoint(
        pending_jobs=pending,
        current_work=current,
        carried_over=bool(pending or current) and session.todos.seq is None,
        pending_tasks=pending_tasks,
        current_tasks=current_tasks,
        jobs=session.carried.jobs,
        plan=carried_plan(session.carried, plan_chars),
    )


def _shown_path(path: Path) -> str:
    """Return a log's path as the preamble shows it.

    Relative to the working directory inside it; the file name alone inside the system's
    temporary folder (throwaway logs: a replay gives the same bytes wherever it ran); else
    absolute.
    """
    whole = path.resolve()
    for base, keep in ((Path.cwd(), "relative"), (Path(tempfile.gettempdir()), "name")):
        if whole.is_relative_to(base.resolve()):
            return str(whole.relative_to(base.resolve())) if keep == "relative" else path.name
    return str(whole)


def log_argument(session: Session) -> str:
    """Return the ``harness log`` argument that names the session: its path, or URL and id.

    A store URL has its password redacted (`redact_url`); either part is shell-quoted.
    """
    try:
        path = session.path  # a session on one JSONL file
    except ConfigError:
        pass
    else:
        return shlex.quote(_shown_path(path))
    url, _, name = session.where.rpartition("#")
    return f"{shlex.quote(redact_url(url))} --session {shlex.quote(name)}"
