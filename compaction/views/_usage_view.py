"""The usage view: tokens per event, with prefix sums, and what providers reported.

Invariants: each event is counted once; the context size is known in O(1) from prefix sums.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from compaction.events import (
    CheckpointData,
    CheckpointRecorded,
    Event,
    MessageAdded,
    MessagesRetracted,
    TodoWritten,
    UsageReported,
)
from compaction.tokens import Tokenizer, count_message, get_tokenizer
from compaction.views.clipping import ShownCount, shown_message
from compaction.views.context import checkpoint_message


@dataclass
class UsageState:
    """Token counts per event, with prefix sums so the context size is known in O(1)."""

    counts: list[int] = field(default_factory=list)
    """Tokens of each applied event, aligned with `seqs` (look one up with `tokens_of`)."""
    kept_prefix: list[int] = field(default_factory=lambda: [0])
    """Running sum of non-system message tokens after each applied event (index 0: before any)."""
    seqs: list[int] = field(default_factory=list)
    """Seq of each applied event, aligned with `counts` (a log read with skipped bad lines has
    gaps, so a seq is not an index)."""
    system_tokens: int = 0
    checkpoint_tokens: int = 0
    checkpoint_last_seq: int = 0
    checkpoint_base: int = 0
    """The running sum at the newest checkpoint's last seq: the tokens it folded away."""
    by_type: Counter[str] = field(default_factory=Counter)
    tokens_by_type: Counter[str] = field(default_factory=Counter)
    provider: dict[str, Counter[str]] = field(default_factory=dict)
    """Provider-reported figures (`usage/report`) summed per purpose."""
    system_seqs: set[int] = field(default_factory=set)
    message_seqs: set[int] = field(default_factory=set)
    """Seqs of system and other messages (a `message/retract` names them)."""
    retracted: set[int] = field(default_factory=set)
    kept_retractions: list[tuple[int, int, int]] = field(default_factory=list)
    """(retraction seq, message seq, tokens) of each retracted message taken out of the
    running sum, so a later checkpoint that folds the message does not take it out again."""


class ProviderTotals(BaseModel):
    """Token figures providers reported (`usage/report` events), summed."""

    model_config = ConfigDict(frozen=True)

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens served from the provider's prefix cache, where it said."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache, where it said (Anthropic)."""
    requests_without_cache_figure: int = 0
    """Calls whose provider reported no cached-token figure."""

    @property
    def cache_hit_share(self) -> float | None:
        """Cached share of the prompt tokens (0..1), None before any prompt token."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else None


class Usage(BaseModel):
    """Token figures of a session."""

    model_config = ConfigDict(frozen=True)

    events: int
    tokenizer: str
    total_tokens: int
    """Tokens of every message ever added: the context size had nothing been compacted."""
    context_tokens: int
    """Tokens of the model's context now (system + checkpoint + kept messages)."""
    events_by_type: dict[str, int]
    tokens_by_type: dict[str, int]
    per_event: tuple[int, ...]
    """Tokens of each applied event, in log order (a log read with bad lines skipped has gaps:
    look an event up by seq with `Session.event_tokens`)."""
    provider: ProviderTotals = ProviderTotals()
    """What providers reported for every API call recorded in the log."""
    provider_by_purpose: dict[str, ProviderTotals] = {}
    """The same, per purpose of the call (``summary``, ``turn``...)."""


