"""Context Harness benchmarks: token savings, prefix-cache stability, throughput, in rooms.

`attacks`, `speed`, `replay`, `quality`, `features`, `report` and `peers`; each entry point is
a module named for what it measures (``python -m benchmarks.speed.throughput``). Results go to
`RESULTS` (``benchmarks/results/``) so a reader can compare runs.
"""

from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
"""The suite's folder in the checkout."""
CHECKOUT = BENCHMARKS.parent
"""The checkout the suite runs from."""
RESULTS = BENCHMARKS / "results"
"""Where every benchmark writes its committed results."""
SHARED_TRANSCRIPTS = CHECKOUT.parent / "shared" / "transcripts"
"""The shared real transcripts, beside the checkout."""

__all__ = ["BENCHMARKS", "CHECKOUT", "RESULTS", "SHARED_TRANSCRIPTS"]
