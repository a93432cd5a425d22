"""Next Step: what the agent does first after a Checkpoint, held to the code-owned sections.

Whatever wrote it, a Next Step follows Pending Jobs and Current Work, whether they hold todo
items, shared tasks or both:

- the **target** is the work in progress: the first ``in_progress`` todo item, else the calling
  agent's own ``in_progress`` task, else the first ``in_progress`` task; with nothing in
  progress, the first ``pending`` todo item, else the first pending task whose blockers are all
  finished (the agent's own or an unowned one first), else the first pending task. A task is
  named by id and subject (``task 2 "Write the tests"``);
- the written text is kept when it names the target (a task by its id, a todo item by half of
  its words); otherwise the target is named first and the text follows as what was planned;
- it is never a question, never names a completed todo item or task, and never says the work
  is done while anything is open: such text is replaced by the target (with nothing open, by
  the latest request, or nothing: an earlier Next Step about finished work is not carried);
- it is clipped at a sentence or clause end (`clip_at_clause`) and judged as clipped (what
  the Checkpoint will show), except the question check, made first, so a clipped question
  still counts as one;
- while a job runs (a sub-agent or background command), a text with nothing open that says
  the work is done, or says nothing, becomes "wait for the running jobs", naming them.

A resume decision (``continue`` / ``await_user``, decided elsewhere) can be handed in: with
``await_user`` the Next Step waits for the user and names the open work as what follows.

Invariants: `next_step` is a pure function of its inputs; its result never ends in a question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from compaction.events import JobRef, Task, TodoItem
from compaction.summarizers._entries import clip_at_clause, entry

Resume = Literal["continue", "await_user"]
"""A resume decision: go on with the open work, or wait for the user first."""

TASK_CHARS: Final = 300
"""Characters of a task Next Step names: the whole task stands in Pending Jobs or Current Work
(code-owned), so a very long one is named by its head and does not take the narrative budget."""
PLANNED_CHARS: Final = 400
"""Characters of the written text kept after the target when it is about something else."""
FINISHED_HEAD: Final = 40
"""Characters of a completed item's head that show a text names it."""
_DONE = re.compile(
    r"\b(?:done|finished|all (?:tests|checks|steps) pass(?:ed)?|ready for review|is green|"
    r"nothing (?:left|else) to do|steps? completed|task(?:s)? (?:is |are )?complete[d]?)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}")
_STOP: Final = frozenset(
    (
        *("this", "that", "with", "from", "into", "then", "them", "they", "will", "have"),
        *("what", "when", "where", "which", "while", "there", "their", "these", "those"),
        *("about", "after", "before", "again", "also", "each", "make", "more", "most", "some"),
        *("such", "than", "very", "just", "only", "other", "over", "under", "your", "yours"),
        *("ours", "task", "tasks"),
    )
)


def is_question(text: str) -> bool:
    """Tell whether text asks something: a line of it ends with a question mark."""
    return any(line.strip().rstrip("*_)\"' ").endswith("?") for line in text.split("\n"))


def claims_done(text: str) -> bool:
    """Tell whether text says the work is done (done, finished, ready for review, ...)."""
    return bool(_DONE.search(text))


def _stems(text: str) -> set[str]:
    return {w.lower()[:5] for w in _WORD.findall(text) if w.lower() not in _STOP}


def is_about(text: str, task: str) -> bool:
    """Tell whether text is about a task: it names at least half of the task's words."""
    words = _stems(task)
    if not words:
        return task.strip().lower() in text.lower()
    return len(words & _stems(text)) * 2 >= len(words)


def names_task_id(text: str, task_id: str) -> bool:
    """Tell whether text names a task by its id (``task 3``, ``Task #3``, ``#3``)."""
    pattern = rf"(?:\btask\s*#?|#){re.escape(task_id)}(?![\w-])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class Target:
    """The work a Next Step must name: its display name, subject, task id (None for a todo)."""

    name: str
    subject: str
    task_id: str | None
    in_progress: bool

    def named_by(self, text: str) -> bool:
        """Tell whether text names this work: a task by its id, a todo item by half its words."""
        if self.task_id is not None:
            return names_task_id(text, self.task_id)
        return is_about(text, self.subject)


def task_name(task: Task) -> str:
    """Return how Next Step names a task: ``task 2 "Write the tests"`` (subject clipped)."""
    subject = clip_at_clause(" ".join(task.subject.split()), TASK_CHARS)
    return f"task {task.id} {json.dumps(subject, ensure_ascii=False)}"