class UsageProjection:
    """Each event's token count, computed once as it is applied."""

    name: ClassVar[str] = "usage"
    state_version: ClassVar[int] = 4

    def __init__(
        self, tokenizer: Tokenizer | None = None, known: dict[int, ShownCount] | None = None
    ) -> None:
        self.tokenizer = tokenizer or get_tokenizer()
        self.known: dict[int, ShownCount] = {} if known is None else known
        """Seq -> what the clip check counted of the tool result appended there (counted with
        `tokenizer`); taken out as the event is applied, so its text is not tokenized again."""

    def init(self) -> UsageState:
        """Return empty counts."""
        return UsageState()

    def event_tokens(self, event: Event) -> int:
        """Count what an event costs in the model's context (a todo/write costs its payload).

        A clipped tool result costs what the model sees of it: head, note and tail. A checkpoint
        with a provider's opaque item costs the larger of its local message and the item plus the
        code-owned message (`compaction.views.provider_checkpoint.checkpoint_tokens`).
        """
        if isinstance(event, MessageAdded):
            known = self.known.pop(event.seq, None) if self.known else None
            if known is not None:
                return known.tokens(self.tokenizer, event.seq)
            return count_message(self.tokenizer, shown_message(event.data, event.seq))
        if isinstance(event, CheckpointRecorded):
            return self.checkpoint_count(event.data)
        if isinstance(event, TodoWritten):
            return self.tokenizer.count(event.data.model_dump_json())
        return 0

    def checkpoint_count(self, data: CheckpointData) -> int:
        """Count what a checkpoint costs in the context (its message, or a provider's item)."""
        if data.provider is None or data.provider.item is None:
            return count_message(self.tokenizer, checkpoint_message(data))
        # Loaded only for a provider's item: the opaque item is part of the next request.
        from compaction.views.provider_checkpoint import checkpoint_tokens

        return checkpoint_tokens(self.tokenizer, data)

    def context_after(self, state: UsageState, data: CheckpointData) -> int:
        """Return `context_tokens` as it will be once a checkpoint of `data` is applied next.

        What `apply` computes for the checkpoint, without applying it: the record a session
        writes into the checkpoint (`compaction.events.CountedContext`).
        """
        kept_since = state.kept_prefix[-1] - self._base_at(state, data.last_seq)
        return state.system_tokens + self.checkpoint_count(data) + kept_since

    def _base_at(self, state: UsageState, last: int) -> int:
        """Return the running sum a checkpoint folding up to seq `last` takes away."""
        # O(log n), once per compaction; the budget check itself stays O(1).
        base = state.kept_prefix[bisect_right(state.seqs, last)]
        # A message the span folds that a later retraction already took out of the running
        # sum must not leave it twice (the retraction came after `last`, so `base` has it).
        return base - sum(n for at, seq, n in state.kept_retractions if seq <= last < at)

    def apply(self, state: UsageState, event: Event) -> UsageState:
        """Count the event once and update the running sums."""
        n = self.event_tokens(event)
        state.counts.append(n)
        state.by_type[event.type] += 1
        state.tokens_by_type[event.type] += n
        kept = state.kept_prefix[-1]
        if isinstance(event, MessageAdded):
            if event.data.role == "system":
                state.system_tokens += n
                state.system_seqs.add(event.seq)
            else:
                kept += n
                state.message_seqs.add(event.seq)
        elif isinstance(event, CheckpointRecorded):
            state.checkpoint_tokens = n
            state.checkpoint_last_seq = event.data.last_seq
            state.checkpoint_base = self._base_at(state, event.data.last_seq)
        elif isinstance(event, UsageReported):
            add_provider_usage(state, event)
        elif isinstance(event, MessagesRetracted):
            kept -= self._retract(state, event)
        state.kept_prefix.append(kept)
        state.seqs.append(event.seq)
        return state

    def tokens_of(self, state: UsageState, seq: int) -> int:
        """Return the token count of the event with this seq (0 if none was applied), by seq."""
        i = bisect_left(state.seqs, seq)
        return state.counts[i] if i < len(state.seqs) and state.seqs[i] == seq else 0

    def _retract(self, state: UsageState, event: MessagesRetracted) -> int:
        """Take retracted messages out of the running sums; return the kept tokens removed.

        A message the newest checkpoint already folded costs nothing now, so it is skipped;
        a system message leaves the system total.
        """
        removed = 0
        for seq in event.data.seqs:
            i = bisect_left(state.seqs, seq)
            if i == len(state.seqs) or state.seqs[i] != seq or seq in state.retracted:
                continue
            state.retracted.add(seq)
            n = state.counts[i]
            if seq in state.system_seqs:
                state.system_tokens -= n
            elif seq > state.checkpoint_last_seq and seq in state.message_seqs:
                removed += n
                state.kept_retractions.append((event.seq, seq, n))
        return removed

    def context_tokens(self, state: UsageState) -> int:
        """Return the context size now, in O(1)."""
        kept_since = state.kept_prefix[-1] - state.checkpoint_base
        return state.system_tokens + state.checkpoint_tokens + kept_since

    def view(self, state: UsageState) -> Usage:
        """Return the token figures."""
        by_purpose = {k: ProviderTotals(**v) for k, v in sorted(state.provider.items())}
        return Usage(
            events=len(state.counts),
            tokenizer=self.tokenizer.name,
            total_tokens=state.system_tokens + state.kept_prefix[-1],
            context_tokens=self.context_tokens(state),
            events_by_type=dict(sorted(state.by_type.items())),
            tokens_by_type=dict(sorted(state.tokens_by_type.items())),
            per_event=tuple(state.counts),
            provider=ProviderTotals(**sum(state.provider.values(), Counter())),
            provider_by_purpose=by_purpose,
        )


def add_provider_usage(state: UsageState, event: UsageReported) -> None:
    """Add one `usage/report` to the per-purpose provider totals."""
    d = event.data
    totals = state.provider.setdefault(d.purpose, Counter())
    totals["requests"] += 1
    totals["prompt_tokens"] += d.prompt_tokens
    totals["completion_tokens"] += d.completion_tokens
    if d.cached_tokens is None:
        totals["requests_without_cache_figure"] += 1
    else:
        totals["cached_tokens"] += d.cached_tokens
    if d.cache_write_tokens is not None:
        totals["cache_write_tokens"] += d.cache_write_tokens
