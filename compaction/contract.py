"""The wire contract: the names and limits every layer reads, standard library only.

One home for the strings and limits that the events, the tools, the invariants and the CLI's
fast path all read: tool names, event types, statuses, roles, origins, the envelope, size limits
and the seq rule. It imports nothing but the standard library, so the fast path
(`compaction.stores.plain_log`, `compaction.tools.todo_rules`) reads it without loading pydantic.

Invariants: a name or limit here is the only definition of its value; the event models, the
tools, the stores and the checker import it. A wire name's ``Literal`` type and its value are
written side by side here, and mypy checks that they agree.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

# The tools' names.
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
PlanApproveType = Literal["plan/approve"]
PLAN_APPROVE: Final[PlanApproveType] = "plan/approve"
"""The event that records an approved plan."""
JobStartType = Literal["job/start"]
JOB_START: Final[JobStartType] = "job/start"
"""The event that records a sub-agent or background command started."""
JobEndType = Literal["job/end"]
JOB_END: Final[JobEndType] = "job/end"
"""The event that records a job ended."""
CARRY_EVENTS: Final = (PLAN_APPROVE, JOB_START, JOB_END)
"""Events a Checkpoint carries from by code and the model's context never shows."""

# The event types (the ``type`` of a log line).
TurnStartType = Literal["turn/start"]
TURN_START: Final[TurnStartType] = "turn/start"
"""A new user request began."""
MessageType = Literal["message"]
MESSAGE: Final[MessageType] = "message"
"""A message entered the conversation."""
TodoWriteType = Literal["todo/write"]
TODO_WRITE_EVENT: Final[TodoWriteType] = "todo/write"
"""The model rewrote its todo list."""
TaskCreateType = Literal["task/create"]
TASK_CREATE_EVENT: Final[TaskCreateType] = "task/create"
"""An agent added a task to the shared list."""
TaskUpdateType = Literal["task/update"]
TASK_UPDATE_EVENT: Final[TaskUpdateType] = "task/update"
"""An agent changed a task of the shared list."""
TurnEndType = Literal["turn/end"]
TURN_END: Final[TurnEndType] = "turn/end"
"""The agent finished the current request."""
CheckpointType = Literal["compaction/checkpoint"]
CHECKPOINT: Final[CheckpointType] = "compaction/checkpoint"
"""A compaction replaced a span of the context with a Checkpoint."""
UsageReportType = Literal["usage/report"]
USAGE_REPORT: Final[UsageReportType] = "usage/report"
"""A provider reported token usage for one API call."""
MessageRetractType = Literal["message/retract"]
MESSAGE_RETRACT: Final[MessageRetractType] = "message/retract"
"""Messages were taken back out of the context."""
ContextOverflowType = Literal["context/overflow"]
CONTEXT_OVERFLOW: Final[ContextOverflowType] = "context/overflow"
"""A provider refused a request as too long."""
EVENT_TYPES: Final[tuple[str, ...]] = (
    TURN_START,
    MESSAGE,
    TODO_WRITE_EVENT,
    TURN_END,
    CHECKPOINT,
    USAGE_REPORT,
    TASK_CREATE_EVENT,
    TASK_UPDATE_EVENT,
    MESSAGE_RETRACT,
    CONTEXT_OVERFLOW,
    PLAN_APPROVE,
    JOB_START,
    JOB_END,
)
"""Every event type the log schema knows, in the order the log's statistics list them."""

# The envelope of a log line.
SchemaVersion = Literal[1]
SCHEMA_VERSION: Final[SchemaVersion] = 1
"""The ``v`` of every event this toolkit writes."""
ENVELOPE: Final = ("v", "seq", "type", "data")
"""An event's fields, in the order a log line holds them."""

