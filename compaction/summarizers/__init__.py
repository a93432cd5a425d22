"""Summarizers: what writes the six narrative sections of a Checkpoint.

- `base`: the `SummaryInput` a summarizer reads, the `Summarizer` protocol and `check_output`,
  the only way a summarizer's output reaches a Checkpoint;
- `extractive`: `ExtractiveSummarizer`, the default (offline, deterministic, no model);
- `llm`: `OpenAISummarizer`, a model behind an OpenAI-compatible API; it talks through
  ``compaction.llm.ChatClient`` (the ``llm`` extra: httpx), imported only when it runs.

Arrows point down: this package imports ``compaction.llm`` (the client), never the reverse.
"""

from compaction.summarizers._base import Summarizer, SummaryInput, check_output
from compaction.summarizers._extractive import (
    ExtractiveSummarizer,
    find_paths,
    looks_like_path,
    split_entries,
)
from compaction.summarizers._llm import (
    SUMMARY_PURPOSE,
    OpenAISummarizer,
    instruction,
    kept_after_span,
    record_usage,
    summary_body,
)

__all__ = [
    "SUMMARY_PURPOSE",
    "ExtractiveSummarizer",
    "OpenAISummarizer",
    "Summarizer",
    "SummaryInput",
    "check_output",
    "find_paths",
    "instruction",
    "kept_after_span",
    "looks_like_path",
    "record_usage",
    "split_entries",
    "summary_body",
]
