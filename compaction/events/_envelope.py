"""The event envelope: one class per event type, the union a log line parses into, and I/O.

Each event carries `v` (the schema version), `seq` (its position in the log, from 1), `type`
(the slash name from the brief) and `data` (the payload).

Invariants: its bytes on disk are a pure function of its fields (`dump_event`), so the same
history always gives the same file; a line parses into exactly one event type or is refused.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, Field, TypeAdapter

from compaction import contract
from compaction.events._base import MAX_INT, _Frozen
from compaction.events._carry_data import JobEndData, JobStartData, PlanApproveData
from compaction.events._message_model import Message
from compaction.events._record_data import (
    CheckpointData,
    OverflowData,
    RetractData,
    UsageReportData,
)
from compaction.events._work_data import (
    TaskCreateData,
    TaskUpdateData,
    TodoWriteData,
    TurnEndData,
    TurnStartData,
)


class _Event(_Frozen):
    v: contract.SchemaVersion = contract.SCHEMA_VERSION
    """Schema version of this event."""
    seq: int = Field(ge=1, le=MAX_INT)
    """Position in the log: 1, 2, 3... with no gaps."""


class TurnStarted(_Event):
    """A new user request began (`turn/start`)."""

    type: contract.TurnStartType = contract.TURN_START
    data: TurnStartData = TurnStartData()


class MessageAdded(_Event):
    """A message entered the conversation (`message`)."""

    type: contract.MessageType = contract.MESSAGE
    data: Message


class TodoWritten(_Event):
    """The model rewrote its todo list (`todo/write`); never part of the model's context."""

    type: contract.TodoWriteType = contract.TODO_WRITE_EVENT
    data: TodoWriteData


class TaskCreated(_Event):
    """An agent added a task to the shared list (`task/create`); never part of the context."""

    type: contract.TaskCreateType = contract.TASK_CREATE_EVENT
    data: TaskCreateData


class TaskUpdated(_Event):
    """An agent changed a task of the shared list (`task/update`); never part of the context."""

    type: contract.TaskUpdateType = contract.TASK_UPDATE_EVENT
    data: TaskUpdateData


class TurnEnded(_Event):
    """The agent finished the current request (`turn/end`)."""

    type: contract.TurnEndType = contract.TURN_END
    data: TurnEndData = TurnEndData()


class CheckpointRecorded(_Event):
    """A compaction replaced a span of the context with a Checkpoint (`compaction/checkpoint`)."""

    type: contract.CheckpointType = contract.CHECKPOINT
    data: CheckpointData


class UsageReported(_Event):
    """A model provider reported token usage for one API call (`usage/report`)."""

    type: contract.UsageReportType = contract.USAGE_REPORT
    data: UsageReportData


class MessagesRetracted(_Event):
    """Messages were taken back out of the context (`message/retract`), never out of the log."""

    type: contract.MessageRetractType = contract.MESSAGE_RETRACT
    data: RetractData


class PlanApproved(_Event):
    """A plan was approved (`plan/approve`); carried in every later Checkpoint, never context."""

    type: contract.PlanApproveType = contract.PLAN_APPROVE
    data: PlanApproveData


class JobStarted(_Event):
    """A sub-agent or background command started (`job/start`); never part of the context."""

    type: contract.JobStartType = contract.JOB_START
    data: JobStartData


class JobEnded(_Event):
    """A job finished, failed or was stopped (`job/end`); never part of the context."""

    type: contract.JobEndType = contract.JOB_END
    data: JobEndData


class OverflowRecorded(_Event):
    """A provider refused a request as too long: the size refused, the limit it named."""

    type: contract.ContextOverflowType = contract.CONTEXT_OVERFLOW
    data: OverflowData


Event = Annotated[
    TurnStarted
    | MessageAdded
    | TodoWritten
    | TurnEnded
    | CheckpointRecorded
    | UsageReported
    | TaskCreated
    | TaskUpdated
    | MessagesRetracted
    | OverflowRecorded
    | PlanApproved
    | JobStarted
    | JobEnded,
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
    | OverflowData
    | PlanApproveData
    | JobStartData
    | JobEndData
)
"""The payload of an event, as handed to `SessionLog.append`."""

EVENT_TYPES = contract.EVENT_TYPES
"""Every event type, in the order the log's statistics list them (`compaction.contract`)."""

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
        case OverflowData():
            return OverflowRecorded(seq=seq, data=data)
        case _:
            return _carry_event(seq, data)


def _carry_event(seq: int, data: object) -> Event:
    """Wrap the payload of a plan or a job (`make_event`, continued)."""
    match data:
        case PlanApproveData():
            return PlanApproved(seq=seq, data=data)
        case JobStartData():
            return JobStarted(seq=seq, data=data)
        case JobEndData():
            return JobEnded(seq=seq, data=data)
        case _:
            raise TypeError(f"not an event payload: {type(data).__name__}")


def dump_event(event: Event) -> str:
    """Serialize an event to its canonical one-line JSON form (no trailing newline)."""
    return event.model_dump_json(exclude_none=True)


def dump_event_bytes(event: Event) -> bytes:
    """`dump_event` in UTF-8, serialized straight to bytes (what a log line holds).

    pydantic's ``to_json``, which ``model_dump_json`` decodes to a str: a long text is not
    copied into a str and encoded back. The same options as `dump_event`.
    """
    line: bytes = event.__pydantic_serializer__.to_json(event, exclude_none=True)
    return line


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
