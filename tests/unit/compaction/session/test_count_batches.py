"""The usage view counts in batches: each event once, at most `COUNT_BATCH` left waiting.

A reopen folds the log with the usage view counting every `COUNT_BATCH` events in one tight loop
(`compaction.session.live_views`); a read of the view counts what still waits. A counting
tokenizer shows when each text is tokenized.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import Message, Session, count_message
from compaction.errors import TokenizerError
from compaction.session.live_views import COUNT_BATCH
from compaction.tokens import TiktokenTokenizer


class CountingTokenizer:
    """Counts with tiktoken and records every text it was asked to count."""

    def __init__(self, fail_on: str | None = None) -> None:
        self._inner = TiktokenTokenizer()
        self.texts: list[str] = []
        self.fail_on = fail_on

    @property
    def name(self) -> str:
        return self._inner.name

    def encode(self, text: str) -> list[int]:
        return self._inner.encode(text)

    def count(self, text: str) -> int:
        if self.fail_on is not None and self.fail_on in text:
            self.fail_on = None  # fails once
            raise TokenizerError("the tokenizer failed once")
        self.texts.append(text)
        return self._inner.count(text)


def _write(path: Path, n: int) -> list[Message]:
    messages = [Message(role="user", content=f"message number {i} of the log") for i in range(n)]
    with Session(path, sync="batch", tool_output_cap=None) as session:
        session.append_many(messages)
    return messages


def test_a_reopen_counts_while_folding_and_leaves_at_most_a_batch(tmp_path: Path) -> None:
    n = 2 * COUNT_BATCH + 7
    messages = _write(tmp_path / "s.jsonl", n)
    tok = CountingTokenizer()
    with Session(tmp_path / "s.jsonl", tokenizer=tok) as again:
        assert len(tok.texts) == 2 * COUNT_BATCH  # counted during the fold, 7 waiting
        tokens = again.context_tokens
        assert len(tok.texts) == n  # each message tokenized once
        _ = again.usage, again.context_tokens, again.event_tokens(1)
        assert len(tok.texts) == n
    assert tokens == sum(count_message(TiktokenTokenizer(), m) for m in messages)


def test_appended_events_are_counted_on_the_next_read(tmp_path: Path) -> None:
    tok = CountingTokenizer()
    with Session(tmp_path / "s.jsonl", tokenizer=tok, tool_output_cap=None) as session:
        first = session.append(Message(role="user", content="hello there"))
        assert tok.texts == []
        assert session.event_tokens(first.seq) == count_message(
            TiktokenTokenizer(), Message(role="user", content="hello there")
        )
        assert len(tok.texts) == 1
        session.append(Message(role="assistant", content="hi"))
        assert session.usage.events == 2
        assert len(tok.texts) == 2


def test_a_failed_count_leaves_the_rest_waiting(tmp_path: Path) -> None:
    _write(tmp_path / "s.jsonl", 10)
    tok = CountingTokenizer(fail_on="number 4 ")
    with Session(tmp_path / "s.jsonl", tokenizer=tok) as again:
        with pytest.raises(TokenizerError):
            _ = again.context_tokens
        assert len(tok.texts) == 4
        usage = again.usage  # the failed event and those after it are counted now
    with Session(tmp_path / "s.jsonl", tokenizer=TiktokenTokenizer()) as fresh:
        assert usage == fresh.usage
    assert usage.events == 10
