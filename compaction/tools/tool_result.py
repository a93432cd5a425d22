"""What a built-in tool call returns to the model: its text, and whether it was an error.

Invariants: an error result (`is_error`) means nothing was appended to the log.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns to the model."""

    content: str
    """The text the model reads."""
    is_error: bool = False
    """True when the call was rejected or refused and nothing changed."""
