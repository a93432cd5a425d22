"""Provider usage: the usage of OpenAI and Anthropic responses read as `usage/report` data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion
from openai.types.responses import Response, ResponseUsage

from compaction import CompactionPolicy, Session, UsageReported, compacting_call
from compaction.providers.usage_reports import usage_report

CHAT: dict[str, Any] = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4.1-mini",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hi"},
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 1200,
        "completion_tokens": 7,
        "total_tokens": 1207,
        "prompt_tokens_details": {"cached_tokens": 1024},
    },
}
MESSAGE: dict[str, Any] = {
    "id": "m1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 40,
        "output_tokens": 9,
        "cache_read_input_tokens": 900,
        "cache_creation_input_tokens": 60,
    },
}
RESPONSE: dict[str, Any] = {
    "id": "r1",
    "object": "response",
    "created_at": 0,
    "model": "gpt-4.1",
    "output": [],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 800,
        "output_tokens": 5,
        "total_tokens": 805,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 512},
        "output_tokens_details": {"reasoning_tokens": 0},
    },
}


class TestUsageReport:
    @pytest.mark.parametrize("typed", [True, False], ids=["sdk-object", "json"])
    def test_chat_completion(self, typed: bool) -> None:
        """prompt_tokens as the prompt, cached_tokens from its details."""
        response = ChatCompletion.model_validate(CHAT) if typed else CHAT
        report = usage_report(response)
        assert report is not None
        assert (report.purpose, report.model) == ("turn", "gpt-4.1-mini")
        assert (report.prompt_tokens, report.completion_tokens) == (1200, 7)
        assert (report.cached_tokens, report.cache_write_tokens) == (1024, None)

    @pytest.mark.parametrize("typed", [True, False], ids=["sdk-object", "json"])
    def test_anthropic_message_sums_the_three_input_figures(self, typed: bool) -> None:
        """Anthropic's input_tokens is the uncached part: the prompt adds both cache figures."""
        response = Message.model_validate(MESSAGE) if typed else MESSAGE
        report = usage_report(response)
        assert report is not None
        assert (report.model, report.prompt_tokens, report.completion_tokens) == (
            "claude-sonnet-4-5",
            1000,
            9,
        )
        assert (report.cached_tokens, report.cache_write_tokens) == (900, 60)

    def test_responses_answer(self) -> None:
        """input_tokens as the prompt."""
        usage = ResponseUsage.model_validate(RESPONSE["usage"])
        report = usage_report(Response.model_construct(**{**RESPONSE, "usage": usage}))
        assert report is not None
        assert (report.model, report.prompt_tokens, report.completion_tokens) == ("gpt-4.1", 800, 5)
        assert (report.cached_tokens, report.cache_write_tokens) == (0, 512)

    @pytest.mark.parametrize(
        "response",
        [None, "text", 3, {}, {"usage": None}, {"usage": {"prompt_tokens": 0}}, {"usage": "x"}],
    )
    def test_no_usage_is_no_report(self, response: object) -> None:
        """Anything without a positive prompt size gives None, never an error."""
        assert usage_report(response) is None


class TestCompactingCallRecords:
    def test_each_answer_leaves_a_report(self, tmp_path: Path) -> None:
        """compacting_call logs the answer's usage, once per answered call."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("hi")
            answer = compacting_call(session, CompactionPolicy(), lambda: CHAT)
            assert answer is CHAT
            reports = [e for e in session.events() if isinstance(e, UsageReported)]
            assert [r.data.prompt_tokens for r in reports] == [1200]

    def test_record_usage_off(self, tmp_path: Path) -> None:
        """record_usage=False appends nothing."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("hi")
            before = session.applied_seq
            compacting_call(session, CompactionPolicy(), lambda: CHAT, record_usage=False)
            assert session.applied_seq == before
