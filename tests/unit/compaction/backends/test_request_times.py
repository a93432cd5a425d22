"""Request times in the log: a reopened session makes the clearing decisions the live one made."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import (
    CompactionPolicy,
    Session,
    UsageReportData,
    compact,
    get_tokenizer,
    parse_event,
)
from compaction.backends import ClearingPolicy, ToolResultClearer
from compaction.backends._request_times import recorded_requests

TOKENIZER = get_tokenizer("o200k_base")
POLICIES = {
    "expiry": ClearingPolicy(keep_calls=2, ttl_seconds=300.0),
    "payback": ClearingPolicy(keep_calls=2, ttl_seconds=300.0, payback_calls=3),
    "anthropic": ClearingPolicy.for_provider("anthropic", keep_calls=2, payback_calls=20),
}
GAPS = (0.0, 12.0, 30.0, 400.0, 5.0, 8.0, 3700.0, 20.0, 15.0, 900.0, 4.0, 6.0)
"""Seconds before each request: warm calls, and gaps past the 5-minute and 60-minute lifetimes."""


def usage() -> UsageReportData:
    return UsageReportData(purpose="turn", model="m", prompt_tokens=100, completion_tokens=10)


def live_loop(session: Session, policy: ClearingPolicy, *, explicit: bool) -> ToolResultClearer:
    """A host's loop: clear, send, record the answer and its usage with the send time.

    With `explicit`, usage is reported before the answer, naming the request's context seq;
    otherwise after it, relying on the default rule. One compaction happens midway.
    """
    session.start_turn("Survey the repository")
    clearer = ToolResultClearer(policy, TOKENIZER)
    now = 1_700_000_000.0
    for i, gap in enumerate(GAPS):
        now += gap
        built_at = session.applied_seq
        clearer.view(session.context, at=now)
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        if explicit:
            session.report_usage(usage(), at=now, context_seq=built_at)
        session.add_message({"role": "assistant", "content": None, "tool_calls": [call]})
        if not explicit:
            session.report_usage(usage(), at=now)
        content = f"file {i} " * (150 + 40 * i)
        session.add_message({"role": "tool", "tool_call_id": f"c{i}", "content": content})
        if i == 7:
            compact(session, CompactionPolicy(window_tokens=6000), force=True)
    return clearer


class TestReopened:
    @pytest.mark.parametrize("explicit", [False, True])
    @pytest.mark.parametrize("name", sorted(POLICIES))
    def test_same_cleared_seqs_as_the_live_session(
        self, log_path: Path, name: str, explicit: bool
    ) -> None:
        """from_log on the reopened log clears what the live clearer cleared, and goes on alike."""
        policy = POLICIES[name]
        with Session(log_path) as session:
            live = live_loop(session, policy, explicit=explicit)
        assert live.cleared, "the loop must clear something, or the test checks nothing"
        with Session(log_path) as reopened:
            restored = ToolResultClearer.from_log(policy, TOKENIZER, reopened)
            assert restored.cleared == live.cleared
            assert restored.last_at == live.last_at
            window = reopened.context
        assert live.last_at is not None
        for gap in (10.0, 4000.0):
            assert restored.view(window, at=live.last_at + gap) == live.view(
                window, at=live.last_at + gap
            )
            assert restored.cleared == live.cleared

    def test_without_times_a_fresh_clearer_decides_otherwise(self, log_path: Path) -> None:
        """The times matter: a clearer without them clears on a warm cache the live one kept."""
        policy = POLICIES["expiry"]
        with Session(log_path) as session:
            live = live_loop(session, policy, explicit=False)
        with Session(log_path) as reopened:
            window = reopened.context
        assert live.last_at is not None
        fresh = ToolResultClearer(policy, TOKENIZER)
        fresh.view(window, at=live.last_at + 10.0)
        live.view(window, at=live.last_at + 10.0)
        assert fresh.cleared != live.cleared


class TestRecordedRequests:
    def test_default_context_is_before_the_answer(self, log_path: Path) -> None:
        """Without context_seq a request covers the events before the newest assistant message."""
        with Session(log_path) as session:
            session.start_turn("hi")  # seqs 1, 2
            session.add_message({"role": "assistant", "content": "hello"})  # 3
            session.report_usage(usage(), at=5.0)  # 4
            session.report_usage(usage(), at=6.0, context_seq=4)  # 5
            session.add_message({"role": "user", "content": "more"})  # 6
            session.report_usage(usage(), at=7.0)  # 7: no new answer: still before seq 3
            session.append(usage())  # 8: no time: not a recorded request
            requests = recorded_requests(session.events())
        assert [(r.at, r.context_seq, r.report_seq) for r in requests] == [
            (5.0, 2, 4),
            (6.0, 4, 5),
            (7.0, 2, 7),
        ]

    def test_a_report_before_any_answer_covers_what_precedes_it(self, log_path: Path) -> None:
        """With no assistant message yet, the context is every event before the report."""
        with Session(log_path) as session:
            session.start_turn("hi")  # 1, 2
            session.report_usage(usage(), at=1.0)  # 3
            assert [r.context_seq for r in recorded_requests(session.events())] == [2]

    def test_summary_calls_are_not_agent_requests(self, log_path: Path) -> None:
        """Only purpose ``turn`` is an agent request."""
        with Session(log_path) as session:
            session.start_turn("hi")
            session.report_usage(usage().model_copy(update={"purpose": "summary"}), at=1.0)
            assert recorded_requests(session.events()) == []

    def test_old_lines_without_times_still_read(self) -> None:
        """A usage/report written before the fields existed parses, with no time."""
        line = (
            '{"v":1,"seq":3,"type":"usage/report","data":{"purpose":"turn","model":"m",'
            '"prompt_tokens":5,"completion_tokens":1}}'
        )
        event = parse_event(line)
        assert event.data.at is None  # type: ignore[union-attr]
        assert recorded_requests([event]) == []

    @pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
    def test_bad_times_are_refused(self, log_path: Path, bad: float) -> None:
        """A negative or non-finite time is refused and nothing is appended."""
        with Session(log_path) as session:
            session.start_turn("hi")
            with pytest.raises(ValueError, match="at"):
                session.report_usage(usage(), at=bad)
            assert session.applied_seq == 2
