"""A live session: the log on disk plus its views, updated as events are appended.

The usage view (token counts) is folded on first use: a session that only writes or reads todos
never loads a tokenizer. Until then its events wait, in order, to be counted once.

The session is also where the built-in tools run (`todo_write`, `task_create`, `task_update`,
`task_list`): each call is checked against the tool policy of the current turn's mode (the
``mode`` of the latest `turn/start`, looked up in the session's policy table), so a host cannot
forget to refuse a tool the mode forbids. Task writes are checked and appended inside one
`batch()` (the file's lock, or the store's transaction) against the board as stored, and append
only if no other writer got in first (an expected seq), so concurrent agents never lose an
update.

Invariants: the views always equal a fold of the log up to `applied_seq`; a view is never updated
for an event that did not reach the log; a refused or rejected tool call appends nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from compaction.clipping import ShownCount, clip_and_count
from compaction.errors import ConfigError, LogError, SeqConflictError, ToolInputError
from compaction.events import (
    Event,
    EventData,
    Message,
    OpenWork,
    Task,
    TaskCreateData,
    TaskUpdateData,
    TodoItem,
    TodoWriteData,
    TurnEndData,
    TurnStartData,
    TurnStarted,
)
from compaction.policy import DEFAULT_TOOL_OUTPUT_CAP
from compaction.provider_messages import to_messages
from compaction.stores.file import FileStore
from compaction.stores.jsonl import JsonlStore
from compaction.stores.log_writer import SessionLog, SyncPolicy
from compaction.stores.opening import open_session_store, session_of
from compaction.stores.protocol import EventStore
from compaction.stores.sources import SessionSource, collector_paused
from compaction.tokens import Tokenizer, get_tokenizer
from compaction.tools.arguments import Arguments
from compaction.tools.mode_policy import ModePolicy, PolicyTable, builtin_policies, policy_for
from compaction.tools.tasks import (
    AGENT_PATTERN,
    TASK_CREATE,
    TASK_LIST,
    TASK_UPDATE,
    created_line,
    is_agent_name,
    list_text,
    parse_task_create,
    parse_task_list,
    plan_update,
    read_update,
    unchanged_line,
    updated_line,
)
from compaction.tools.todos import (
    TOOL_NAME,
    calls_in_one_response,
    one_list_per_response,
    parse_todo_write,
    summary_line,
)
from compaction.tools.tool_result import ToolResult
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
from compaction.views.board import TaskBoard, TasksProjection, TasksState
from compaction.views.progress import Progress, ProgressProjection
from compaction.views.token_scale import ScaleState, TokenScaleProjection
from compaction.views.turn_modes import TurnModes, TurnModesProjection

TaskEventData = TaskCreateData | TaskUpdateData
TASK_WRITE_ATTEMPTS = 50
"""How many times a task write is checked again when another writer got in first."""


def _busy(tool: str) -> str:
    return (
        f"{tool}: rejected, nothing was changed. The shared task list kept changing while this "
        "call was checked; call task_list, then call again."
    )


class Session:
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
            `compaction.clipping`); None appends every result unclipped. Default: 0.1 of the
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
        self.mode: str | None = None
        """The mode of the current turn (the latest `turn/start`'s), None when not given."""
        self._seen: dict[str, dict[str, int]] = {}
        """Agent -> task id -> the version of the task that agent was last shown."""
        self._tokenizer = tokenizer
        self.skip_bad_lines = skip_bad_lines
        self._source = self._open_source(path, store, session, sync)
        self.report = self._source.report
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
        self._todos: TodoPanel = self._todos_p.init()
        self._latest: TodoPanel = self._latest_p.init()
        self._context: ContextState = self._context_p.init()
        self._usage: UsageState = UsageState()
        self._uncounted: list[Event] = []
        self._known: dict[int, ShownCount] = {}
        """Seq -> the clip check's count of a tool result appended here, for the usage view."""
        self._scale_p = TokenScaleProjection()
        self._scale: ScaleState = self._scale_p.init()
        self._learned: tuple[object, float | None] = (None, None)
        self.applied_seq = 0
        if tokenizer is not None:  # loaded already: count as the log is folded, keep no event
            self._usage_p = UsageProjection(tokenizer, self._known)
        try:
            for event in self._source.read_new():  # streamed, the collector paused
                self._apply(event)
        except BaseException:
            self._source.close()
            raise

    def _open_source(
        self,
        path: Path | str | None,
        store: EventStore | None,
        session: str | None,
        sync: SyncPolicy,
    ) -> SessionSource:
        if store is not None:
            return SessionSource(store, session_of(store, session), owns_store=False)
        if path is None:
            raise ConfigError("Session needs a log path, a store URL or a store")
        opened, sid = open_session_store(
            path, session, sync=sync, skip_bad_lines=self.skip_bad_lines
        )
        return SessionSource(opened, sid, owns_store=True)

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
        self._tasks = self._tasks_p.apply(self._tasks, event)
        self._progress = self._progress_p.apply(self._progress, event)
        self._scale = self._scale_p.apply(self._scale, event)
        if isinstance(event, TurnStarted):
            self.mode = event.data.mode
        if self._usage_p is None:
            self._uncounted.append(event)
        else:
            self._usage = self._usage_p.apply(self._usage, event)
        self.applied_seq = event.seq

    def _counted(self) -> tuple[UsageProjection, UsageState]:
        """Return the usage projection and state, counting the waiting events on first use."""
        if self._usage_p is None:
            self._usage_p = UsageProjection(self.tokenizer, self._known)
            self._usage = self._usage_p.init()
            for event in collector_paused(iter(self._uncounted)):
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

        A tool result over `tool_output_cap` is recorded with its clip (see `compaction.clipping`).

        Args:
            items: the payloads.
            expected_seq: the last seq the caller read (e.g. `applied_seq`); if another writer
                appended since, nothing is written and `SeqConflictError` is raised.
        """
        cap = self.tool_output_cap
        payloads: list[EventData] = []
        counted: dict[int, ShownCount] = {}
        for p in items:
            if cap is not None and isinstance(p, Message) and p.role == "tool":
                p, shown = clip_and_count(p, self.tokenizer, cap)
                if shown is not None:
                    counted[len(payloads)] = shown
            payloads.append(p)
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

    def batch(self) -> AbstractContextManager[object]:
        """Hold the session across many appends: the file's lock, or the store's transaction."""
        return self._source.transaction()

    # --- convenience for agent loops ---------------------------------------------------------

    def start_turn(self, request: str, *, mode: str | None = None) -> list[Event]:
        """Record a new user request: a `turn/start`, then the user's message."""
        return self.append_many([TurnStartData(mode=mode), Message(role="user", content=request)])

    def open_work(self) -> OpenWork:
        """Return the unfinished work now: the latest todo list's and the shared list's."""
        todos = self.latest_todos
        board = self.tasks
        pending, current = board.unfinished("pending"), board.unfinished("in_progress")
        ids = {t.id for t in (*pending, *current)}
        return OpenWork(
            todos_pending=sum(1 for t in todos if t.status == "pending"),
            todos_in_progress=sum(1 for t in todos if t.status == "in_progress"),
            tasks_pending=len(pending),
            tasks_in_progress=len(current),
            task_ids=tuple(t.id for t in board.tasks if t.id in ids),
        )

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
        refused = self.refusal(TOOL_NAME, mode=mode)
        if refused is not None:
            return ToolResult(refused, is_error=True)
        if allow_parallel_in_progress is None:
            allow_parallel_in_progress = self.policy(mode).allow_parallel_in_progress
        try:
            todos = parse_todo_write(arguments, allow_parallel=allow_parallel_in_progress)
        except ToolInputError as exc:
            return ToolResult(str(exc), is_error=True)
        calls = calls_in_one_response(self.context.messages)
        if calls > 1:  # after validation, so a bad call still learns what to fix
            return ToolResult(str(one_list_per_response(calls)), is_error=True)
        self.append(TodoWriteData(todos=todos))
        return ToolResult(summary_line(todos))

    def task_create(
        self, arguments: Arguments, *, agent: str | None = None, mode: str | None = None
    ) -> ToolResult:
        """Run `task_create` for `agent` (default: the session's): add a task, return its id.

        The new id is one more than the largest numeric id on the board, read under the log's
        lock, so two agents creating at once get different ids.
        """
        who = self._who(agent)
        refused = self.refusal(TASK_CREATE, mode=mode)
        if refused is not None:
            return ToolResult(refused, is_error=True)
        try:
            subject, description = parse_task_create(arguments)
        except ToolInputError as exc:
            return ToolResult(str(exc), is_error=True)
        made: list[Task] = []

        def plan(board: TaskBoard) -> TaskCreateData:
            made[:] = [Task(id=board.next_id, subject=subject, description=description)]
            return TaskCreateData(agent=who, task=made[0])

        if not self._write_task(plan):
            return ToolResult(_busy(TASK_CREATE), is_error=True)
        self._seen.setdefault(who, {})[made[0].id] = made[0].version
        return ToolResult(created_line(made[0]))

    def task_update(
        self, arguments: Arguments, *, agent: str | None = None, mode: str | None = None
    ) -> ToolResult:
        """Run `task_update` for `agent` (default: the session's): change one task by id.

        Checked under the log's lock against the board on disk (see `compaction.tools.tasks` for the
        rules); an update to a task that changed since this agent was last shown it is rejected
        with the task's current state.
        """
        who = self._who(agent)
        refused = self.refusal(TASK_UPDATE, mode=mode)
        if refused is not None:
            return ToolResult(refused, is_error=True)
        seen = self._seen.setdefault(who, {})
        shown = dict(seen)
        before: list[Task] = []
        after: list[Task | None] = []

        def plan(board: TaskBoard) -> TaskUpdateData | None:
            old = board.get(task_id)
            before[:], after[:] = [] if old is None else [old], [None]
            try:
                after[0] = plan_update(board, task_id, changes, who, shown.get(task_id))
            finally:
                if old is not None:
                    # The rejection shows the current state, so that is what it has seen.
                    seen[task_id] = old.version
            return None if after[0] is None else TaskUpdateData(agent=who, task=after[0])

        try:
            task_id, changes = read_update(arguments)
            if not self._write_task(plan):
                return ToolResult(_busy(TASK_UPDATE), is_error=True)
        except ToolInputError as exc:
            return ToolResult(str(exc), is_error=True)
        old, new = before[0], after[0]
        if new is None:
            return ToolResult(unchanged_line(old))
        seen[task_id] = new.version
        return ToolResult(updated_line(old, new))

    def _who(self, agent: str | None) -> str:
        """Return the calling agent (default: the session's), its name checked whole."""
        if agent and not is_agent_name(agent):
            raise ConfigError(f"agent {agent!r} must match {AGENT_PATTERN}")
        return agent or self.agent

    def _write_task(self, plan: Callable[[TaskBoard], TaskEventData | None]) -> bool:
        """Plan a task event on the board as stored and append it, no other writer in between.

        Inside one `batch()` (the file's lock, or the store's transaction) the session reads
        what others appended, `plan` checks the call and returns the event (None: nothing to
        write; it raises `ToolInputError` to reject), and the event is appended only if the log
        has not moved on since (an expected seq). A store whose transactions do not serialize
        writers may still move on: the whole check runs again, up to `TASK_WRITE_ATTEMPTS`
        times. Returns False when every attempt lost the race.
        """
        for _ in range(TASK_WRITE_ATTEMPTS):
            with self.batch():
                self.refresh()
                data = plan(self.tasks)
                if data is None:
                    return True
                try:
                    self.append(data, expected_seq=self.applied_seq)
                except SeqConflictError:
                    continue
                return True
        return False

    def task_list(
        self,
        arguments: Arguments | None = None,
        *,
        agent: str | None = None,
        mode: str | None = None,
    ) -> ToolResult:
        """Run `task_list` for `agent`: the live tasks, compact; remembers the versions shown."""
        refused = self.refusal(TASK_LIST, mode=mode)
        if refused is not None:
            return ToolResult(refused, is_error=True)
        try:
            parse_task_list(arguments)
        except ToolInputError as exc:
            return ToolResult(str(exc), is_error=True)
        board = self.tasks
        self._seen[self._who(agent)] = {t.id: t.version for t in board.tasks}
        return ToolResult(list_text(board))

    # --- views ---------------------------------------------------------------------------------

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
    def latest_todos(self) -> tuple[TodoItem, ...]:
        """The latest recorded list, across turns (what compaction copies from)."""
        return self._latest.todos

    @property
    def in_store(self) -> bool:
        """Whether the session lives in a database store (its `batch` is the store's transaction).

        A JSONL file or folder is not: holding its lock through a summary would stall writers.
        """
        return not isinstance(self.store, FileStore | JsonlStore)

    @property
    def latest_todos_seq(self) -> int | None:
        """The seq of the `todo/write` that recorded `latest_todos` (None before any)."""
        return self._latest.seq

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
