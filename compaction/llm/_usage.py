"""Token usage as providers report it, in one shape.

Providers name the cached part of a prompt differently: DeepSeek sends
``usage.prompt_cache_hit_tokens`` (and ``prompt_cache_miss_tokens``), OpenAI and vLLM send
``usage.prompt_tokens_details.cached_tokens``. `read_usage` reads either into `ProviderUsage`.

Invariants: a figure the provider did not send stays None (never guessed as 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

CacheField = Literal["prompt_cache_hit_tokens", "prompt_tokens_details.cached_tokens"]


@dataclass(frozen=True)
class ProviderUsage:
    """Token figures of one API call, as the provider reported them."""

    prompt_tokens: int
    """Tokens of the prompt the provider processed."""
    completion_tokens: int
    """Tokens of the answer."""
    cached_tokens: int | None
    """Prompt tokens served from the provider's prefix cache; None when not reported."""
    cache_field: CacheField | None
    """Which field the cached figure came from."""

    @property
    def cache_hit_share(self) -> float | None:
        """Cached share of the prompt (0..1), None when unknown or the prompt is empty."""
        if self.cached_tokens is None or self.prompt_tokens <= 0:
            return None
        return self.cached_tokens / self.prompt_tokens


def _int(value: object) -> int | None:
    """Return `value` when it is a non-negative int (bools excluded), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def read_usage(usage: Mapping[str, Any]) -> ProviderUsage:
    """Read a chat-completions ``usage`` object (DeepSeek or OpenAI flavour)."""
    cached = _int(usage.get("prompt_cache_hit_tokens"))
    source: CacheField | None = "prompt_cache_hit_tokens" if cached is not None else None
    details = usage.get("prompt_tokens_details")
    if cached is None and isinstance(details, Mapping):
        cached = _int(details.get("cached_tokens"))
        source = "prompt_tokens_details.cached_tokens" if cached is not None else None
    return ProviderUsage(
        prompt_tokens=_int(usage.get("prompt_tokens")) or 0,
        completion_tokens=_int(usage.get("completion_tokens")) or 0,
        cached_tokens=cached,
        cache_field=source,
    )
