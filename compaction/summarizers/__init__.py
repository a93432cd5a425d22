"""Summarizers: what writes the six narrative sections of a Checkpoint.

- `base`: the `SummaryInput` a summarizer reads, the `Summarizer` protocol and `check_output`,
  the only way a summarizer's output reaches a Checkpoint;
- `extractive`: `ExtractiveSummarizer`, the default (offline, deterministic, no model);
- `llm`: `OpenAISummarizer`, a model behind an OpenAI-compatible API (import it from
  ``compaction.llm``, which needs the ``llm`` extra).
"""

from compaction.summarizers.base import Summarizer, SummaryInput, check_output
from compaction.summarizers.extractive import (
    ExtractiveSummarizer,
    find_paths,
    looks_like_path,
    split_entries,
)

__all__ = [
    "ExtractiveSummarizer",
    "Summarizer",
    "SummaryInput",
    "check_output",
    "find_paths",
    "looks_like_path",
    "split_entries",
]
