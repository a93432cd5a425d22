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
from compaction.compactor.overflow import refused_limit
from compaction.events import OverflowRecorded

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


def status_error(message: str, status: int = 400, code: str | None = None) -> Exception:
    """An OpenAI-SDK error carrying `status` and a provider's `message` (DeepSeek, vLLM...)."""
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    response = httpx2.Response(status, request=REQUEST)
    return openai.APIStatusError(f"Error code: {status} - {body}", response=response, body=body)


def anthropic_error(message: str) -> Exception:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    response = httpx2.Response(400, request=request)
    return anthropic.BadRequestError(f"Error code: 400 - {body}", response=response, body=body)


DEEPSEEK = (
    "This model's maximum context length is 65536 tokens. However, you requested 70000 "
    "tokens (69000 in the messages, 1000 in the completion)."
)
EXCEED = (
    "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease "
    "input length or `max_tokens` and try again"
)
VLLM = (
    "The decoder prompt (length 17772) is longer than the maximum model length of 16384. Make "
    "sure that `max_model_len` is no smaller than the number of text tokens."
)


class HostileText(Exception):
    """An error whose ``str()`` raises (and whose attributes do)."""

    def __str__(self) -> str:
        raise RuntimeError("no text for you")

    @property
    def status_code(self) -> int:
        raise RuntimeError("no status either")


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
    pytest.param(status_error(DEEPSEEK), id="deepseek"),
    pytest.param(status_error(DEEPSEEK.replace("65536", "4096")), id="vllm-chat"),
    pytest.param(status_error(VLLM), id="vllm-decoder-prompt"),
    pytest.param(anthropic_error(EXCEED), id="anthropic-exceed-context-limit"),
    pytest.param(anthropic_error("Input is too long for requested model."), id="anthropic-input"),
    pytest.param(
        status_error("Your input exceeds the context window of this model.", 400, "x"),
        id="responses",
    ),
    pytest.param(wrapped(openai_overflow()), id="wrapped-cause"),
]
NOT_OVERFLOWS = [
    pytest.param(RuntimeError("rate limit reached, retry in 20s"), id="rate-limit"),
    pytest.param(ValueError("bad tool schema"), id="bad-request"),
    pytest.param(KeyError("context"), id="key-error"),
    pytest.param(ValueError("tool input is too long"), id="phrase-without-status"),
    pytest.param(ValueError(DEEPSEEK), id="provider-words-without-status"),
    pytest.param(status_error(DEEPSEEK, 500), id="server-error"),
    pytest.param(status_error("too many input tokens per minute", 429), id="rate-limit-429"),
    pytest.param(HostileText(), id="hostile-str"),
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

    @pytest.mark.parametrize(
        ("error", "limit"),
        [
            (anthropic_overflow(), 200_000),
            (anthropic_error(EXCEED), 200_000),
            (status_error(DEEPSEEK), 65_536),
            (status_error(VLLM), 16_384),
            (openai_overflow(), None),
            (status_error("maximum context length is " + "9" * 5000 + " tokens"), None),
            (HostileText(), None),
        ],
    )
    def test_the_window_a_refusal_names_is_read(self, error: Exception, limit: int | None) -> None:
        """The provider's stated window is parsed; a figure of thousands of digits is not."""
        assert refused_limit(error) == limit

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


class Usage:
    """A usage object whose getters raise."""

    @property
    def prompt_tokens(self) -> int:
        raise RuntimeError("no usage")


class Answer:
    """An answer whose usage is hostile: raising getters, negative or enormous figures."""

    def __init__(self, usage: object) -> None:
        self.usage = usage
        self.model = "m"


class TestHostileObjects:
    @pytest.mark.parametrize(
        "usage",
        [
            Usage(),
            {"prompt_tokens": -5, "completion_tokens": -1},
            {"prompt_tokens": 10**5000, "completion_tokens": 1},
            {"input_tokens": 7, "cache_read_input_tokens": 10**20, "output_tokens": 1},
        ],
        ids=["getter-raises", "negative", "huge", "huge-cache"],
    )
    def test_usage_never_fails_an_answered_call(self, tmp_path: Path, usage: object) -> None:
        """The answer comes back; nothing unreadable is logged; the log reopens."""
        with Session(tmp_path / "s.jsonl") as session:
            fill(session, 2)
            answer = Answer(usage)
            assert compacting_call(session, CompactionPolicy(), lambda: answer) is answer
        with Session(tmp_path / "s.jsonl") as again:
            assert again.applied_seq >= 3

    def test_an_error_whose_str_raises_propagates_as_itself(self, tmp_path: Path) -> None:
        """Not an overflow, not a crash of the loop's guard: the host's own error, one send."""
        sends: list[int] = []
        with Session(tmp_path / "s.jsonl") as session:
            fill(session, 2)

            def send() -> str:
                sends.append(1)
                raise HostileText()

            with pytest.raises(HostileText):
                compacting_call(session, CompactionPolicy(), send)
        assert sends == [1]


class TestSends:
    def test_a_double_overflow_sends_exactly_twice(self, tmp_path: Path) -> None:
        """Refused twice: two sends, one recorded refusal, then RequestOverflowError."""
        sends: list[int] = []
        with Session(tmp_path / "s.jsonl") as session:
            fill(session, 40)

            def send() -> str:
                sends.append(session.context_tokens)
                raise anthropic_overflow()

            with pytest.raises(RequestOverflowError):
                compacting_call(session, CompactionPolicy(200_000), send)
            refusals = [e for e in session.events() if isinstance(e, OverflowRecorded)]
        assert len(sends) == 2
        assert [r.data.limit_tokens for r in refusals] == [200_000]


class TestLearnedWindow:
    def test_a_smaller_real_window_is_refused_once(self, tmp_path: Path) -> None:
        """Configured 200k, real 3k: after the first refusal every call fits (one refusal)."""
        real = 3_000
        refusals: list[int] = []
        answers = 0
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("work through it")
            policy = CompactionPolicy(200_000)

            def send() -> str:
                size = session.context_tokens
                if size > real:
                    refusals.append(size)
                    raise status_error(DEEPSEEK.replace("65536", str(real)))
                return "ok"

            for i in range(40):
                compacting_call(session, policy, send)
                answers += 1
                session.add_message({"role": "assistant", "content": f"step {i} " + "w " * 200})
            assert session.refused_window == real
        assert answers == 40
        assert len(refusals) == 1

    def test_the_refused_window_survives_a_reopen(self, tmp_path: Path) -> None:
        """The refusal is an event: a new process uses the smaller window at once."""
        with Session(tmp_path / "s.jsonl") as session:
            fill(session, 40)
            calls: list[int] = []

            def send() -> str:
                calls.append(1)
                if len(calls) == 1:
                    raise anthropic_error(EXCEED)
                return "ok"

            compacting_call(session, CompactionPolicy(), send)
        with Session(tmp_path / "s.jsonl") as again:
            assert again.refused_window == 200_000
            assert CompactionPolicy(400_000).capped(again.refused_window).window_tokens == 200_000
