"""The built-in tools run on a session: `todo_write`, `task_create`, `task_update`, `task_list`.

Each call is checked against the tool policy of the mode it runs under (the host's `refusal`),
so a host cannot forget to refuse a tool the mode forbids. Task writes are checked and appended
inside one `batch()` (the file's lock, or the store's transaction) against the board as stored,
and append only if no other writer got in first (an expected seq), so concurrent agents never
lose an update.

Invariant: a refused or rejected tool call appends nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from compaction.errors import ConfigError, SeqConflictError, ToolInputError
from compaction.events import (
    Event,
    EventData,
    Task,
    TaskCreateData,
    TaskUpdateData,
    TodoWriteData,
)
from compaction.tools.arguments import Arguments
from compaction.tools.mode_policy import ModePolicy
from compaction.tools.task_rules import plan_update
from compaction.tools.tasks import (
    AGENT_PATTERN,
    TASK_CREATE,
    TASK_LIST,
    TASK_UPDATE,
    created_line,
    is_agent_name,
    list_text,
    parse_task_create,
    parse_task_list,
    read_update,
    unchanged_line,
    updated_line,
)
from compaction.tools.todos import (
    TOOL_NAME,
    calls_in_one_response,
    one_list_per_response,
    parse_todo_write,
    summary_line,
)
from compaction.tools.tool_result import ToolResult
from compaction.views import ContextWindow
from compaction.views.board import TaskBoard

TaskEventData = TaskCreateData | TaskUpdateData
TASK_WRITE_ATTEMPTS = 50
"""How many times a task write is checked again when another writer got in first."""


class RunsHost(Protocol):
    """What the tool runs need of a session (`compaction.Session` is one)."""

    @property
    def agent(self) -> str:
        """The agent the session speaks for."""

    @property
    def applied_seq(self) -> int:
        """The seq of the last event applied."""

    @property
    def tasks(self) -> TaskBoard:
        """The shared task list."""

    @property
    def context(self) -> ContextWindow:
        """What the model sees now."""

    def policy(self, mode: str | None = None) -> ModePolicy:
        """The tool policy of `mode` (default: the current turn's)."""

    def refusal(self, tool: str, *, mode: str | None = None) -> str | None:
        """The refusal of `tool` under `mode`, or None."""

    def refresh(self) -> list[Event]:
        """Apply what other writers appended."""

    def append(self, data: EventData, *, expected_seq: int | None = None) -> Event:
        """Append one event and update the views."""

    def batch(self) -> AbstractContextManager[object]:
        """Hold the session across appends."""


def _busy(tool: str) -> str:
    return (
        f"{tool}: rejected, nothing was changed. The shared task list kept changing while this "
        "call was checked; call task_list, then call again."
    )


def _refused(text: str) -> ToolResult:
    return ToolResult(text, is_error=True)


class ToolRuns:
    """The built-in tools of one session, and the task versions each agent was last shown."""

    def __init__(self, host: RunsHost) -> None:
        self.host = host
        self.seen: dict[str, dict[str, int]] = {}
        """Agent -> task id -> the version of the task that agent was last shown."""

    def todo_write(
        self, arguments: Arguments, allow_parallel: bool | None, mode: str | None
    ) -> ToolResult:
        """Run `todo_write` (see `Session.todo_write`)."""
        host = self.host
        refused = host.refusal(TOOL_NAME, mode=mode)
        if refused is not None:
            return _refused(refused)
        if allow_parallel is None:
            allow_parallel = host.policy(mode).allow_parallel_in_progress
        try:
            todos = parse_todo_write(arguments, allow_parallel=allow_parallel)
        except ToolInputError as exc:
            return _refused(str(exc))
        calls = calls_in_one_response(host.context.messages)
        if calls > 1:  # after validation, so a bad call still learns what to fix
            return _refused(str(one_list_per_response(calls)))
        host.append(TodoWriteData(todos=todos))
        return ToolResult(summary_line(todos))

    def task_create(self, arguments: Arguments, agent: str | None, mode: str | None) -> ToolResult:
        """Run `task_create` (see `Session.task_create`)."""
        who = self.who(agent)
        refused = self.host.refusal(TASK_CREATE, mode=mode)
        if refused is not None:
            return _refused(refused)
        try:
            subject, description = parse_task_create(arguments)
        except ToolInputError as exc:
            return _refused(str(exc))
        made: list[Task] = []

        def plan(board: TaskBoard) -> TaskCreateData:
            made[:] = [Task(id=board.next_id, subject=subject, description=description)]
            return TaskCreateData(agent=who, task=made[0])

        if not self.write_task(plan):
            return _refused(_busy(TASK_CREATE))
        self.seen.setdefault(who, {})[made[0].id] = made[0].version
        return ToolResult(created_line(made[0]))

    def task_update(self, arguments: Arguments, agent: str | None, mode: str | None) -> ToolResult:
        """Run `task_update` (see `Session.task_update`)."""
        who = self.who(agent)
        refused = self.host.refusal(TASK_UPDATE, mode=mode)
        if refused is not None:
            return _refused(refused)
        seen = self.seen.setdefault(who, {})
        shown = dict(seen)
        before: list[Task] = []
        after: list[Task | None] = []

        def plan(board: TaskBoard) -> TaskUpdateData | None:
            old = board.get(task_id)
            before[:], after[:] = [] if old is None else [old], [None]
            try:
                after[0] = plan_update(board, task_id, changes, who, shown.get(task_id))
            finally:
                if old is not None:
                    # The rejection shows the current state, so that is what it has seen.
                    seen[task_id] = old.version
            return None if after[0] is None else TaskUpdateData(agent=who, task=after[0])

        try:
            task_id, changes = read_update(arguments)
            if not self.write_task(plan):
                return _refused(_busy(TASK_UPDATE))
        except ToolInputError as exc:
            return _refused(str(exc))
        old, new = before[0], after[0]
        if new is None:
            return ToolResult(unchanged_line(old))
        seen[task_id] = new.version
        return ToolResult(updated_line(old, new))

    def task_list(
        self, arguments: Arguments | None, agent: str | None, mode: str | None
    ) -> ToolResult:
        """Run `task_list` (see `Session.task_list`)."""
        refused = self.host.refusal(TASK_LIST, mode=mode)
        if refused is not None:
            return _refused(refused)
        try:
            parse_task_list(arguments)
        except ToolInputError as exc:
            return _refused(str(exc))
        board = self.host.tasks
        self.seen[self.who(agent)] = {t.id: t.version for t in board.tasks}
        return ToolResult(list_text(board))

    def who(self, agent: str | None) -> str:
        """Return the calling agent (default: the session's), its name checked whole."""
        if agent and not is_agent_name(agent):
            raise ConfigError(f"agent {agent!r} must match {AGENT_PATTERN}")
        return agent or self.host.agent

    def write_task(self, plan: Callable[[TaskBoard], TaskEventData | None]) -> bool:
        """Plan a task event on the board as stored and append it, no other writer in between.

        Inside one `batch()` (the file's lock, or the store's transaction) the session reads
        what others appended, `plan` checks the call and returns the event (None: nothing to
        write; it raises `ToolInputError` to reject), and the event is appended only if the log
        has not moved on since (an expected seq). A store whose transactions do not serialize
        writers may still move on: the whole check runs again, up to `TASK_WRITE_ATTEMPTS`
        times. Returns False when every attempt lost the race.
        """
        host = self.host
        for _ in range(TASK_WRITE_ATTEMPTS):
            with host.batch():
                host.refresh()
                data = plan(host.tasks)
                if data is None:
                    return True
                try:
                    host.append(data, expected_seq=host.applied_seq)
                except SeqConflictError:
                    continue
                return True
        return False
