"""A LangChain v1 agent middleware backed by this toolkit's session log.

`HarnessMiddleware` takes the place of LangChain's ``TodoListMiddleware`` plus
``SummarizationMiddleware`` in ``create_agent(..., middleware=[...])``: it gives the agent the
`todo_write` tool (full-overwrite semantics, validated, under the mode's tool policy) and
compacts the conversation into this toolkit's Checkpoint, whose Pending Jobs and Current Work are
copied from the log by code.

One source of truth: **the session log.** The graph state is a view of it:

- Every message the graph adds is appended to the log once (``before_model``, ``after_model``
  and ``after_agent`` sync the state's new messages, in order; each keeps its LangChain id and
  its serialized form in ``provider_fields``, so a message is never logged twice and comes back
  verbatim). A new human message opens a turn (`turn/start` with the middleware's mode); the
  end of an agent run closes it (`turn/end`).
- `todo_write` calls are run by the middleware itself (``wrap_tool_call``) through
  `compaction.Session.todo_write`: the `todo/write` event is appended to the log first, then the
  state's ``todos`` key is set to the log's latest list, so the state's list is always the log's.
  A tool the mode forbids is refused the same way, with the mode's refusal as the tool result.
- When a whole request (the system prompt and tool specs last sent, plus the log's view; in
  the provider's tokens once the log has learned its token scale) reaches the policy's trigger,
  ``before_model`` compacts the log and replaces the state's messages with the log's view: the
  Checkpoint as a human message, then the kept messages with their own ids. A tool result over
  the policy's tool-output share is logged whole and shown clipped (head, note, tail).
- Resume: ``before_agent`` puts the log's view into a state that lacks it (a restarted process
  without a LangGraph checkpointer), then the new input.
- Overflow: when the provider refuses a request as too long (`compaction.is_context_overflow`),
  ``wrap_model_call`` forces one compaction (`compaction.overflow_policy`) and sends the log's
  view once; a second refusal raises `compaction.RequestOverflowError`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired

from harness.integrations._extras import missing_extra

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
    from langchain.agents.middleware.types import ToolCallRequest
    from langchain_core.messages import (
        AnyMessage,
        HumanMessage,
        RemoveMessage,
        SystemMessage,
        ToolMessage,
    )
    from langchain_core.tools import BaseTool
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.runtime import Runtime
    from langgraph.types import Command

    if len(getattr(AgentMiddleware, "__parameters__", ())) < 3:  # before langchain 1.2.9
        raise ImportError("langchain's AgentMiddleware takes no response type parameter")
except ImportError as exc:  # the extra is missing, or too old
    raise ImportError(missing_extra("langchain_agents", "langchain", "langchain>=1.2.9")) from exc

from compaction import (
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    Event,
    EventData,
    MessageAdded,
    RequestOverflowError,
    Session,
    Summarizer,
    TurnEndData,
    TurnStartData,
    is_context_overflow,
    overflow_policy,
)
from compaction.compactor import record_overflow
from compaction.views import scaled_tokens
from harness.integrations._langchain_tools import answer_tool_call, todo_tool
from harness.integrations._langchain_view import (
    CHECKPOINT_ID,
    CHECKPOINT_SOURCE,
    ID_FIELD,
    MESSAGE_FIELD,
    fixed_part_tokens,
    is_checkpoint,
    messages_tokens,
    record,
    system_text,
    usage_of,
    view_messages,
    with_system,
)
from harness.integrations._log_compaction import compact_log
from prompts import DEFAULT_MODE, Mode, PromptBuilder, get_mode, policy_table

REPORTED_FAILURES = ("does_not_fit",)
"""Compaction failures kept in `failures` while the model is still called (a run never crashes
on them: the model may shorten what made the request too big)."""


class HarnessState(AgentState[Any]):
    """The agent state with the task list: ``todos`` mirrors the log's latest `todo_write` list."""

    todos: NotRequired[list[dict[str, str]]]