def _own_first(tasks: Sequence[Task], agent: str | None) -> list[Task]:
    return sorted(tasks, key=lambda t: 0 if t.owner in (agent, None) else 1)


def _ready(task: Task, tasks: Sequence[Task]) -> bool:
    finished = {t.id for t in tasks if t.status in ("completed", "deleted")}
    known = {t.id for t in tasks}
    return all(b in finished or b not in known for b in task.blocked_by)


def target(todos: Sequence[TodoItem], tasks: Sequence[Task], agent: str | None) -> Target | None:
    """Return the work Next Step must name (the rule of the module docstring), or None."""
    for item in todos:
        if item.status == "in_progress":
            name = clip_at_clause(item.content, TASK_CHARS)
            return Target(name, item.content, None, in_progress=True)
    running = [t for t in tasks if t.status == "in_progress"]
    own = [t for t in running if t.owner == agent] if agent else []
    if own or running:
        task = (own or running)[0]
        return Target(task_name(task), task.subject, task.id, in_progress=True)
    for item in todos:
        if item.status == "pending":
            name = clip_at_clause(item.content, TASK_CHARS)
            return Target(name, item.content, None, in_progress=False)
    waiting = [t for t in tasks if t.status == "pending"]
    ready = _own_first([t for t in waiting if _ready(t, tasks)], agent)
    if ready or waiting:
        task = (ready or waiting)[0]
        return Target(task_name(task), task.subject, task.id, in_progress=False)
    return None


def job_names(jobs: Sequence[JobRef]) -> str:
    """Return how Next Step names running jobs: ``job b7 "npm test"``, the first three."""
    named = [
        f"job {j.id} {json.dumps(clip_at_clause(j.runs, 120), ensure_ascii=False)}" for j in jobs
    ]
    more = f" and {len(jobs) - 3} more" if len(jobs) > 3 else ""
    return ", ".join(named[:3]) + more


def names_finished(text: str, todos: Sequence[TodoItem], tasks: Sequence[Task]) -> bool:
    """Tell whether text names a completed todo item or task (by id, or by its head)."""
    flat = _norm(text)
    heads = [_norm(t.content) for t in todos if t.status == "completed"]
    heads += [_norm(t.subject) for t in tasks if t.status == "completed"]
    if any(len(h) >= 12 and h[:FINISHED_HEAD] in flat for h in heads):
        return True
    open_ids = {t.id for t in tasks if t.status in ("pending", "in_progress")}
    done = [t.id for t in tasks if t.status == "completed" and t.id not in open_ids]
    return any(names_task_id(text, task_id) for task_id in done)


def next_step(
    text: str,
    todos: Sequence[TodoItem],
    latest_request: str,
    *,
    tasks: Sequence[Task] = (),
    agent: str | None = None,
    resume: Resume | None = None,
    limit: int = 800,
    jobs: Sequence[JobRef] = (),
) -> str:
    """Return a Next Step that agrees with the todo items and the shared tasks.

    Args:
        text: the Next Step as written (by the extractive summarizer, or a model).
        todos: the latest todo list.
        latest_request: the latest request a person typed in the span (empty when none).
        tasks: the shared task list's live tasks, in creation order.
        agent: the calling agent, whose own task in progress comes first.
        resume: the resume decision, when one was made; None decides from the tasks alone.
        limit: the most characters of written text kept (cut at a sentence or clause end);
            a named task is bounded by `TASK_CHARS` instead.
        jobs: the jobs still running (sub-agents, background commands): while one runs, the
            work is never called done.
    """
    asks = is_question(text)
    text = clip_at_clause(text, limit)  # judged as it will stand in the Checkpoint
    goal = target(todos, tasks, agent)
    misleading = asks or (
        goal is not None and (claims_done(text) or names_finished(text, todos, tasks))
    )
    if resume == "await_user":
        return entry("await_user", task=goal.name if goal else "")
    if goal is None:
        if jobs and (asks or claims_done(text) or not text.strip()):
            return entry("await_jobs", jobs=job_names(jobs))
        if not asks and not names_finished(text, todos, tasks):
            return text
        return entry("follow_request") if latest_request.strip() else ""
    if text.strip() and not misleading and (not goal.in_progress or goal.named_by(text)):
        return text
    if goal.in_progress:
        flat = " ".join(text.split())
        planned = "" if misleading else clip_at_clause(flat, min(PLANNED_CHARS, limit))
        return entry("continue_task", task=goal.name, planned=planned)
    return entry("start_task", task=goal.name)
