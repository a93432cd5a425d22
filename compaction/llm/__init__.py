"""LLM summarization over OpenAI-compatible chat-completions APIs (the ``llm`` extra: httpx).

Import it as ``compaction.llm``; the core `compaction` package never imports it, so it works
without httpx installed.
"""

from compaction.llm.client import ChatAnswer, ChatClient, ChatConfig
from compaction.llm.usage import ProviderUsage, read_usage

__all__ = [
    "ChatAnswer",
    "ChatClient",
    "ChatConfig",
    "ProviderUsage",
    "read_usage",
]
