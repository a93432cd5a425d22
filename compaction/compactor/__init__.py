"""The compactor: when and how old turns become a Checkpoint, and everything around it.

- `compact`: `compact`, `maybe_compact`, `compaction_due` (the entry points a host calls);
- `planner`: where to cut and what the Checkpoint holds (pure: it appends nothing);
- `outcomes`: `CompactionPlan` and `CompactionResult`;
- `carried`: the unfinished todos and shared tasks copied into the code-owned sections;
- `receipt`: what each section dropped, which hooks ran;
- `resume`: after a compaction, continue the tool loop or wait for the user;
- `reminders`: a list the model stopped maintaining is brought back;
- `overflow`: a provider's context-overflow refusal answered by one compaction and one retry;
- `compact_context` and `tool_calls`: the model's own ``compact_context`` tool, and the
  host's `call_tool` that runs it beside every other tool.

Rule of this room: the compactor sits above the session, the views, the tools, the Checkpoint
and the summarizers; nothing below it imports it.
"""

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.compactor._outcomes import CompactionPlan, CompactionResult
    from compaction.compactor.compact import compaction_due, maybe_compact
    from compaction.compactor.compact_context import COMPACT_CONTEXT, compact_context_schema
    from compaction.compactor.overflow import (
        RequestOverflowError,
        compacting_call,
        is_context_overflow,
        overflow_policy,
        record_overflow,
    )
    from compaction.compactor.reminders import REMIND_AFTER, remind_if_stale
    from compaction.compactor.tool_calls import call_tool

_EXPORTS: dict[str, str] = {
    "COMPACT_CONTEXT": "compaction.compactor.compact_context",
    "REMIND_AFTER": "compaction.compactor.reminders",
    "CompactionPlan": "compaction.compactor._outcomes",
    "CompactionResult": "compaction.compactor._outcomes",
    "RequestOverflowError": "compaction.compactor.overflow",
    "call_tool": "compaction.compactor.tool_calls",
    "compact_context_schema": "compaction.compactor.compact_context",
    "compacting_call": "compaction.compactor.overflow",
    "compaction_due": "compaction.compactor.compact",
    "is_context_overflow": "compaction.compactor.overflow",
    "maybe_compact": "compaction.compactor.compact",
    "overflow_policy": "compaction.compactor.overflow",
    "record_overflow": "compaction.compactor.overflow",
    "remind_if_stale": "compaction.compactor.reminders",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "COMPACT_CONTEXT",
    "REMIND_AFTER",
    "CompactionPlan",
    "CompactionResult",
    "RequestOverflowError",
    "call_tool",
    "compact_context_schema",
    "compacting_call",
    "compaction_due",
    "is_context_overflow",
    "maybe_compact",
    "overflow_policy",
    "record_overflow",
    "remind_if_stale",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
