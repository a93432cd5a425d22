"""What one compaction costs in work, counted (never timed): texts tokenized, texts scanned.

A forced compaction should cost less than one tiktoken pass over the span it replaces (issue
28). Its token counts come from the usage view the appends filled, so it tokenizes only what it
writes (the Checkpoint, the entries it weighs), never a message of the span again.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks.speed.throughput import append_all, events_of
from compaction import CompactionPolicy, Message, compact
from compaction.summarizers._failures import LINE_CHARS, error_lines
from compaction.summarizers._paths import looks_like_path
from compaction.tokens import TiktokenTokenizer, message_text


class CountingTokenizer(TiktokenTokenizer):
    """The default tokenizer, recording every text it really tokenizes (memo misses)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: Counter[str] = Counter()

    def _count(self, text: str) -> int:
        self.texts[text] += 1
        return super()._count(text)


class TestTokenizedOnce:
    def test_a_compaction_tokenizes_no_text_twice_and_no_message_of_its_span(
        self, tmp_path: Path
    ) -> None:
        """Every count the planner needs for the span comes from the appends' usage view."""
        tok = CountingTokenizer()
        events = events_of(2_000, transcripts=None)
        session = append_all(tmp_path / "log.jsonl", events, tok)
        span_chars = sum(len(message_text(e)) for e in events if isinstance(e, Message))
        tok.texts.clear()
        with session:
            result = compact(session, CompactionPolicy(), force=True)
        assert result.replaced_messages > 1_000
        assert tok.texts, "the Checkpoint is counted"
        assert max(tok.texts.values()) == 1
        messages = {message_text(e) for e in events if isinstance(e, Message)}
        assert not messages & set(tok.texts)
        assert sum(map(len, tok.texts)) < span_chars / 50


class TestPaths:
    def test_any_whitespace_character_makes_a_token_no_path(self) -> None:
        """Unicode spaces count as spaces (the characters `str.isspace` names)."""
        for space in (" ", "\t", "\u00a0", "\u2003", "\u3000", "\x1c"):
            assert not looks_like_path(f"src/a{space}b.py")
        assert looks_like_path("src/a_b.py")
        assert not looks_like_path("src/x..py")
        assert looks_like_path("../src/x.py")


class TestErrorScan:
    def test_a_mark_far_along_a_long_line_is_found(self) -> None:
        """The regex is matched only where a literal is, however far along its line."""
        line = "x" * 5_000 + " Errorf(x) then error: boom"
        assert error_lines(f"ok\n{line}\nok") == [line[:LINE_CHARS]]
        assert error_lines("x" * 5_000 + " Errorf(x) then errors") == []

    def test_a_mark_starting_before_its_literal_is_found(self) -> None:
        """``--- FAIL`` starts four characters before ``FAIL``, ``3 failed`` two before."""
        assert error_lines("a\n--- FAIL: TestX\n  want 2\n") == ["--- FAIL: TestX want 2"]
        assert error_lines("= 3 failed, 2 passed =") == ["= 3 failed, 2 passed ="]
        assert error_lines("-- FAILx\nx failed\n") == []

    def test_each_literal_is_tried_where_its_marks_start(self) -> None:
        """Every literal a mark needs finds it: one line each, in order."""
        text = "\n".join(
            [
                "main.go:3:5: undefined: x",
                "E   assert 1 == 2",
                "Exit code 2",
                "ValueError: bad",
                "RuntimeException: bad",
                "fatal: not a repository",
                "panic: nil map",
                "Error[E0308]: mismatched types",
            ]
        )
        assert error_lines(text) == text.split("\n")
