"""Prompt-cache models of four providers: how many prompt tokens each would serve from cache.

Each model takes the token ids of a session's successive requests and returns, per request, the
number of tokens its provider would read from the prompt (KV) cache, following the provider's
published rules. All of them share one picture: the cache holds prefixes of earlier requests,
and a request hits on the longest of those that is also its own prefix, rounded down to the
provider's granularity. Every model assumes a cache that keeps everything for the length of a
session unless told the time of each request, and one machine (no routing misses). Given times
(``serve(tokens, breakpoints, at=seconds)``, e.g. the timestamps a log holds), a cached prefix
expires `ttl_seconds` after it was last used (every provider refreshes an entry on each hit);
without times nothing expires, as for the synthetic sessions, whose calls come seconds apart.

- `DeepSeekCache`: prefix match from token 0 in fixed units, `unit` a parameter (default 64).
- `OpenAICache`: nothing under 1,024 tokens; above, hits in 128-token steps.
- `AnthropicCache`: the prefix up to a cache breakpoint written by an earlier request;
  `min_tokens` a parameter (default 1,024).
- `VLLMCache`: automatic prefix caching, 16-token blocks chained by hash; never the last token.

Token ids are given as a sequence of ints, or packed (`pack`: 4 bytes per token, little-endian)
so long sessions compare prefixes with `memcmp` instead of Python loops. Block hashes are
BLAKE2b digests chained from block to block, so results never depend on Python's hash seed.

Invariants: a hit never exceeds the request's length; an entry unused for longer than the
model's `ttl_seconds` never hits; a hit is never above the longest common
prefix with some earlier request; the first request of a fresh model never hits; the same
requests give the same hits.
"""

from __future__ import annotations

import bisect
import hashlib
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from prompts import TOKEN_BYTES
from prompts import common_prefix as common_prefix

TokenIds = Sequence[int] | bytes
"""Token ids of one request: ints, or bytes made by `pack`."""

_WIDTH = TOKEN_BYTES
_ROOT = b"\0" * 8
_NEVER = float("-inf")


def pack(tokens: Sequence[int]) -> bytes:
    """Pack token ids into 4-byte little-endian words (the form the models compare)."""
    arr = array("I", tokens)
    if arr.itemsize != _WIDTH:  # pragma: no cover - every CPython platform has a 4-byte "I"
        raise RuntimeError("array('I') is not 4 bytes wide on this platform")
    return arr.tobytes()


def _packed(tokens: TokenIds) -> bytes:
    return tokens if isinstance(tokens, bytes) else pack(tokens)


def _digest(parent: bytes, chunk: bytes) -> bytes:
    return hashlib.blake2b(chunk, digest_size=8, key=parent).digest()


