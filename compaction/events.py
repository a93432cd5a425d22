"""Session events: frozen, past-tense facts, one JSON object per log line.

Each event carries `v` (the schema version), `seq` (its position in the log, from 1), `type`
(the slash name from the brief) and `data` (the whole new state it records, never a delta, so a
replay is last-write-wins). Messages use the OpenAI chat fields (`tool_calls`, `tool_call_id`),
which every provider adapter in this toolkit translates from.

Invariants: an event is immutable once written; its bytes on disk are a pure function of its
fields (`dump_event`), so the same history always gives the same file.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    TypeAdapter,
    model_validator,
)

SCHEMA_VERSION = 1
"""Version written into every new event (`v`)."""

Role = Literal["system", "user", "assistant", "tool"]
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
]
"""Where a message's text came from (see `Message.origin`)."""
ORIGINS: tuple[Origin, ...] = get_args(Origin)
"""Every origin, in the order `Origin` lists them."""
TodoStatus = Literal["pending", "in_progress", "completed"]
TODO_STATUSES: tuple[TodoStatus, ...] = ("pending", "in_progress", "completed")
TaskStatus = Literal["pending", "in_progress", "completed", "deleted"]
TASK_STATUSES: tuple[TaskStatus, ...] = ("pending", "in_progress", "completed", "deleted")
TASK_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
"""A task id: a short token (``3``, or an imported agent's own id), never free text."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    """A text block of a message's content."""

    type: Literal["text"] = "text"
    text: str


class ImageURL(_Frozen):
    """Where an image lives (a URL or a data URL)."""

    url: str
    detail: str | None = None


class ImagePart(_Frozen):
    """An image block of a message's content."""

    type: Literal["image_url"] = "image_url"
    image_url: ImageURL


ContentPart = Annotated[TextPart | ImagePart, Discriminator("type")]


class FunctionCall(_Frozen):
    """The function an assistant asked to call, with its arguments as a JSON string."""

    name: str
    arguments: str