# Statuses, roles and origins.
TodoStatus = Literal["pending", "in_progress", "completed"]
TODO_STATUSES: Final[tuple[TodoStatus, ...]] = get_args(TodoStatus)
"""A todo item's statuses, in panel order."""
TaskStatus = Literal["pending", "in_progress", "completed", "deleted"]
TASK_STATUSES: Final[tuple[TaskStatus, ...]] = get_args(TaskStatus)
"""A shared task's statuses."""
Role = Literal["system", "user", "assistant", "tool"]
ROLES: Final[tuple[Role, ...]] = get_args(Role)
"""A message's roles."""
Origin = Literal[
    "user",
    "injected",
    "command",
    "skill",
    "interruption",
    "mode_switch",
    "recorded_summary",
    "shell",
    "hook",
    "reminder",
    "subagent",
]
"""Where a message's text came from (see `compaction.events.Message.origin`)."""
ORIGINS: Final[tuple[Origin, ...]] = get_args(Origin)
"""Every origin, in the order `Origin` lists them."""

# Size limits.
MAX_ARGUMENT_BYTES: Final = 1_000_000
"""Tool arguments larger than this (UTF-8 bytes) are rejected before parsing."""
MAX_ITEM_CHARS: Final = 2000
"""Longest single text a built-in tool stores (a todo's content, a task's description), in
characters after trimming: a longer one is rejected, so one item can never crowd the Checkpoint
(which carries every unfinished item whole) out of the context window."""
MAX_INT: Final = 2**53 - 1
"""The largest integer an event holds: JSON's safe integer, which every reader keeps exactly."""
MAX_EVENT_BYTES: Final = 64 * 1024 * 1024
"""Largest line an append writes (64 MiB). A longer event is refused, so a torn tail is shorter."""
MAX_TOKENIZER_NAME_CHARS: Final = 64
"""Longest tokenizer name a recorded count carries (``tiktoken:o200k_base``); a longer one is
refused as the log line is read, and the count is made again."""


def lone_surrogate(text: str) -> int | None:
    """Return the index of the first lone surrogate in `text` (never valid UTF-8), or None.

    A lone surrogate (U+D83D alone, half an emoji, or a byte a terminal could not decode) can
    be held by a Python string but not written to a log line: every text that reaches an event
    from outside (a tool's arguments, instructions, a hook's text) is checked with this first.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def seq_follows(last_seq: int, seq: int, *, allow_gaps: bool = False) -> bool:
    """Tell whether `seq` may follow `last_seq`: the seq rule.

    An event's seq is the previous one plus one (the first is 1, after ``last_seq`` 0). With
    `allow_gaps` (a log read with bad lines skipped, whose lines may have held the missing
    seqs) it only has to grow. `compaction.invariants.check_next_seq` raises on a break.
    """
    return seq == last_seq + 1 or (allow_gaps and seq > last_seq)


__all__ = [
    "CARRY_EVENTS",
    "CHECKPOINT",
    "COMPACT_CONTEXT",
    "CONTEXT_OVERFLOW",
    "ENVELOPE",
    "EVENT_TYPES",
    "JOB_END",
    "JOB_START",
    "MAX_ARGUMENT_BYTES",
    "MAX_EVENT_BYTES",
    "MAX_INT",
    "MAX_ITEM_CHARS",
    "MAX_TOKENIZER_NAME_CHARS",
    "MESSAGE",
    "MESSAGE_RETRACT",
    "ORIGINS",
    "PLAN_APPROVE",
    "PLAN_MODE",
    "ROLES",
    "SCHEMA_VERSION",
    "TASK_CREATE",
    "TASK_CREATE_EVENT",
    "TASK_LIST",
    "TASK_STATUSES",
    "TASK_UPDATE",
    "TASK_UPDATE_EVENT",
    "TODO_STATUSES",
    "TODO_WRITE",
    "TODO_WRITE_EVENT",
    "TURN_END",
    "TURN_START",
    "USAGE_REPORT",
    "CheckpointType",
    "ContextOverflowType",
    "JobEndType",
    "JobStartType",
    "MessageRetractType",
    "MessageType",
    "Origin",
    "PlanApproveType",
    "Role",
    "SchemaVersion",
    "TaskCreateType",
    "TaskStatus",
    "TaskUpdateType",
    "TodoStatus",
    "TodoWriteType",
    "TurnEndType",
    "TurnStartType",
    "UsageReportType",
    "lone_surrogate",
    "seq_follows",
]
