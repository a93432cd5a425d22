"""The benchmark's matched settings: one whole-request budget for every design, B's tail.

Every strategy and peer of the benchmark triggers at `MATCHED_THRESHOLD` of the window (0.8 of
the 30,000-token window: 24,000 tokens). That is the benchmark's fairness setting, not B's
default threshold (`CompactionPolicy().threshold`): every design is compared at one budget. B
keeps its default tail, `CompactionPolicy().retain` of the window; LangChain's ``tail-tokens``
peer variant keeps as many message tokens, `TAIL_SHARE` of the budget, so a change of B's
default retain moves both.

Invariants: the budget does not depend on B's default threshold; the peer's tail is B's.
"""

from __future__ import annotations

from typing import Final

from compaction import CompactionPolicy

MATCHED_THRESHOLD: Final = 0.8
"""Share of the window at which every design and peer compacts or trims."""

TAIL_SHARE: Final = CompactionPolicy().retain / MATCHED_THRESHOLD
"""B's default tail as a share of the matched budget (retain of the window over the threshold)."""


def matched_policy(window_tokens: int) -> CompactionPolicy:
    """Return B's policy at the matched budget: the default retain, `MATCHED_THRESHOLD`."""
    return CompactionPolicy(window_tokens=window_tokens, threshold=MATCHED_THRESHOLD)


__all__ = ["MATCHED_THRESHOLD", "TAIL_SHARE", "matched_policy"]
