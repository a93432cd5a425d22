"""What a compaction is about to do and what it did: the plan its hooks see, and its result.

`CompactionPlan` is handed to each ``on_compact_start`` hook once the span is chosen and before
the summarizer runs; `CompactionResult` is what `compaction.compact` returns (and hands to
``on_compact_end``).

Invariants: both are frozen; a result's figures are those of the event it describes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from compaction.checkpoint import Checkpoint
from compaction.events import CheckpointData, CheckpointRecorded


@dataclass(frozen=True)
class CompactionResult:
    """What a compaction did (or, with ``dry_run``, would do)."""

    checkpoint: Checkpoint
    """The Checkpoint written."""
    data: CheckpointData
    """The payload of the ``compaction/checkpoint`` event (its text, span and token counts)."""
    event: CheckpointRecorded | None
    """The event appended, or None for a dry run."""
    replaced_messages: int
    """How many messages the span replaced."""
    replaced_tokens: int
    """Tokens the span replaced, the previous checkpoint included."""
    kept_messages: int
    """How many non-system messages stay verbatim after the checkpoint."""
    fixed_tokens: int = 0
    """Tokens of the system prompt and tool catalog the caller counted in the request."""

    @property
    def tokens_before(self) -> int:
        """Context tokens before the compaction."""
        return self.data.tokens_before

    @property
    def tokens_after(self) -> int:
        """Context tokens after it."""
        return self.data.tokens_after

    @property
    def request_tokens_before(self) -> int:
        """Whole-request tokens before the compaction (fixed part + context)."""
        return self.fixed_tokens + self.data.tokens_before

    @property
    def request_tokens_after(self) -> int:
        """Whole-request tokens after it (fixed part + context)."""
        return self.fixed_tokens + self.data.tokens_after

    @property
    def reduction(self) -> float:
        """Share of the context the compaction removed (0..1; negative if it grew)."""
        before = self.data.tokens_before
        return (before - self.data.tokens_after) / before if before else 0.0


@dataclass(frozen=True)
class CompactionPlan:
    """What a compaction is about to do, handed to ``on_compact_start`` before the summarizer."""

    first_seq: int
    """First event the Checkpoint will replace."""
    last_seq: int
    """Last event it will replace."""
    replaced_messages: int
    """Messages of the span."""
    kept_messages: int
    """Messages that stay verbatim after the Checkpoint."""
    tokens_before: int
    """Context tokens now."""
    summarizer: str
    """The configured summarizer's name."""
    instructions: str | None
    """The focus instructions so far."""


CompactStart = Callable[[CompactionPlan], "str | bool | None"]
"""``on_compact_start``: None goes on, False vetoes, text adds to the focus instructions."""
CompactStarts = CompactStart | Sequence[CompactStart]
"""One ``on_compact_start`` hook, or several run in order (each recorded in the receipt)."""
CompactEnd = Callable[["CompactionResult"], None]
"""``on_compact_end``: called with the result once the compaction is done."""
