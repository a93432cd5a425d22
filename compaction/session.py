"""A live session: the log on disk plus its views, updated as events are appended.

The usage view (token counts) is folded on first use: a session that only writes or reads todos
never loads a tokenizer. Until then its events wait, in order, to be counted once.

Invariants: the views always equal a fold of the log up to `applied_seq`; a view is never updated
for an event that did not reach the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from compaction.errors import ConfigError
from compaction.events import (
    Event,
    EventData,
    Message,
    TodoItem,
    TurnEndData,
    TurnStartData,
)
from compaction.log import ReadReport, SessionLog, SyncPolicy
from compaction.provider_messages import to_messages
from compaction.sources import EventSource, FileSource, StoreSource
from compaction.stores import EventStore, is_store_url, open_store
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
    """A session log with live `todos`, `context` and `usage` views, on any store.

    ``Session("s.jsonl")`` works on a JSONL file, as always; ``Session.open("sqlite:///s.db",
    session="abc")`` (or ``Session(store=store, session="abc")``) on a session of a store.

    Args:
        path: the JSONL log (created on first append, replayed when it exists), or a store URL
            (then `session` is required).
        store: an `EventStore` to use instead of a path (the caller closes it).
        session: the session id within the store.
        tokenizer: counts tokens for the usage view (default `o200k_base`, loaded on first use).
        sync: fsync every append (``"always"``) or once per `batch()` (``"batch"``).
        skip_bad_lines: skip and count malformed lines instead of raising on them (JSONL).

    Raises:
        ConfigError: neither a path nor a store, or a store without a session id.
    """

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        store: EventStore | None = None,
        session: str | None = None,
        tokenizer: Tokenizer | None = None,
        sync: SyncPolicy = "always",
        skip_bad_lines: bool = False,
    ) -> None:
        self._tokenizer = tokenizer
        self.skip_bad_lines = skip_bad_lines
        self._source = self._open_source(path, store, session, sync)
        self.report = self._report
        self._todos_p = TodosProjection()
        self._latest_p = LatestTodosProjection()
        self._context_p = ContextProjection()
        self._usage_p: UsageProjection | None = None
        self._modes_p = TurnModesProjection()
        self._modes: TurnModes = self._modes_p.init()
        self._todos: TodoPanel = self._todos_p.init()
        self._latest: TodoPanel = self._latest_p.init()
        self._context: ContextState = self._context_p.init()
        self._usage: UsageState = UsageState()
        self._uncounted: list[Event] = []
        self.applied_seq = 0
        try:
            self.refresh()
        except BaseException:
            self._source.close()
            raise

    def _open_source(
        self,
        path: Path | str | None,
        store: EventStore | None,
        session: str | None,
        sync: SyncPolicy,
    ) -> EventSource:
        owns = store is None and path is not None and is_store_url(path)
        if owns and session is None:
            raise ConfigError(f"{path}: name the session (session=..., CLI --session)")
        if owns:
            store = open_store(str(path), sync=sync)
        where = str(path) if store is None else f"{store.url}#{session}"
        self._report = ReadReport(path=where)
        if store is not None:
            if session is None:
                raise ConfigError(f"{store.url}: name the session (session=..., CLI --session)")
            return StoreSource(store, session, report=self._report, owns_store=owns)
        if path is None:
            raise ConfigError("Session needs a log path, a store URL or a store")
        return FileSource(path, sync=sync, skip_bad_lines=self.skip_bad_lines, report=self._report)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        session: str | None = None,
        tokenizer: Tokenizer | None = None,
        sync: SyncPolicy = "always",
        skip_bad_lines: bool = False,
    ) -> Session:
        """Open a session by URL: a store URL with `session`, or a JSONL path without.

        ``Session.open("sqlite:///sessions.db", session="abc")``; the store is closed with the
        session.
        """
        if session is not None and not is_store_url(url):
            raise ConfigError(
                f"{url}: --session needs a store URL (jsonl:///folder, sqlite:///file.db, "
                "postgresql://...); a JSONL path is one session already"
            )
        return cls(
            url, session=session, tokenizer=tokenizer, sync=sync, skip_bad_lines=skip_bad_lines
        )

    @property
    def where(self) -> str:
        """The log file, or the store URL and ``#session``, for messages."""
        return self._source.where

    @property
    def log(self) -> SessionLog:
        """The JSONL log (a session on a file only).

        Raises:
            ConfigError: the session lives in a store.
        """
        if not isinstance(self._source, FileSource):
            raise ConfigError(f"{self.where}: a store session has no JSONL log")
        return self._source.log

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of the usage view, loaded on first use."""
        if self._tokenizer is None:
            self._tokenizer = get_tokenizer()
        return self._tokenizer

    @property
    def path(self) -> Path:
        """The log file (a session on a file only; see `log`)."""
        return self.log.path

    def close(self) -> None:
        """Flush and close the log (and a store opened by URL)."""
        self._source.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def event_tokens(self, seq: int) -> int:
        """Return the token count of the applied event with this seq (0 for one never applied).

        Keyed by seq, not position: a log read with bad lines skipped has gaps.
        """
        projection, state = self._counted()
        return projection.tokens_of(state, seq)

    def _apply(self, event: Event) -> None:
        self._todos = self._todos_p.apply(self._todos, event)
        self._latest = self._latest_p.apply(self._latest, event)
        self._context = self._context_p.apply(self._context, event)
        self._modes = self._modes_p.apply(self._modes, event)
        if self._usage_p is None:
            self._uncounted.append(event)
        else:
            self._usage = self._usage_p.apply(self._usage, event)
        self.applied_seq = event.seq

    def _counted(self) -> tuple[UsageProjection, UsageState]:
        """Return the usage projection and state, counting the waiting events on first use."""
        if self._usage_p is None:
            self._usage_p = UsageProjection(self.tokenizer)
            self._usage = self._usage_p.init()
            for event in self._uncounted:
                self._usage = self._usage_p.apply(self._usage, event)
            self._uncounted = []
        return self._usage_p, self._usage

    def refresh(self) -> list[Event]:
        """Apply events appended since the last read (by any writer); return them.

        A last line that is not a whole event yet (being written, or torn by a crash) is left for
        a later refresh and shown in `report.torn_line` meanwhile.

        Raises:
            LogFormatError: a malformed complete line, unless `skip_bad_lines`.
            LogIntegrityError: an event whose seq does not follow the last one applied.
        """
        new: list[Event] = []
        for event in self._source.read_new():
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
        events, taken = self._source.append(list(items), expected_seq, self.applied_seq)
        if taken:
            # Nobody else appended since our last read: apply our own events directly.
            for e in events:
                self._apply(e)
            return events
        self.refresh()
        return events

    def batch(self) -> AbstractContextManager[object]:
        """Hold the session across many appends: the file's lock, or the store's transaction."""
        return self._source.transaction()

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
        projection, state = self._counted()
        return projection.view(state)

    @property
    def turn_modes(self) -> TurnModes:
        """The mode each stretch of the log ran in."""
        return self._modes_p.view(self._modes)

    @property
    def context_tokens(self) -> int:
        """Tokens of the model's context now, in O(1) once counted: the budget check."""
        projection, state = self._counted()
        return projection.context_tokens(state)

    def events(self) -> Iterable[Event]:
        """Stream this session's events from disk."""
        return self._source.events()
