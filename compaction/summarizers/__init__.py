"""Summarizers: what writes the six narrative sections of a Checkpoint.

- `base`: the `SummaryInput` a summarizer reads, the `Summarizer` protocol and `check_output`,
  the only way a summarizer's output reaches a Checkpoint;
- `extractive`: `ExtractiveSummarizer`, the default (offline, deterministic, no model);
- `llm`: `OpenAISummarizer`, a model behind an OpenAI-compatible API; it talks through
  ``compaction.llm.ChatClient`` (the ``llm`` extra: httpx), imported only when it runs.

Arrows point down: this package imports ``compaction.llm`` (the client), never the reverse.
"""

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.summarizers._base import Summarizer, SummaryInput, check_output
    from compaction.summarizers._extractive import ExtractiveSummarizer
    from compaction.summarizers._llm import OpenAISummarizer, record_usage

_EXPORTS: dict[str, str] = {
    "ExtractiveSummarizer": "compaction.summarizers._extractive",
    "OpenAISummarizer": "compaction.summarizers._llm",
    "Summarizer": "compaction.summarizers._base",
    "SummaryInput": "compaction.summarizers._base",
    "check_output": "compaction.summarizers._base",
    "record_usage": "compaction.summarizers._llm",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "ExtractiveSummarizer",
    "OpenAISummarizer",
    "Summarizer",
    "SummaryInput",
    "check_output",
    "record_usage",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
