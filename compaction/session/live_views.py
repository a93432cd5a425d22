"""The view half of a session: every projection, folded as events are applied.

`LiveViews` is what `compaction.Session` reads its views from (the session is a `LiveViews`
that also owns a source and runs the tools). The usage view (token counts) is folded on first
use: a session that only writes or reads todos never loads a tokenizer. Until then its events
wait, in order, to be counted once.

With a tokenizer loaded, the usage view counts in batches of `COUNT_BATCH` events, not event by
event: tiktoken then runs in a tight loop instead of between each event's parse and fold, where
both the counting and the rest of the fold ran slower (measured on a reopen of 5,000 events, in
one process: 1.85x a raw tiktoken pass event by event, 1.44x in batches; the CPU caches shared by
the two kinds of work are the likely cause). A read of the usage view counts what still waits
first; waiting holds at most `COUNT_BATCH` events beyond what the views keep.

Memory is bounded by what the views need, not by the log (a streaming fold): without a tokenizer,
at most `WAIT_LIMIT` events wait; past that a view set that can read its events again
(`_events_again`: a `compaction.Session` re-reads its store) lets them go and counts them from a
second read when the usage view is first asked for. On reopen, a messages-only context fold skips
every message the newest checkpoint already folded away (`reopen_horizon`, the largest
``last_seq`` of the log's checkpoints), so a log that ends in a compaction never holds its
compacted messages; the fold checks the horizon against the checkpoints it applied. Nor does
`context_tokens` need a tokenizer when the newest checkpoint recorded the count
(`compaction.session._recorded_count`): only the messages after it are counted.

Invariant: every view equals a fold of the events applied so far, up to `applied_seq`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import closing
from itertools import takewhile

from compaction.events import (
    CheckpointData,
    CheckpointRecorded,
    CountedContext,
    Event,
    EventData,
    MessageAdded,
    OpenWork,
    TodoItem,
    ToolCall,
    TurnStarted,
)
from compaction.invariants import check_checkpoint_span_at
from compaction.session._recorded_count import RecordedCount
from compaction.stores.sources import SessionSource, collector_paused
from compaction.tokens import Tokenizer, get_tokenizer, tokenizer_name
from compaction.views import (
    CarriedWork,
    CarryProjection,
    ContextProjection,
    ContextState,
    ContextWindow,
    LatestTodosProjection,
    Refusals,
    RefusalsProjection,
    TodoPanel,
    TodosProjection,
    Usage,
    UsageProjection,
    UsageState,
    unanswered_calls,
    with_answers,
)
from compaction.views.board import TaskBoard, TasksProjection, TasksState
from compaction.views.clipping import ShownCount
from compaction.views.progress import Progress, ProgressProjection
from compaction.views.token_scale import ScaleState, TokenScaleProjection
from compaction.views.turn_modes import TurnModes, TurnModesProjection

COUNT_BATCH = 256
"""Events the usage view lets wait before counting them in one tight loop (tokenizer loaded)."""
WAIT_LIMIT = 4 * COUNT_BATCH
"""Events held for the usage view without a tokenizer; past it they are read again to count."""


class LiveViews:
    """Every view of one session, updated event by event (`_apply`).

    Args:
        tokenizer: counts tokens for the usage view (default `o200k_base`, loaded on first use).
    """

    def __init__(self, tokenizer: Tokenizer | None) -> None:
        self._tokenizer = tokenizer
        self.mode: str | None = None
        """The mode of the current turn (the latest `turn/start`'s), None when not given."""
        self._todos_p = TodosProjection()
        self._latest_p = LatestTodosProjection()
        self._context_p = ContextProjection()
        self._usage_p: UsageProjection | None = None
        self._modes_p = TurnModesProjection()
        self._modes: TurnModes = self._modes_p.init()
        self._tasks_p = TasksProjection()
        self._tasks: TasksState = self._tasks_p.init()
        self._progress_p = ProgressProjection()
        self._progress: Progress = self._progress_p.init()
        self._carry_p = CarryProjection()
        self._carry: CarriedWork = self._carry_p.init()
        self._todos: TodoPanel = self._todos_p.init()
        self._latest: TodoPanel = self._latest_p.init()
        self._context: ContextState = self._context_p.init()
        self._usage: UsageState = UsageState()
        self._uncounted: list[Event] = []
        self._known: dict[int, ShownCount] = {}
        """Seq -> the clip check's count of a tool result appended here, for the usage view."""
        self._refusals_p = RefusalsProjection()
        self._refusals: Refusals = self._refusals_p.init()
        self._scale_p = TokenScaleProjection()
        self._scale: ScaleState = self._scale_p.init()
        self._learned: tuple[object, float | None] = (None, None)
        self.applied_seq = 0
        """The seq of the last event applied to the views (0 before any)."""
        self._reread_upto = 0
        """Events up to this seq were let go uncounted: the usage view reads them again."""
        self.reopen_horizon = 0
        """While reopening: messages up to this seq are folded away by a later checkpoint, so
        the context fold skips them (0: keep every message)."""
        self._folded_horizon = 0
        """The largest ``last_seq`` of the checkpoints the context fold applied."""
        self._replay_source: SessionSource | None = None
        """Where the events come from and are read again (a `compaction.Session`'s source)."""
        self._recorded = RecordedCount(self.tokenizer_name)
        """The context's count from the newest checkpoint's record, before any tokenizer."""
        self._tail_p: UsageProjection | None = None
        """Counts the messages after a recorded count (`_tail_tokens`), made on first use."""
        if tokenizer is not None:  # loaded already: count as the log is folded, in batches
            self._usage_p = UsageProjection(tokenizer, self._known)

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of the usage view, loaded on first use."""
        if self._tokenizer is None:
            self._tokenizer = get_tokenizer()
        return self._tokenizer

    @property
    def tokenizer_name(self) -> str:
        """The name of the usage view's tokenizer, known without loading it."""
        return tokenizer_name() if self._tokenizer is None else self._tokenizer.name

    def _rereadable(self) -> bool:
        """Tell whether `_events_again` can stream applied events again (with a source)."""
        return self._replay_source is not None

    def _events_again(self, upto: int) -> Iterator[Event]:
        """Stream the applied events up to seq `upto` again, from the source."""
        assert self._replay_source is not None  # only asked when `_rereadable`
        return takewhile(lambda event: event.seq <= upto, self._replay_source.events())

    def _reopen(self) -> None:
        """Fold the source's log into the views, streamed: compacted messages are never held.

        The context fold skips the messages the log's newest checkpoint folds away
        (`reopen_horizon`); if the fold did not apply such a checkpoint after all, the context
        is folded again from every event.
        """
        assert self._replay_source is not None
        self.reopen_horizon = self._replay_source.checkpoint_horizon()
        with closing(self._replay_source.read_new()) as events:  # streamed, the collector paused
            for event in events:
                self._apply(event)
        if not self._end_reopen():
            with closing(collector_paused(self._replay_source.events())) as events:
                self._refold_context(events)

    def _skipped(self, event: Event) -> bool:
        """Tell whether the context fold may skip the event: a message a checkpoint folds."""
        return (
            event.seq <= self.reopen_horizon
            and isinstance(event, MessageAdded)
            and event.data.role != "system"
        )

    def _apply(self, event: Event) -> None:
        self._todos = self._todos_p.apply(self._todos, event)
        self._latest = self._latest_p.apply(self._latest, event)
        if not self._skipped(event):
            self._context = self._context_p.apply(self._context, event)
        if isinstance(event, CheckpointRecorded):
            self._folded_horizon = max(self._folded_horizon, event.data.last_seq)
        self._modes = self._modes_p.apply(self._modes, event)
        self._tasks = self._tasks_p.apply(self._tasks, event)
        self._progress = self._progress_p.apply(self._progress, event)
        self._scale = self._scale_p.apply(self._scale, event)
        self._carry = self._carry_p.apply(self._carry, event)
        self._refusals = self._refusals_p.apply(self._refusals, event)
        self._recorded.apply(event)
        if isinstance(event, TurnStarted):
            self.mode = event.data.mode
        self._uncounted.append(event)
        if self._usage_p is not None and len(self._uncounted) >= COUNT_BATCH:
            self._count_waiting(self._usage_p)
        elif len(self._uncounted) > WAIT_LIMIT and self._rereadable():
            self._reread_upto, self._uncounted = event.seq, []
        self.applied_seq = event.seq

    def _end_reopen(self) -> bool:
        """Close the reopen fold; return False when the horizon was wrong (the caller refolds).

        The horizon is right when the fold applied a checkpoint that folds up to it; otherwise
        (a checkpoint line skipped as bad, say) messages were skipped that the context needs.
        """
        horizon, self.reopen_horizon = self.reopen_horizon, 0
        return self._folded_horizon >= horizon

    def _refold_context(self, events: Iterator[Event]) -> None:
        """Fold the context view again from every event (after a wrong horizon)."""
        self._context = self._context_p.init()
        for event in events:
            self._context = self._context_p.apply(self._context, event)

    def _counted(self) -> tuple[UsageProjection, UsageState]:
        """Return the usage projection and state, counting the waiting events first."""
        if self._usage_p is None:
            self._usage_p = UsageProjection(self.tokenizer, self._known)
            self._usage = self._usage_p.init()
        if self._uncounted or self._reread_upto:
            self._count_waiting(self._usage_p)
        return self._usage_p, self._usage

    def _count_waiting(self, projection: UsageProjection) -> None:
        """Count the waiting events in order, the collector paused; any left by an error wait.

        Events let go uncounted (`WAIT_LIMIT`) are read again first, in order.
        """
        if self._reread_upto:
            again = self._events_again(self._reread_upto)
            with closing(collector_paused(again)) as events:
                for event in events:
                    if event.seq <= self._reread_upto:
                        self._usage = projection.apply(self._usage, event)
            self._reread_upto = 0
        waiting, self._uncounted = self._uncounted, []
        done = 0
        with closing(collector_paused(iter(waiting))) as events:
            try:
                for event in events:
                    self._usage = projection.apply(self._usage, event)
                    done += 1
            finally:
                if done < len(waiting):
                    self._uncounted = waiting[done:]

    def event_tokens(self, seq: int) -> int:
        """Return the token count of the applied event with this seq (0 for one never applied).

        Keyed by seq, not position: a log read with bad lines skipped has gaps.
        """
        projection, state = self._counted()
        return projection.tokens_of(state, seq)

    def open_work(self) -> OpenWork:
        """Return the unfinished work now: the latest todo list's and the shared list's."""
        return open_work(self.latest_todos, self.tasks)

    @property
    def todos(self) -> TodoPanel:
        """The task panel (emptied by a new turn)."""
        return self._todos_p.view(self._todos)

    @property
    def tasks(self) -> TaskBoard:
        """The shared task list (every agent's tasks; not emptied by a new turn)."""
        return self._tasks_p.view(self._tasks)

    @property
    def progress(self) -> Progress:
        """Assistant messages since each list was written; completions since the last checkpoint."""
        return self._progress_p.view(self._progress)

    @property
    def carried(self) -> CarriedWork:
        """The approved plan and the jobs still running (what every Checkpoint carries)."""
        return self._carry_p.view(self._carry)

    @property
    def latest_todos(self) -> tuple[TodoItem, ...]:
        """The latest recorded list, across turns (what compaction copies from)."""
        return self._latest.todos

    @property
    def latest_todos_seq(self) -> int | None:
        """The seq of the `todo/write` that recorded `latest_todos` (None before any)."""
        return self._latest.seq

    @property
    def context(self) -> ContextWindow:
        """What the model sees now."""
        return self._context_p.view(self._context)

    def ready(self, items: Iterable[EventData]) -> list[EventData]:
        """Return what an append writes: `items` checked, the open calls answered first.

        A checkpoint's span must run forward, end before the checkpoint and after the previous
        one (`check_checkpoint_span_at`); a tool call left open is answered before the first
        payload that would leave it unanswered for good (`compaction.views.with_answers`).

        Raises:
            LogIntegrityError: ``checkpoint_span``: a forged span (nothing is written).
        """
        payloads = with_answers(self.open_calls, list(items))
        previous = self._context.checkpoint
        last = previous.data.last_seq if previous is not None else 0
        for i, data in enumerate(payloads, start=self.applied_seq + 1):
            if isinstance(data, CheckpointData):
                check_checkpoint_span_at(data.first_seq, data.last_seq, i, last)
                last = data.last_seq
        return payloads

    @property
    def checkpoint_seq(self) -> int:
        """The seq of the newest checkpoint event the context shows (0 without one)."""
        checkpoint = self._context.checkpoint
        return checkpoint.seq if checkpoint is not None else 0

    @property
    def refused_window(self) -> int | None:
        """The window a provider proved by refusing a request as too long, in its tokens."""
        return self._refusals.window(self.token_scale)

    @property
    def open_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of the newest assistant message that no result answers yet."""
        return unanswered_calls(m for _, m in reversed(self._context.messages))

    @property
    def usage(self) -> Usage:
        """Token figures."""
        projection, state = self._counted()
        return projection.view(state)

    @property
    def turn_modes(self) -> TurnModes:
        """The mode each stretch of the log ran in."""
        return self._modes_p.view(self._modes)

    @property
    def context_tokens(self) -> int:
        """Tokens of the model's context now, in O(1) once counted: the budget check.

        Before the usage view is first counted, a count the log recorded answers: the newest
        checkpoint's (`compaction.session._recorded_count`), plus the messages after it, counted
        alone. So a reopen of a log that ends in a compaction loads no tokenizer for it.
        """
        if self._usage_p is None:
            recorded = self._recorded.tokens(self._tail_tokens)
            if recorded is not None:
                return recorded
        projection, state = self._counted()
        return projection.context_tokens(state)

    def _tail_tokens(self, event: Event) -> int:
        """Count a message after a recorded count, as the usage view would (clip counts aside)."""
        if self._tail_p is None:
            self._tail_p = UsageProjection(self.tokenizer, {})
        return self._tail_p.event_tokens(event)

    def counted_checkpoint(self, data: CheckpointData) -> CheckpointData:
        """Return `data` with the record of the context's count once it is appended next.

        The count is this session's (`UsageProjection.context_after`), right only if the
        checkpoint is the next event: `compaction.Session.append_many` asks only then.
        """
        projection, state = self._counted()
        counted = CountedContext(
            tokenizer=projection.tokenizer.name, tokens=projection.context_after(state, data)
        )
        return data.model_copy(update={"counted": counted})

    @property
    def token_scale(self) -> float | None:
        """Provider prompt tokens per counted token, learned from `usage/report` events.

        None until enough consecutive calls of the current model were reported (see
        `compaction.views.token_scale`); every count the session gives stays raw.
        """
        key = (len(self._scale.samples), self._scale.model)
        if self._learned[0] != key:
            evidence = self._scale_p.view(self._scale)
            self._learned = (key, evidence.scale(self.event_tokens))
        return self._learned[1]


def open_work(todos: tuple[TodoItem, ...], board: TaskBoard) -> OpenWork:
    """Return the unfinished items of a todo list and of the shared task list."""
    pending, current = board.unfinished("pending"), board.unfinished("in_progress")
    ids = {t.id for t in (*pending, *current)}
    return OpenWork(
        todos_pending=sum(1 for t in todos if t.status == "pending"),
        todos_in_progress=sum(1 for t in todos if t.status == "in_progress"),
        tasks_pending=len(pending),
        tasks_in_progress=len(current),
        task_ids=tuple(t.id for t in board.tasks if t.id in ids),
    )