class ToolCall(_Frozen):
    """One tool call of an assistant message (OpenAI chat format)."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ClipData(_Frozen):
    """How much of an oversized tool result the context view shows, decided when appended.

    The log keeps the whole result; the model sees its first `head_chars` and last `tail_chars`
    characters around a one-line note (see `compaction.clipping`).
    """

    head_chars: int = Field(ge=0)
    """Characters shown from the start of the text."""
    tail_chars: int = Field(ge=0)
    """Characters shown from the end of the text."""
    omitted_tokens: int = Field(ge=0)
    """Tokens of the text left out, as counted when the result was appended."""


class Message(_Frozen):
    """A chat message as the model sees it (OpenAI chat-completions fields)."""

    role: Role
    content: str | tuple[ContentPart, ...] | None = None
    """Text, content blocks, or None for an assistant turn made only of tool calls."""
    tool_calls: tuple[ToolCall, ...] | None = None
    """Tool calls of an assistant message."""
    tool_call_id: str | None = None
    """For a `tool` message: the id of the call it answers."""
    name: str | None = None
    """Optional participant or tool name."""
    origin: Origin | None = None
    """Where the text came from, when the writer knows: ``user`` (a person typed it),
    ``injected`` (context the agent's tool added: AGENTS.md, environment, caveats, reminders),
    ``command`` (a slash command's tags), ``skill`` (a skill or command body the tool expanded),
    ``interruption`` (an interruption or abort notice), ``mode_switch`` (a mode message),
    ``recorded_summary`` (another agent's summary of earlier turns), ``shell`` (a shell escape
    the user ran and its output: Claude Code's ``<bash-input>``, ``<bash-stdout>``), ``hook``
    (a hook's notice, "Operation stopped by hook") or ``reminder`` (this toolkit's stale-list
    reminder, `compaction.reminders`). Absent on a user message:
    taken as typed by a person. Only ``user`` text is read as a request or a constraint. Never
    sent to a provider."""
    clip: ClipData | None = None
    """For a tool result over the session's cap: what the context view shows of it."""
    exit_code: int | None = None
    """For a `tool` message: the exit status the transcript recorded for the call, when it has
    one (Codex's ``Process exited with code N``, Claude Code's ``Exit code N``, Gemini CLI's
    ``Exit Code: N``); 0 is a pass. Never sent to a provider."""
    failed: bool | None = None
    """For a `tool` message: whether the transcript marks the call as failed (a non-zero exit
    status, Claude Code's ``is_error``, Gemini CLI's error status); None when it says nothing.
    Never sent to a provider."""
    provider_fields: dict[str, JsonValue] | None = None
    """Fields the provider's SDK returned that this model does not hold (OpenAI's
    ``annotations``, ``refusal``, ``audio``; DeepSeek's ``reasoning_content``; Anthropic's
    ``thinking`` blocks, ``id``, ``usage``...), kept as received. Not sent back to a model,
    except where the request format needs them (Anthropic's ``thinking`` blocks before a
    ``tool_use``, a ``tool_result``'s ``is_error``)."""

    @model_validator(mode="after")
    def _check_roles(self) -> Message:
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only assistant messages carry tool_calls")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs the tool_call_id of the call it answers")
        if self.tool_call_id is not None and self.role != "tool":
            raise ValueError("only tool messages carry a tool_call_id")
        if (self.exit_code is not None or self.failed is not None) and self.role != "tool":
            raise ValueError("only tool messages carry an exit_code or failed")
        if self.clip is not None:
            if self.role != "tool":
                raise ValueError("only tool messages carry a clip")
            if self.clip.head_chars + self.clip.tail_chars > len(self.text()):
                raise ValueError("a clip shows more characters than the text holds")
        return self

    def text(self) -> str:
        """Return the message's text content, blocks joined by newlines."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))


class TodoItem(_Frozen):
    """One recorded todo: exactly a content and a status."""

    content: str
    status: TodoStatus


class TurnStartData(_Frozen):
    """A new user request begins (the task panel empties here)."""

    mode: str | None = None
    """The mode the agent works in for this turn, when known."""
    cwd: str | None = None
    """The working directory of the turn, when the writer knows it (an imported transcript's
    ``cwd``): Files and Code shows paths relative to it. Absent in older logs."""


class OpenWork(_Frozen):
    """The unfinished work a turn ended with: todo counts, shared task counts and ids."""

    todos_pending: int = Field(default=0, ge=0)
    """Items of the latest todo list still ``pending``."""
    todos_in_progress: int = Field(default=0, ge=0)
    """Items of the latest todo list still ``in_progress``."""
    tasks_pending: int = Field(default=0, ge=0)
    """Shared tasks still ``pending``."""
    tasks_in_progress: int = Field(default=0, ge=0)
    """Shared tasks still ``in_progress``."""
    task_ids: tuple[str, ...] = ()
    """Ids of the unfinished shared tasks, in creation order."""

    @property
    def total(self) -> int:
        """Return how many todo items and tasks are unfinished."""
        return (
            self.todos_pending
            + self.todos_in_progress
            + self.tasks_pending
            + self.tasks_in_progress
        )


class TurnEndData(_Frozen):
    """The agent finished answering the current request."""

    reason: str | None = None
    open: OpenWork | None = None
    """The unfinished todos and tasks at the end of the turn (`Session.end_turn`); None when
    none were open, or the writer did not say."""


class TodoWriteData(_Frozen):
    """The whole todo list after a `todo_write` call.

    Recorded history may break today's validation rules (an imported list with two items in
    progress); the strict rules apply to new calls, in `compaction.tools.todos`.
    """

    todos: tuple[TodoItem, ...]


class Task(_Frozen):
    """One task of the shared task list, as recorded: its whole state after a change."""

    id: str = Field(pattern=TASK_ID_PATTERN)
    """Short, stable, deterministic: ``1``, ``2``... in creation order (imports keep theirs)."""
    subject: str
    """What to do, as an imperative sentence."""
    description: str | None = None
    """More detail, when the creator gave it."""
    status: TaskStatus = "pending"
    owner: str | None = None
    """The agent working on it (or assigned it); None while unclaimed."""
    blocked_by: tuple[str, ...] = ()
    """Ids of the tasks that must be finished before this one can start."""
    version: int = Field(default=1, ge=1)
    """1 at creation, one more at each recorded update."""


class TaskCreateData(_Frozen):
    """A task was added to the shared list (`task_create`)."""

    agent: str = Field(min_length=1)
    """The agent that created it."""
    task: Task


class TaskUpdateData(_Frozen):
    """A task of the shared list changed (`task_update`): its whole new state."""

    agent: str = Field(min_length=1)
    """The agent that changed it."""
    task: Task


class TaskRef(_Frozen):
    """An unfinished shared task as a Checkpoint carries it: id, owner, subject, open blockers."""

    id: str = Field(pattern=TASK_ID_PATTERN)
    owner: str | None = None
    subject: str
    blocked_by: tuple[Annotated[str, Field(pattern=TASK_ID_PATTERN)], ...] = Field(
        default=(), exclude_if=lambda ids: not ids
    )
    """Ids of the tasks it still waits on (unfinished when the Checkpoint was written); left
    out of the log line when empty, so a log written before the field re-dumps unchanged."""


Resume = Literal["continue", "await_user"]
"""What the agent does after a compaction: go on with its tool loop, or wait for the user."""
RESUMES: tuple[Resume, ...] = ("continue", "await_user")


class HookRun(_Frozen):
    """One ``on_compact_start`` hook that ran for a compaction (the receipt's ``hooks``)."""

    name: str
    """The hook's name (its ``__name__``, else its class name)."""
    vetoed: bool = False
    """True when the hook vetoed (then no checkpoint was written: see `CompactionError.hooks`)."""
    added: str | None = None
    """The text the hook added to the summarizer's instructions, if any."""


class DroppedItem(_Frozen):
    """One thing the replaced span held that a narrative section left out."""

    text: str
    """The request, term, path, failure or constraint (its head, at most 200 characters)."""
    seqs: tuple[int, ...] = ()
    """Seqs of the replaced messages that hold it (the first few): the way back to it."""


class DroppedSection(_Frozen):
    """What one narrative section of a Checkpoint left out for its budget."""

    section: str
    """The section's heading, e.g. ``Files and Code``."""
    items: tuple[DroppedItem, ...]
    """What was left out, in the order the span held it (capped)."""
    more: int = Field(default=0, ge=0)
    """Further items left out beyond the cap."""


class ProviderCompactionData(_Frozen):
    """What a provider's compaction returned for one checkpoint (or why it did not).

    The item is opaque: only the provider that made it can read it. The checkpoint's local
    text stays beside it, so any other format (or another provider) gets the local Checkpoint.
    """

    backend: str
    """The backend asked: ``openai-responses`` or ``anthropic``."""
    item: dict[str, JsonValue] | None = None
    """The provider's compaction item (OpenAI) or block (Anthropic), whole, exactly as returned;
    None when the backend failed and the local Checkpoint stands."""
    usage: dict[str, JsonValue] | None = None
    """The token usage the provider reported for the compaction call, as returned."""
    model: str | None = None
    """The model that compacted."""
    fallback_reason: str | None = None
    """Why the provider's item is missing (one line, secrets redacted); None when it is there."""


class CheckpointData(_Frozen):
    """A compaction: a Checkpoint that replaces the events `first_seq..last_seq` in the context."""

    text: str
    """The rendered Checkpoint, as the model will read it."""
    first_seq: int = Field(ge=1)
    """First event replaced (inclusive)."""
    last_seq: int = Field(ge=1)
    """Last event replaced (inclusive)."""
    tokens_before: int = Field(ge=0)
    """Context tokens just before the compaction."""
    tokens_after: int = Field(ge=0)
    """Context tokens just after it."""
    summarizer: str
    """Which summarizer wrote the narrative sections."""
    fallback_reason: str | None = None
    """Why the configured summarizer was replaced by the fallback, if it was."""
    instructions: str | None = None
    """Focus instructions given to the summarizer for this compaction, if any."""
    pending: tuple[str, ...] = ()
    """Pending Jobs, copied by code from the latest todo list."""
    current: tuple[str, ...] = ()
    """Current Work, copied by code from the latest todo list."""
    pending_tasks: tuple[TaskRef, ...] | None = None
    """The shared list's `pending` tasks in Pending Jobs, copied by code (None: no tasks)."""
    current_tasks: tuple[TaskRef, ...] | None = None
    """The shared list's `in_progress` tasks in Current Work, copied by code (None: no tasks)."""
    hooks: tuple[HookRun, ...] | None = None
    """The receipt: each ``on_compact_start`` hook that ran (None: no hook ran)."""
    dropped: tuple[DroppedSection, ...] | None = None
    """The receipt: per narrative section, what the span held that it left out (None: nothing)."""
    resume: Resume | None = None
    """``continue`` when the context ended inside a tool loop, ``await_user`` when it ended with
    the agent's answer (None in logs written before this field)."""
    provider: ProviderCompactionData | None = None
    """A provider backend's compaction beside the local Checkpoint (None: local only)."""


class UsageReportData(_Frozen):
    """Token figures a model provider reported for one API call (e.g. a summary call)."""

    purpose: str
    """What the call was for: ``summary`` for a compaction's summarizer, ``turn`` for the agent."""
    model: str
    """The model that answered."""
    prompt_tokens: int = Field(ge=0)
    """Prompt tokens the provider processed."""
    completion_tokens: int = Field(ge=0)
    """Tokens of the answer."""
    cached_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens served from the provider's prefix cache; None when it did not say."""
    cache_write_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens written to the provider's cache (Anthropic's ``cache_creation_input_tokens``);
    None when it did not say."""
    at: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """When the request was sent, in seconds on the host's clock (e.g. ``time.time()``), as the
    host passed it; None when it did not say. Cache-aware clearing reads the gaps between these
    (`compaction.backends.ToolResultClearer.from_log`); the model never sees it."""
    context_seq: int | None = Field(default=None, ge=0)
    """The log's last seq when the request was built: its context is the context view through
    this seq. None: the events before the answer (the newest assistant message before this
    report), as a host that appends the answer and then its usage writes them."""


class RetractData(_Frozen):
    """Messages taken back out of the conversation (a tombstone: the log keeps them).

    Written by a host whose own protocol removes items (the OpenAI Agents SDK's ``pop_item`` and
    ``clear_session``); the context view drops the named messages, the log keeps every byte.
    """

    seqs: tuple[int, ...]
    """Seqs of the `message` events taken out of the context."""
    reason: str | None = None
    """Why, e.g. ``pop_item`` or ``clear_session``."""


class _Event(_Frozen):
    v: Literal[1] = 1
    """Schema version of this event."""
    seq: int = Field(ge=1)
    """Position in the log: 1, 2, 3... with no gaps."""


class TurnStarted(_Event):
    """A new user request began (`turn/start`)."""

    type: Literal["turn/start"] = "turn/start"
    data: TurnStartData = TurnStartData()


class MessageAdded(_Event):
    """A message entered the conversation (`message`)."""

    type: Literal["message"] = "message"
    data: Message


class TodoWritten(_Event):
    """The model rewrote its todo list (`todo/write`); never part of the model's context."""

    type: Literal["todo/write"] = "todo/write"
    data: TodoWriteData


class TaskCreated(_Event):
    """An agent added a task to the shared list (`task/create`); never part of the context."""

    type: Literal["task/create"] = "task/create"
    data: TaskCreateData


class TaskUpdated(_Event):
    """An agent changed a task of the shared list (`task/update`); never part of the context."""

    type: Literal["task/update"] = "task/update"
    data: TaskUpdateData


class TurnEnded(_Event):
    """The agent finished the current request (`turn/end`)."""

    type: Literal["turn/end"] = "turn/end"
    data: TurnEndData = TurnEndData()


class CheckpointRecorded(_Event):
    """A compaction replaced a span of the context with a Checkpoint (`compaction/checkpoint`)."""

    type: Literal["compaction/checkpoint"] = "compaction/checkpoint"
    data: CheckpointData


class UsageReported(_Event):
    """A model provider reported token usage for one API call (`usage/report`)."""

    type: Literal["usage/report"] = "usage/report"
    data: UsageReportData


class MessagesRetracted(_Event):
    """Messages were taken back out of the context (`message/retract`), never out of the log."""

    type: Literal["message/retract"] = "message/retract"
    data: RetractData


Event = Annotated[
    TurnStarted
    | MessageAdded
    | TodoWritten
    | TurnEnded
    | CheckpointRecorded
    | UsageReported
    | TaskCreated
    | TaskUpdated
    | MessagesRetracted,
    Discriminator("type"),
]
"""Any event of a session log, discriminated by `type`."""

EventData = (
    TurnStartData
    | Message
    | TodoWriteData
    | TurnEndData
    | CheckpointData
    | UsageReportData
    | TaskCreateData
    | TaskUpdateData
    | RetractData
)
"""The payload of an event, as handed to `SessionLog.append`."""

EVENT_TYPES: tuple[str, ...] = (
    "turn/start",
    "message",
    "todo/write",
    "turn/end",
    "compaction/checkpoint",
    "usage/report",
    "task/create",
    "task/update",
    "message/retract",
)

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def make_event(seq: int, data: EventData) -> Event:
    """Wrap a payload into the event that records it at position `seq`."""
    match data:
        case TurnStartData():
            return TurnStarted(seq=seq, data=data)
        case Message():
            return MessageAdded(seq=seq, data=data)
        case TodoWriteData():
            return TodoWritten(seq=seq, data=data)
        case TurnEndData():
            return TurnEnded(seq=seq, data=data)
        case CheckpointData():
            return CheckpointRecorded(seq=seq, data=data)
        case UsageReportData():
            return UsageReported(seq=seq, data=data)
        case TaskCreateData():
            return TaskCreated(seq=seq, data=data)
        case TaskUpdateData():
            return TaskUpdated(seq=seq, data=data)
        case RetractData():
            return MessagesRetracted(seq=seq, data=data)
        case _:
            raise TypeError(f"not an event payload: {type(data).__name__}")


def dump_event(event: Event) -> str:
    """Serialize an event to its canonical one-line JSON form (no trailing newline)."""
    return event.model_dump_json(exclude_none=True)


def parse_event(line: str | bytes) -> Event:
    """Parse one log line into an event; raises pydantic's ValidationError when invalid."""
    return EVENT_ADAPTER.validate_json(line)


def event_json_schema() -> dict[str, Any]:
    """Return the JSON Schema of one log line, generated from the models."""
    schema = EVENT_ADAPTER.json_schema()
    # Writers always write all four envelope fields, though the reader defaults `v` and `data`.
    for ref in schema["oneOf"]:
        schema["$defs"][ref["$ref"].rsplit("/", 1)[1]]["required"] = ["v", "seq", "type", "data"]
    schema["title"] = "Context Harness session log event"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


__all__ = [
    "ORIGINS",
    "SCHEMA_VERSION",
    "TASK_STATUSES",
    "CheckpointData",
    "CheckpointRecorded",
    "ClipData",
    "DroppedItem",
    "DroppedSection",
    "Event",
    "EventData",
    "FunctionCall",
    "HookRun",
    "ImagePart",
    "Message",
    "MessageAdded",
    "MessagesRetracted",
    "OpenWork",
    "Origin",
    "ProviderCompactionData",
    "Resume",
    "RetractData",
    "Task",
    "TaskCreateData",
    "TaskCreated",
    "TaskRef",
    "TaskStatus",
    "TaskUpdateData",
    "TaskUpdated",
    "TextPart",
    "TodoItem",
    "TodoStatus",
    "TodoWriteData",
    "TodoWritten",
    "ToolCall",
    "TurnEndData",
    "TurnEnded",
    "TurnStartData",
    "TurnStarted",
    "UsageReportData",
    "UsageReported",
    "dump_event",
    "event_json_schema",
    "make_event",
    "parse_event",
]
