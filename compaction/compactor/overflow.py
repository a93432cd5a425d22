"""Context overflow: a provider's "this request is too long" refusal, recognised by its shape.

Every provider refuses an over-long request in its own words: OpenAI answers HTTP 400 with the
code ``context_length_exceeded``; Anthropic says ``prompt is too long: N tokens > M maximum``;
DeepSeek (and vLLM, and other OpenAI-compatible servers) ``This model's maximum context length
is N tokens. However, you requested M tokens``; LangChain raises its own
``ContextOverflowError``. `is_context_overflow` recognises each, on the error or on any error it
was raised from, without importing any provider's SDK.

The answer an agent loop gives (Claude Code, Codex, deepagents and OpenCode all do it): force
one compaction, send the request again once, and if the provider still refuses, stop with
`RequestOverflowError`, one line naming the request's size. The refusal proves the real window
is smaller than the refused request, so the forced compaction runs under `overflow_policy`: the
policy with its window cut down to the refused request's size, which keeps a tail of at most
``retain`` of that (a real shrink, where the configured window would keep everything).

`compacting_call(session, policy, send)` does all of it for a loop that builds each
request from the session: it compacts first when the request is due (`maybe_compact`), calls
``send`` (which builds the request from the session and sends it), and after a refusal calls it
once more, so the retry carries the compacted view. The answer's provider usage (an OpenAI or
Anthropic response's ``usage``: `compaction.providers.usage_reports`) is
logged as a ``usage/report``
before the answer is returned, so the session learns the provider's token scale.

Invariants: recognition reads only the error's class name, its ``code`` / ``body`` fields and
its text, never the network; a recognised error is never swallowed twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from compaction.compactor.compact import compact, maybe_compact
from compaction.errors import CompactionError, ConfigError, HarnessError
from compaction.policy import CompactionPolicy
from compaction.providers import usage_report
from compaction.secrets import redact
from compaction.session import Session
from compaction.summarizers import Summarizer
from compaction.views.token_scale import scaled_tokens

T = TypeVar("T")

OVERFLOW_CODES: Final = frozenset({"context_length_exceeded", "string_above_max_length"})
"""Error codes (OpenAI's, and servers that copy its shape) that mean "the request is too long"."""
OVERFLOW_CLASSES: Final = frozenset({"ContextOverflowError", "ContextWindowExceededError"})
"""Exception class names that mean it (LangChain's, LiteLLM's)."""
OVERFLOW_PHRASES: Final = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "exceeds the context window",
    "exceeds the maximum number of tokens",
    "input is too long",
    "too many input tokens",
)
"""Lowercased phrases of the providers' messages (OpenAI, Anthropic, DeepSeek, Gemini, Bedrock)."""
RETRY_ANYWAY: Final = ("nothing_to_compact", "no_safe_cut", "does_not_fit")
"""Refusals of the forced compaction after an overflow that still lead to the one retry: the
provider's answer to it decides (a second refusal is `RequestOverflowError`, naming the size)."""
CHAIN_DEPTH: Final = 8
"""How many causes (``__cause__`` / ``__context__``) are followed."""


class RequestOverflowError(HarnessError):
    """The provider refused a request as too long, again, after one compaction and a retry.

    Attributes:
        request_tokens: the request's size as this toolkit counted it (provider tokens when
            the session knows its token scale).
        window_tokens: the policy's window.
    """

    def __init__(self, request_tokens: int, window_tokens: int, cause: BaseException) -> None:
        self.request_tokens = request_tokens
        self.window_tokens = window_tokens
        text = str(cause).strip()
        first = redact(text.splitlines()[0][:200]) if text else ""
        detail = f" ({type(cause).__name__}: {first})" if first else f" ({type(cause).__name__})"
        super().__init__(
            f"the provider refused the request as too long after one compaction and a retry: "
            f"about {request_tokens} tokens against a {window_tokens}-token window{detail}; "
            "lower CompactionPolicy.window_tokens to the model's real window"
        )


def _code_of(exc: BaseException) -> object:
    code = getattr(exc, "code", None)
    if isinstance(code, str):
        return code
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            return error.get("code") or error.get("type")
    return None


def _is_one(exc: BaseException) -> bool:
    if type(exc).__name__ in OVERFLOW_CLASSES or _code_of(exc) in OVERFLOW_CODES:
        return True
    text = str(exc).lower()
    return any(phrase in text for phrase in OVERFLOW_PHRASES)


def is_context_overflow(exc: BaseException) -> bool:
    """Tell whether an error is a provider's refusal of a request as too long.

    The error itself or any error it was raised from (up to `CHAIN_DEPTH` causes) counts: a
    framework that wraps the SDK's error still shows it.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    for _ in range(CHAIN_DEPTH):
        if current is None or id(current) in seen:
            return False
        if _is_one(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def overflow_policy(policy: CompactionPolicy, refused_tokens: int) -> CompactionPolicy:
    """Return the policy for the compaction after a refusal of a `refused_tokens` request.

    The window becomes the refused request's size when that is smaller (the provider just
    proved the real window is); the reserve shrinks to stay under the trigger. A window too
    small to make a valid policy leaves `policy` as it is.
    """
    window = max(1, min(policy.window_tokens, refused_tokens))
    if window == policy.window_tokens:
        return policy
    reserve = min(policy.output_reserve, int(window * policy.threshold) // 2)
    try:
        return dataclasses.replace(policy, window_tokens=window, output_reserve=reserve)
    except ConfigError:
        return policy


def _answered(session: Session, answer: T, record: bool) -> T:
    """Log the answer's provider usage (when asked and it has one); return the answer."""
    report = usage_report(answer) if record else None
    if report is not None:
        session.append(report)
    return answer


def compacting_call(
    session: Session,
    policy: CompactionPolicy,
    send: Callable[[], T],
    *,
    fixed_tokens: int = 0,
    summarizer: Summarizer | None = None,
    record_usage: bool = True,
) -> T:
    """Compact when due, call `send`; on a context overflow, compact (forced) and call it again.

    Args:
        session: the session the request is built from.
        policy: the loop's policy (its window is the provider's tokens).
        send: builds the request from the session and sends it (called at most twice).
        fixed_tokens: the request's system prompt and tools, counted.
        summarizer: writes the Checkpoint's narrative sections (default: extractive).
        record_usage: log the answer's provider usage as a ``usage/report`` (when it has one;
            `compaction.providers.usage_reports.usage_report`), which teaches the session its token
            scale. Off for a caller that logs usage itself.

    Raises:
        RequestOverflowError: the provider refused the retried request as too long too.
    """
    maybe_compact(session, policy, summarizer=summarizer, fixed_tokens=fixed_tokens)
    try:
        answer = send()
    except Exception as exc:
        if not is_context_overflow(exc):
            raise
        counted = policy.in_counted_tokens(session.token_scale)
        refused = fixed_tokens + session.context_tokens
        try:
            compact(
                session,
                overflow_policy(counted, refused),
                summarizer=summarizer,
                force=True,
                fixed_tokens=fixed_tokens,
            )
        except CompactionError as refusal:
            if refusal.code not in RETRY_ANYWAY:
                raise
    else:
        return _answered(session, answer, record_usage)
    try:
        answer = send()
    except Exception as again:
        if not is_context_overflow(again):
            raise
        size = scaled_tokens(fixed_tokens + session.context_tokens, session.token_scale)
        size += policy.output_reserve
        raise RequestOverflowError(size, policy.window_tokens, again) from None
    return _answered(session, answer, record_usage)
