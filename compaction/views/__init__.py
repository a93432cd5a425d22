"""Views: deterministic folds over the session log, one module a projection.

- `projection`: the `Projection` protocol and `fold`;
- `panel`: the todos view (the task panel) and `count_statuses`;
- `board`: the shared task list (`task/create`, `task/update`);
- `carry`: the approved plan and the jobs still running (`plan/approve`, `job/start`, `job/end`);
- `turn_modes`: which mode each stretch of the log ran in;
- `context`: what the model sees (system messages, the newest Checkpoint, the kept messages);
- `progress`: assistant messages since each list was written, completions since a checkpoint;
- `usage_view`: tokens per event and what providers reported;
- `token_scale`: provider prompt tokens per counted token, learned from `usage/report`;
- `refusals`: the window a provider proved by refusing a request as too long;
- `unanswered`: tool calls a killed process left without a result, and their placeholder answer.

Rule of this room: a view reads events and nothing else; it imports no tool, store or compactor.

Invariants: replaying the same events gives byte-identical views; a `todo/write` event never
enters the context view; compaction never changes the todos view.
"""

from compaction.views._carry import CarriedWork, CarryProjection, carried_work, plan_on_turn
from compaction.views._clip_counts import CutCounts, cut_counts
from compaction.views._panel import (
    STATUS_MARKS,
    LatestTodosProjection,
    TodoPanel,
    TodosProjection,
    count_statuses,
)
from compaction.views._projection import Projection, fold
from compaction.views._usage_view import (
    ProviderTotals,
    Usage,
    UsageProjection,
    UsageState,
    add_provider_usage,
)
from compaction.views.board import (
    TASK_MARKS,
    UNFINISHED,
    TaskBoard,
    TasksProjection,
    TasksState,
    panel_line,
    quoted,
)
from compaction.views.context import (
    ContextProjection,
    ContextState,
    ContextWindow,
    checkpoint_message,
    checkpoint_message_for,
    checkpoint_preamble,
)
from compaction.views.overflow_refusals import Refusals, RefusalsProjection
from compaction.views.progress import Progress, ProgressProjection
from compaction.views.token_scale import (
    ScaleSample,
    TokenEvidence,
    TokenScaleProjection,
    scaled_tokens,
)
from compaction.views.turn_modes import TurnModes, TurnModesProjection
from compaction.views.unanswered import (
    CallTracker,
    interrupted_result,
    interrupted_text,
    unanswered_calls,
    unanswered_in_log,
    with_answers,
)

__all__ = [
    "STATUS_MARKS",
    "TASK_MARKS",
    "UNFINISHED",
    "CallTracker",
    "CarriedWork",
    "CarryProjection",
    "ContextProjection",
    "ContextState",
    "ContextWindow",
    "CutCounts",
    "LatestTodosProjection",
    "Progress",
    "ProgressProjection",
    "Projection",
    "ProviderTotals",
    "Refusals",
    "RefusalsProjection",
    "ScaleSample",
    "TaskBoard",
    "TasksProjection",
    "TasksState",
    "TodoPanel",
    "TodosProjection",
    "TokenEvidence",
    "TokenScaleProjection",
    "TurnModes",
    "TurnModesProjection",
    "Usage",
    "UsageProjection",
    "UsageState",
    "add_provider_usage",
    "carried_work",
    "checkpoint_message",
    "checkpoint_message_for",
    "checkpoint_preamble",
    "count_statuses",
    "cut_counts",
    "fold",
    "interrupted_result",
    "interrupted_text",
    "panel_line",
    "plan_on_turn",
    "quoted",
    "scaled_tokens",
    "unanswered_calls",
    "unanswered_in_log",
    "with_answers",
]
