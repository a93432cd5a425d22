"""Session events: frozen, past-tense facts, one JSON object per log line.

Each event carries `v` (the schema version), `seq` (its position in the log, from 1), `type`
(the slash name from the brief) and `data` (the whole new state it records, never a delta, so a
replay is last-write-wins). Messages use the OpenAI chat fields (`tool_calls`, `tool_call_id`),
which every provider adapter in this toolkit translates from.

Invariants: an event is immutable once written; its bytes on disk are a pure function of its
fields (`dump_event`), so the same history always gives the same file.
"""

from compaction.events._base import MAX_INT, SCHEMA_VERSION, surrogate_problem
from compaction.events._carry_data import (
    JOB_ID_PATTERN,
    JobEndData,
    JobEndStatus,
    JobKind,
    JobRef,
    JobStartData,
    PlanApproveData,
    PlanRef,
)
from compaction.events._envelope import (
    EVENT_ADAPTER as EVENT_ADAPTER,
)
from compaction.events._envelope import (
    EVENT_TYPES as EVENT_TYPES,
)
from compaction.events._envelope import (
    CheckpointRecorded,
    Event,
    EventData,
    JobEnded,
    JobStarted,
    MessageAdded,
    MessagesRetracted,
    OverflowRecorded,
    PlanApproved,
    TaskCreated,
    TaskUpdated,
    TodoWritten,
    TurnEnded,
    TurnStarted,
    UsageReported,
    dump_event,
    dump_event_bytes,
    event_json_schema,
    make_event,
    parse_event,
)
from compaction.events._message_model import (
    ClipData,
    FunctionCall,
    ImagePart,
    Message,
    Origin,
    TextPart,
    ToolCall,
)
from compaction.events._message_model import (
    ContentPart as ContentPart,
)
from compaction.events._message_model import (
    ImageURL as ImageURL,
)
from compaction.events._message_model import (
    Role as Role,
)
from compaction.events._record_data import (
    RESUMES as RESUMES,
)
from compaction.events._record_data import (
    CheckpointData,
    CountedContext,
    DroppedItem,
    DroppedSection,
    HookRun,
    OverflowData,
    ProviderCompactionData,
    Resume,
    RetractData,
    UsageReportData,
)
from compaction.events._work_data import (
    TASK_ID_PATTERN as TASK_ID_PATTERN,
)
from compaction.events._work_data import (
    TASK_STATUSES,
    OpenWork,
    Task,
    TaskCreateData,
    TaskRef,
    TaskStatus,
    TaskUpdateData,
    TodoItem,
    TodoStatus,
    TodoWriteData,
    TurnEndData,
    TurnStartData,
)
from compaction.events._work_data import (
    TODO_STATUSES as TODO_STATUSES,
)

__all__ = [
    "JOB_ID_PATTERN",
    "MAX_INT",
    "SCHEMA_VERSION",
    "TASK_STATUSES",
    "CheckpointData",
    "CheckpointRecorded",
    "ClipData",
    "CountedContext",
    "DroppedItem",
    "DroppedSection",
    "Event",
    "EventData",
    "FunctionCall",
    "HookRun",
    "ImagePart",
    "JobEndData",
    "JobEndStatus",
    "JobEnded",
    "JobKind",
    "JobRef",
    "JobStartData",
    "JobStarted",
    "Message",
    "MessageAdded",
    "MessagesRetracted",
    "OpenWork",
    "Origin",
    "OverflowData",
    "OverflowRecorded",
    "PlanApproveData",
    "PlanApproved",
    "PlanRef",
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
    "dump_event_bytes",
    "event_json_schema",
    "make_event",
    "parse_event",
    "surrogate_problem",
]
