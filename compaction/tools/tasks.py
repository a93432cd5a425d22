"""The task tools: a shared task list that several agents update by id.

A second tool family beside `todo_write` (which stays one agent's full-overwrite list):

- ``task_create``: ``subject`` and, optionally, ``description``; returns the new task's id.
- ``task_update``: ``id`` and any of ``status``, ``subject``, ``owner``, ``blocked_by``; and,
  optionally, ``version``: the version the caller last saw (``v2`` in a listed line).
- ``task_list``: no parameters; the current tasks, one compact line each.

This module owns their schemas, their validation and every model-facing string; it never
touches a session. `Session.task_create` / `task_update` / `task_list` (or
`compaction.call_tool`) run them: they check the call against the board under the log's lock
and append one `task/create` or `task/update` event holding the task's whole new state.

Model experience (these strings are a contract; tests pin them):

- created: ``Created task 3: "Write the parser" (pending, no owner).``
- updated: ``Updated task 3 (v2): status in_progress, owner "lead".``
- unchanged: ``Task 3 unchanged (v2): it already has those values.``
- listed: ``Tasks: 1 pending, 1 in progress, 0 completed.`` then one line a task,
  ``#2 in_progress "Run the tests" (owner worker-1, blocked by 1, v2)``.
- rejected: ``task_update: rejected, nothing was changed. Fix the arguments and call again:``
  then one ``- `` line per problem, e.g. ``- no task "9"; the tasks are 1, 2 (call task_list)``.

The rules of an update (`compaction.tools.task_rules.plan_update` checks them), for agent *me*
(each breach rejected, nothing appended):

1. The task exists and is not deleted.
2. *Stale*: if the call names a ``version`` and the task is at another one, or (without it)
   *me* was shown the task in this session (by `task_list`, or its own create or update) and
   it has changed since, the call is rejected with the task's current line. ``version`` is
   checked against the board as stored, so it holds across processes (``harness tool``).
3. *Ownership*: a task owned by another agent changes only if the same call takes it
   (``"owner": me``); assigning an owner is always allowed.
4. *Blockers*: a ``blocked_by`` sent names existing, live tasks, never the task itself,
   without a cycle; a task starts (``in_progress``) or completes only when all its blockers are
   completed or deleted (a blocker deleted later counts as done).
5. Starting an unowned task makes *me* its owner.

Invariants: a rejected call appends nothing and changes no view; validation never raises
anything but `ToolInputError`; a task's version grows by one at each recorded update.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from compaction import contract
from compaction.contract import MAX_ITEM_CHARS, lone_surrogate
from compaction.errors import ToolInputError
from compaction.events import TASK_STATUSES, Task
from compaction.tools.arguments import Arguments, load_arguments, show, too_long
from compaction.tools.todos import is_blank
from compaction.views.board import TaskBoard, quoted

TASK_CREATE: Final = contract.TASK_CREATE
TASK_UPDATE: Final = contract.TASK_UPDATE
TASK_LIST: Final = contract.TASK_LIST
TASK_TOOL_NAMES: Final = (TASK_CREATE, TASK_LIST, TASK_UPDATE)
"""The task tools, sorted by name."""
TASK_WRITE_TOOLS: Final = (TASK_CREATE, TASK_UPDATE)
"""The task tools that change the list (Plan mode forbids them)."""

AGENT_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$"
"""An agent (or owner) name: letters, digits, ``_.@-``, up to 64 characters."""
MAX_SUBJECT: Final = 1000
"""Longest subject, in characters: a task is one sentence; details go in the description."""

CREATE_EXAMPLE: Final = '{"subject": "Write the parser", "description": "Parse the --verbose flag"}'
UPDATE_EXAMPLE: Final = '{"id": "3", "status": "in_progress"}'
UPDATE_FIELDS: Final = ("subject", "status", "owner", "blocked_by")
"""The fields `task_update` changes, in the order results name them."""


def is_agent_name(name: object) -> bool:
    """Tell whether `name` is a valid agent or owner name, matched whole (no trailing newline)."""
    return isinstance(name, str) and re.fullmatch(AGENT_PATTERN, name) is not None


def _subject(obj: Mapping[str, Any], key: str, problems: list[str]) -> str | None:
    value = obj[key]
    if not isinstance(value, str):
        problems.append(f"{key} must be a string, not {show(value)}")
        return None
    text = value.strip()
    if is_blank(text):
        problems.append(f"{key} is blank")
        return None
    if len(text) > MAX_SUBJECT:
        problems.append(
            f"{key} is longer than {MAX_SUBJECT} characters; keep it to one sentence and put "
            'details in "description"'
        )
        return None
    if lone_surrogate(text) is not None:
        problems.append(f"{key} must be valid Unicode text")
        return None
    return text


def _unknown(obj: Mapping[str, Any], allowed: Sequence[str], takes: str) -> list[str]:
    return [
        f"unknown parameter {show(key)}; {takes}".encode("utf-8", "backslashreplace").decode()
        for key in obj
        if key not in allowed
    ]


# --- task_create ---------------------------------------------------------------------------------


def parse_task_create(arguments: Arguments) -> tuple[str, str | None]:
    """Validate `task_create` arguments; return (subject, description) or raise `ToolInputError`."""
    obj = load_arguments(arguments, TASK_CREATE, example=CREATE_EXAMPLE, shape='with a "subject"')
    problems = _unknown(
        obj,
        ("subject", "description"),
        'task_create takes "subject" and, optionally, "description"',
    )
    subject = description = None
    if "subject" not in obj:
        problems.append('missing the required parameter "subject" (the task, as a short sentence)')
    else:
        subject = _subject(obj, "subject", problems)
    raw = obj.get("description")
    if raw is not None and not isinstance(raw, str):
        problems.append(f"description must be a string, not {show(raw)}")
    elif isinstance(raw, str):
        if lone_surrogate(raw) is not None:
            problems.append("description must be valid Unicode text")
        elif len(raw.strip()) > MAX_ITEM_CHARS:
            problems.append(too_long("description", len(raw.strip())))
        description = raw.strip() or None
    if problems or subject is None:
        raise ToolInputError(TASK_CREATE, problems)
    return subject, description


def created_line(task: Task) -> str:
    """Return what the model reads after `task_create`: the new id first."""
    return f"Created task {task.id}: {quoted(task.subject)} ({task.status}, no owner)."


# --- task_update ---------------------------------------------------------------------------------


_ID = re.compile(r"^#?([A-Za-z0-9_.:-]{1,64})$")


def _task_id(value: object) -> str | None:
    """Read a task id: a string like ``"3"`` (a leading ``#`` is dropped) or an integer."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return str(value)
    if isinstance(value, str) and (match := _ID.fullmatch(value.strip())):
        return match.group(1)
    return None


def _fields(obj: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Check each field's type; return the changes asked for and the problems found."""
    problems = _unknown(
        obj,
        ("id", *UPDATE_FIELDS, "version"),
        'task_update takes "id", any of "status", "subject", "owner", "blocked_by", and '
        'optionally "version"',
    )
    changes: dict[str, Any] = {}
    if "version" in obj:
        version = obj["version"]
        if isinstance(version, int) and not isinstance(version, bool) and version >= 1:
            changes["version"] = version
        else:
            problems.append(
                f"version must be the task's version as a whole number (2 for v2), not "
                f"{show(version)}"
            )
    if "subject" in obj:
        subject = _subject(obj, "subject", problems)
        if subject is not None:
            changes["subject"] = subject
    if "status" in obj:
        status = obj["status"]
        if status in TASK_STATUSES:
            changes["status"] = status
        else:
            statuses = ", ".join(TASK_STATUSES)
            problems.append(f"status must be one of {statuses}, not {show(status)}")
    if "owner" in obj:
        owner = obj["owner"]
        if owner is None or (isinstance(owner, str) and is_agent_name(owner)):
            changes["owner"] = owner
        else:
            problems.append(
                'owner must be an agent name (letters, digits and "_.@-", up to 64) or null, '
                f"not {show(owner)}"
            )
    if "blocked_by" in obj:
        blockers = _blockers(obj["blocked_by"], problems)
        if blockers is not None:
            changes["blocked_by"] = blockers
    return changes, problems


def _blockers(raw: object, problems: list[str]) -> tuple[str, ...] | None:
    if not isinstance(raw, list | tuple):
        problems.append(f'blocked_by must be an array of task ids like ["1", "2"], not {show(raw)}')
        return None
    ids: list[str] = []
    for i, value in enumerate(raw):
        task_id = _task_id(value)
        if task_id is None:
            problems.append(f'blocked_by[{i}] must be a task id like "1", not {show(value)}')
        elif task_id in ids:
            problems.append(f"blocked_by lists {quoted(task_id)} twice")
        else:
            ids.append(task_id)
    return tuple(ids) if len(ids) == len(raw) else None


def read_update(arguments: Arguments) -> tuple[str, dict[str, Any]]:
    """Validate the shape of `task_update` arguments; return (id, changes) or raise.

    This checks the fields alone; `plan_update` checks them against the board.
    """
    obj = load_arguments(arguments, TASK_UPDATE, example=UPDATE_EXAMPLE, shape='with an "id"')
    changes, problems = _fields(obj)
    task_id = None
    if "id" not in obj:
        problems.insert(
            0,
            'missing the required parameter "id" (the task\'s id, as task_create or '
            "task_list gave it)",
        )
    else:
        task_id = _task_id(obj["id"])
        if task_id is None:
            problems.insert(0, f'id must be a task id like "3", not {show(obj["id"])}')
    if not problems and not set(changes) - {"version"}:
        problems.append(
            'nothing to update: send at least one of "status", "subject", "owner", "blocked_by"'
        )
    if problems or task_id is None:
        raise ToolInputError(TASK_UPDATE, problems)
    return task_id, changes


def updated_line(old: Task, new: Task) -> str:
    """Return what the model reads after an accepted update: the fields that changed."""
    parts = []
    for name in UPDATE_FIELDS:
        before, after = getattr(old, name), getattr(new, name)
        if before != after:
            parts.append(f"{name.replace('_', ' ')} {_value(name, after)}")
    return f"Updated task {new.id} (v{new.version}): {', '.join(parts)}."


def unchanged_line(task: Task) -> str:
    """Return what the model reads after an update that changes nothing."""
    return f"Task {task.id} unchanged (v{task.version}): it already has those values."


def _value(name: str, value: object) -> str:
    if name == "blocked_by":
        ids = list(value) if isinstance(value, tuple) else []
        return ", ".join(ids) if ids else "none"
    if name == "status":
        return str(value)
    return "none" if value is None else quoted(str(value))


# --- task_list -----------------------------------------------------------------------------------


def parse_task_list(arguments: Arguments | None) -> None:
    """Validate `task_list` arguments (none are taken); raise `ToolInputError` otherwise."""
    if arguments is None or (isinstance(arguments, str | bytes) and not arguments.strip()):
        return
    obj = load_arguments(arguments, TASK_LIST, example="{}", shape="with no keys")
    problems = _unknown(obj, (), "task_list takes no parameters; send {}")
    if problems:
        raise ToolInputError(TASK_LIST, problems)


def list_line(task: Task) -> str:
    """Return one task as `task_list` shows it to the model."""
    notes = [f"owner {task.owner}" if task.owner else "no owner"]
    if task.blocked_by:
        notes.append(f"blocked by {', '.join(task.blocked_by)}")
    notes.append(f"v{task.version}")
    return f"#{task.id} {task.status} {quoted(task.subject)} ({', '.join(notes)})"


def list_text(board: TaskBoard) -> str:
    """Return the compact list the model reads: a counts line, then one line per live task."""
    c = board.counts()
    head = (
        f"Tasks: {c['pending']} pending, {c['in_progress']} in progress, "
        f"{c['completed']} completed."
    )
    live = board.live()
    if not live:
        return "No tasks yet. Create one with task_create."
    return "\n".join([head, *(list_line(t) for t in live)])


# --- schemas -------------------------------------------------------------------------------------


def task_parameters_schema(tool: str) -> dict[str, Any]:
    """Return the JSON Schema of a task tool's arguments, closed (`additionalProperties: false`).

    Raises:
        ValueError: `tool` is not one of `TASK_TOOL_NAMES`.
    """
    text = {"type": "string"}
    properties: dict[str, dict[str, Any]]
    required: list[str] = []
    if tool == TASK_CREATE:
        properties = {
            "subject": {**text, "description": "The task, as a short imperative sentence."},
            "description": {**text, "description": "Optional detail: what done looks like."},
        }
        required = ["subject"]
    elif tool == TASK_UPDATE:
        properties = {
            "id": {**text, "description": "The task's id, as task_create or task_list gave it."},
            "status": {"type": "string", "enum": list(TASK_STATUSES)},
            "subject": {**text, "description": "A new subject."},
            "owner": {
                "type": ["string", "null"],
                "description": "The agent that works on it (yourself to take it); null: none.",
            },
            "blocked_by": {
                "type": "array",
                "items": text,
                "description": "The complete list of ids that must be completed first.",
            },
            "version": {
                "type": "integer",
                "description": "Optional: the version you last saw (2 for v2); rejected if "
                "the task has changed since.",
            },
        }
        required = ["id"]
    elif tool == TASK_LIST:
        properties = {}
    else:
        raise ValueError(f"not a task tool: {tool!r}; choose one of {', '.join(TASK_TOOL_NAMES)}")
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema
