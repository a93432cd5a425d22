"""The stale-list reminder: bring a list the model stopped maintaining back to its attention.

Claude Code injects a todo reminder after ten turns without a write; here, when the latest todo
list or the shared task list has unfinished items and `REMIND_AFTER` (or the host's number of)
assistant messages have passed since that list was last written, `remind_if_stale` appends a
short user message of origin ``reminder`` naming the items in progress and pending. Being in the
log, it is part of every later request at the same place (the prefix stays cache-stable), the
context view and ``harness context`` show it, and a replay gives the same bytes.

The rules: at most one reminder per interval (the count restarts at each reminder and at each
write of the list); the todo list is never brought up in a mode that forbids ``todo_write`` (Plan
mode), nor the shared list in one that forbids ``task_update``; no reminder while the context
ends with an assistant message whose tool calls wait for their results (a user message may not
come between a call and its result). Items are quoted as JSON strings, clipped to `ITEM_CHARS`,
at most `MAX_NAMED` per status.

Invariants: the reminder is a pure function of the log and the mode; a reminder never names a
completed item; nothing is appended when nothing is stale.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from jinja2 import Template

from compaction.checkpoint import template_environment
from compaction.errors import ConfigError
from compaction.events import Event, Message
from compaction.session import Session
from compaction.tools.tasks import TASK_UPDATE
from compaction.tools.todos import TOOL_NAME
from compaction.views.board import quoted

REMIND_AFTER: Final = 10
"""Default number of assistant messages without a write after which a list is stale."""
MAX_NAMED: Final = 5
"""Most items of one status a reminder names."""
ITEM_CHARS: Final = 120
"""Longest item text a reminder quotes."""


@cache
def _template() -> Template:
    return template_environment().get_template("stale_list_reminder.md.j2")


@dataclass(frozen=True)
class _Stale:
    since: int
    current: list[str]
    pending: list[str]

    def data(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "current": self.current[:MAX_NAMED],
            "current_more": max(0, len(self.current) - MAX_NAMED),
            "pending": self.pending[:MAX_NAMED],
            "pending_more": max(0, len(self.pending) - MAX_NAMED),
        }


def _name(text: str) -> str:
    flat = " ".join(text.split())
    return quoted(flat if len(flat) <= ITEM_CHARS else flat[: ITEM_CHARS - 1] + "…")


def _waiting_for_results(session: Session) -> bool:
    messages = session.context.messages
    return bool(messages) and messages[-1].role == "assistant" and bool(messages[-1].tool_calls)


def _stale_todos(session: Session, after: int, mode: str | None) -> _Stale | None:
    since = session.progress.since_todo_write()
    todos = session.latest_todos
    if since < after or session.policy(mode).forbids(TOOL_NAME):
        return None
    current = [_name(t.content) for t in todos if t.status == "in_progress"]
    pending = [_name(t.content) for t in todos if t.status == "pending"]
    return _Stale(since, current, pending) if current or pending else None


def _stale_tasks(session: Session, after: int, mode: str | None) -> _Stale | None:
    since = session.progress.since_task_write()
    if since < after or session.policy(mode).forbids(TASK_UPDATE):
        return None
    board = session.tasks
    current = [f"#{t.id} {_name(t.subject)}" for t in board.unfinished("in_progress")]
    pending = [f"#{t.id} {_name(t.subject)}" for t in board.unfinished("pending")]
    return _Stale(since, current, pending) if current or pending else None


def stale_reminder(
    session: Session,
    *,
    after: int = REMIND_AFTER,
    mode: str | None = None,
    tools: Collection[str] | None = None,
) -> Message | None:
    """Return the reminder due now (a user message of origin ``reminder``), or None.

    Args:
        session: the live session.
        after: assistant messages without a write that make a list stale (default 10).
        mode: judge under this mode instead of the current turn's.
        tools: the tools the model sees (None: the built-in list tools, as the mode allows).
            A list whose tool the model lacks (the host writes it: tasks from a plan or a
            ticket) is still reminded, as the host's list, without asking for a tool call.

    Raises:
        ConfigError: `after` is not a positive integer.
    """
    if isinstance(after, bool) or not isinstance(after, int) or after < 1:
        raise ConfigError(f"a reminder's interval must be a positive integer, not {after!r}")
    if _waiting_for_results(session):
        return None
    todos = _stale_todos(session, after, mode)
    tasks = _stale_tasks(session, after, mode)
    if todos is None and tasks is None:
        return None
    text = _template().render(
        todos=todos.data() if todos else None,
        tasks=tasks.data() if tasks else None,
        todo_tool=tools is None or TOOL_NAME in tools,
        task_tool=tools is None or TASK_UPDATE in tools,
    )
    return Message(role="user", content=text.strip("\n"), origin="reminder")


def remind_if_stale(
    session: Session,
    *,
    after: int = REMIND_AFTER,
    mode: str | None = None,
    tools: Collection[str] | None = None,
) -> Event | None:
    """Append the reminder due now (see `stale_reminder`) and return its event, or None.

    Call it just before building each request: the request then ends with the reminder.
    """
    session.refresh()
    message = stale_reminder(session, after=after, mode=mode, tools=tools)
    return None if message is None else session.append(message)


__all__ = [
    "REMIND_AFTER",
    "remind_if_stale",
    "stale_reminder",
]
