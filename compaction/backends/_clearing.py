"""Cache-aware clearing of old tool results: clear only when the provider's cache allows it.

Clearing an old tool result shortens every later request, but it rewrites the prompt from that
result on, so the provider's cached prefix past it is lost: done naively (on every call) it
costs more than it saves. The rule here (`clearing_due`) clears the tool results older than
`ClearingPolicy.keep_calls` tool calls only

- when the cached prefix covering them has expired anyway: the gap since the previous request
  is longer than the provider's cache lifetime (`CACHE_LIFETIMES`, the lifetimes
  `harness.simulation._cache_models` uses), or there was no previous request; or
- when the cache model shows the clearing pays back within `ClearingPolicy.payback_calls`
  calls: the one-off cost of re-sending (and, on Anthropic, re-writing) the tokens after the
  first cleared result, against the cached reads the shorter requests save each later call.

`ToolResultClearer` applies the rule for a host request by request: a cleared result stays
cleared (so the prefix never flips back), and enters the context as a one-line note naming its
seq (`harness log LOG --seq N` brings it back). The log is never touched. The decisions depend
only on the requests' contexts and send times, so a host restarted from a log that records the
times (`Session.report_usage(..., at=...)`) rebuilds them with `ToolResultClearer.from_log`.

What may be cleared at all (`clearable`) is counted in turns: an assistant message's tool calls,
parallel ones together, are one turn, and the results of the latest `ClearingPolicy.keep_calls`
turns stay whole. A result the model has not answered yet (no assistant message after it) is
never cleared, nor is the newest ``task_list`` result: it is the only copy of the shared board
the request holds (an older one may go: the newest holds the board).

Invariants: a result of the latest `keep_calls` tool-calling turns, a result no assistant
message follows, and the newest ``task_list`` result are never cleared; a cleared result stays
cleared for the clearer's life; the note names the result's seq; the same requests at the same
times give the same views.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Final, Literal

from compaction.backends._request_times import EventSource, contexts_at, recorded_requests
from compaction.contract import TASK_LIST
from compaction.errors import ConfigError
from compaction.events import Message
from compaction.tokens import Tokenizer, count_message
from compaction.views.context import ContextWindow

CACHE_LIFETIMES: Final[dict[str, float]] = {"openai": 300.0, "anthropic": 300.0, "deepseek": 3600.0}
"""Seconds an unused cached prefix lives, per provider (the cache models' defaults)."""

CACHED_PRICES: Final[dict[str, tuple[float, float]]] = {
    "openai": (0.1, 1.0),
    "anthropic": (0.1, 1.25),
    "deepseek": (0.02, 1.0),
}
"""Per provider: a cached token's price and a cache write's, as shares of an uncached token."""


@dataclass(frozen=True)
class ClearingPolicy:
    """When old tool results may be cleared.

    Args:
        keep_calls: the results of the latest this many tool-calling turns are never cleared
            (an assistant message's calls are one turn, parallel ones together); at least 1.
        ttl_seconds: the provider's cache lifetime: a longer gap means the prefix has expired.
        payback_calls: also clear while the cache is warm when the clearing pays back within
            this many later calls (None: only after an expiry).
        cached_price: a cached input token's price, as a share of an uncached one.
        write_price: a token written to the cache, as a share of an uncached one (1.25 on
            Anthropic; 1 where writes are billed as misses).
        reuse: what of a request survives a clearing in the cache: ``prefix`` (OpenAI,
            DeepSeek: every token before the first cleared result) or ``breakpoints``
            (Anthropic: only up to an earlier breakpoint, the end of the system prompt with
            this toolkit's layout, so the whole conversation is re-sent).
    """

    keep_calls: int = 3
    ttl_seconds: float = 300.0
    payback_calls: int | None = None
    cached_price: float = 0.1
    write_price: float = 1.0
    reuse: Literal["prefix", "breakpoints"] = "prefix"

    def __post_init__(self) -> None:
        problems = []
        if self.keep_calls < 1:
            problems.append(f"keep_calls must be >= 1, not {self.keep_calls}")
        if self.ttl_seconds <= 0:
            problems.append(f"ttl_seconds must be > 0, not {self.ttl_seconds}")
        if self.payback_calls is not None and self.payback_calls < 1:
            problems.append(f"payback_calls must be >= 1 or None, not {self.payback_calls}")
        if not 0 <= self.cached_price <= 1 or self.write_price < self.cached_price:
            problems.append("cached_price must be in [0, 1] and write_price >= cached_price")
        if problems:
            raise ConfigError("invalid ClearingPolicy: " + "; ".join(problems))

    @classmethod
    def for_provider(
        cls, provider: str, *, keep_calls: int = 3, payback_calls: int | None = None
    ) -> ClearingPolicy:
        """Return the policy with `provider`'s cache lifetime and prices.

        Raises:
            ConfigError: a provider without a known cache lifetime.
        """
        if provider not in CACHE_LIFETIMES:
            known = ", ".join(sorted(CACHE_LIFETIMES))
            raise ConfigError(f"no cache lifetime known for {provider!r}; known: {known}")
        cached, write = CACHED_PRICES[provider]
        return cls(
            keep_calls=keep_calls,
            ttl_seconds=CACHE_LIFETIMES[provider],
            payback_calls=payback_calls,
            cached_price=cached,
            write_price=write,
            reuse="breakpoints" if provider == "anthropic" else "prefix",
        )


@dataclass(frozen=True)
class ResultSlot:
    """A tool result that may be cleared, where it sits in the request."""

    seq: int
    """The result's seq in the log."""
    tokens: int
    """Tokens it takes now."""
    offset: int
    """Tokens of the request before it."""


def clearing_due(
    policy: ClearingPolicy,
    candidates: Sequence[ResultSlot],
    *,
    gap_seconds: float | None,
    request_tokens: int,
    note_tokens: int,
) -> tuple[int, ...]:
    """Return the seqs of the candidates to clear now (all of them, or none).

    Args:
        policy: the lifetimes, prices and payback horizon.
        candidates: the results `clearable` allows, not cleared yet.
        gap_seconds: seconds since the previous request (None: no previous request).
        request_tokens: tokens of the request as it would be without clearing.
        note_tokens: tokens a cleared result's note takes.
    """
    seqs = tuple(c.seq for c in candidates)
    saved = sum(max(c.tokens - note_tokens, 0) for c in candidates)
    if not candidates or saved <= 0:
        return ()
    if gap_seconds is None or gap_seconds > policy.ttl_seconds:
        return seqs
    if policy.payback_calls is None:
        return ()
    first = min(c.offset for c in candidates) if policy.reuse == "prefix" else 0
    resent = max(request_tokens - first - saved, 0)
    one_off = resent * (policy.write_price - policy.cached_price)
    per_call = saved * policy.cached_price
    return seqs if one_off <= per_call * policy.payback_calls else ()


@cache
def _note_template() -> str:
    path = resources.files("compaction").joinpath("templates", "cleared_note.md")
    return path.read_text(encoding="utf-8")


def cleared_note(seq: int) -> str:
    """Return the one line a cleared tool result leaves in the context."""
    return _note_template().format(seq=seq)


@dataclass
class ToolResultClearer:
    """Applies a `ClearingPolicy` to a host's successive requests.

    Args:
        policy: when results may be cleared.
        tokenizer: counts the messages (the session's).
    """

    policy: ClearingPolicy
    tokenizer: Tokenizer
    cleared: set[int] = field(default_factory=set)
    """Seqs cleared so far (they stay cleared)."""
    last_at: float | None = None
    """When the previous request was sent, in seconds."""
    counts: dict[int, int] = field(default_factory=dict)
    """Token count of each message seen, by seq (a seq's message never changes)."""

    @classmethod
    def from_log(
        cls, policy: ClearingPolicy, tokenizer: Tokenizer, source: EventSource
    ) -> ToolResultClearer:
        """Return the clearer a host had after the requests its log records, for a restart.

        Each agent request recorded with its send time (`Session.report_usage(..., at=...)`)
        is replayed on the context it carried (`compaction.backends._request_times`), so the
        clearer cleared the same seqs, and its next decision is the live one's. Requests
        recorded without a time are skipped: a log without times gives a fresh clearer.
        """
        clearer = cls(policy, tokenizer)
        for request, window in contexts_at(source, recorded_requests(source.events())):
            clearer.view(window, at=request.at)
        return clearer

    def view(self, window: ContextWindow, *, at: float) -> ContextWindow:
        """Return the context to send at time `at` (seconds), clearing what the rule allows."""
        pairs = list(zip(window.seqs, window.messages, strict=True))
        old = clearable(window, self.policy.keep_calls)
        slots, offset = [], 0
        for seq, message in pairs:
            n = self.counts.get(seq)
            if n is None:
                n = self.counts[seq] = count_message(self.tokenizer, message)
            if seq in old and seq not in self.cleared:
                slots.append(ResultSlot(seq=seq, tokens=n, offset=offset))
            offset += n
        gap = None if self.last_at is None else at - self.last_at
        note = count_message(self.tokenizer, Message(role="user", content=cleared_note(0)))
        self.cleared.update(
            clearing_due(
                self.policy, slots, gap_seconds=gap, request_tokens=offset, note_tokens=note
            )
        )
        self.last_at = at
        return cleared_window(window, self.cleared)


def clearable(window: ContextWindow, keep_calls: int) -> frozenset[int]:
    """Return the seqs of the tool results that may be cleared from `window`.

    Every result but those of the latest `keep_calls` tool-calling turns (a turn is the
    results after one assistant message), those no assistant message follows yet (unanswered)
    and the newest ``task_list`` result (the only copy of the board it needs).
    """
    pairs = list(zip(window.seqs, window.messages, strict=True))
    names = {
        call.id: call.function.name
        for _, message in pairs
        if message.role == "assistant"
        for call in message.tool_calls or ()
    }
    answered_before = max(
        (i for i, (_, m) in enumerate(pairs) if m.role == "assistant"), default=-1
    )
    results: list[tuple[int, int, int]] = []  # (seq, turn: the calling message's index, index)
    turn = -1
    for i, (seq, message) in enumerate(pairs):
        if message.role == "assistant":
            turn = i
        elif message.role == "tool":
            results.append((seq, turn, i))
    kept_turns = sorted({t for _, t, _ in results})[-keep_calls:]
    boards = [
        seq for seq, _, i in results if names.get(pairs[i][1].tool_call_id or "") == TASK_LIST
    ]
    return frozenset(
        seq
        for seq, t, i in results
        if t not in kept_turns and i < answered_before and seq not in boards[-1:]
    )


def cleared_window(window: ContextWindow, cleared: set[int] | frozenset[int]) -> ContextWindow:
    """Return the window with each cleared tool result replaced by its one-line note."""
    messages = tuple(
        Message(role="tool", tool_call_id=m.tool_call_id, content=cleared_note(s))
        if s in cleared and m.role == "tool"
        else m
        for s, m in zip(window.seqs, window.messages, strict=True)
    )
    return window.model_copy(update={"messages": messages})
