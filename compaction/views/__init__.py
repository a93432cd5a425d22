"""Views: deterministic folds over the session log, one module a projection.

- `projection`: the `Projection` protocol and `fold`;
- `panel`: the todos view (the task panel) and `count_statuses`; its words (the status marks,
  the counts line) in `_panel_text`, standard library only, for the CLI's fast path too;
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

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.views._carry import CarriedWork, CarryProjection, plan_on_turn
    from compaction.views._clip_counts import cut_counts
    from compaction.views._panel import LatestTodosProjection, TodoPanel, TodosProjection
    from compaction.views._panel_text import STATUS_MARKS, counts_line
    from compaction.views._usage_view import Usage, UsageProjection, UsageState
    from compaction.views.board import TaskBoard, TasksProjection, TasksState, panel_line
    from compaction.views.context import (
        ContextProjection,
        ContextState,
        ContextWindow,
        checkpoint_message,
        checkpoint_message_for,
        checkpoint_preamble,
    )
    from compaction.views.overflow_refusals import Refusals, RefusalsProjection
    from compaction.views.token_scale import TokenScaleProjection, scaled_tokens
    from compaction.views.unanswered import (
        CallTracker,
        interrupted_result,
        interrupted_text,
        unanswered_calls,
        with_answers,
    )

_EXPORTS: dict[str, str] = {
    "CarriedWork": "compaction.views._carry",
    "CarryProjection": "compaction.views._carry",
    "plan_on_turn": "compaction.views._carry",
    "cut_counts": "compaction.views._clip_counts",
    "CallTracker": "compaction.views.unanswered",
    "ContextProjection": "compaction.views.context",
    "ContextState": "compaction.views.context",
    "ContextWindow": "compaction.views.context",
    "LatestTodosProjection": "compaction.views._panel",
    "Refusals": "compaction.views.overflow_refusals",
    "RefusalsProjection": "compaction.views.overflow_refusals",
    "STATUS_MARKS": "compaction.views._panel_text",
    "TaskBoard": "compaction.views.board",
    "TasksProjection": "compaction.views.board",
    "TasksState": "compaction.views.board",
    "TodoPanel": "compaction.views._panel",
    "TodosProjection": "compaction.views._panel",
    "TokenScaleProjection": "compaction.views.token_scale",
    "Usage": "compaction.views._usage_view",
    "UsageProjection": "compaction.views._usage_view",
    "UsageState": "compaction.views._usage_view",
    "checkpoint_message": "compaction.views.context",
    "checkpoint_message_for": "compaction.views.context",
    "checkpoint_preamble": "compaction.views.context",
    "counts_line": "compaction.views._panel_text",
    "interrupted_result": "compaction.views.unanswered",
    "interrupted_text": "compaction.views.unanswered",
    "panel_line": "compaction.views.board",
    "scaled_tokens": "compaction.views.token_scale",
    "unanswered_calls": "compaction.views.unanswered",
    "with_answers": "compaction.views.unanswered",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "STATUS_MARKS",
    "CallTracker",
    "CarriedWork",
    "CarryProjection",
    "ContextProjection",
    "ContextState",
    "ContextWindow",
    "LatestTodosProjection",
    "Refusals",
    "RefusalsProjection",
    "TaskBoard",
    "TasksProjection",
    "TasksState",
    "TodoPanel",
    "TodosProjection",
    "TokenScaleProjection",
    "Usage",
    "UsageProjection",
    "UsageState",
    "checkpoint_message",
    "checkpoint_message_for",
    "checkpoint_preamble",
    "counts_line",
    "cut_counts",
    "interrupted_result",
    "interrupted_text",
    "panel_line",
    "plan_on_turn",
    "scaled_tokens",
    "unanswered_calls",
    "with_answers",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
