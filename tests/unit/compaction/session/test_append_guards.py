"""What `Session.append` refuses before a byte is written, so every later open reads the log.

A forged checkpoint span (beyond the end, reversed, before the previous checkpoint), an integer
of thousands of digits, a lone surrogate in a compaction's instructions or a hook's text: each is
one clear error, nothing is appended, and the log reopens as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from compaction import (
    CheckpointData,
    CompactionPolicy,
    ConfigError,
    LogIntegrityError,
    Session,
    UsageReportData,
    call_tool,
    compact,
)
from compaction.events import MAX_INT


def span(first: int, last: int) -> CheckpointData:
    return CheckpointData(
        text="# Checkpoint", first_seq=first, last_seq=last, tokens_before=1, tokens_after=1,
        summarizer="extractive",
    )  # fmt: skip


def filled(path: Path, n: int = 6) -> Session:
    session = Session(path)
    session.start_turn("work")
    for i in range(n):
        session.add_message({"role": "assistant", "content": f"step {i} " + "word " * 60})
    return session


class TestCheckpointSpan:
    @pytest.mark.parametrize(
        ("first", "last"),
        [(1, 9), (1, 50), (5, 3)],
        ids=["ends-at-the-checkpoint", "beyond-the-end", "reversed"],
    )
    def test_a_forged_span_is_refused_at_append(
        self, tmp_path: Path, first: int, last: int
    ) -> None:
        """A span not before the checkpoint, or reversed: refused, nothing written."""
        with filled(tmp_path / "s.jsonl") as session:
            before = session.applied_seq
            assert before == 8
            with pytest.raises(LogIntegrityError, match=r"is not before"):
                session.append(span(first, last))
            assert session.applied_seq == before
        with Session(tmp_path / "s.jsonl") as again:
            assert again.applied_seq == before

    def test_a_span_before_the_previous_checkpoint_is_refused(self, tmp_path: Path) -> None:
        """A second checkpoint must replace more than the first did."""
        with filled(tmp_path / "s.jsonl") as session:
            session.append(span(1, 4))
            with pytest.raises(LogIntegrityError, match="not after the previous"):
                session.append(span(1, 3))
            with pytest.raises(LogIntegrityError, match="not after the previous"):
                session.append(span(1, 4))
            session.append(span(1, 6))  # a span that goes further is fine
        with Session(tmp_path / "s.jsonl") as again:
            assert again.context.checkpoint is not None
            assert again.context.checkpoint.last_seq == 6

    def test_a_real_compaction_passes(self, tmp_path: Path) -> None:
        """The compactor's own spans pass the check."""
        with filled(tmp_path / "s.jsonl", 30) as session:
            compact(session, CompactionPolicy(4_000), force=True)
            compact(session, CompactionPolicy(4_000), force=True)
            assert session.context.checkpoint is not None


class TestBoundedIntegers:
    @pytest.mark.parametrize("figure", [10**5000, MAX_INT + 1], ids=["4301-digits", "one-over"])
    def test_a_huge_usage_figure_is_refused_at_write(self, tmp_path: Path, figure: int) -> None:
        """Over 2**53-1 (a figure of 4,300+ digits included): refused; the log still opens."""
        with filled(tmp_path / "s.jsonl") as session, pytest.raises(ValidationError):
            session.report_usage(
                UsageReportData(
                    purpose="turn", model="m", prompt_tokens=figure, completion_tokens=1
                )
            )
        with Session(tmp_path / "s.jsonl") as again:
            assert again.applied_seq == 8
            assert again.usage.total_tokens > 0

    def test_the_largest_figure_is_kept(self, tmp_path: Path) -> None:
        """Exactly 2**53-1 is a valid figure, written and read back."""
        with filled(tmp_path / "s.jsonl") as session:
            data = UsageReportData(
                purpose="turn", model="m", prompt_tokens=MAX_INT, completion_tokens=0
            )
            session.report_usage(data)
        with Session(tmp_path / "s.jsonl") as again:
            assert again.usage.provider.prompt_tokens == MAX_INT


class TestLoneSurrogates:
    def test_compact_context_focus(self, tmp_path: Path) -> None:
        """A focus with a lone surrogate: a rejected call the model can fix; nothing appended."""
        with filled(tmp_path / "s.jsonl", 30) as session:
            before = session.applied_seq
            result = call_tool(session, "compact_context", '{"focus": "the API \\ud83d"}')
            assert result.is_error
            assert result.content.endswith(
                '- "focus" must be valid Unicode text: it holds a lone surrogate '
                "(U+D83D at character 8)"
            )
            assert session.applied_seq == before

    def test_instructions(self, tmp_path: Path) -> None:
        """Instructions with a lone surrogate: one ConfigError line, nothing appended."""
        with filled(tmp_path / "s.jsonl", 30) as session:
            with pytest.raises(ConfigError, match=r"^instructions must be valid Unicode text"):
                compact(session, CompactionPolicy(4_000), force=True, instructions="keep \udcff")
            assert session.context.checkpoint is None

    def test_a_hooks_text(self, tmp_path: Path) -> None:
        """A hook's text with a lone surrogate: one ConfigError naming the hook."""

        def focus_hook(plan: object) -> str:
            return "mind \ud800 this"

        with filled(tmp_path / "s.jsonl", 30) as session:
            with pytest.raises(ConfigError, match="hook 'focus_hook'"):
                compact(session, CompactionPolicy(4_000), force=True, on_compact_start=focus_hook)
            assert session.context.checkpoint is None
