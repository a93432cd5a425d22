"""What a provider cache model is: a `CacheModel` (the rules) makes `CacheSimulator`s (a cache).

Invariants: a simulator is fed one session's requests in order; a hit never exceeds the
request's length; the first request of a fresh simulator never hits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar, Protocol

from harness.simulation._cache_blocks import TokenIds


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
