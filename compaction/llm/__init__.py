"""LLM summarization over OpenAI-compatible chat-completions APIs (the ``llm`` extra: httpx).

Import it as ``compaction.llm``; the core `compaction` package never imports it, so it works
without httpx installed.
"""

from compaction.llm.client import ChatAnswer, ChatClient, ChatConfig, canonical_json
from compaction.llm.usage import ProviderUsage, read_usage
from compaction.summarizers.llm import (
    SUMMARY_PURPOSE,
    OpenAISummarizer,
    instruction,
    kept_after_span,
    record_usage,
    summary_body,
)

__all__ = [
    "SUMMARY_PURPOSE",
    "ChatAnswer",
    "ChatClient",
    "ChatConfig",
    "OpenAISummarizer",
    "ProviderUsage",
    "canonical_json",
    "instruction",
    "kept_after_span",
    "read_usage",
    "record_usage",
    "summary_body",
]
