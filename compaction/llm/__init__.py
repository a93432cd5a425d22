"""The client for OpenAI-compatible chat-completions APIs (the ``llm`` extra: httpx).

Import it as ``compaction.llm``; the core `compaction` package never imports it, so it works
without httpx installed. The summarizer that talks through it, `OpenAISummarizer`, lives one
floor up in ``compaction.summarizers``: this package imports nothing above it.
"""

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.llm.client import ChatClient, ChatConfig

_EXPORTS: dict[str, str] = {
    "ChatClient": "compaction.llm.client",
    "ChatConfig": "compaction.llm.client",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "ChatClient",
    "ChatConfig",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
