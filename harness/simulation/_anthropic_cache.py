"""Anthropic's prompt cache: the prefix up to a cache breakpoint written by an earlier request.

Breakpoints fall anywhere, so unlike the block models its entries are keyed at token precision
(the block chain up to the breakpoint's block, then the remaining tokens).

Invariants: only a prefix ending at a breakpoint of an earlier request, at least `min_tokens`
long and alive, hits; more than `max_breakpoints` breakpoints in one request raise.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from harness.simulation._cache_blocks import (
    NEVER,
    ROOT_DIGEST,
    BlockSimulator,
    TokenIds,
    check_lifetime,
    check_positive,
    digest,
    packed,
)
from harness.simulation._cache_protocol import CacheSimulator
from prompts import TOKEN_BYTES


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
    (`harness.simulation._serialization.anthropic_offsets`). Without any, it assumes one at the
    end of the request (the rolling breakpoint on the last message).

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
        check_positive("min_tokens", self.min_tokens)
        check_positive("max_breakpoints", self.max_breakpoints)
        check_lifetime(self.ttl_seconds)

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        return _AnthropicSimulator(self)


class _AnthropicSimulator:
    # Breakpoints fall anywhere, so prefixes are keyed at token precision: the digest of the
    # 16-token block chain up to the breakpoint's block, then the remaining tokens.
    _BLOCK = 16

    def __init__(self, model: AnthropicCache) -> None:
        self.model = model
        self.blocks = BlockSimulator(self._BLOCK, model.ttl_seconds)
        self.entries: dict[tuple[int, bytes], float] = {}
        """Each cached prefix (end offset, key) with the time it was last written or read."""
        self.positions: list[int] = []

    def _key(self, data: bytes, digests: Sequence[bytes], p: int) -> bytes:
        full = p // self._BLOCK
        parent = digests[full - 1] if full else ROOT_DIGEST
        return digest(parent, data[full * self._BLOCK * TOKEN_BYTES : p * TOKEN_BYTES])

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        data = packed(tokens)
        n = len(data) // TOKEN_BYTES
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
        stamp = NEVER if at is None else at
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
