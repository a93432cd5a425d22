"""The window a provider proved: the smallest request it refused as too long.

A ``context/overflow`` event records a refusal: the refused request's size as this toolkit
counted it and, when the provider's message named one, its window. The refusal proves the real
window is at most that; a loop configured with a larger window would be refused again and again.
`RefusalsProjection` keeps the smallest of each, and `Refusals.window` gives the window to use,
in the provider's tokens: the smallest named limit, else the smallest refused size (scaled by
the session's token scale).

Invariants: a pure fold; only ``context/overflow`` events change it; the window only shrinks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from compaction.events import Event, OverflowRecorded
from compaction.views.token_scale import scaled_tokens


@dataclass(frozen=True)
class Refusals:
    """The smallest refused request (counted tokens) and the smallest limit a provider named."""

    request_tokens: int | None = None
    limit_tokens: int | None = None

    def window(self, scale: float | None) -> int | None:
        """The window the provider proved, in its tokens (None: it never refused a request)."""
        if self.limit_tokens is not None:
            return self.limit_tokens
        if self.request_tokens is None:
            return None
        return max(1, scaled_tokens(self.request_tokens, scale))


def _least(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


class RefusalsProjection:
    """Folds ``context/overflow`` events into the smallest refusal."""

    name: ClassVar[str] = "refusals"
    state_version: ClassVar[int] = 1

    def init(self) -> Refusals:
        """Return no refusal."""
        return Refusals()

    def apply(self, state: Refusals, event: Event) -> Refusals:
        """Keep the smaller of each figure."""
        if not isinstance(event, OverflowRecorded):
            return state
        data = event.data
        return Refusals(
            _least(state.request_tokens, data.request_tokens),
            _least(state.limit_tokens, data.limit_tokens),
        )

    def view(self, state: Refusals) -> Refusals:
        """Return the state (immutable)."""
        return state


__all__ = ["Refusals", "RefusalsProjection"]
