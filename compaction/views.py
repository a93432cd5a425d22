"""Views: deterministic folds over the session log.

A projection is a pure unit: `init()` gives an empty state, `apply(state, event)` returns the next
state (the same state when the event is not its concern), `view(state)` shows it. `fold()`
replays any iterable of events through one projection. Each `apply` is O(1) in the log's length,
so a live session updates its views as it appends; any view can be rebuilt from the log alone.

The context projection's state is a buffer owned by the fold that created it: `apply` may extend
it in place, which keeps appends O(1).

Invariants: replaying the same events gives byte-identical views; a `todo/write` event never
enters the context view; compaction never changes the todos view.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from compaction.clipping import shown_message
from compaction.events import (
    CheckpointData,
    CheckpointRecorded,
    Event,
    Message,
    MessageAdded,
    MessagesRetracted,
    TodoItem,
    TodoStatus,
    TodoWritten,
    TurnStarted,
    UsageReported,
)
from compaction.todos import count_statuses
from compaction.tokens import Tokenizer, count_message, get_tokenizer

S = TypeVar("S")
V_co = TypeVar("V_co", covariant=True)


class Projection(Protocol, Generic[S, V_co]):
    """A view over the log, as a fold."""

    name: ClassVar[str]
    state_version: ClassVar[int]
    """Bumped whenever the state's shape or meaning changes, so cached states are rebuilt."""

    def init(self) -> S:
        """Return the state before any event."""
        ...

    def apply(self, state: S, event: Event) -> S:
        """Return the state after `event`; the same state when the event is not this view's."""
        ...

    def view(self, state: S) -> V_co:
        """Return what a reader sees of `state`."""
        ...


def fold(projection: Projection[S, V_co], events: Iterable[Event]) -> V_co:
    """Replay `events` through `projection` and return its view."""
    state = projection.init()
    for event in events:
        state = projection.apply(state, event)
    return projection.view(state)


# --- todos: the task panel ---------------------------------------------------------------------

STATUS_MARKS: dict[TodoStatus, str] = {"completed": "✓", "in_progress": "◉", "pending": "○"}
"""The status dot shown before each item of the task panel."""


class TodoPanel(BaseModel):
    """The task panel a user sees above the input box."""

    model_config = ConfigDict(frozen=True)

    todos: tuple[TodoItem, ...] = ()
    """The latest list, in the model's order."""
    seq: int | None = None
    """Seq of the `todo/write` event it comes from, if any in this turn."""

    def counts(self) -> dict[TodoStatus, int]:
        """Count items by status, every status present."""
        return count_statuses(self.todos)

    def counts_line(self) -> str:
        """Return e.g. ``2 completed, 1 in progress, 3 pending``."""
        c = self.counts()
        return f"{c['completed']} completed, {c['in_progress']} in progress, {c['pending']} pending"

    def render(self) -> str:
        """Return the panel as plain text: the counts line, then one marked line per item."""
        lines = [self.counts_line()]
        lines += [f"{STATUS_MARKS[t.status]} {t.content}" for t in self.todos]
        return "\n".join(lines)


class TodosProjection:
    """The task panel: follows `todo/write`, empties on `turn/start`, ignores compaction."""

    name: ClassVar[str] = "todos"
    state_version: ClassVar[int] = 1
    empties_on_turn_start: ClassVar[bool] = True
    """A new user request clears the panel, so an old list never lingers under a new question."""

    def init(self) -> TodoPanel:
        """Return an empty panel."""
        return TodoPanel()

    def apply(self, state: TodoPanel, event: Event) -> TodoPanel:
        """Replace the list on `todo/write`; empty it on `turn/start` (when the view does)."""
        if isinstance(event, TodoWritten):
            return TodoPanel(todos=event.data.todos, seq=event.seq)
        if self.empties_on_turn_start and isinstance(event, TurnStarted):
            return TodoPanel()
        return state

    def view(self, state: TodoPanel) -> TodoPanel:
        """Return the panel (it is immutable)."""
        return state


class LatestTodosProjection(TodosProjection):
    """The latest recorded todo list, across turns: what the compactor copies from."""

    name: ClassVar[str] = "latest_todos"
    empties_on_turn_start: ClassVar[bool] = False


