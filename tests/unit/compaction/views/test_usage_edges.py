"""Edges of the usage view's running sums that mutation testing found unchecked.

The oracle is what the model is sent: every message of the context view counted one by one. Each
case pins a path of `UsageProjection` that a surviving mutant changed: a retraction before a
compaction that folds the retracted message (the span ending before the retraction, and ending
exactly on the retracted message), a message retracted twice, a retraction naming a seq that was
never applied, and provider figures summed over several reports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import CompactionPolicy, Message, Session, UsageReportData, compact, count_message
from compaction.events import RetractData


def seen_by_model(session: Session) -> int:
    return sum(count_message(session.tokenizer, m) for m in session.context.as_messages())


def opening(session: Session) -> tuple[int, int]:
    """A request, two long answers and a short reply; return the seqs of the two answers."""
    session.start_turn("Fix the bug in the parser please " * 20)
    a = session.append(Message(role="assistant", content="Looking at the parser now. " * 40))
    b = session.append(Message(role="assistant", content="Found it in parse_line. " * 40))
    return a.seq, b.seq


class TestRetractionThenCompaction:
    def test_span_ending_before_the_retraction_counts_the_message_once(
        self, log_path: Path
    ) -> None:
        with Session(log_path) as session:
            _, b = opening(session)
            session.start_turn("ok go on " * 30)
            retraction = session.append(RetractData(seqs=(b,), reason="pop"))
            session.append(Message(role="assistant", content="Done."))
            result = compact(session, CompactionPolicy(window_tokens=4000, retain=0.05), force=True)
            assert b <= result.data.last_seq < retraction.seq  # the case under test
            assert session.context_tokens == seen_by_model(session)

    def test_span_ending_on_the_retracted_message(self, log_path: Path) -> None:
        with Session(log_path) as session:
            _, b = opening(session)
            session.append(Message(role="user", content="ok go on"))
            retraction = session.append(RetractData(seqs=(b,), reason="pop"))
            session.append(Message(role="assistant", content="Done."))
            result = compact(session, CompactionPolicy(window_tokens=4000, retain=0.05), force=True)
            assert result.data.last_seq == b < retraction.seq  # the case under test
            assert session.context_tokens == seen_by_model(session)
        with Session(log_path) as again:
            assert again.context_tokens == seen_by_model(again)


class TestRetractionOddities:
    def test_a_message_retracted_twice_leaves_once(self, log_path: Path) -> None:
        with Session(log_path) as session:
            a, b = opening(session)
            session.append(RetractData(seqs=(a,), reason="pop"))
            once = session.context_tokens
            session.append(RetractData(seqs=(a, b), reason="clear"))
            assert session.context_tokens == seen_by_model(session)
            assert session.context_tokens < once

    def test_an_unknown_seq_does_not_stop_the_others(self, log_path: Path) -> None:
        with Session(log_path) as session:
            a, b = opening(session)
            before = session.context_tokens
            session.append(RetractData(seqs=(a, 999, b), reason="clear"))
            assert session.context_tokens == seen_by_model(session)
            assert session.context_tokens < before - 300


class TestTokensBySeq:
    def test_a_seq_never_applied_costs_nothing(self, log_path: Path) -> None:
        """Seqs past the last applied one, or in a gap, cost 0 rather than failing."""
        with Session(log_path) as session:
            a, b = opening(session)
            assert session.event_tokens(a) > 100
            assert session.event_tokens(b + 1) == 0
            assert session.event_tokens(b + 1000) == 0
            assert session.event_tokens(0) == 0


class TestProviderSums:
    @pytest.mark.parametrize("purpose", ["turn", "summary"])
    def test_every_figure_adds_up_over_several_reports(self, log_path: Path, purpose: str) -> None:
        reports = [
            UsageReportData(
                purpose=purpose,
                model="m",
                prompt_tokens=1000,
                completion_tokens=1,
                cached_tokens=900,
                cache_write_tokens=50,
            ),
            UsageReportData(
                purpose=purpose,
                model="m",
                prompt_tokens=800,
                completion_tokens=2,
                cached_tokens=100,
                cache_write_tokens=25,
            ),
            UsageReportData(purpose=purpose, model="m", prompt_tokens=10, completion_tokens=3),
            UsageReportData(purpose=purpose, model="m", prompt_tokens=20, completion_tokens=4),
        ]
        with Session(log_path) as session:
            session.append_many(reports)
            totals = session.usage.provider_by_purpose[purpose]
            assert session.usage.provider == totals
        assert totals.requests == 4
        assert totals.prompt_tokens == 1830
        assert totals.completion_tokens == 10
        assert totals.cached_tokens == 1000
        assert totals.cache_write_tokens == 75
        assert totals.requests_without_cache_figure == 2
