"""Views: deterministic folds over the session log, one module a projection.

- `projection`: the `Projection` protocol and `fold`;
- `panel`: the todos view (the task panel) and `count_statuses`;
- `board`: the shared task list (`task/create`, `task/update`);
- `turn_modes`: which mode each stretch of the log ran in;
- `context`: what the model sees (system messages, the newest Checkpoint, the kept messages);
- `progress`: assistant messages since each list was written, completions since a checkpoint;
- `usage_view`: tokens per event and what providers reported;
- `token_scale`: provider prompt tokens per counted token, learned from `usage/report`.

Rule of this room: a view reads events and nothing else; it imports no tool, store or compactor.

Invariants: replaying the same events gives byte-identical views; a `todo/write` event never
enters the context view; compaction never changes the todos view.
"""

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.views._panel import (
        LatestTodosProjection,
        TodoPanel,
        TodosProjection,
        count_statuses,
    )
    from compaction.views._panel_text import STATUS_MARKS, counts_line
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
    from compaction.views.progress import Progress, ProgressProjection
    from compaction.views.token_scale import (
        ScaleSample,
        TokenEvidence,
        TokenScaleProjection,
        scaled_tokens,
    )
    from compaction.views.turn_modes import TurnModes, TurnModesProjection

_EXPORTS: dict[str, str] = {
    "ContextProjection": "compaction.views.context",
    "ContextState": "compaction.views.context",
    "ContextWindow": "compaction.views.context",
    "LatestTodosProjection": "compaction.views._panel",
    "Progress": "compaction.views.progress",
    "ProgressProjection": "compaction.views.progress",
    "Projection": "compaction.views._projection",
    "ProviderTotals": "compaction.views._usage_view",
    "STATUS_MARKS": "compaction.views._panel_text",
    "ScaleSample": "compaction.views.token_scale",
    "TASK_MARKS": "compaction.views.board",
    "TaskBoard": "compaction.views.board",
    "TasksProjection": "compaction.views.board",
    "TasksState": "compaction.views.board",
    "TodoPanel": "compaction.views._panel",
    "TodosProjection": "compaction.views._panel",
    "TokenEvidence": "compaction.views.token_scale",
    "TokenScaleProjection": "compaction.views.token_scale",
    "TurnModes": "compaction.views.turn_modes",
    "TurnModesProjection": "compaction.views.turn_modes",
    "UNFINISHED": "compaction.views.board",
    "Usage": "compaction.views._usage_view",
    "UsageProjection": "compaction.views._usage_view",
    "UsageState": "compaction.views._usage_view",
    "add_provider_usage": "compaction.views._usage_view",
    "checkpoint_message": "compaction.views.context",
    "checkpoint_message_for": "compaction.views.context",
    "checkpoint_preamble": "compaction.views.context",
    "count_statuses": "compaction.views._panel",
    "counts_line": "compaction.views._panel_text",
    "fold": "compaction.views._projection",
    "panel_line": "compaction.views.board",
    "quoted": "compaction.views.board",
    "scaled_tokens": "compaction.views.token_scale",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "STATUS_MARKS",
    "TASK_MARKS",
    "UNFINISHED",
    "ContextProjection",
    "ContextState",
    "ContextWindow",
    "LatestTodosProjection",
    "Progress",
    "ProgressProjection",
    "Projection",
    "ProviderTotals",
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
    "checkpoint_message",
    "checkpoint_message_for",
    "checkpoint_preamble",
    "count_statuses",
    "counts_line",
    "fold",
    "panel_line",
    "quoted",
    "scaled_tokens",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
