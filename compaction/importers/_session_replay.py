"""Replaying an imported transcript into a live session, compacting whenever the policy says so.

This answers "how would this toolkit have managed that session": the events of `load()` are
appended one by one to a `Session`, and after each the compactor runs if the context is due
(`maybe_compact`). The agent's own recorded compactions are appended too, their span moved to
the new log's seqs (everything since the previous checkpoint), so the context stays what the
agent saw.

Invariants: the replayed log holds every imported event, in order, plus this toolkit's
checkpoints; each checkpoint's Pending Jobs and Current Work are the unfinished items of the
latest list at its cut (the compactor copies them; `ReplayCompaction.unfinished` keeps what they had
to be, for checking).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from compaction.compactor.compact import (
    CompactionPolicy,
    CompactionResult,
    maybe_compact,
    unfinished,
)
from compaction.errors import CompactionError
from compaction.events import CheckpointData, Event
from compaction.session import Session
from compaction.summarizers import Summarizer


@dataclass(frozen=True)
class ReplayCompaction:
    """One compaction made during a replay."""

    result: CompactionResult
    unfinished: tuple[tuple[str, ...], tuple[str, ...]]
    """The pending and in-progress items of the latest list at the cut, in list order."""


@dataclass
class ReplayReport:
    """What a replay did."""

    compactions: list[ReplayCompaction] = field(default_factory=list)
    recorded_checkpoints: int = 0
    """The agent's own compactions appended (their spans moved to the new seqs)."""
    refused: Counter[str] = field(default_factory=Counter)
    """Compactions that were due but could not run, by error code (say, no safe cut)."""
    peak_context_tokens: int = 0
    """Largest context seen after an event was applied, compactions included."""


def _moved(data: CheckpointData, session: Session) -> CheckpointData | None:
    """A recorded checkpoint's span in the new log: everything since the previous checkpoint."""
    previous = session.context.checkpoint
    first = previous.last_seq + 1 if previous else 1
    last = session.applied_seq
    if last < first:
        return None
    return data.model_copy(update={"first_seq": first, "last_seq": last})


def replay(
    events: Iterable[Event],
    session: Session,
    policy: CompactionPolicy,
    *,
    summarizer: Summarizer | None = None,
    fixed_tokens: int = 0,
) -> ReplayReport:
    """Append `events` to `session`, compacting whenever `policy` says the request is due.

    `fixed_tokens` is the system prompt and tool catalog the agent sent besides the context
    (`prompts.fixed_tokens`), counted in the whole-request budget.
    """
    report = ReplayReport()
    with session.batch():
        for event in events:
            data = event.data
            if isinstance(data, CheckpointData):
                moved = _moved(data, session)
                if moved is None:
                    continue
                data = moved
                report.recorded_checkpoints += 1
            session.append(data)
            _compact_if_due(session, policy, summarizer, report, fixed_tokens)
            report.peak_context_tokens = max(report.peak_context_tokens, session.context_tokens)
    return report


def _compact_if_due(
    session: Session,
    policy: CompactionPolicy,
    summarizer: Summarizer | None,
    report: ReplayReport,
    fixed_tokens: int,
) -> None:
    todos = unfinished(session.latest_todos)
    try:
        result = maybe_compact(session, policy, summarizer=summarizer, fixed_tokens=fixed_tokens)
    except CompactionError as exc:
        # Due but impossible now (no safe cut mid-call, nothing new): the next event retries.
        report.refused[exc.code] += 1
        return
    if result is not None:
        report.compactions.append(ReplayCompaction(result=result, unfinished=todos))
