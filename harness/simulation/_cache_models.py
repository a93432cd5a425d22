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

The models share the block machinery of `cache_blocks` (packed token ids, BLAKE2b digests
chained from block to block, so results never depend on Python's hash seed) and the protocols of
`cache_protocol`; Anthropic's model, keyed at token precision, has its own module
(`anthropic_cache`). This module holds the three block models and the list of all four.

Invariants: a hit never exceeds the request's length; an entry unused for longer than the
model's `ttl_seconds` never hits; a hit is never above the longest common
prefix with some earlier request; the first request of a fresh model never hits; the same
requests give the same hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from harness.simulation._anthropic_cache import AnthropicCache
from harness.simulation._cache_blocks import (
    BlockSimulator,
    TokenIds,
    check_lifetime,
    check_positive,
    pack,
    packed,
)
from harness.simulation._cache_protocol import CacheModel, CacheSimulator, replay_hits
from prompts import TOKEN_BYTES, common_prefix

__all__ = [
    "PROVIDER_MODELS",
    "AnthropicCache",
    "CacheModel",
    "CacheSimulator",
    "DeepSeekCache",
    "OpenAICache",
    "TokenIds",
    "VLLMCache",
    "common_prefix",
    "pack",
    "replay_hits",
]


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
        check_positive("unit", self.unit)
        check_lifetime(self.ttl_seconds)

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        return _DeepSeekSimulator(self)


class _DeepSeekSimulator(BlockSimulator):
    def __init__(self, model: DeepSeekCache) -> None:
        super().__init__(model.unit, model.ttl_seconds)
        self.unit = model.unit

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        matched, _ = self.matched_blocks(packed(tokens), at)
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
        check_positive("minimum", self.minimum)
        check_positive("step", self.step)
        check_lifetime(self.ttl_seconds)
        if self.minimum % self.step:
            raise ValueError(f"minimum ({self.minimum}) must be a multiple of step ({self.step})")

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        return _OpenAISimulator(self)


class _OpenAISimulator(BlockSimulator):
    def __init__(self, model: OpenAICache) -> None:
        super().__init__(model.step, model.ttl_seconds)
        self.step, self.minimum = model.step, model.minimum

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        matched, _ = self.matched_blocks(packed(tokens), at)
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
        check_positive("block_size", self.block_size)
        check_lifetime(self.ttl_seconds)

    def simulator(self) -> CacheSimulator:
        """Return an empty cache."""
        return _VLLMSimulator(self)


class _VLLMSimulator(BlockSimulator):
    def __init__(self, model: VLLMCache) -> None:
        super().__init__(model.block_size, model.ttl_seconds)
        self.block = model.block_size

    def serve(
        self, tokens: TokenIds, breakpoints: Sequence[int] = (), at: float | None = None
    ) -> int:
        data = packed(tokens)
        matched, _ = self.matched_blocks(data, at)
        n = len(data) // TOKEN_BYTES
        return min(matched, max(n - 1, 0) // self.block) * self.block


PROVIDER_MODELS: tuple[CacheModel, ...] = (
    DeepSeekCache(),
    OpenAICache(),
    AnthropicCache(),
    VLLMCache(),
)
"""The four models with their documented defaults, in report order."""