# --- context: what the model sees --------------------------------------------------------------


def checkpoint_preamble() -> str:
    """Return the text placed before a Checkpoint in the model's context."""
    return (
        resources.files("compaction")
        .joinpath("templates", "checkpoint_preamble.md")
        .read_text(encoding="utf-8")
    )


@dataclass
class ContextState:
    """The model's context as a fold state: system messages, the checkpoint, the kept messages."""

    system: list[tuple[int, Message]] = field(default_factory=list)
    checkpoint: CheckpointRecorded | None = None
    messages: list[tuple[int, Message]] = field(default_factory=list)


class ContextWindow(BaseModel):
    """What the model sees now: system messages, then the checkpoint, then the kept messages."""

    model_config = ConfigDict(frozen=True)

    system: tuple[Message, ...] = ()
    checkpoint: CheckpointData | None = None
    messages: tuple[Message, ...] = ()
    seqs: tuple[int, ...] = ()
    """Seq of each kept message, aligned with `messages`."""

    def as_messages(self) -> list[Message]:
        """Return the chat messages in order, the checkpoint as one user message."""
        out = list(self.system)
        if self.checkpoint is not None:
            out.append(checkpoint_message(self.checkpoint))
        out += self.messages
        return out


def checkpoint_message(checkpoint: CheckpointData) -> Message:
    """Return the user message that carries a checkpoint into the context."""
    return Message(role="user", content=checkpoint_preamble() + checkpoint.text)


class ContextProjection:
    """The model's context: messages only, with each checkpoint folding the span it replaced.

    A clipped tool result shows as its head, a note and its tail (`compaction.clipping`).
    """

    name: ClassVar[str] = "context"
    state_version: ClassVar[int] = 2

    def init(self) -> ContextState:
        """Return an empty context."""
        return ContextState()

    def apply(self, state: ContextState, event: Event) -> ContextState:
        """Add messages; on a checkpoint, drop the messages of the span it replaced."""
        if isinstance(event, MessageAdded):
            shown = shown_message(event.data, event.seq)
            if shown.role == "system":
                state.system.append((event.seq, shown))
            else:
                state.messages.append((event.seq, shown))
        elif isinstance(event, CheckpointRecorded):
            last = event.data.last_seq
            state.messages = [(s, m) for s, m in state.messages if s > last]
            state.checkpoint = event
        elif isinstance(event, MessagesRetracted):
            gone = set(event.data.seqs)
            state.messages = [(s, m) for s, m in state.messages if s not in gone]
            state.system = [(s, m) for s, m in state.system if s not in gone]
        return state

    def view(self, state: ContextState) -> ContextWindow:
        """Return an immutable snapshot of the context."""
        return ContextWindow(
            system=tuple(m for _, m in state.system),
            checkpoint=state.checkpoint.data if state.checkpoint else None,
            messages=tuple(m for _, m in state.messages),
            seqs=tuple(s for s, _ in state.messages),
        )


# --- usage: tokens per event -------------------------------------------------------------------


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

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self.tokenizer = tokenizer or get_tokenizer()

    def init(self) -> UsageState:
        """Return empty counts."""
        return UsageState()

    def event_tokens(self, event: Event) -> int:
        """Count what an event costs in the model's context (a todo/write costs its payload).

        A clipped tool result costs what the model sees of it: head, note and tail.
        """
        if isinstance(event, MessageAdded):
            return count_message(self.tokenizer, shown_message(event.data, event.seq))
        if isinstance(event, CheckpointRecorded):
            return count_message(self.tokenizer, checkpoint_message(event.data))
        if isinstance(event, TodoWritten):
            return self.tokenizer.count(event.data.model_dump_json())
        return 0

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
            # O(log n), once per compaction; the budget check itself stays O(1).
            last = event.data.last_seq
            base = state.kept_prefix[bisect_right(state.seqs, last)]
            # A message the span folds that a later retraction already took out of the running
            # sum must not leave it twice (the retraction came after `last`, so `base` has it).
            state.checkpoint_base = base - sum(
                n for at, seq, n in state.kept_retractions if seq <= last < at
            )
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
