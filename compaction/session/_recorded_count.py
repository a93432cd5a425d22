"""The context's token count read from the log, so that a reopen needs no tokenizer.

A checkpoint the session appended records the context's count right after it and the name of
the tokenizer that made it (`compaction.events.CountedContext`, written by
`compaction.session.live_views.LiveViews.counted_checkpoint`). Reopening, `RecordedCount`
follows the events: from the newest checkpoint whose record it trusts it keeps that count and
the messages appended after it, so `context_tokens` is the record plus those messages' counts,
and only they need a tokenizer (none at all when the log ends in the checkpoint).

A record is untrusted input like every log line: its fields are checked as the line is parsed
(integers within `compaction.contract.MAX_INT`, a name of at most
`compaction.contract.MAX_TOKENIZER_NAME_CHARS` characters), and it is used only when it names
the reading session's tokenizer and equals the checkpoint's own `tokens_after`. Anything else
(a log written before records, another tokenizer, a forged or torn figure) leaves the count to
the usage view, which counts every event as it always did.

Invariants: when `tokens` answers, it equals what the usage view would count for the same
events (given a truthful record); a retraction, a checkpoint without a trusted record, or more
than `TAIL_LIMIT` messages after the record end the fast path until the next trusted record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from compaction.events import (
    CheckpointData,
    CheckpointRecorded,
    Event,
    EventData,
    MessageAdded,
    MessagesRetracted,
)

TAIL_LIMIT = 1024
"""Messages after a trusted record held for counting; past it the usage view counts instead."""


def with_leading_count(
    payloads: list[EventData], counted: Callable[[CheckpointData], CheckpointData]
) -> list[EventData]:
    """Return the payloads with a leading checkpoint's record filled in by `counted`.

    The caller asks only when the batch is known to come right after the events its views
    applied (`compaction.Session.append_many` with `expected_seq` equal to `applied_seq`: else
    nothing is written), so the views' count then is the count right after the checkpoint. The
    record is a pure function of the log and the tokenizer: the same history, the same bytes.
    """
    if payloads and isinstance(payloads[0], CheckpointData):
        return [counted(payloads[0]), *payloads[1:]]
    return payloads


def trusted_count(data: CheckpointData, tokenizer: str) -> int | None:
    """Return the checkpoint's recorded context count if this session may use it, else None.

    Used only when the record names `tokenizer` (the reading session's) and agrees with the
    checkpoint's `tokens_after`, which the compactor computed on its own.
    """
    counted = data.counted
    if counted is None or counted.tokenizer != tokenizer or counted.tokens != data.tokens_after:
        return None
    return counted.tokens


@dataclass
class RecordedCount:
    """The context's count since the newest trusted record: the record, then the messages after.

    Args:
        tokenizer: the name of the session's tokenizer (`compaction.tokens.tokenizer_name`).
    """

    tokenizer: str
    base: int | None = None
    """The newest trusted record's count (None: none, or the fast path ended)."""
    tail: list[Event] = field(default_factory=list)
    """Messages applied after the record, not counted yet."""
    tail_tokens: int = 0
    """Tokens of the messages after the record counted so far."""

    def apply(self, event: Event) -> None:
        """Follow one applied event (a checkpoint starts over; a message joins the tail)."""
        if isinstance(event, CheckpointRecorded):
            self.base, self.tail, self.tail_tokens = (
                trusted_count(event.data, self.tokenizer),
                [],
                0,
            )
        elif self.base is None:
            return
        elif isinstance(event, MessageAdded):
            self.tail.append(event)
            if len(self.tail) > TAIL_LIMIT:
                self.base, self.tail = None, []
        elif isinstance(event, MessagesRetracted):
            self.base, self.tail = None, []

    def tokens(self, count: Callable[[Event], int]) -> int | None:
        """Return the context's count (messages after the record counted with `count`), or None.

        None when no trusted record stands: the caller counts the log.
        """
        if self.base is None:
            return None
        if self.tail:
            self.tail_tokens += sum(count(event) for event in self.tail)
            self.tail = []
        return self.base + self.tail_tokens
