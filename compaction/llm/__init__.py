"""The client for OpenAI-compatible chat-completions APIs (the ``llm`` extra: httpx).

Import it as ``compaction.llm``; the core `compaction` package never imports it, so it works
without httpx installed. The summarizer that talks through it, `OpenAISummarizer`, lives one
floor up in ``compaction.summarizers``: this package imports nothing above it.
"""

from compaction.llm._usage import ProviderUsage, read_usage
from compaction.llm.client import ChatAnswer, ChatClient, ChatConfig, canonical_json

__all__ = [
    "ChatAnswer",
    "ChatClient",
    "ChatConfig",
    "ProviderUsage",
    "canonical_json",
    "read_usage",
]
