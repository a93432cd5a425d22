"""The strategies compared on the same sessions: where the todo list lives, how modes switch.

Todo placement, framed as the brief frames it:

- **A** (``todos="message"``): the todo list is appended to the history as a chat message on
  every write: the tool's result echoes the whole list (as LangChain's `write_todos` and
  deepagents do). No ``todo/write`` event exists, so compaction has no code-owned tasks: the
  Checkpoint's Pending Jobs and Current Work are empty and the summarizer alone may keep them.
- **B** (``todos="event"``): this toolkit. ``todo/write`` events stay outside the message
  stream; the tool answers one line of counts; checkpoints copy the unfinished tasks by code.
- **C** (``todos="system"``): the current todo list is injected at the end of the system prompt
  on every request, and the tool answers one line of counts.

Mode switching (all on top of B), for the session's Plan-mode phase: ``switch="message"``
keeps the system prompt and appends a mode message to the conversation; ``switch="rebuild"``
rebuilds the system prompt for the new mode, with ``tools="stable"`` (the catalog identical
across modes) or ``tools="filtered"`` (todo_write removed in Plan mode). B itself uses the
prompt builder's defaults (mode message, stable tools).

A strategy changes the log the replayer feeds (`Strategy.transform`), the system prompt
(`Strategy.system_suffix`), and what a request shows of the todo list (`visible_todos`); the
prompt builder, the compactor and the serialization are the same for all.

Invariants: a strategy is plain data (frozen); the transform is a pure function of the payloads;
model-facing text comes from ``harness/simulation/templates``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Literal

import jinja2

from compaction import (
    CompactionError,
    EventData,
    Message,
    TodoItem,
    TodoStatus,
    TodoWriteData,
    parse_checkpoint,
)
from compaction.events import TaskCreateData, TaskUpdateData
from compaction.views import checkpoint_preamble
from prompts import SwitchStrategy, ToolStrategy

TodoPlacement = Literal["message", "event", "system"]
"""Where the todo list reaches the model: A, B or C."""

TODO_TOOL = "todo_write"
TODO_TOOL_NAMES: frozenset[str] = frozenset({TODO_TOOL, "TodoWrite", "write_todos", "update_plan"})
"""Full-overwrite todo tools whose arguments are read as the visible list: ours, Claude
Code's (in imported sessions), LangChain's and Gemini CLI's ``write_todos``, Codex's
``update_plan``."""
_LIST_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("todos", ("content", "description")),
    ("plan", ("step",)),
)
"""Where a todo tool's arguments hold the list, and the item's text: ``todos`` with
``content`` (ours, Claude Code's, LangChain's) or ``description`` (Gemini CLI's), ``plan`` with
``step`` (Codex's ``update_plan``), as the importers read them."""
_SYSTEM_HEADING = "# Current todo list"
_ITEM_PREFIX = "- ["


@cache
def _templates() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("harness.simulation", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_todos(template: str, todos: Sequence[TodoItem]) -> str:
    """Render a todo list with one of the benchmark templates (no trailing newline)."""
    return _templates().get_template(template).render(todos=todos).rstrip("\n")


@dataclass(frozen=True)
class Strategy:
    """One way of running the same session.

    Args:
        name: short key used in results and charts.
        title: one line for the report.
        todos: where the todo list lives (A ``message``, B ``event``, C ``system``).
        switch: how a mode change reaches the model (``rebuild`` or ``message``).
        tools: the tool strategy of the prompt builder (``stable`` or ``filtered``).
        compaction: compact when the policy says; False for the no-compaction baseline.
    """

    name: str
    title: str
    todos: TodoPlacement = "event"
    switch: SwitchStrategy = "message"
    tools: ToolStrategy = "stable"
    compaction: bool = True

    def transform(self, payloads: Iterable[EventData]) -> list[EventData]:
        """Return the log this strategy replays (A: the list as a message, no todo events).

        A keeps the shared task list only in the messages too: its task events are dropped,
        so no Checkpoint copies a task by code.
        """
        if self.todos != "message":
            return list(payloads)
        out: list[EventData] = []
        latest: tuple[TodoItem, ...] = ()
        for p in payloads:
            if isinstance(p, TodoWriteData):
                latest = p.todos
                continue
            if isinstance(p, TaskCreateData | TaskUpdateData):
                continue
            if isinstance(p, Message) and p.role == "tool" and _answers_todo(out, p):
                text = render_todos("todo_message.md.j2", latest)
                p = p.model_copy(update={"content": text})
            out.append(p)
        return out

    def system_suffix(self, todos: Sequence[TodoItem]) -> str | None:
        """Return the block appended to the system prompt (C: the current list), if any."""
        if self.todos != "system":
            return None
        return render_todos("todo_system.md.j2", todos)


def _answers_todo(history: Sequence[EventData], result: Message) -> bool:
    """Tell whether a tool result answers a todo_write call of the latest assistant message."""
    for p in reversed(history):
        if isinstance(p, Message) and p.role == "assistant":
            calls = p.tool_calls or ()
            return any(c.id == result.tool_call_id and c.function.name == TODO_TOOL for c in calls)
    return False


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("A", "todo list appended to the history as a chat message", todos="message"),
        Strategy("B", "this toolkit: todo/write events + checkpoints with code-owned tasks"),
        Strategy("C", "todo list injected into the system prompt every request", todos="system"),
        Strategy(
            "switch:rebuild+filtered",
            "B; mode switch rebuilds the system prompt, todo_write filtered out in Plan mode",
            switch="rebuild",
            tools="filtered",
        ),
        Strategy(
            "switch:rebuild",
            "B; mode switch rebuilds the system prompt, tools stable across modes",
            switch="rebuild",
        ),
        Strategy("none", "B without compaction (the baseline)", compaction=False),
    )
}
"""Every strategy the benchmark runs, by name."""

TODO_STRATEGIES: tuple[str, ...] = ("A", "B", "C")
"""The todo placements compared."""

SWITCH_VARIANTS: dict[str, str] = {
    "mode message + stable tools": "B",
    "rebuild + stable tools": "switch:rebuild",
    "rebuild + filtered tools": "switch:rebuild+filtered",
}
"""The mode-switch variants and the strategy that runs each (B is mode message + stable)."""

BASELINE = "none"
"""The no-compaction baseline."""


# --- what a request shows of the todo list ---------------------------------------------------


def _parse_items(text: str) -> dict[str, TodoStatus]:
    """Read ``- [status] content`` lines (the benchmark templates) into a list."""
    out: dict[str, TodoStatus] = {}
    for line in text.splitlines():
        if not line.startswith(_ITEM_PREFIX) or "] " not in line:
            continue
        status, content = line[len(_ITEM_PREFIX) :].split("] ", 1)
        if status in ("pending", "in_progress", "completed"):
            out[content] = status  # type: ignore[assignment]
    return out


@lru_cache(maxsize=8192)
def _from_call(arguments: str) -> dict[str, TodoStatus] | None:
    try:
        args = json.loads(arguments)
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    for key, text_keys in _LIST_KEYS:
        items = args.get(key)
        if isinstance(items, list):
            return _list_items(items, text_keys)
    return None


_STATUSES = frozenset({"pending", "in_progress", "completed"})
_LEFT_OUT = frozenset({"cancelled"})
"""Gemini CLI's status for an item dropped from the list (the importer leaves it out too)."""


def _list_items(items: list[Any], text_keys: tuple[str, ...]) -> dict[str, TodoStatus] | None:
    """Read a list's items; None when it is no list the tool took (an unknown status, say)."""
    out: dict[str, TodoStatus] = {}
    for item in items:
        if not isinstance(item, dict):
            return None
        text = next((item[k] for k in text_keys if isinstance(item.get(k), str)), None)
        status = item.get("status")
        if text is None or status not in _STATUSES | _LEFT_OUT:
            return None  # the tool refused it: the list in sight is still the one before
        if status in _STATUSES:
            out[text.strip()] = status
    return out


TASK_CREATE_NAMES: frozenset[str] = frozenset({"task_create", "TaskCreate"})
TASK_UPDATE_NAMES: frozenset[str] = frozenset({"task_update", "TaskUpdate"})
_CREATED = re.compile(r"^(?:Created task |Task #)([A-Za-z0-9_.:-]{1,64}?)(?::| )")
"""A task tool's answer that names the new task: ours (``Created task 3: ...``) or Claude
Code's (``Task #3 created successfully: ...``)."""


def created_task_id(answer: str) -> str | None:
    """Return the id a task-create answer names (ours or Claude Code's), or None."""
    hit = _CREATED.match(answer)
    return hit.group(1) if hit else None


def update_args(arguments: str) -> tuple[str, str] | None:
    """Return (task id, status) of a task-update call's arguments, if it sets a status."""
    try:
        args = json.loads(arguments)
        task, status = args.get("id", args.get("taskId")), args.get("status")
    except (ValueError, AttributeError):
        return None
    if isinstance(task, str | int) and isinstance(status, str):
        return str(task), status
    return None


def checkpoint_body(text: str) -> str | None:
    """Return the Checkpoint a user message carries after its preamble, or None if it is none.

    The preamble names the span it replaced, so only its first sentence is fixed; it is one
    paragraph, and the Checkpoint follows it after a blank line.
    """
    opening = checkpoint_preamble().split(". ", 1)[0]
    if not text.startswith(opening) or "\n\n" not in text:
        return None
    return text.split("\n\n", 1)[1]


def visible_tasks(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Return the shared tasks a model would read in an OpenAI-format request, id -> status.

    The latest statement wins: a Checkpoint's tasks (Pending Jobs: ``pending``, Current Work:
    ``in_progress``) replace what came before; then each task-create answer (``pending``) and
    each task-update call that sets a status, in order.
    """
    creates: set[str] = set()
    state: dict[str, str] = {}
    for m in messages:
        content = m.get("content")
        text = content if isinstance(content, str) else ""
        if m["role"] == "user" and (body := checkpoint_body(text)) is not None:
            found = _tasks_from_checkpoint(body)
            if found is not None:
                state = dict(found)
        elif m["role"] == "tool" and m.get("tool_call_id") in creates:
            created = created_task_id(text)
            if created:
                state[created] = "pending"
        for call in m.get("tool_calls") or ():
            name = call["function"]["name"]
            if name in TASK_CREATE_NAMES:
                creates.add(call["id"])
            elif name in TASK_UPDATE_NAMES:
                update = update_args(call["function"]["arguments"])
                if update:
                    state[update[0]] = update[1]
    return state


@lru_cache(maxsize=256)
def _tasks_from_checkpoint(text: str) -> tuple[tuple[str, str], ...] | None:
    try:
        checkpoint = parse_checkpoint(text)
    except CompactionError:
        return None
    return tuple(
        [(t.id, "pending") for t in checkpoint.pending_tasks]
        + [(t.id, "in_progress") for t in checkpoint.current_tasks]
    )


def recorded_todos(arguments: str) -> tuple[TodoItem, ...]:
    """Return the list a full-overwrite todo call wrote, read leniently (text and status).

    For other agents' tools (any of `TODO_TOOL_NAMES`: Claude Code's ``TodoWrite`` items also
    hold ``activeForm``, Gemini CLI's name the text ``description``, Codex's ``update_plan``
    holds a ``plan`` of ``step``s): an item with an unknown status (Gemini CLI's ``cancelled``)
    is left out, as the importers leave it; arguments that are not such a list give ``()``.
    """
    return todo_call_list(arguments) or ()


def todo_call_list(arguments: str) -> tuple[TodoItem, ...] | None:
    """Return the list a todo call writes, or None when its arguments are no list a tool takes.

    Like `recorded_todos`, but tells an empty list (``()``) from a refused call (None: an item
    without text, a status outside the three and Gemini CLI's ``cancelled``), which the
    importers do not record either.
    """
    state = _from_call(arguments)
    if state is None:
        return None
    return tuple(TodoItem(content=c, status=s) for c, s in state.items() if c)


@lru_cache(maxsize=256)
def _from_checkpoint(text: str) -> dict[str, TodoStatus] | None:
    try:
        checkpoint = parse_checkpoint(text)
    except CompactionError:
        return None
    out: dict[str, TodoStatus] = dict.fromkeys(checkpoint.pending_jobs, "pending")
    out.update(dict.fromkeys(checkpoint.current_work, "in_progress"))
    return out


def visible_todos(messages: Sequence[Mapping[str, Any]]) -> dict[str, TodoStatus]:
    """Return the todo list a model would read in an OpenAI-format request, item -> status.

    The latest statement wins: a Checkpoint's Pending Jobs and Current Work, then each later
    todo_write call (A's echoed list says the same as the call it answers); a list injected
    into the system prompt (C) is the current one, so it is read last. Completed items a
    Checkpoint leaves out simply do not appear.
    """
    state: dict[str, TodoStatus] = {}
    system: dict[str, TodoStatus] | None = None
    for m in messages:
        content = m.get("content")
        text = content if isinstance(content, str) else ""
        if m["role"] == "system" and _SYSTEM_HEADING in text:
            system = _parse_items(text.split(_SYSTEM_HEADING, 1)[1])
        elif m["role"] == "user" and (body := checkpoint_body(text)) is not None:
            state = _from_checkpoint(body) or state
        for call in m.get("tool_calls") or ():
            if call["function"]["name"] in TODO_TOOL_NAMES:
                state = _from_call(call["function"]["arguments"]) or state
    return dict(system if system is not None else state)


def retained(expected: Sequence[TodoItem], visible: Mapping[str, TodoStatus]) -> int:
    """Count the expected (unfinished) items visible verbatim at their latest status."""
    return sum(1 for t in expected if visible.get(t.content) == t.status)
