"""Durable rules of a session log's history, checked on replay.

An invariant guards the shape of history, not today's policy: a log that was valid when written
must still replay after a setting tightens. So "at most one in_progress" is not here (it lives in
`compaction.tools.todos`), and neither are the todo validation rules, which apply to new calls only.

Invariants:
- seq_contiguous: seqs run 1..n with no gaps or repeats.
- tool_result_paired: every `tool` message answers a tool call made earlier in the log.
- checkpoint_span: a checkpoint replaces a span that lies before it and after the previous one.
- checkpoint_cut: a checkpoint's span never separates a tool call from its result (a call inside
  the span answered after it, or a call before the span answered inside it). The rule itself
  lives in `compaction.cuts.separating_ends`; compaction plans with it, this checker checks it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Final

from compaction.contract import seq_follows
from compaction.cuts import separating_ends
from compaction.errors import LogIntegrityError
from compaction.events import CheckpointRecorded, Event, MessageAdded

RULES: Final = ("seq_contiguous", "tool_result_paired", "checkpoint_span", "checkpoint_cut")
"""Every durable rule, in the order they are checked."""


def check_next_seq(
    last_seq: int, seq: int, *, allow_gaps: bool = False, where: str = "event", path: str = ""
) -> None:
    """Raise unless `seq` may follow `last_seq` (`compaction.contract.seq_follows`, the rule).

    Every reader of a log, every store and `LogChecker` call it; the standard-library fold of
    the CLI's fast path asks `seq_follows` itself.

    Args:
        last_seq: the seq of the event before (0 before the first).
        seq: the seq of the event read now.
        allow_gaps: accept any seq above `last_seq`.
        where: what to name in the message, e.g. ``"line 7"``.
        path: the log file, named in the message when given.

    Raises:
        LogIntegrityError: ``seq_contiguous``, naming `where`, the seq found and the one expected.
    """
    if seq_follows(last_seq, seq, allow_gaps=allow_gaps):
        return
    raise LogIntegrityError(
        "seq_contiguous", f"{where} has seq {seq}, expected {last_seq + 1}", seq=seq, path=path
    )


def check_checkpoint_span_at(first: int, last: int, seq: int, previous_last: int) -> None:
    """The one checkpoint-span rule, shared by `LogChecker` and `Session.append_many`.

    A checkpoint at `seq` replaces events ``first..last``: a span that runs forward, ends
    before the checkpoint, and ends after the previous checkpoint's span (`previous_last`, 0
    for none).

    Raises:
        LogIntegrityError: ``checkpoint_span``, naming the span and the seq.
    """
    if not (first <= last < seq):
        raise LogIntegrityError(
            "checkpoint_span", f"span {first}..{last} is not before the checkpoint", seq=seq
        )
    if last <= previous_last:
        raise LogIntegrityError(
            "checkpoint_span",
            f"span ends at {last}, not after the previous checkpoint's ({previous_last})",
            seq=seq,
        )


class LogChecker:
    """Checks the durable rules in one streaming pass, keeping only seqs and call ids.

    Feed events in log order with `feed`, then call `finish`. Memory grows with the number of
    tool calls and checkpoints, never with the text of the log.

    Args:
        rules: the rules to check (default: all of `RULES`).
    """

    def __init__(self, rules: Iterable[str] = RULES) -> None:
        self.rules = frozenset(rules)
        self._last_seq = 0
        self._calls: dict[str, int] = {}
        """Seq of every tool call made so far, by call id."""
        self._pairs: list[tuple[int, int, str]] = []
        """(call seq, result seq, call id) of every answered call."""
        self._ends: list[tuple[int, int]] = []
        """(last replaced seq, checkpoint seq) of every checkpoint, in log order."""

    def feed(self, e: Event) -> None:
        """Check one event against the rules that can be decided now."""
        if "seq_contiguous" in self.rules:
            check_next_seq(self._last_seq, e.seq)
            self._last_seq = e.seq
        if isinstance(e, MessageAdded):
            self._message(e)
        elif isinstance(e, CheckpointRecorded):
            self._checkpoint(e)

    def _message(self, e: MessageAdded) -> None:
        for call in e.data.tool_calls or ():
            self._calls[call.id] = e.seq
        answered = e.data.tool_call_id
        if e.data.role != "tool" or answered is None:
            return
        if answered in self._calls:
            self._pairs.append((self._calls[answered], e.seq, answered))
        elif "tool_result_paired" in self.rules:
            raise LogIntegrityError(
                "tool_result_paired", f"tool result for unknown call id {answered!r}", seq=e.seq
            )

    def _checkpoint(self, e: CheckpointRecorded) -> None:
        first, last = e.data.first_seq, e.data.last_seq
        previous_last = self._ends[-1][0] if self._ends else 0
        if "checkpoint_span" in self.rules:
            check_checkpoint_span_at(first, last, e.seq, previous_last)
        self._ends.append((last, e.seq))

    def finish(self) -> None:
        """Check the rules that need the whole log (a cut between a call and its result)."""
        if "checkpoint_cut" not in self.rules:
            return
        last_seqs = sorted(last for last, _ in self._ends)
        where = dict(self._ends)
        for call, result, call_id in self._pairs:
            ends = separating_ends(call, result)
            i = bisect.bisect_left(last_seqs, ends.start)
            if i < len(last_seqs) and last_seqs[i] in ends:
                raise LogIntegrityError(
                    "checkpoint_cut",
                    f"the span ending at seq {last_seqs[i]} separates tool call {call_id!r} "
                    f"(seq {call}) from its result (seq {result})",
                    seq=where[last_seqs[i]],
                )

    def run(self, events: Iterable[Event]) -> None:
        """Feed every event, then finish."""
        for e in events:
            self.feed(e)
        self.finish()


def check_seq_contiguous(events: Iterable[Event]) -> None:
    """Raise unless seqs run 1, 2, 3... with no gap or repeat."""
    LogChecker(["seq_contiguous"]).run(events)


def check_tool_result_paired(events: Iterable[Event]) -> None:
    """Raise if a `tool` message answers a call id no earlier assistant message made."""
    LogChecker(["tool_result_paired"]).run(events)


def check_checkpoint_span(events: Iterable[Event]) -> None:
    """Raise if a checkpoint's span is not before it, or overlaps the previous checkpoint's."""
    LogChecker(["checkpoint_span"]).run(events)


def check_checkpoint_cut(events: Iterable[Event]) -> None:
    """Raise if a checkpoint's span ends between a tool call and its result."""
    LogChecker(["checkpoint_cut"]).run(events)


def check_log(events: Iterable[Event]) -> None:
    """Run every durable check over a log's events in one streaming pass.

    Raises:
        LogIntegrityError: on the first rule that breaks, naming the rule and the seq.
    """
    LogChecker().run(events)


__all__ = [
    "RULES",
    "LogChecker",
    "check_checkpoint_span_at",
    "check_log",
    "check_next_seq",
]