class HarnessMiddleware(AgentMiddleware[HarnessState, Any, Any]):
    """`todo_write` and Checkpoint compaction for a LangChain v1 agent, over a session log.

    Args:
        log: the session: a JSONL path (created on first write, replayed when it exists) or an
            open `compaction.Session` (on any store; the caller closes it).
        policy: window, trigger and tail of the compaction (default `CompactionPolicy()`).
        mode: the mode each turn runs in (its tool policy decides what is refused; Plan mode
            refuses `todo_write`); default the built-in default mode. Set `mode` between
            invocations to switch (the next turn is logged in the new mode).
        summarizer: writes the Checkpoint's narrative sections (default: extractive).
        system_prompt: text appended to the agent's system message on every call (default: the
            mode's block of this toolkit's prompt, which tells the model how to use
            `todo_write`); "" appends nothing.
        fixed_tokens: the system prompt and tool specs, in tokens, assumed before the first
            model call has measured them.
        modes: the modes to choose from by name (default: the built-in ones; a user's, e.g.
            `prompts.available_modes("modes.toml")`); their tool policies are the log's.

    Raises:
        ConfigError: an unknown mode.
    """

    state_schema = HarnessState

    def __init__(
        self,
        log: Session | Path | str,
        *,
        policy: CompactionPolicy | None = None,
        mode: str | None = None,
        summarizer: Summarizer | None = None,
        system_prompt: str | None = None,
        fixed_tokens: int = 0,
        modes: Mapping[str, Mode] | None = None,
    ) -> None:
        super().__init__()
        self.modes = modes
        self.policy = policy or CompactionPolicy()
        self._owned = not isinstance(log, Session)
        self.session = (
            log
            if isinstance(log, Session)
            else Session(log, tool_output_cap=self.policy.tool_output_tokens)
        )
        if modes is not None:  # a user's modes: their tool policies are the log's too
            self.session.policies = {**self.session.policies, **policy_table(modes)}
        self.summarizer = summarizer
        self._custom_prompt = system_prompt
        self.fixed_tokens = fixed_tokens
        self.compactions: list[CompactionResult] = []
        self.failures: list[CompactionError] = []
        """Compactions that could not make the request fit (``does_not_fit``), in order."""
        self.retries = 0
        """How many model calls were sent again after a context overflow."""
        self.mode = mode or DEFAULT_MODE
        self._logged: set[str] = set()
        for event in self.session.events() if self.session.applied_seq else ():
            if isinstance(event, MessageAdded):
                logged = (event.data.provider_fields or {}).get(ID_FIELD)
                if isinstance(logged, str):
                    self._logged.add(logged)

    @property
    def name(self) -> str:
        """The middleware's name in the graph."""
        return "HarnessMiddleware"

    @property
    def mode(self) -> str:
        """The mode the next turn runs in (set it between invocations to switch)."""
        return self._mode.name

    @mode.setter
    def mode(self, name: str) -> None:
        spec: Mode = get_mode(name, self.modes)
        self._mode = spec
        self.system_prompt = (
            PromptBuilder().mode_block(spec) if self._custom_prompt is None else self._custom_prompt
        )
        self.tools: list[BaseTool] = [todo_tool(spec)]

    def close(self) -> None:
        """Close the session log (when the middleware opened it)."""
        if self._owned:
            self.session.close()

    def sync(self, messages: Sequence[AnyMessage]) -> list[Event]:
        """Append the state's messages the log does not hold yet, in order; return the events.

        A new human message opens a turn first (in the current `mode`). The Checkpoint message
        is the log's own view and is never appended.
        """
        pending: list[EventData] = []
        ids: list[str] = []
        for lc in messages:
            if lc.id is None or lc.id in self._logged or is_checkpoint(lc):
                continue
            if isinstance(lc, HumanMessage):
                pending.append(TurnStartData(mode=self.mode))
            pending.append(record(lc))
            ids.append(lc.id)
            usage = usage_of(lc)
            if usage is not None:
                pending.append(usage)
        if not pending:
            return []
        events = self.session.append_many(pending)
        self._logged.update(ids)
        return events

    def view(self) -> list[AnyMessage]:
        """The log's context view as LangChain messages (after a compaction, Checkpoint first)."""
        out = view_messages(self.session)
        self._logged.update(m.id for m in out if m.id and not is_checkpoint(m))
        return out

    def in_step(self, messages: Sequence[AnyMessage]) -> bool:
        """Tell whether the state's messages show the log's view (after the unlogged ones go)."""
        shown = [m.id for m in self.view()]
        held = [m.id for m in messages if m.id in self._logged or is_checkpoint(m)]
        return held == shown

    def todos(self) -> list[dict[str, str]]:
        """The log's latest todo list, as the state's ``todos`` holds it."""
        return [t.model_dump(mode="json") for t in self.session.latest_todos]

    def _policy(self) -> CompactionPolicy:
        """The policy in counted tokens, its window at most what a provider's refusal proved."""
        capped = self.policy.capped(self.session.refused_window)
        return capped.in_counted_tokens(self.session.token_scale)

    def compact_if_due(self, *, refused_tokens: int | None = None) -> CompactionResult | None:
        """Compact the log when the whole request reaches the policy's trigger.

        With `refused_tokens` (the provider refused a request of that size as too long) the
        compaction is forced, under `compaction.overflow_policy`.
        """
        forced = None
        if refused_tokens is not None:
            forced = overflow_policy(self._policy(), refused_tokens)
        result = compact_log(
            self.session, self.policy, summarizer=self.summarizer,
            fixed_tokens=self.fixed_tokens, forced=forced,
            reported=REPORTED_FAILURES, failures=self.failures,
        )  # fmt: skip
        if result is not None:
            self.compactions.append(result)
        return result

    def before_agent(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Resume: put the log's view (Checkpoint first) and its todo list into the state.

        A restarted process (no LangGraph checkpointer) starts from a state holding only the
        new input; the state then gets the log's view, followed by the new messages.
        """
        update: dict[str, Any] = {}
        todos = self.todos()
        if todos and state.get("todos") != todos:
            update["todos"] = todos
        messages = state["messages"]
        if not self.in_step(messages):
            new = [m for m in messages if m.id not in self._logged and not is_checkpoint(m)]
            update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *self.view(), *new]
        return update or None

    def before_model(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Log the new messages; compact when due; put the log's view back into the state.

        A tool call the log holds without a result (the process was killed inside it) gets the
        placeholder error result first, recorded once in the log, so the request is valid.
        """
        events = self.sync(state["messages"])
        events += self.session.answer_open_calls()  # a call a killed process never answered
        clipped = any(isinstance(e, MessageAdded) and e.data.clip is not None for e in events)
        result = self.compact_if_due()
        if result is None and not clipped and self.in_step(state["messages"]):
            return None
        update: dict[str, Any] = {
            "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *self.view()],
        }
        if result is not None:
            update["todos"] = self.todos()
        return update

    def after_model(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Log the model's answer before its tool calls run (so the log keeps their order)."""
        self.sync(state["messages"])
        return None

    def after_agent(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Log what is left and close the turn."""
        self.sync(state["messages"])
        self.session.append(TurnEndData())
        return None

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Add the mode block, measure the fixed part; answer an overflow with one compaction."""
        request = self._prepared(request)
        try:
            return handler(request)
        except Exception as exc:
            retry = self._after_overflow(request, exc)
        try:
            return handler(retry)
        except Exception as again:
            if not is_context_overflow(again):
                raise
            raise self._second_overflow(retry, again) from None

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """The async form of `wrap_model_call`."""
        request = self._prepared(request)
        try:
            return await handler(request)
        except Exception as exc:
            retry = self._after_overflow(request, exc)
        try:
            return await handler(retry)
        except Exception as again:
            if not is_context_overflow(again):
                raise
            raise self._second_overflow(retry, again) from None

    def _after_overflow(self, request: ModelRequest[Any], exc: Exception) -> ModelRequest[Any]:
        """Re-raise anything but an overflow; else compact and return the request to resend."""
        if not is_context_overflow(exc):
            raise exc
        self.sync(request.messages)
        refused = self.request_tokens(request, scaled=False)
        record_overflow(self.session, exc, refused)  # the window from now on: at most this
        self.compact_if_due(refused_tokens=refused)
        self.retries += 1
        return request.override(messages=self.view())

    def _second_overflow(self, request: ModelRequest[Any], exc: Exception) -> Exception:
        size = self.request_tokens(request, scaled=True) + self.policy.output_reserve
        return RequestOverflowError(size, self.policy.window_tokens, exc)

    def request_tokens(self, request: ModelRequest[Any], *, scaled: bool) -> int:
        """Count a whole request: fixed part and messages (provider tokens when `scaled`)."""
        counted = self.fixed_tokens + messages_tokens(self.session.tokenizer, request.messages)
        return scaled_tokens(counted, self.session.token_scale) if scaled else counted

    def _prepared(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if self.system_prompt:
            base = system_text(request)
            text = f"{base}\n\n{self.system_prompt}" if base else self.system_prompt
            request = with_system(request, text)
        self.fixed_tokens = self.measure(system_text(request), request.tools)
        return request

    def measure(self, system: SystemMessage | str | None, tools: Iterable[object]) -> int:
        """Count the request's fixed part: the system text and the tool specs."""
        text = system.text if isinstance(system, SystemMessage) else system
        return fixed_part_tokens(self.session.tokenizer, text, tools)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run `todo_write` against the log; refuse a tool the mode forbids; run the rest."""
        answered = answer_tool_call(self.session, self.mode, request)
        return handler(request) if answered is None else answered

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The async form of `wrap_tool_call`."""
        answered = answer_tool_call(self.session, self.mode, request)
        return await handler(request) if answered is None else answered


__all__ = [
    "CHECKPOINT_ID",
    "CHECKPOINT_SOURCE",
    "ID_FIELD",
    "MESSAGE_FIELD",
    "HarnessMiddleware",
    "HarnessState",
]
