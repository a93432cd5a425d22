"""`maybe_compact`, the agent loop's entry: due exactly at the trigger, and passes everything on.

Written to kill the `maybe_compact` survivors of `scripts/mutate` (an inverted trigger, or a
summarizer, instructions or hook dropped on the way to `compact`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compaction import CompactionPolicy, Session, SummaryInput, maybe_compact


class NamedSummarizer:
    """A summarizer that records what it was asked and answers one section."""

    name = "named"

    def __init__(self) -> None:
        self.spans: list[SummaryInput] = []

    def summarize(self, span: SummaryInput) -> Mapping[str, str]:
        self.spans.append(span)
        return {"Next Step": "Keep going."}


def filled(path: Path, turns: int) -> Session:
    session = Session(path)
    for n in range(turns):
        session.start_turn(f"request {n} " + "word " * 200)
        session.add_message({"role": "assistant", "content": "done " * 200})
    return session


class TestMaybeCompact:
    def test_below_the_trigger_nothing_happens(self, log_path: Path) -> None:
        """Below the trigger it returns None and appends nothing."""
        with filled(log_path, 3) as session:
            policy = CompactionPolicy(window_tokens=session.context_tokens * 10)
            seq = session.applied_seq
            assert maybe_compact(session, policy) is None
            assert session.applied_seq == seq

    def test_at_the_trigger_it_compacts_with_what_it_was_given(self, log_path: Path) -> None:
        """Due: it compacts with the given summarizer, instructions and hooks."""
        ended: list[Any] = []
        started: list[Any] = []
        summarizer = NamedSummarizer()
        with filled(log_path, 4) as session:
            policy = CompactionPolicy(window_tokens=1_000, threshold=0.5)
            assert policy.should_compact(session.context_tokens)
            result = maybe_compact(
                session,
                policy,
                summarizer=summarizer,
                instructions="focus on the parser",
                on_compact_start=started.append,
                on_compact_end=ended.append,
            )
            assert result is not None
            assert result.event is not None
            assert result.event.seq == session.applied_seq
        assert result.data.summarizer == "named"
        assert len(summarizer.spans) == 1
        assert "focus on the parser" in repr(summarizer.spans[0])
        assert len(started) == 1
        assert ended == [result]
