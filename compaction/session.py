"""A live session: the log on disk plus its views, updated as events are appended.

Invariants: the views always equal a fold of the log up to `applied_seq`; a view is never updated
for an event that did not reach the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from compaction.events import (
    Event,
    EventData,
    Message,
    TodoItem,
    TurnEndData,
    TurnStartData,
)
from compaction.log import LogReader, ReadReport, SessionLog, SyncPolicy, read_events
from compaction.provider_messages import to_messages
from compaction.todos import ToolResult, todo_write
from compaction.tokens import Tokenizer, get_tokenizer
from compaction.turn_modes import TurnModes, TurnModesProjection
from compaction.views import (
    ContextProjection,
    ContextState,
    ContextWindow,
    LatestTodosProjection,
    TodoPanel,
    TodosProjection,
    Usage,
    UsageProjection,
    UsageState,
)


class Session:
    """A session log with live `todos`, `context` and `usage` views.

    Args:
        path: the JSONL log; created on first append, replayed when it exists.
        tokenizer: counts tokens for the usage view (default `o200k_base`).
        sync: fsync every append (``"always"``) or once per `batch()` (``"batch"``).
        skip_bad_lines: skip and count malformed lines instead of raising on them.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        tokenizer: Tokenizer | None = None,
        sync: SyncPolicy = "always",
        skip_bad_lines: bool = False,
    ) -> None:
        self.log = SessionLog(path, sync=sync)
        self.tokenizer = tokenizer or get_tokenizer()
        self.skip_bad_lines = skip_bad_lines
        self.report = ReadReport(path=str(path))
        self._todos_p = TodosProjection()
        self._latest_p = LatestTodosProjection()
        self._context_p = ContextProjection()
        self._usage_p = UsageProjection(self.tokenizer)
        self._modes_p = TurnModesProjection()
        self._modes: TurnModes = self._modes_p.init()
        self._todos: TodoPanel = self._todos_p.init()
        self._latest: TodoPanel = self._latest_p.init()
        self._context: ContextState = self._context_p.init()
        self._usage: UsageState = self._usage_p.init()
        self.applied_seq = 0
        self._reader = LogReader(path, skip_bad_lines=skip_bad_lines, report=self.report)
        self.refresh()

    @property
    def path(self) -> Path:
        """The log file."""
        return self.log.path

    def close(self) -> None:
        """Flush and close the log."""
        self.log.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def event_tokens(self, seq: int) -> int:
        """Return the token count of the applied event with this seq (0 for one never applied).

        Keyed by seq, not position: a log read with bad lines skipped has gaps.
        """
        return self._usage_p.tokens_of(self._usage, seq)

    def _apply(self, event: Event) -> None:
        self._todos = self._todos_p.apply(self._todos, event)
        self._latest = self._latest_p.apply(self._latest, event)
        self._context = self._context_p.apply(self._context, event)
        self._usage = self._usage_p.apply(self._usage, event)
        self._modes = self._modes_p.apply(self._modes, event)
        self.applied_seq = event.seq

    def refresh(self) -> list[Event]:
        """Apply events appended since the last read (by any writer); return them.

        A last line that is not a whole event yet (being written, or torn by a crash) is left for
        a later refresh and shown in `report.torn_line` meanwhile.

        Raises:
            LogFormatError: a malformed complete line, unless `skip_bad_lines`.
            LogIntegrityError: an event whose seq does not follow the last one applied.
        """
        if not self.log.path.exists():
            return []
        new: list[Event] = []
        for event in self._reader.read():
            self._apply(event)
            new.append(event)
        return new

    def append(self, data: EventData, *, expected_seq: int | None = None) -> Event:
        """Append one event and update the views (see `append_many`)."""
        return self.append_many([data], expected_seq=expected_seq)[0]

    def append_many(
        self, items: Iterable[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        """Append events in one locked write and update the views.

        Args:
            items: the payloads.
            expected_seq: the last seq the caller read (e.g. `applied_seq`); if another writer
                appended since, nothing is written and `SeqConflictError` is raised.
        """
        events = self.log.append_many(list(items), expected_seq=expected_seq)
        start, size = self.log.last_append_start, self.log.last_append_bytes
        # Nobody else appended since our last read: take our own events as read.
        fresh = bool(events) and events[0].seq == self.applied_seq + 1
        if fresh and self._reader.skip_appended(events, start, start + size):
            for e in events:
                self._apply(e)
            return events
        self.refresh()
        return events

    def batch(self) -> AbstractContextManager[SessionLog]:
        """Hold the log's lock across many appends (see `SessionLog.batch`)."""
        return self.log.batch()

    # --- convenience for agent loops ---------------------------------------------------------

    def start_turn(self, request: str, *, mode: str | None = None) -> list[Event]:
        """Record a new user request: a `turn/start`, then the user's message."""
        return self.append_many([TurnStartData(mode=mode), Message(role="user", content=request)])

    def end_turn(self) -> Event:
        """Record that the agent finished the current request."""
        return self.append(TurnEndData())

    def add_message(self, message: Message | Mapping[str, Any] | object) -> Event:
        """Append a chat message, as this toolkit or an official SDK gives it.

        Accepted: a `Message`; an OpenAI chat-completions message (the ``openai`` SDK's
        ``ChatCompletionMessage``, its ``model_dump()``, or a message param dict); an Anthropic
        message (the ``anthropic`` SDK's ``Message``, a message param dict) or one of its
        content blocks. Fields `Message` does not hold are kept in its ``provider_fields``. An
        Anthropic user message holding several ``tool_result`` blocks becomes several messages,
        appended in one write; the last event is returned.

        Raises:
            MessageError: the message cannot be recorded; the error names the field.
        """
        return self.append_many(to_messages(message))[-1]

    def todo_write(
        self,
        arguments: str | bytes | Mapping[str, Any],
        *,
        allow_parallel_in_progress: bool = False,
        refuse: str | None = None,
    ) -> ToolResult:
        """Run the `todo_write` tool against this session (see `compaction.todos.todo_write`)."""
        return todo_write(
            self,
            arguments,
            allow_parallel_in_progress=allow_parallel_in_progress,
            refuse=refuse,
        )

    # --- views ---------------------------------------------------------------------------------

    @property
    def todos(self) -> TodoPanel:
        """The task panel (emptied by a new turn)."""
        return self._todos_p.view(self._todos)

    @property
    def latest_todos(self) -> tuple[TodoItem, ...]:
        """The latest recorded list, across turns (what compaction copies from)."""
        return self._latest.todos

    @property
    def context(self) -> ContextWindow:
        """What the model sees now."""
        return self._context_p.view(self._context)

    @property
    def usage(self) -> Usage:
        """Token figures."""
        return self._usage_p.view(self._usage)

    @property
    def turn_modes(self) -> TurnModes:
        """The mode each stretch of the log ran in."""
        return self._modes_p.view(self._modes)

    @property
    def context_tokens(self) -> int:
        """Tokens of the model's context now, in O(1): the budget check."""
        return self._usage_p.context_tokens(self._usage)

    def events(self) -> Iterable[Event]:
        """Stream this session's events from disk."""
        return read_events(self.log.path, skip_bad_lines=self.skip_bad_lines)
