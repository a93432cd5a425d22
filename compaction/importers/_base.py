"""Turning a transcript's records into session events: the part every format shares.

Each format module reads its own records and drives an `EventBuilder`, which owns the seqs, the
turns, the pairing of tool calls with their results, the todo lists and the recorded compactions.
The record helpers the formats share (`RecordedCall`, `call_from`, `todo_items`, ...) live in
`recorded_calls` and are re-exported here.

Invariants:
- Every tool call written is followed by exactly one `tool` message answering it: its recorded
  result, or a placeholder (counted in `unanswered_calls`) when the transcript holds none. A
  result whose call was never seen is skipped and counted, never written.
- A recorded todo list is history: it is written as the agent wrote it, even where today's rules
  would reject it (such lists are counted); only a call the agent's own tool rejected is left out.
- Seqs run 1..n in the order events are yielded, so the events can be written to a new log as is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources

from compaction.events import (
    CheckpointData,
    Event,
    EventData,
    FunctionCall,
    JobEndData,
    Message,
    Origin,
    PlanApproveData,
    TaskCreateData,
    TaskUpdateData,
    TodoItem,
    TodoWriteData,
    ToolCall,
    TurnEndData,
    TurnStartData,
    UsageReportData,
    make_event,
)
from compaction.importers._import_report import ImportReport, RuleBreak
from compaction.importers._jobs import CarryData
from compaction.importers._recorded_calls import (
    STRICT_FIX,
    TODO_STATUS_NAMES,
    Content,
    RecordedCall,
    TodoHook,
    UnreadableTodos,
    call_from,
    content_text,
    rule_breaks,
    todo_items,
    token_figure,
    unknown,
)
from compaction.tokens import Tokenizer, count_message
from compaction.views import CarryProjection, UsageProjection, checkpoint_message, plan_on_turn
from compaction.views.board import TaskBoard, TasksProjection

CallHook = Callable[[RecordedCall], Sequence[CarryData]]
"""Return what a finished call records about jobs and the approved plan (often nothing)."""


def no_result_text() -> str:
    """Return the placeholder result given to a call whose result the transcript lacks."""
    text = resources.files("compaction").joinpath("templates", "import_no_result.md")
    return text.read_text(encoding="utf-8").strip()


@dataclass
class _OpenAssistant:
    key: str | None
    texts: list[str] = field(default_factory=list)
    calls: list[RecordedCall] = field(default_factory=list)
    after: list[Message] = field(default_factory=list)
    """Messages that arrived with the results, written after them."""
    usage: UsageReportData | None = None
    """What the provider reported for the call that produced this message (the latest record)."""


class EventBuilder:
    """Assemble events from a transcript's records; seqs start at 1.

    Args:
        report: filled as events are built.
        tokenizer: counts tokens for the report and the recorded checkpoints.
        todo_hook: tells which calls write a todo list, and the list they leave.
    """

    def __init__(
        self,
        report: ImportReport,
        tokenizer: Tokenizer,
        todo_hook: TodoHook,
        call_hook: CallHook | None = None,
    ) -> None:
        self.call_hook = call_hook
        self.at: float | None = None
        """The current record's own timestamp (a reader sets it): a request records it."""
        self._carry_p = CarryProjection()
        self._carry = self._carry_p.init()
        self._assistant_seq: int | None = None
        self.report = report
        self.tokenizer = tokenizer
        self.todo_hook = todo_hook
        self.seq = 0
        self._ready: list[Event] = []
        self._usage = UsageProjection(tokenizer)
        self._usage_state = self._usage.init()
        self._turn_open = False
        self._open: _OpenAssistant | None = None
        self._known_calls: set[str] = set()
        self._latest_todos: tuple[TodoItem, ...] = ()
        self._tasks_p = TasksProjection()
        self._tasks = self._tasks_p.init()
        self._last_replaced = 0
        self._no_result = no_result_text()
        report.tokenizer = tokenizer.name

    # --- output ---------------------------------------------------------------------------------

    def emit(self, data: EventData) -> Event:
        """Append one event to the output."""
        self.seq += 1
        event = make_event(self.seq, data)
        self._usage_state = self._usage.apply(self._usage_state, event)
        self._carry = self._carry_p.apply(self._carry, event)
        self._ready.append(event)
        self.report.events += 1
        self.report.events_by_type[event.type] += 1
        return event

    def take(self) -> list[Event]:
        """Return the events built since the last call."""
        ready, self._ready = self._ready, []
        return ready

    def finish(self) -> list[Event]:
        """Write what is still open and the token totals; return the last events."""
        self.flush()
        view = self._usage.view(self._usage_state)
        self.report.total_tokens = view.total_tokens
        self.report.context_tokens = view.context_tokens
        return self.take()

    # --- messages and turns -------------------------------------------------------------------

    def request(
        self,
        content: Content,
        *,
        mode: str | None = None,
        origin: Origin = "user",
        cwd: str | None = None,
    ) -> None:
        """Record a real user request: it ends the open turn and starts a new one.

        `origin` is ``user`` for text a person typed, ``command`` for a slash command's tags
        (the user acted, so a turn starts, but the tags are not a request to summarize).
        `cwd` is the working directory the transcript records for the turn, when it does.
        """
        self.flush()
        if self._turn_open:
            self.emit(TurnEndData())
        plan = plan_on_turn(self._carry, mode)
        if plan is not None:
            self.emit(plan)
            self.report.handled["plan approved on leaving Plan mode"] += 1
        self.emit(TurnStartData(mode=mode, cwd=cwd or None, at=self.at))
        self.emit(Message(role="user", content=content, origin=origin))
        self._turn_open = True
        self.report.turns += 1
        self.report.handled["user request"] += 1

    def message(self, message: Message, kind: str) -> None:
        """Record a message that is not a request (a system prompt, a notice, a caveat)."""
        self.flush()
        self.emit(message)
        self.report.handled[kind] += 1

    def trailing(self, message: Message, kind: str) -> None:
        """Record a message that came along with tool results: it goes right after them."""
        if self._open is None:
            self.message(message, kind)
            return
        self._open.after.append(message)
        self.report.handled[kind] += 1

    # --- assistant turns, tool calls and results ----------------------------------------------

    def assistant(
        self, key: str | None, texts: Sequence[str], calls: Sequence[RecordedCall]
    ) -> None:
        """Add text and calls of an assistant message; records sharing a `key` merge into one."""
        if self._open is None or key is None or key != self._open.key:
            self.flush()
            self._open = _OpenAssistant(key=key)
        self._open.texts.extend(t for t in texts if t.strip())
        for call in calls:
            if call.id in self._known_calls:
                self.report.skip("tool call with an id already used")
                continue
            self._known_calls.add(call.id)
            self._open.calls.append(call)

    def usage(self, data: UsageReportData) -> None:
        """Record the provider's usage of the model call behind the open assistant message.

        Records of one message repeat (and update) its usage, so the latest one wins; it is
        written just before the assistant message, never between a call and its result.
        """
        if self._open is None:
            self.emit(data)
        else:
            self._open.usage = data

    def result(
        self,
        call_id: str,
        content: Content,
        *,
        is_error: bool = False,
        meta: object = None,
        exit_code: int | None = None,
        failed: bool | None = None,
    ) -> bool:
        """Give an open call its result; False (and counted) when no open call has that id.

        `exit_code` and `failed` are the call's status as the transcript records it (None:
        it does not say); they reach the `tool` message, where Errors and Fixes reads them.
        """
        call = self._find(call_id)
        if call is None:
            self.report.orphan_results += 1
            self.report.skip("tool result without its call")
            return False
        call.result, call.is_error, call.meta = content, is_error, meta
        call.exit_code, call.failed = exit_code, failed
        self.report.handled["tool result"] += 1
        return True

    def _find(self, call_id: str) -> RecordedCall | None:
        if self._open is None:
            return None
        for call in self._open.calls:
            if call.id == call_id and call.result is None:
                return call
        return None

    def open_calls(self) -> list[RecordedCall]:
        """Return the calls of the open assistant message that still wait for a result."""
        return [c for c in self._open.calls if c.result is None] if self._open else []

    def flush(self) -> None:
        """Write the open assistant message, then each call's todo list and result."""
        open_, self._open = self._open, None
        if open_ is None:
            return
        if open_.usage is not None:
            self.emit(open_.usage)
        if not open_.texts and not open_.calls:
            for message in open_.after:
                self.emit(message)
            return
        self._assistant_seq = self.emit(
            Message(
                role="assistant",
                content="\n\n".join(open_.texts) if open_.texts else None,
                tool_calls=tuple(_tool_call(c) for c in open_.calls) or None,
            )
        ).seq
        self.report.handled["assistant message"] += 1
        for call in open_.calls:
            self._answer(call)
        for message in open_.after:
            self.emit(message)

    def _answer(self, call: RecordedCall) -> None:
        self.report.tool_calls += 1
        if call.result is None:
            self.report.unanswered_calls += 1
            content: Content = self._no_result
        else:
            content = call.result
            self.report.largest_tool_output = max(
                self.report.largest_tool_output, len(call.result_text())
            )
            if not call.is_error:
                self._todos_of(call)
        self.emit(
            Message(
                role="tool",
                tool_call_id=call.id,
                content=content,
                exit_code=call.exit_code,
                failed=call.failed,
            )
        )
        if self.call_hook is not None:
            self.carry(self.call_hook(call))

    def carry(self, records: Sequence[CarryData]) -> None:
        """Record jobs and the plan a call or notice states; an end only for a running job."""
        for data in records:
            if isinstance(data, JobEndData) and data.id not in self._carry.running:
                self.report.skip("job end for a job not running (never started, or ended already)")
                continue
            if isinstance(data, PlanApproveData) and data.source_seq is None:
                data = data.model_copy(update={"source_seq": self._assistant_seq})
            self.emit(data)
            self.report.handled[f"{make_event(1, data).type} from the transcript"] += 1

    def _todos_of(self, call: RecordedCall) -> None:
        try:
            items = self.todo_hook(call)
        except UnreadableTodos as exc:
            self.report.skip(f"{call.name} call with an unreadable list ({exc})")
            return
        if items is not None:
            self.todo_write(items)

    def todo_write(self, items: tuple[TodoItem, ...]) -> None:
        """Record a todo list as written; count it if today's rules would reject it."""
        event = self.emit(TodoWriteData(todos=items))
        self._latest_todos = items
        self.report.todo_writes += 1
        problems = rule_breaks(items)
        if problems:
            self.report.rule_breaking_lists.append(RuleBreak(event.seq, problems))

    def tasks(self) -> TaskBoard:
        """Return the shared task list as the events written so far leave it."""
        return self._tasks_p.view(self._tasks)

    def task(self, data: TaskCreateData | TaskUpdateData) -> None:
        """Record a task the agent created or changed (`task/create` / `task/update`)."""
        self._tasks = self._tasks_p.apply(self._tasks, self.emit(data))

    # --- the agent's own compactions ------------------------------------------------------------

    def checkpoint(self, text: str, summarizer: str) -> None:
        """Record the agent's own compaction: `text` replaced everything since the last one.

        The span runs from the event after the previous span (as the compactor does) to the
        last event before this one; `pending`/`current` copy the unfinished items of the latest
        list at the cut, `pending_tasks`/`current_tasks` the shared list's unfinished tasks. A
        summary with nothing before it to replace (a session resumed from one) is kept as a user
        message of origin ``recorded_summary``, so the goal it holds is not lost.
        """
        self.flush()
        first, last = self._last_replaced + 1, self.seq
        if last < first:
            self.emit(Message(role="user", content=text, origin="recorded_summary"))
            self.report.handled["recorded summary with nothing to replace"] += 1
            return
        data = CheckpointData(
            text=text,
            first_seq=first,
            last_seq=last,
            tokens_before=self._usage.context_tokens(self._usage_state),
            tokens_after=0,
            summarizer=summarizer,
            pending=tuple(t.content for t in self._latest_todos if t.status == "pending"),
            current=tuple(t.content for t in self._latest_todos if t.status == "in_progress"),
            pending_tasks=self.tasks().unfinished("pending") or None,
            current_tasks=self.tasks().unfinished("in_progress") or None,
        )
        after = self._usage_state.system_tokens + count_message(
            self.tokenizer, checkpoint_message(data)
        )
        self.emit(data.model_copy(update={"tokens_after": after}))
        self._last_replaced = last
        self.report.checkpoints += 1


def _tool_call(call: RecordedCall) -> ToolCall:
    return ToolCall(id=call.id, function=FunctionCall(name=call.name, arguments=call.arguments))


__all__ = [
    "STRICT_FIX",
    "TODO_STATUS_NAMES",
    "Content",
    "EventBuilder",
    "RecordedCall",
    "TodoHook",
    "UnreadableTodos",
    "call_from",
    "content_text",
    "no_result_text",
    "rule_breaks",
    "todo_items",
    "token_figure",
    "unknown",
]
