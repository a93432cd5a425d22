"""Durable rules of a session log's history, checked on replay.

An invariant guards the shape of history, not today's policy: a log that was valid when written
must still replay after a setting tightens. So "at most one in_progress" is not here (it lives in
`compaction.todos`), and neither are the todo validation rules, which apply to new calls only.

Invariants:
- seq_contiguous: seqs run 1..n with no gaps or repeats.
- tool_result_paired: every `tool` message answers a tool call made earlier in the log.
- checkpoint_span: a checkpoint replaces a span that lies before it and after the previous one.
- checkpoint_cut: a checkpoint's span never separates a tool call from its result (a call inside
  the span answered after it, or a call before the span answered inside it).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from compaction.errors import LogIntegrityError
from compaction.events import CheckpointRecorded, Event, MessageAdded


def check_seq_contiguous(events: Iterable[Event]) -> None:
    """Raise unless seqs run 1, 2, 3... with no gap or repeat."""
    expected = 1
    for e in events:
        if e.seq != expected:
            raise LogIntegrityError(
                "seq_contiguous", f"expected seq {expected}, found {e.seq}", seq=e.seq
            )
        expected += 1


def check_tool_result_paired(events: Iterable[Event]) -> None:
    """Raise if a `tool` message answers a call id no earlier assistant message made."""
    calls: set[str] = set()
    for e in events:
        if not isinstance(e, MessageAdded):
            continue
        for call in e.data.tool_calls or ():
            calls.add(call.id)
        if e.data.role == "tool" and e.data.tool_call_id not in calls:
            raise LogIntegrityError(
                "tool_result_paired",
                f"tool result for unknown call id {e.data.tool_call_id!r}",
                seq=e.seq,
            )


def check_checkpoint_span(events: Iterable[Event]) -> None:
    """Raise if a checkpoint's span is not before it, or overlaps the previous checkpoint's."""
    previous_last = 0
    for e in events:
        if not isinstance(e, CheckpointRecorded):
            continue
        first, last = e.data.first_seq, e.data.last_seq
        if not (first <= last < e.seq):
            raise LogIntegrityError(
                "checkpoint_span", f"span {first}..{last} is not before the checkpoint", seq=e.seq
            )
        if last <= previous_last:
            raise LogIntegrityError(
                "checkpoint_span",
                f"span ends at {last}, not after the previous checkpoint's ({previous_last})",
                seq=e.seq,
            )
        previous_last = last


def check_checkpoint_cut(events: Iterable[Event]) -> None:
    """Raise if a checkpoint's span ends between a tool call and its result."""
    call_seq: dict[str, int] = {}
    pairs: list[tuple[int, int, str]] = []
    ends: list[tuple[int, int]] = []
    for e in events:
        if isinstance(e, CheckpointRecorded):
            ends.append((e.data.last_seq, e.seq))
        elif isinstance(e, MessageAdded):
            for tool_call in e.data.tool_calls or ():
                call_seq[tool_call.id] = e.seq
            answered = e.data.tool_call_id
            if e.data.role == "tool" and answered is not None and answered in call_seq:
                pairs.append((call_seq[answered], e.seq, answered))
    last_seqs = sorted(last for last, _ in ends)
    where = dict(ends)
    for call, result, call_id in pairs:
        i = bisect.bisect_left(last_seqs, call)
        if i < len(last_seqs) and last_seqs[i] < result:
            raise LogIntegrityError(
                "checkpoint_cut",
                f"the span ending at seq {last_seqs[i]} separates tool call {call_id!r} "
                f"(seq {call}) from its result (seq {result})",
                seq=where[last_seqs[i]],
            )


CHECKS = (
    check_seq_contiguous,
    check_tool_result_paired,
    check_checkpoint_span,
    check_checkpoint_cut,
)


def check_log(events: Iterable[Event]) -> None:
    """Run every durable check over a log's events; raise `LogIntegrityError` on the first break."""
    materialized = list(events)
    for check in CHECKS:
        check(materialized)
