"""Context overflow: each provider's "too long" refusal is recognised; one compaction, one retry."""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx2
import openai
import pytest
from langchain_core.exceptions import ContextOverflowError

from compaction import (
    CompactionPolicy,
    RequestOverflowError,
    Session,
    compacting_call,
    is_context_overflow,
    overflow_policy,
)

REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")


def openai_overflow() -> Exception:
    body = {"error": {"code": "context_length_exceeded", "message": "too long", "type": "x"}}
    response = httpx2.Response(400, request=REQUEST)
    return openai.BadRequestError("Error code: 400", response=response, body=body)


def anthropic_overflow() -> Exception:
    message = "prompt is too long: 214563 tokens > 200000 maximum"
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    response = httpx2.Response(400, request=request)
    return anthropic.BadRequestError(f"Error code: 400 - {body}", response=response, body=body)


def wrapped(inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as exc:
            raise RuntimeError("the framework failed") from exc
    except RuntimeError as outer:
        return outer


OVERFLOWS = [
    pytest.param(openai_overflow(), id="openai-code"),
    pytest.param(anthropic_overflow(), id="anthropic"),
    pytest.param(ContextOverflowError("input too large"), id="langchain"),
    pytest.param(
        ValueError(
            "This model's maximum context length is 65536 tokens. However, you requested 70000 "
            "tokens (69000 in the messages, 1000 in the completion)."
        ),
        id="deepseek",
    ),
    pytest.param(wrapped(openai_overflow()), id="wrapped-cause"),
]
NOT_OVERFLOWS = [
    pytest.param(RuntimeError("rate limit reached, retry in 20s"), id="rate-limit"),
    pytest.param(ValueError("bad tool schema"), id="bad-request"),
    pytest.param(KeyError("context"), id="key-error"),
]


class TestRecognition:
    @pytest.mark.parametrize("error", OVERFLOWS)
    def test_overflows_are_recognised(self, error: Exception) -> None:
        """Each provider's refusal of a too-long request is recognised (even as a cause)."""
        assert is_context_overflow(error)

    @pytest.mark.parametrize("error", NOT_OVERFLOWS)
    def test_other_errors_are_not(self, error: Exception) -> None:
        """Other errors are not mistaken for an overflow."""
        assert not is_context_overflow(error)

    def test_a_cycle_of_causes_ends(self) -> None:
        """Errors whose causes loop are walked a bounded number of steps."""
        a, b = ValueError("a"), ValueError("b")
        a.__cause__, b.__cause__ = b, a
        assert not is_context_overflow(a)


class TestPolicy:
    def test_window_shrinks_to_the_refused_size(self) -> None:
        """The provider proved the window is below the refused request: the policy says so."""
        policy = CompactionPolicy(window_tokens=200_000, output_reserve=8_000)
        tight = overflow_policy(policy, 50_000)
        assert tight.window_tokens == 50_000
        assert tight.output_reserve < tight.trigger_tokens
        assert overflow_policy(policy, 300_000) is policy


def fill(session: Session, n: int) -> None:
    session.start_turn("work through it")
    for i in range(n):
        session.add_message({"role": "assistant", "content": f"step {i} " + "word " * 80})


class TestRetry:
    def test_one_overflow_one_compaction_one_retry(self, tmp_path: Path) -> None:
        """The first send is refused: one forced compaction, then the second send succeeds."""
        sizes: list[int] = []
        with Session(tmp_path / "s.jsonl") as session:
            fill(session, 40)

            def send() -> str:
                sizes.append(session.context_tokens)
                if len(sizes) == 1:
                    raise openai_overflow()
                return "answer"

            policy = CompactionPolicy(window_tokens=200_000)
            assert compacting_call(session, policy, send) == "answer"
            assert len(sizes) == 2
            assert sizes[1] < sizes[0] / 2
            assert session.context.checkpoint is not None

    def test_a_second_overflow_is_one_line(self, tmp_path: Path) -> None:
        """Refused twice: RequestOverflowError, one line naming the size and the window."""
        with Session(tmp_path / "s.jsonl") as session:
            fill(session, 40)

            def send() -> str:
                raise anthropic_overflow()

            with pytest.raises(RequestOverflowError) as caught:
                compacting_call(session, CompactionPolicy(200_000), send, fixed_tokens=500)
            text = str(caught.value)
            assert "\n" not in text
            assert "200000-token window" in text
            assert caught.value.request_tokens > 500

    def test_other_errors_are_not_retried(self, tmp_path: Path) -> None:
        """A non-overflow error propagates at once, nothing appended."""
        calls: list[int] = []
        with Session(tmp_path / "s.jsonl") as session:
            fill(session, 3)
            before = session.applied_seq

            def send() -> str:
                calls.append(1)
                raise RuntimeError("rate limited")

            with pytest.raises(RuntimeError):
                compacting_call(session, CompactionPolicy(), send)
            assert calls == [1]
            assert session.applied_seq == before
