"""Durable rules of a session log's history, checked on replay.

An invariant guards the shape of history, not today's policy: a log that was valid when written
must still replay after a setting tightens. So "at most one in_progress" is not here (it lives in
`compaction.todos`), and neither are the todo validation rules, which apply to new calls only.

Invariants:
- seq_contiguous: seqs run 1..n with no gaps or repeats.
- tool_result_paired: every `tool` message answers a tool call made earlier in the log.
- checkpoint_span: a checkpoint replaces a span that lies before it and after the previous one.
"""

from __future__ import annotations

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


CHECKS = (check_seq_contiguous, check_tool_result_paired, check_checkpoint_span)


def check_log(events: Iterable[Event]) -> None:
    """Run every durable check over a log's events; raise `LogIntegrityError` on the first break."""
    materialized = list(events)
    for check in CHECKS:
        check(materialized)
