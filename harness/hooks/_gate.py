"""Whether a hook input needs reading at all: the cheap test run before anything is imported.

Gemini CLI calls its BeforeModel hook before every model request; only a request that holds a
compression (``<state_snapshot>``) needs the transcript. Every other input of the other agents
is read.

Invariants: standard library only, so ``harness hooks run`` answers an input that needs nothing
without loading `compaction`.
"""

from __future__ import annotations

MAX_STDIN = 64 * 1024 * 1024
"""Largest hook input read (Gemini CLI's BeforeModel sends the whole request)."""

SNAPSHOT = b"<state_snapshot>"
"""What Gemini CLI's request holds after its compression."""


def needs_reading(agent: str, raw: bytes) -> bool:
    """Tell whether a hook input of `agent` can lead to any output or receipt."""
    return agent != "gemini" or SNAPSHOT in raw
