"""A live session: the log on disk plus its views, updated as events are appended.

Invariants: the views always equal a fold of the log up to `applied_seq`; a view is never updated
for an event that did not reach the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from compaction.errors import LogFormatError, LogIntegrityError
from compaction.events import (
    Event,
    EventData,
    Message,
    TodoItem,
    TurnEndData,
    TurnStartData,
)
from compaction.log import (
    BadLine,
    ReadReport,
    SessionLog,
    SyncPolicy,
    error_reason,
    parse_line,
    read_events,
)
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
        self._offset = 0
        self._lines = 0
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

    def _apply(self, event: Event) -> None:
        self._todos = self._todos_p.apply(self._todos, event)
        self._latest = self._latest_p.apply(self._latest, event)
        self._context = self._context_p.apply(self._context, event)
        self._usage = self._usage_p.apply(self._usage, event)
        self._modes = self._modes_p.apply(self._modes, event)
        self.applied_seq = event.seq

    def refresh(self) -> list[Event]:
        """Apply events appended since the last read (by any writer); return them.

        A last line with no newline yet (being written, or torn by a crash) is left for a later
        refresh and shown in `report.torn_line` meanwhile.

        Raises:
            LogFormatError: a malformed complete line, unless `skip_bad_lines`.
            LogIntegrityError: an event whose seq does not follow the last one applied.
        """
        if not self.log.path.exists():
            return []
        new: list[Event] = []
        self.report.torn_line = None
        with open(self.log.path, "rb") as fh:
            fh.seek(self._offset)
            for raw in fh:
                if not raw.endswith(b"\n"):
                    self.report.torn_line = self._lines + 1
                    break
                self._offset += len(raw)
                self._lines += 1
                self.report.lines = self._lines
                event = self._parse(raw)
                if event is not None:
                    self._apply(event)
                    new.append(event)
        return new

    def _parse(self, raw: bytes) -> Event | None:
        if not raw.strip():
            return None
        try:
            event = parse_line(raw)
        except ValueError as exc:
            if not self.skip_bad_lines:
                raise LogFormatError(self.log.path, self._lines, error_reason(exc)) from None
            self.report.bad_lines.append(BadLine(self._lines, error_reason(exc)))
            return None
        expected = self.applied_seq + 1
        # Skipped bad lines may leave gaps; seqs must still only grow.
        if event.seq != expected and not (self.skip_bad_lines and event.seq > expected):
            raise LogIntegrityError(
                "seq_contiguous",
                f"line {self._lines} has seq {event.seq}, expected {expected}",
                seq=event.seq,
                path=str(self.log.path),
            )
        self.report.events += 1
        self.report.by_type[event.type] += 1
        return event

    def append(self, data: EventData) -> Event:
        """Append one event and update the views."""
        return self.append_many([data])[0]

    def append_many(self, items: Iterable[EventData]) -> list[Event]:
        """Append events in one locked write and update the views."""
        events = self.log.append_many(list(items))
        if events and events[0].seq == self.applied_seq + 1 and self.report.torn_line is None:
            # Nobody else appended since our last read: apply our own events directly.
            for e in events:
                self._apply(e)
                self.report.by_type[e.type] += 1
            self._offset += self.log.last_append_bytes
            self._lines += len(events)
            self.report.lines = self._lines
            self.report.events += len(events)
        else:
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

    def add_message(self, message: Message | Mapping[str, Any]) -> Event:
        """Append a chat message (a `Message` or an OpenAI-style dict)."""
        msg = message if isinstance(message, Message) else Message.model_validate(message)
        return self.append(msg)

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
