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

import re
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from compaction.compactor.compact import compact, maybe_compact
from compaction.errors import CompactionError, HarnessError
from compaction.events import MAX_INT, OverflowData
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
    "exceed context limit",
    "maximum context length",
    "exceeds the context window",
    "longer than the maximum model length",
    "exceeds the maximum number of tokens",
    "input is too long",
    "too many input tokens",
)
"""Lowercased phrases of the providers' messages: OpenAI chat and Responses; Anthropic's three
(``prompt is too long``, ``input length and `max_tokens` exceed context limit``, ``Input is too
long for requested model``); DeepSeek's and vLLM's ``maximum context length``; vLLM's ``longer
than the maximum model length``; Gemini's and Bedrock's. A phrase counts only on an error that
carries a 400-class status (`REFUSAL_STATUSES`): ``ValueError("tool input is too long")`` is
not a provider's refusal."""
REFUSAL_STATUSES: Final = range(400, 429)
"""HTTP statuses of a provider's refusal of the request itself (400, 413, 422...; not 429)."""
LIMIT_PATTERNS: Final = (
    re.compile(r"tokens? > (\d{1,12}) maximum"),
    re.compile(r"exceed context limit: \d{1,12} \+ \d{1,12} > (\d{1,12})"),
    re.compile(r"maximum context length is (\d{1,12}) tokens"),
    re.compile(r"maximum model length of (\d{1,12})"),
)
"""Where a refusal names the provider's window (Anthropic, OpenAI, DeepSeek, vLLM)."""
MAX_TEXT: Final = 4096
"""Characters of an error's text read for a phrase or a limit."""
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
        text = error_text(cause).strip()
        first = redact(text.splitlines()[0][:200]) if text else ""
        detail = f" ({type(cause).__name__}: {first})" if first else f" ({type(cause).__name__})"
        super().__init__(
            f"the provider refused the request as too long after one compaction and a retry: "
            f"about {request_tokens} tokens against a {window_tokens}-token window{detail}; "
            "lower CompactionPolicy.window_tokens to the model's real window"
        )


def _attribute(value: object, name: str) -> object:
    """Read an attribute of a hostile object: None when reading it raises."""
    try:
        return getattr(value, name, None)
    except Exception:  # an error object's property may raise anything
        return None


def error_text(exc: BaseException) -> str:
    """Return an error's text, at most `MAX_TEXT` characters; "" when ``str()`` raises."""
    try:
        text = str(exc)
    except Exception:  # a hostile __str__
        return ""
    return text[:MAX_TEXT] if isinstance(text, str) else ""


def _code_of(exc: BaseException) -> object:
    code = _attribute(exc, "code")
    if isinstance(code, str):
        return code
    body = _attribute(exc, "body")
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            return error.get("code") or error.get("type")
    return None


def _status_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK error carries (``status_code``, ``status``, its response's)."""
    for value in (
        _attribute(exc, "status_code"),
        _attribute(exc, "status"),
        _attribute(_attribute(exc, "response"), "status_code"),
    ):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _is_one(exc: BaseException) -> bool:
    if type(exc).__name__ in OVERFLOW_CLASSES:
        return True
    if _status_of(exc) not in REFUSAL_STATUSES:
        return False
    if _code_of(exc) in OVERFLOW_CODES:
        return True
    text = error_text(exc).lower()
    return any(phrase in text for phrase in OVERFLOW_PHRASES)


def is_context_overflow(exc: BaseException) -> bool:
    """Tell whether an error is a provider's refusal of a request as too long.

    A framework's own overflow class counts (`OVERFLOW_CLASSES`); otherwise the error must carry
    a 400-class status and say it with a code or a provider's phrase. The error itself or any
    error it was raised from (up to `CHAIN_DEPTH` causes) counts: a framework that wraps the
    SDK's error still shows it. Never raises, whatever the error object does.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    for _ in range(CHAIN_DEPTH):
        if current is None or id(current) in seen:
            return False
        if _is_one(current):
            return True
        seen.add(id(current))
        current = _cause_of(current)
    return False


def _cause_of(exc: BaseException) -> BaseException | None:
    cause = _attribute(exc, "__cause__") or _attribute(exc, "__context__")
    return cause if isinstance(cause, BaseException) else None


def refused_limit(exc: BaseException) -> int | None:
    """Return the window a provider's refusal names (in its tokens), or None when it names none.

    Reads the error and its causes (Anthropic's ``... > 200000 maximum`` and ``... > 200000,
    decrease input length``, ``maximum context length is N tokens``, vLLM's ``maximum model
    length of N``); at most 12 digits are read, so a hostile figure is never parsed.
    """
    current: BaseException | None = exc
    for _ in range(CHAIN_DEPTH):
        if current is None:
            return None
        text = error_text(current)
        for pattern in LIMIT_PATTERNS:
            if found := pattern.search(text):
                return int(found.group(1)) or None
        current = _cause_of(current)
    return None


def record_overflow(session: Session, exc: BaseException, request_tokens: int) -> None:
    """Record a provider's refusal of a `request_tokens` request (a ``context/overflow``).

    From then on `maybe_compact` (and the adapters) use a window of at most what the refusal
    proved (`Session.refused_window`). A size outside the event's bounds is not recorded.
    """
    if 1 <= request_tokens <= MAX_INT:
        session.append(OverflowData(request_tokens=request_tokens, limit_tokens=refused_limit(exc)))


def overflow_policy(policy: CompactionPolicy, refused_tokens: int) -> CompactionPolicy:
    """Return the policy for the compaction after a refusal of a `refused_tokens` request.

    The window becomes the refused request's size when that is smaller (the provider just
    proved the real window is); the reserve shrinks to stay under the trigger. A window too
    small to make a valid policy leaves `policy` as it is.
    """
    return policy.capped(max(1, refused_tokens))


def _answered(session: Session, answer: T, record: bool) -> T:
    """Log the answer's provider usage (when asked and it has one); return the answer.

    Logging never fails an answered call: a usage object that cannot be read or recorded (a
    getter that raises, a negative or enormous figure) is left out of the log.
    """
    try:
        report = usage_report(answer) if record else None
    except Exception:  # a hostile usage object: the answer still counts
        report = None
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

    A tool call the log left without a result (a process killed inside it) is answered first
    (`Session.answer_open_calls`): `send` builds its request from the log, and a provider
    refuses one that holds an unanswered call.

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
    session.answer_open_calls()
    maybe_compact(session, policy, summarizer=summarizer, fixed_tokens=fixed_tokens)
    try:
        answer = send()
    except Exception as exc:
        if not is_context_overflow(exc):
            raise
        refused = fixed_tokens + session.context_tokens
        record_overflow(session, exc, refused)
        counted = policy.capped(session.refused_window).in_counted_tokens(session.token_scale)
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