@dataclass
class _Chain:
    """Chained digests of a request's full blocks, reusing the previous request's chain."""

    block: int
    data: bytes = b""
    digests: list[bytes] = field(default_factory=list)

    def advance(self, data: bytes) -> list[bytes]:
        """Return the digests of `data`'s full blocks (digest i covers blocks 0..i)."""
        size = self.block * _WIDTH
        keep = min(common_prefix(self.data, data) // self.block, len(self.digests))
        digests = self.digests[:keep]
        parent = digests[-1] if digests else _ROOT
        for start in range(keep * size, len(data) - size + 1, size):
            parent = _digest(parent, data[start : start + size])
            digests.append(parent)
        self.data, self.digests = data, digests
        return digests


def _leading_in(digests: Sequence[bytes], seen: dict[bytes, float], since: float) -> int:
    """Count the leading digests last used at `since` or later (prefix-closed: binary search).

    A request touches every one of its digests, so a block is never older than a block after
    it in the same chain.
    """
    lo, hi = 0, len(digests)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        used = seen.get(digests[mid - 1])
        if used is not None and used >= since:
            lo = mid
        else:
            hi = mid - 1
    return lo


class CacheSimulator(Protocol):
    """A provider's cache during one session: feed it requests in order."""

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        """Record a request and return how many of its tokens the cache served.

        Args:
            tokens: the request's token ids.
            breakpoints: token offsets that end a cache breakpoint (used by Anthropic only;
                empty means one breakpoint at the end of the request).
            at: when the request was sent, in seconds (any epoch, never decreasing); entries
                unused for longer than the model's ``ttl_seconds`` have expired. None: no
                clock, nothing expires.
        """
        ...


class CacheModel(Protocol):
    """A provider's caching rules, with their parameters."""

    name: ClassVar[str]

    @property
    def ttl_seconds(self) -> float | None:
        """Seconds an unused prefix lives in the cache; None: forever."""
        ...

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        ...


def replay_hits(
    model: CacheModel,
    requests: Iterable[TokenIds],
    breakpoints: Iterable[Sequence[int]] | None = None,
    times: Iterable[float | None] | None = None,
) -> list[int]:
    """Feed successive requests to a fresh cache of `model`; return the hit tokens of each.

    `times` gives each request's send time in seconds (for expiry); None: no clock.
    """
    sim = model.simulator()
    requests = list(requests)
    marks = list(breakpoints) if breakpoints is not None else [()] * len(requests)
    clock = list(times) if times is not None else [None] * len(requests)
    if len(marks) != len(requests) or len(clock) != len(requests):
        raise ValueError(
            f"{len(requests)} requests but {len(marks)} breakpoint lists and {len(clock)} times"
        )
    return [sim.serve(r, b, t) for r, b, t in zip(requests, marks, clock, strict=True)]


class _BlockSimulator:
    """Hits are whole leading blocks already seen and still alive, shaped by a provider rule."""

    def __init__(self, block: int, ttl: float | None = None) -> None:
        self.chain = _Chain(block)
        self.ttl = ttl
        self.seen: dict[bytes, float] = {}
        """Each block digest seen, with the time it was last used (-inf without a clock)."""

    def since(self, at: float | None) -> float:
        """Return the oldest last-use time still alive at `at` (-inf: everything is)."""
        if at is None or self.ttl is None:
            return _NEVER
        return at - self.ttl

    def matched_blocks(self, data: bytes, at: float | None = None) -> tuple[int, int]:
        """Return (leading blocks seen and alive, full blocks); remember this request's."""
        digests = self.chain.advance(data)
        matched = _leading_in(digests, self.seen, self.since(at))
        if at is None:
            self.seen.update(dict.fromkeys(digests[matched:], _NEVER))
        else:  # every block the request holds is used now: refresh them all
            self.seen.update(dict.fromkeys(digests, at))
        return matched, len(digests)


def _positive(name: str, value: int) -> None:
    if value < 1:
        raise ValueError(f"{name} must be a positive number of tokens, not {value}")


def _lifetime(value: float | None) -> None:
    if value is not None and not value > 0:
        raise ValueError(f"ttl_seconds must be a positive number of seconds or None, not {value}")


@dataclass(frozen=True)
class DeepSeekCache:
    """DeepSeek context caching on disk: prefix match from token 0, in fixed units.

    Source: DeepSeek API docs, "Context Caching" (https://api-docs.deepseek.com/guides/kv_cache).
    Only a repeated prefix hits, counted from the 0th token; the cache is stored in units of 64
    tokens and a shorter remainder is never cached (the guide's FAQ before the V3.2/V4 rewrite).
    The current guide describes "cache prefix units" persisted at request boundaries, at common
    prefixes and at fixed token intervals; with an interval of `unit` this model is the same
    bound, so `unit` is a parameter. Lifetime: the FAQ says an unused cache is cleared
    "typically within a few hours to a few days"; the default takes one hour, below that range.

    Args:
        unit: tokens per storage unit (default 64).
        ttl_seconds: seconds an unused prefix lives (default 3,600; None: forever).
    """

    name: ClassVar[str] = "deepseek"
    unit: int = 64
    ttl_seconds: float | None = 3600

    def __post_init__(self) -> None:
        _positive("unit", self.unit)
        _lifetime(self.ttl_seconds)

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        return _DeepSeekSimulator(self)


class _DeepSeekSimulator(_BlockSimulator):
    def __init__(self, model: DeepSeekCache) -> None:
        super().__init__(model.unit, model.ttl_seconds)
        self.unit = model.unit

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        matched, _ = self.matched_blocks(_packed(tokens), at)
        return matched * self.unit


@dataclass(frozen=True)
class OpenAICache:
    """OpenAI prompt caching: automatic, from 1,024 tokens, in 128-token steps.

    Source: OpenAI API docs, "Prompt caching"
    (https://platform.openai.com/docs/guides/prompt-caching) and the cookbook "Prompt Caching
    201": caching works for prompts of 1,024 tokens or more; cache hits need an exact repeated
    prefix and occur in increments of 128 tokens (so 1,024, 1,152, 1,280, ...). Lifetime (in-memory
    retention, the default): caches are typically cleared after 5 to 10 minutes of inactivity and
    always within one hour; the default takes the 5 minutes.

    Args:
        minimum: shortest cacheable prefix (default 1,024).
        step: granularity of hits above the minimum (default 128).
        ttl_seconds: seconds an unused prefix lives (default 300; None: forever).
    """

    name: ClassVar[str] = "openai"
    minimum: int = 1024
    step: int = 128
    ttl_seconds: float | None = 300

    def __post_init__(self) -> None:
        _positive("minimum", self.minimum)
        _positive("step", self.step)
        _lifetime(self.ttl_seconds)
        if self.minimum % self.step:
            raise ValueError(f"minimum ({self.minimum}) must be a multiple of step ({self.step})")

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        return _OpenAISimulator(self)


class _OpenAISimulator(_BlockSimulator):
    def __init__(self, model: OpenAICache) -> None:
        super().__init__(model.step, model.ttl_seconds)
        self.step, self.minimum = model.step, model.minimum

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        matched, _ = self.matched_blocks(_packed(tokens), at)
        hit = matched * self.step
        return hit if hit >= self.minimum else 0


@dataclass(frozen=True)
class VLLMCache:
    """vLLM automatic prefix caching: full 16-token blocks, each hashed with its parent's hash.

    Source: vLLM design docs, "Automatic Prefix Caching"
    (https://docs.vllm.ai/en/latest/design/prefix_caching/): a block is identified by
    ``hash(parent block hash, tokens of the block, extra keys)``; only full blocks are cached;
    a request reuses its longest run of leading blocks whose hashes are cached. When every
    token would hit, vLLM still recomputes the last one to get its logits, so the hit is
    capped at ``len - 1`` tokens, rounded down to a block (``KVCacheManager.
    get_computed_blocks``).

    Blocks are evicted least-recently-used when GPU memory runs short, not after a time, so the
    default lifetime is None.

    Args:
        block_size: tokens per KV block (default 16, vLLM's default for CUDA).
        ttl_seconds: seconds an unused block lives (default None: until memory runs short).
    """

    name: ClassVar[str] = "vllm"
    block_size: int = 16
    ttl_seconds: float | None = None

    def __post_init__(self) -> None:
        _positive("block_size", self.block_size)
        _lifetime(self.ttl_seconds)

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        return _VLLMSimulator(self)


class _VLLMSimulator(_BlockSimulator):
    def __init__(self, model: VLLMCache) -> None:
        super().__init__(model.block_size, model.ttl_seconds)
        self.block = model.block_size

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        data = _packed(tokens)
        matched, _ = self.matched_blocks(data, at)
        n = len(data) // _WIDTH
        return min(matched, max(n - 1, 0) // self.block) * self.block


@dataclass(frozen=True)
class AnthropicCache:
    """Anthropic prompt caching: the prefix up to a cache breakpoint written by an earlier call.

    Source: Anthropic docs, "Prompt caching"
    (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching): a ``cache_control``
    breakpoint caches the whole prefix (tools, then system, then messages) up to and including
    its block; a later request reads the cache when its own prefix matches a prefix cached
    earlier, exactly; at most 4 breakpoints per request; prefixes shorter than the model's
    minimum (1,024 tokens for Sonnet and Opus, 2,048 for Haiku) are not cached. The lookback of
    about 20 content blocks before each breakpoint is not modelled: between two agent calls only
    a few blocks are appended.

    `serve` takes the request's breakpoints as token offsets (the end of each marked block); the
    replayer reads them from the Anthropic request the prompt builder produced
    (`benchmarks.replay.anthropic_offsets`). Without any, it assumes one at the end of the
    request (the rolling breakpoint on the last message).

    Lifetime: 5 minutes by default, refreshed each time the entry is read; ``"ttl": "1h"`` on a
    breakpoint buys an hour.

    Args:
        min_tokens: shortest prefix a breakpoint caches (default 1,024).
        max_breakpoints: breakpoints allowed per request (default 4; extra ones raise).
        ttl_seconds: seconds an unread entry lives (default 300; 3,600 for the 1-hour cache;
            None: forever).
    """

    name: ClassVar[str] = "anthropic"
    min_tokens: int = 1024
    max_breakpoints: int = 4
    ttl_seconds: float | None = 300

    def __post_init__(self) -> None:
        _positive("min_tokens", self.min_tokens)
        _positive("max_breakpoints", self.max_breakpoints)
        _lifetime(self.ttl_seconds)

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        return _AnthropicSimulator(self)


class _AnthropicSimulator:
    # Breakpoints fall anywhere, so prefixes are keyed at token precision: the digest of the
    # 16-token block chain up to the breakpoint's block, then the remaining tokens.
    _BLOCK = 16

    def __init__(self, model: AnthropicCache) -> None:
        self.model = model
        self.blocks = _BlockSimulator(self._BLOCK, model.ttl_seconds)
        self.entries: dict[tuple[int, bytes], float] = {}
        """Each cached prefix (end offset, key) with the time it was last written or read."""
        self.positions: list[int] = []

    def _key(self, data: bytes, digests: Sequence[bytes], p: int) -> bytes:
        full = p // self._BLOCK
        parent = digests[full - 1] if full else _ROOT
        return _digest(parent, data[full * self._BLOCK * _WIDTH : p * _WIDTH])

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        data = _packed(tokens)
        n = len(data) // _WIDTH
        marks = sorted(set(breakpoints)) if breakpoints else [n]
        if len(marks) > self.model.max_breakpoints:
            raise ValueError(
                f"{len(marks)} cache breakpoints; Anthropic allows {self.model.max_breakpoints}"
            )
        if marks[0] < 0 or marks[-1] > n:
            raise ValueError(f"breakpoints {marks} fall outside a request of {n} tokens")
        since = self.blocks.since(at)
        matched, _ = self.blocks.matched_blocks(data, at)
        digests = self.blocks.chain.digests
        # An entry can only match within the blocks some earlier request shares with this one.
        limit = min(n, (matched + 1) * self._BLOCK)
        hit = 0
        stamp = _NEVER if at is None else at
        for i in range(bisect.bisect_right(self.positions, limit) - 1, -1, -1):
            p = self.positions[i]
            key = (p, self._key(data, digests, p))
            if key in self.entries and self.entries[key] >= since:
                hit = p
                self.entries[key] = max(self.entries[key], stamp)  # a read refreshes the entry
                break
        for p in marks:
            if p < self.model.min_tokens:
                continue
            self.entries[(p, self._key(data, digests, p))] = stamp
            i = bisect.bisect_left(self.positions, p)
            if i == len(self.positions) or self.positions[i] != p:
                self.positions.insert(i, p)
        return hit


PROVIDER_MODELS: tuple[CacheModel, ...] = (
    DeepSeekCache(),
    OpenAICache(),
    AnthropicCache(),
    VLLMCache(),
)
"""The four models with their documented defaults, in report order."""
