"""The peers' content-blind summary, for our strategies: the same text whatever was replaced.

The peers are scored with a fake summarizer that never reads its input: one line,
`CONTENT_BLIND_SUMMARY`, the same text as the peer drivers' ``STRUCTURAL_SUMMARY``.
`BlindSummarizer` writes that line as the Checkpoint's narrative, so B run with it (``B:blind``)
differs from the peers only by mechanism: the Checkpoint's code-owned sections (Pending Jobs,
Current Work) are still copied from the log, and every other section is ``(none)``. Strategy A run
with it (``A:blind``) has no code-owned tasks at all: a content-blind summary is all that survives
a compaction, so its unfinished tasks are lost until the model rewrites its list.

`BLIND_RUNS` names these runs: ``(run name, strategy name)``; `blind_summarizer` is the factory
`harness.simulation.replay` takes.

Invariants: the summary is a constant; the code-owned sections are the compactor's, as always.
"""

from __future__ import annotations

from typing import Any

from compaction import NARRATIVE_SECTIONS, Summarizer, SummaryInput

CONTENT_BLIND_SUMMARY = "Summary of the earlier conversation (the summarizer did not read it)."
"""The peers' content-blind summary text (`benchmarks/peers/drivers/_common.py`)."""

BLIND_RUNS: tuple[tuple[str, str], ...] = (("B:blind", "B"), ("A:blind", "A"))
"""Runs with the content-blind summary: (run name, strategy it runs)."""


class BlindSummarizer:
    """Writes the peers' one-line content-blind summary as the narrative, whatever the span."""

    @property
    def name(self) -> str:
        """The name recorded in each checkpoint event."""
        return "content-blind"

    def summarize(self, span: SummaryInput) -> dict[str, str]:
        """Return the fixed line as the first narrative section; the rest stay empty."""
        return {NARRATIVE_SECTIONS[0]: CONTENT_BLIND_SUMMARY}


def blind_summarizer(request: dict[str, Any]) -> Summarizer:
    """Return the content-blind summarizer for a compaction (the request is not read)."""
    return BlindSummarizer()
