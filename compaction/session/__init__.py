"""A live session: the log on disk plus its views, updated as events are appended.

`Session` is the facade a host uses; it puts together one part per job (`compaction.session`):
the source it reads and appends through (`compaction.stores.sources`), its live views (it is a
`compaction.session.live_views.LiveViews`; the usage view is counted on first use, so a session
that only writes or reads todos never loads a tokenizer) and the built-in tools
(`compaction.session._tool_runs`: `todo_write`, `task_create`, `task_update`, `task_list`, each
checked against the tool policy of the current turn's mode, the ``mode`` of the latest
`turn/start` looked up in the session's policy table; task writes checked and appended inside
one `batch()` against the board as stored, so concurrent agents never lose an update).

Invariants: the views always equal a fold of the log up to `applied_seq`; a view is never updated
for an event that did not reach the log; a refused or rejected tool call appends nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager, closing
from pathlib import Path
from typing import Any

from compaction.errors import ConfigError, LogError
from compaction.events import (
    Event,
    EventData,
    Message,
    OpenWork,
    TurnEndData,
    UsageReportData,
)
from compaction.policy import DEFAULT_TOOL_OUTPUT_CAP
from compaction.providers import to_messages
from compaction.session._carry_writes import CarryWrites
from compaction.session._recorded_count import with_leading_count
from compaction.session._tool_runs import ToolRuns
from compaction.session.live_views import LiveViews
from compaction.stores.file import FileStore
from compaction.stores.jsonl import JsonlStore
from compaction.stores.log_writer import SessionLog, SyncPolicy
from compaction.stores.protocol import EventStore
from compaction.stores.sources import SessionSource
from compaction.tokens import Tokenizer
from compaction.tools.arguments import Arguments
from compaction.tools.mode_policy import ModePolicy, PolicyTable, builtin_policies, policy_for
from compaction.tools.tasks import AGENT_PATTERN, is_agent_name
from compaction.tools.tool_result import ToolResult
from compaction.views import interrupted_result
from compaction.views.clipping import ShownCount, clip_and_count


class Session(LiveViews, CarryWrites):
    """A session log with live `todos`, `tasks`, `context` and `usage` views, on any store.

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
        tool_output_cap: a tool result over this many tokens is appended with a clip: the log
            keeps it whole, the context view shows its head and tail around a note (see
            `compaction.views.clipping`); None appends every result unclipped. Default: 0.1 of the
            default 128,000-token window (`CompactionPolicy.tool_output_tokens`).
        agent: the agent this session speaks for in task events (default ``main``).
        policies: mode name -> tool policy (default: the built-in modes'; `prompts` builds
            one from any modes with `prompts.policy_table`).

    Raises:
        ConfigError: neither a path nor a store, a store without a session id, or an `agent`
            that is not a valid agent name.
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
        tool_output_cap: int | None = DEFAULT_TOOL_OUTPUT_CAP,
        agent: str = "main",
        policies: PolicyTable | None = None,
    ) -> None:
        if tool_output_cap is not None and tool_output_cap < 1:
            raise ConfigError(
                f"tool_output_cap must be a positive integer or None, not {tool_output_cap!r}"
            )
        self.tool_output_cap = tool_output_cap
        if not is_agent_name(agent):
            raise ConfigError(f"agent {agent!r} must match {AGENT_PATTERN}")
        self.agent = agent
        self.policies: PolicyTable = builtin_policies() if policies is None else policies
        super().__init__(tokenizer)
        self.skip_bad_lines = skip_bad_lines
        self._source = SessionSource.open(
            path, store, session, sync=sync, skip_bad_lines=skip_bad_lines
        )
        self.report = self._source.report
        self._replay_source = self._source
        self._tools = ToolRuns(self)
        try:
            self._reopen()
        except BaseException:
            self._source.close()
            raise

    @classmethod
    def open(
        cls,
        url: str,
        *,
        session: str | None = None,
        tokenizer: Tokenizer | None = None,
        sync: SyncPolicy = "always",
        skip_bad_lines: bool = False,
        agent: str = "main",
        policies: PolicyTable | None = None,
    ) -> Session:
        """Open a session by URL: a store URL with `session`, or a JSONL path without.

        ``Session.open("sqlite:///sessions.db", session="abc")``; the store is closed with the
        session.
        """
        return cls(
            url,
            session=session,
            tokenizer=tokenizer,
            sync=sync,
            skip_bad_lines=skip_bad_lines,
            agent=agent,
            policies=policies,
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
        if not isinstance(self.store, FileStore):
            raise ConfigError(f"{self.where}: a store session has no JSONL log")
        return self.store.log

    @property
    def store(self) -> EventStore:
        """The store the session lives in (a JSONL file is a `FileStore` of one session)."""
        return self._source.store

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

    def refresh(self) -> list[Event]:
        """Apply events appended since the last read (by any writer); return them.

        A last line that is not a whole event yet (being written, or torn by a crash) is left for
        a later refresh and shown in `report.torn_line` meanwhile.

        Raises:
            LogFormatError: a malformed complete line, unless `skip_bad_lines`.
            LogIntegrityError: an event whose seq does not follow the last one applied.
        """
        new: list[Event] = []
        # Closed on any exit: a fold left suspended would keep the collector paused.
        with closing(self._source.read_new()) as events:
            for event in events:
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

        A tool result over `tool_output_cap` is recorded with its clip
        (see `compaction.views.clipping`). A checkpoint leading a batch appended with
        `expected_seq` equal to `applied_seq` (as `compaction.compact` appends) records the
        context's count after it (`compaction.session._recorded_count.with_leading_count`).

        A checkpoint's span is checked first (`compaction.invariants.check_checkpoint_span_at`:
        forward, before the checkpoint, after the previous one). A tool call the log left
        without a result (a process killed inside it) is answered first,
        before the first user or assistant message or ``turn/start`` of `items`, with the
        placeholder of `compaction.views.unanswered` (see `answer_open_calls`).

        Args:
            items: the payloads.
            expected_seq: the last seq the caller read (e.g. `applied_seq`); if another writer
                appended since, nothing is written and `SeqConflictError` is raised.
        """
        cap = self.tool_output_cap
        payloads: list[EventData] = []
        counted: dict[int, ShownCount] = {}
        for p in self.ready(items):
            if cap is not None and isinstance(p, Message) and p.role == "tool":
                p, shown = clip_and_count(p, self.tokenizer, cap)
                if shown is not None:
                    counted[len(payloads)] = shown
            payloads.append(p)
        if expected_seq is not None and expected_seq == self.applied_seq:
            payloads = with_leading_count(payloads, self.counted_checkpoint)
        events, taken = self._source.append(payloads, expected_seq, self.applied_seq)
        for i, shown in counted.items():
            self._known[events[i].seq] = shown
        if taken:
            # Nobody else appended since our last read: apply our own events directly.
            for e in events:
                self._apply(e)
            return events
        self.refresh()
        return events

    def answer_open_calls(self, held: Iterable[str] = ()) -> list[Event]:
        """Answer every tool call the log left without a result; return the events appended.

        A process killed inside a tool call leaves the call unanswered, and a provider refuses
        any request that holds it. Call this on resume before building a request from the log
        (appending a new message does it too): each open call gets one ``tool`` message saying
        the process stopped before the call returned, recorded once. Appends nothing when every
        call has its result.

        Args:
            held: ids of calls whose results the host holds but has not appended yet (left open).
        """
        self.refresh()
        kept = set(held)
        calls = [c for c in self.open_calls if c.id not in kept]
        if not calls:
            return []
        return self.append_many([interrupted_result(c) for c in calls])

    @property
    def in_store(self) -> bool:
        """Whether the session lives in a database store (its `batch` is the store's transaction).

        A JSONL file or folder is not: holding its lock through a summary would stall writers.
        """
        return not isinstance(self.store, FileStore | JsonlStore)

    def batch(self) -> AbstractContextManager[object]:
        """Hold the session across many appends: the file's lock, or the store's transaction."""
        return self._source.transaction()

    # --- convenience for agent loops ---------------------------------------------------------

    def end_turn(self, reason: str | None = None) -> OpenWork:
        """Record that the agent finished the current request; return the work left open.

        The ``turn/end`` event records the unfinished todo items and shared tasks (`OpenWork`:
        counts and task ids; omitted when nothing is open), so a host can tell a turn that ended
        with work left and continue once, and ``harness log`` lists such turns.
        """
        left = self.open_work()
        self.append(TurnEndData(reason=reason, open=left if left.total else None))
        return left

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

    # --- the built-in tools -------------------------------------------------------------------

    def report_usage(
        self, usage: UsageReportData, *, at: float | None = None, context_seq: int | None = None
    ) -> Event:
        """Record a provider's usage for one request, with when it was sent (`usage/report`).

        Args:
            usage: the figures the provider reported.
            at: when the request was sent, in seconds on the host's clock (the library reads
                no clock); cache-aware clearing replays these gaps after a restart.
            context_seq: the log's last seq when the request was built (None: the events
                before the newest assistant message, the answer).
        """
        update = {k: v for k, v in (("at", at), ("context_seq", context_seq)) if v is not None}
        data = UsageReportData.model_validate({**usage.model_dump(), **update})
        return self.append(data)

    def policy(self, mode: str | None = None) -> ModePolicy:
        """Return the tool policy of `mode` (default: the current turn's mode)."""
        return policy_for(self.policies, self.mode if mode is None else mode)

    def refusal(self, tool: str, *, mode: str | None = None) -> str | None:
        """Return the refusal of `tool` under `mode` (default: the current turn's), or None.

        Reads what other writers appended first, so a turn another process started counts.
        """
        self.refresh()
        return self.policy(mode).refusal(tool)

    def todo_write(
        self,
        arguments: Arguments,
        *,
        allow_parallel_in_progress: bool | None = None,
        mode: str | None = None,
    ) -> ToolResult:
        """Run `todo_write`: validate, append one `todo/write` event, return the model's result.

        Args:
            arguments: the raw arguments the model sent (JSON text, bytes, or a mapping).
            allow_parallel_in_progress: accept several `in_progress` items; None follows the
                mode's policy.
            mode: run under this mode instead of the current turn's (a host that tracks it).

        A call the mode forbids returns the mode's refusal (``is_error``); a call with bad
        arguments returns every violation; a valid call made beside another `todo_write` in
        one model response (the log's latest assistant message, one of its calls unanswered)
        is refused, each of them. Either way nothing is appended. Never raises for
        bad arguments.
        """
        return self._tools.todo_write(arguments, allow_parallel_in_progress, mode)

    def task_create(
        self, arguments: Arguments, *, agent: str | None = None, mode: str | None = None
    ) -> ToolResult:
        """Run `task_create` for `agent` (default: the session's): add a task, return its id.

        The new id is one more than the largest numeric id on the board, read under the log's
        lock, so two agents creating at once get different ids.
        """
        return self._tools.task_create(arguments, agent, mode)

    def task_update(
        self, arguments: Arguments, *, agent: str | None = None, mode: str | None = None
    ) -> ToolResult:
        """Run `task_update` for `agent` (default: the session's): change one task by id.

        Checked under the log's lock against the board on disk (see `compaction.tools.tasks` for the
        rules); an update to a task that changed since this agent was last shown it is rejected
        with the task's current state.
        """
        return self._tools.task_update(arguments, agent, mode)

    def task_list(
        self,
        arguments: Arguments | None = None,
        *,
        agent: str | None = None,
        mode: str | None = None,
    ) -> ToolResult:
        """Run `task_list` for `agent`: the live tasks, compact; remembers the versions shown."""
        return self._tools.task_list(arguments, agent, mode)

    def events(self) -> Iterable[Event]:
        """Stream this session's events from disk."""
        return self._source.events()

    def event(self, seq: int) -> Event:
        """Return the event recorded at `seq`, read from the log (a clipped tool result whole).

        Raises:
            LogError: no event has that seq (or the log cannot be read).
        """
        if 1 <= seq <= self.applied_seq:
            for e in self.events():
                if e.seq == seq:
                    return e
        raise LogError(f"no event with seq {seq} (the log holds 1..{self.applied_seq})")
