"""Append's token counting: a batch counted back to back after its fold, lines written as bytes.

The oracle is a replay: a new `Session` reading the same log counts every event one by one, so
a batch counted at once must give the same count per event, and a log line written straight to
bytes must be `dump_event` encoded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import EventData, Message, Session, TodoItem, TodoWriteData, TurnStartData
from compaction.events import ToolCall, dump_event, make_event
from compaction.session.live_views import LiveViews
from compaction.stores.log_writer import event_line
from compaction.tokens import TiktokenTokenizer
from compaction.views import UsageProjection

BATCH: list[EventData] = [
    TurnStartData(mode="agent"),
    Message(role="user", content="Fix the parser, please. " * 30),
    Message(
        role="assistant",
        content="Reading it.",
        tool_calls=(
            ToolCall.model_validate({"id": "c1", "function": {"name": "read", "arguments": "{}"}}),
        ),
    ),
    Message(role="tool", tool_call_id="c1", content="def parse(line):\n    return line\n" * 400),
    TodoWriteData(todos=(TodoItem(content="fix parse", status="in_progress"),)),
    Message(role="assistant", content="Done. é ✓ 漢字"),
]


def per_event(session: Session) -> tuple[int, ...]:
    return session.usage.per_event


class TestCountAhead:
    def test_a_batch_counts_what_a_replay_counts(self, log_path: Path) -> None:
        """Every event of a batch appended at once costs what a reopened session counts."""
        with Session(log_path, tokenizer=TiktokenTokenizer(), tool_output_cap=200) as s:
            s.append_many(BATCH)
            appended = per_event(s)
            assert s.usage.context_tokens > 0
        with Session(log_path, tokenizer=TiktokenTokenizer()) as again:
            assert per_event(again) == appended
        assert len(appended) == len(BATCH)
        assert all(n > 0 for n in appended[1:])

    def test_one_event_at_a_time_counts_the_same(self, tmp_path: Path) -> None:
        """Appended in one batch or one by one, the counts are the same."""
        with Session(tmp_path / "a.jsonl", tokenizer=TiktokenTokenizer()) as batched:
            batched.append_many(BATCH)
        with Session(tmp_path / "b.jsonl", tokenizer=TiktokenTokenizer()) as single:
            for data in BATCH:
                single.append(data)
        assert per_event(batched) == per_event(single)

    def test_the_views_fold_the_batch_before_it_is_counted(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The views fold the batch; its counts then run back to back, at the first read."""
        order: list[str] = []
        fold, count = LiveViews._apply, UsageProjection.apply

        def spy_fold(self: LiveViews, event: object) -> None:
            order.append("fold")
            fold(self, event)  # type: ignore[arg-type]

        def spy_count(self: UsageProjection, state: object, event: object) -> object:
            order.append("count")
            return count(self, state, event)  # type: ignore[arg-type]

        monkeypatch.setattr(LiveViews, "_apply", spy_fold)
        monkeypatch.setattr(UsageProjection, "apply", spy_count)
        with Session(log_path, tokenizer=TiktokenTokenizer()) as s:
            s.append_many(BATCH[:3])
            assert order == ["fold"] * 3
            _ = s.usage
            assert s._uncounted == []
        assert order == ["fold"] * 3 + ["count"] * 3

    def test_without_a_tokenizer_nothing_is_counted_until_read(self, log_path: Path) -> None:
        """A session that never reads a count (nor clips) loads no tokenizer, batch or not."""
        with Session(log_path, tool_output_cap=None) as s:
            s.append_many(BATCH)
            assert s._tokenizer is None
            assert s._usage_p is None
            counted = per_event(s)
        with Session(log_path, tokenizer=TiktokenTokenizer()) as again:
            assert per_event(again) == counted


class TestEventLine:
    @pytest.mark.parametrize("seq", range(len(BATCH)))
    def test_a_line_is_dump_event_encoded(self, seq: int) -> None:
        """Serialized straight to bytes, a line is `dump_event` in UTF-8 and a line break."""
        event = make_event(seq + 1, BATCH[seq])
        assert event_line(event) == (dump_event(event) + "\n").encode()

    def test_the_log_holds_the_lines(self, log_path: Path) -> None:
        """What the log writes is the lines of its events, in order, non-ASCII text as UTF-8."""
        with Session(log_path) as s:
            events = s.append_many(BATCH)
        assert log_path.read_bytes() == b"".join(event_line(e) for e in events)
        assert "漢字".encode() in log_path.read_bytes()


class TestCountedOnce:
    def test_a_batch_that_waits_is_not_tokenized_again(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Each event of an appended batch is tokenized once.

        (The views let events wait, up to `COUNT_BATCH`, and count them at the next read.)
        """
        seen: list[int] = []
        counted = UsageProjection.event_tokens

        def spy(self: UsageProjection, event: object) -> int:
            seen.append(event.seq)  # type: ignore[attr-defined]
            return counted(self, event)  # type: ignore[arg-type]

        monkeypatch.setattr(UsageProjection, "event_tokens", spy)
        with Session(log_path, tokenizer=TiktokenTokenizer(), tool_output_cap=None) as s:
            s.append_many(BATCH)
            totals = per_event(s)
        assert len(totals) == len(BATCH)
        assert sorted(seen) == list(range(1, len(BATCH) + 1))
