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
- When a whole request (the system prompt and the tool specs the model was last sent, plus the
  log's context view) reaches the policy's trigger, ``before_model`` compacts the log and
  replaces the state's messages with the log's context view: the Checkpoint as a human message
  (id ``context-harness-checkpoint-<last folded seq>``), then the kept messages with their own
  ids. A tool result over the session's `tool_output_cap` is logged whole and replaced in the
  state by the clipped text the context view shows.

The fixed part of the request (system prompt and tool specs) is measured on every model call,
so the trigger of the next call counts it; before the first call it is `fixed_tokens` (default
0), or what the log's earlier calls measured for a resumed session in the same process.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NotRequired, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from langgraph.types import Command

from compaction import (
    TOOL_NAME,
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    Event,
    EventData,
    Message,
    MessageAdded,
    Session,
    Summarizer,
    TurnEndData,
    TurnStartData,
    UsageReportData,
    checkpoint_message_for,
    count_message,
    from_openai,
    maybe_compact,
)
from prompts import DEFAULT_MODE, PromptBuilder, get_mode, openai_message, todo_write_spec

ID_FIELD = "langchain_id"
"""The provider field that keeps a logged message's LangChain id."""
MESSAGE_FIELD = "langchain_message"
"""The provider field that keeps a logged message in LangChain's own serialized form."""
CHECKPOINT_SOURCE = "context-harness"
"""``additional_kwargs["lc_source"]`` of the Checkpoint message (it is never logged as a turn)."""
CHECKPOINT_ID = "context-harness-checkpoint-{seq}"
"""The Checkpoint message's id: `seq` is the last event its span folds (it grows with each one)."""
LOGGED_ID = "context-harness-{seq}"
"""The id given to a message of the log that no LangChain message recorded (a resumed log)."""
QUIET_REFUSALS = ("below_threshold", "nothing_to_compact", "no_safe_cut")
"""Compaction refusals that only mean "not now": the agent goes on with the state as it is."""
REPORTED_FAILURES = ("does_not_fit",)
"""Compaction failures kept in `failures` while the model is still called (a run never crashes
on them: the model may shorten what made the request too big)."""


class HarnessState(AgentState[Any]):
    """The agent state with the task list: ``todos`` mirrors the log's latest `todo_write` list."""

    todos: NotRequired[list[dict[str, str]]]


def _unreachable(**arguments: object) -> str:
    """`todo_write` runs in the middleware's ``wrap_tool_call``; this body never runs there."""
    raise RuntimeError("todo_write is run by HarnessMiddleware.wrap_tool_call")


class HarnessMiddleware(AgentMiddleware[HarnessState, Any, Any]):
    """`todo_write` and Checkpoint compaction for a LangChain v1 agent, over a session log.

    Args:
        log: the session: a JSONL path (created on first write, replayed when it exists) or an
            open `compaction.Session` (on any store; the caller closes it).
        policy: window, trigger and tail of the compaction (default `CompactionPolicy()`).
        mode: the mode each turn runs in (its tool policy decides what is refused; Plan mode
            refuses `todo_write`); default the built-in default mode.
        summarizer: writes the Checkpoint's narrative sections (default: extractive).
        system_prompt: text appended to the agent's system message on every call (default: the
            mode's block of this toolkit's prompt, which tells the model how to use
            `todo_write`); "" appends nothing.
        fixed_tokens: the system prompt and tool specs, in tokens, assumed before the first
            model call has measured them.
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
    ) -> None:
        super().__init__()
        self._owned = not isinstance(log, Session)
        self.session = log if isinstance(log, Session) else Session(log)
        self.policy = policy or CompactionPolicy()
        self.mode = mode or DEFAULT_MODE
        mode_spec = get_mode(self.mode)
        self.summarizer = summarizer
        self.system_prompt = (
            PromptBuilder().mode_block(mode_spec) if system_prompt is None else system_prompt
        )
        self.fixed_tokens = fixed_tokens
        self.compactions: list[CompactionResult] = []
        self.failures: list[CompactionError] = []
        """Compactions that could not make the request fit (``does_not_fit``), in order."""
        spec = todo_write_spec(allow_parallel_in_progress=mode_spec.todo.allow_parallel_in_progress)
        self.tools: list[BaseTool] = [
            StructuredTool.from_function(
                func=_unreachable,
                name=TOOL_NAME,
                description=spec.description,
                args_schema=spec.parameters,
                infer_schema=False,
            )
        ]
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

    def close(self) -> None:
        """Close the session log (when the middleware opened it)."""
        if self._owned:
            self.session.close()

    # --- keeping the log and the state in step --------------------------------------------------

    def sync(self, messages: Sequence[AnyMessage]) -> list[Event]:
        """Append the state's messages the log does not hold yet, in order; return the events.

        A new human message opens a turn first. The Checkpoint message is the log's own view and
        is never appended.
        """
        pending: list[EventData] = []
        ids: list[str] = []
        for lc in messages:
            if lc.id is None or lc.id in self._logged or _is_checkpoint(lc):
                continue
            if isinstance(lc, HumanMessage):
                pending.append(TurnStartData(mode=self.mode))
            pending.append(self._record(lc))
            ids.append(lc.id)
            usage = _usage(lc)
            if usage is not None:
                pending.append(usage)
        if not pending:
            return []
        events = self.session.append_many(pending)
        self._logged.update(ids)
        return events

    def _record(self, lc: BaseMessage) -> Message:
        """The `Message` that records a LangChain message (its id and serialized form kept)."""
        dump = convert_to_openai_messages(lc)
        message = from_openai(dump)
        fields = dict(message.provider_fields or {})
        fields[ID_FIELD] = cast(str, lc.id)
        fields[MESSAGE_FIELD] = json.loads(json.dumps(message_to_dict(lc), default=str))
        return message.model_copy(update={"provider_fields": fields})

    def view(self) -> list[AnyMessage]:
        """The log's context view as LangChain messages (after a compaction, Checkpoint first)."""
        window = self.session.context
        out: list[AnyMessage] = []
        if window.checkpoint is not None:
            out.append(
                HumanMessage(
                    content=checkpoint_message_for(window.checkpoint.text).text(),
                    id=CHECKPOINT_ID.format(seq=window.checkpoint.last_seq),
                    additional_kwargs={"lc_source": CHECKPOINT_SOURCE},
                )
            )
        out += [_lc_message(m, seq) for m, seq in zip(window.messages, window.seqs, strict=True)]
        self._logged.update(m.id for m in out[1 if window.checkpoint else 0 :] if m.id)
        return out

    def todos(self) -> list[dict[str, str]]:
        """The log's latest todo list, as the state's ``todos`` holds it."""
        return [t.model_dump(mode="json") for t in self.session.latest_todos]

    def compact_if_due(self) -> CompactionResult | None:
        """Compact the log when the whole request reaches the policy's trigger."""
        try:
            result = maybe_compact(
                self.session,
                self.policy,
                summarizer=self.summarizer,
                fixed_tokens=self.fixed_tokens,
            )
        except CompactionError as exc:
            if exc.code in QUIET_REFUSALS:
                return None
            if exc.code in REPORTED_FAILURES:
                self.failures.append(exc)
                return None
            raise
        if result is not None:
            self.compactions.append(result)
        return result

    # --- the hooks -------------------------------------------------------------------------------

    def before_agent(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Show a resumed log's latest todo list in the state."""
        todos = self.todos()
        return {"todos": todos} if todos and state.get("todos") != todos else None

    def before_model(self, state: HarnessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Log the new messages; compact when due; put the log's view back into the state."""
        events = self.sync(state["messages"])
        clipped = any(isinstance(e, MessageAdded) and e.data.clip is not None for e in events)
        result = self.compact_if_due()
        if result is None and not clipped:
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
        """Append the mode block to the system message; measure the request's fixed part."""
        request = self._prepared(request)
        return handler(request)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """The async form of `wrap_model_call`."""
        return await handler(self._prepared(request))

    def _prepared(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if self.system_prompt:
            base = request.system_message.text if request.system_message is not None else ""
            text = f"{base}\n\n{self.system_prompt}" if base else self.system_prompt
            request = request.override(system_message=SystemMessage(content=text))
        self.fixed_tokens = self.measure(request.system_message, request.tools)
        return request

    def measure(self, system: SystemMessage | None, tools: Iterable[object]) -> int:
        """Count the request's fixed part: the system message and the tool specs."""
        tok = self.session.tokenizer
        total = count_message(tok, Message(role="system", content=system.text)) if system else 0
        specs = [convert_to_openai_tool(cast(Any, t)) for t in tools]
        return total + (tok.count(json.dumps(specs, sort_keys=True)) if specs else 0)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run `todo_write` against the log; refuse a tool the mode forbids; run the rest."""
        answered = self._answer(request)
        return handler(request) if answered is None else answered

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The async form of `wrap_tool_call`."""
        answered = self._answer(request)
        return await handler(request) if answered is None else answered

    def _answer(self, request: ToolCallRequest) -> ToolMessage | Command[Any] | None:
        call = request.tool_call
        name, call_id = call["name"], str(call["id"])
        if name == TOOL_NAME:
            result = self.session.todo_write(dict(call["args"]), mode=self.mode)
            reply = ToolMessage(
                content=result.content,
                tool_call_id=call_id,
                name=name,
                status="error" if result.is_error else "success",
            )
            if result.is_error:  # nothing changed; parallel refusals must not race on "todos"
                return reply
            return Command(update={"messages": [reply], "todos": self.todos()})
        refused = self.session.refusal(name, mode=self.mode)
        if refused is None:
            return None
        return ToolMessage(content=refused, tool_call_id=call_id, name=name, status="error")


def _is_checkpoint(message: BaseMessage) -> bool:
    return message.additional_kwargs.get("lc_source") == CHECKPOINT_SOURCE


def _lc_message(message: Message, seq: int) -> AnyMessage:
    """The LangChain message of a logged message: the one recorded, as the context shows it."""
    fields = message.provider_fields or {}
    kept = fields.get(MESSAGE_FIELD)
    if isinstance(kept, dict):
        lc = cast(AnyMessage, messages_from_dict([kept])[0])
        if isinstance(lc, ToolMessage) and lc.content != message.text():
            # A clipped result: the log keeps it whole, the context shows head, note and tail.
            return lc.model_copy(update={"content": message.text()})
        return lc
    built = cast(AnyMessage, convert_to_messages([openai_message(message)])[0])
    built.id = LOGGED_ID.format(seq=seq)
    return built


def _usage(message: BaseMessage) -> UsageReportData | None:
    """The provider's usage an AI message carries, as a `usage/report` event."""
    if not isinstance(message, AIMessage) or not message.usage_metadata:
        return None
    usage = message.usage_metadata
    details = usage.get("input_token_details") or {}
    model = message.response_metadata.get("model_name") or message.response_metadata.get("model")
    return UsageReportData(
        purpose="turn",
        model=str(model or "unknown"),
        prompt_tokens=usage["input_tokens"],
        completion_tokens=usage["output_tokens"],
        cached_tokens=details.get("cache_read"),
        cache_write_tokens=details.get("cache_creation"),
    )


__all__ = [
    "CHECKPOINT_ID",
    "CHECKPOINT_SOURCE",
    "ID_FIELD",
    "MESSAGE_FIELD",
    "HarnessMiddleware",
    "HarnessState",
]
