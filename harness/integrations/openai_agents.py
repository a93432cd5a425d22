"""An OpenAI Agents SDK ``Session`` backed by this toolkit's session log, compacting inside a run.

Three lines a user writes::

    session = LogSession("u1", "sqlite:///sessions.db", policy=CompactionPolicy(12_000))
    agent = Agent(name="a", instructions="...", tools=[*session.tools(), read_file])
    result = await Runner.run(agent, "go", session=session, run_config=session.run_config())

`LogSession` implements the SDK's session protocol (``get_items``, ``add_items``, ``pop_item``,
``clear_session``) over a `compaction.Session` on a JSONL file or a store (``sqlite:///x.db``,
``postgresql://...``, ``jsonl:///folder``; the SDK's `session_id` is the store's session), and
the SDK's compaction hook (``run_compaction``).

Compaction inside a run. The SDK keeps a run's input in memory and only calls
``run_compaction`` between runs (it defers while a response has local tool outputs), so a long
run would grow past the window. `run_config` returns a ``RunConfig`` whose
``call_model_input_filter`` runs before every model call: it counts the whole request (the
instructions, the tool specs, the input items and the policy's output reserve; in the
provider's tokens once the log has learned its token scale) and, when it reaches the policy's
trigger, compacts the log; the model is always handed the log's view (the Checkpoint with its
preamble, then the kept tail), followed by any input item the log does not hold yet.

Context overflow. A provider's "request too long" refusal is answered by one forced compaction
and one retry (`OverflowGuard`) for every model of the run: the ``RunConfig`` guards a model
given to ``run_config(model=...)`` and, through its ``model_provider``, every model resolved
from a name (the agent's ``model="gpt-4.1"``, or none); an `agents.Model` set on the agent
itself is guarded by running ``session.agent(agent)`` (a clone; its handoff agents too).

How the protocol maps onto an append-only log (the log is the one source of truth):

- ``add_items``: each item becomes a `message` event, the item kept verbatim in its provider
  fields (see `harness.integrations._agents_items`; a bad item raises `MessageError`, nothing is
  appended). A tool output over the policy's tool-output share is logged whole and shown clipped.
- ``get_items``: the log's view as items, exactly what the model is shown.
- ``pop_item``: a `message/retract` tombstone naming the newest message of the context.
- ``clear_session``: one tombstone naming every message of the context; the Checkpoint is no
  longer shown either (the log keeps every byte).
- ``run_compaction``: `compaction.maybe_compact` with the request's fixed part (instructions
  and tools of the last model call) counted; ``force`` compacts even below the threshold.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.integrations._extras import missing_extra

try:
    from agents import (
        Agent,
        FunctionTool,
        Model,
        ModelResponse,
        MultiProvider,
        OpenAIResponsesCompactionArgs,
        RunConfig,
        SessionSettings,
        TResponseInputItem,
    )
    from agents.run_config import CallModelData, ModelInputData
except ImportError as exc:  # the extra is missing, or too old
    raise ImportError(missing_extra("openai_agents", "agents", "openai-agents>=0.19")) from exc

from compaction import (
    CompactionPolicy,
    CompactionResult,
    ConfigError,
    EventData,
    EventStore,
    MessagesRetracted,
    Summarizer,
    open_store,
    overflow_policy,
)
from compaction import Session as LogBackedSession
from compaction.compactor import record_overflow
from compaction.events import RetractData
from compaction.stores import FileStore
from harness.integrations._agents_items import (
    ITEM_FIELD,
    checkpoint_item,
    item_key,
    item_of,
    messages_of,
    output_ids,
)
from harness.integrations._agents_model import (
    GuardedProvider,
    OverflowGuard,
    UnguardedModelWarning,
    guarded_agent,
    usage_of,
    warn_unguarded,
)
from harness.integrations._agents_modes import RunModes
from harness.integrations._agents_requests import RequestSize, agent_tools, measure_request
from harness.integrations._agents_tools import guarded, session_tools
from harness.integrations._log_compaction import QUIET_REFUSALS, compact_log
from prompts import Mode, policy_table

CLEARED = "clear_session"
POPPED = "pop_item"
RETRY_ANYWAY = (*QUIET_REFUSALS, "does_not_fit")
"""After an overflow refusal, these still lead to the one retry (the provider's answer decides)."""


class LogSession(RunModes):
    """An Agents SDK session whose history is a Context Harness session log.

    Args:
        session_id: the SDK's session id (a store's session name when `path` is a store URL).
        path: the JSONL log (created on first write, replayed when it exists), a store URL, or
            an open `compaction.Session` (the caller closes it).
        policy: window, trigger, tail and output reserve (default `CompactionPolicy()`).
        mode: the mode each run works in (default the built-in default mode): its tool
            policy refuses what it forbids; set `mode` between runs to switch. Each run's input
            opens a turn (`turn/start` with the mode) in the log.
        summarizer: writes the Checkpoint's narrative sections (default: extractive).
        modes: the modes to choose from by name (default: the built-in ones; a user's, e.g.
            `prompts.available_modes("modes.toml")`); their tool policies are the log's.

    Raises:
        ConfigError: an unknown mode.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        path: Path | str | LogBackedSession,
        *,
        policy: CompactionPolicy | None = None,
        mode: str | None = None,
        summarizer: Summarizer | None = None,
        modes: Mapping[str, Mode] | None = None,
    ) -> None:
        self.session_id = session_id
        self.policy = policy or CompactionPolicy()
        super().__init__(mode, modes)
        self.summarizer = summarizer
        self._warned = False
        cap = self.policy.tool_output_tokens
        self._owned = not isinstance(path, LogBackedSession)
        self._store: EventStore | None = None
        if isinstance(path, LogBackedSession):
            self.log = path
        else:  # a JSONL file is one session; a store URL holds many: `session_id` names it
            self._store = open_store(path)
            name = None if isinstance(self._store, FileStore) else session_id
            self.log = LogBackedSession(store=self._store, session=name, tool_output_cap=cap)
        if modes is not None:  # a user's modes: their tool policies are the log's too
            self.log.policies = {**self.log.policies, **policy_table(modes)}
        self.compactions: list[CompactionResult] = []
        self.requests: list[RequestSize] = []
        """Each model request as the input filter counted it, in order."""
        self.fixed_tokens = 0
        """The fixed part of the newest request (instructions and tools), counted."""
        self.retries = 0
        """How many model calls were sent again after a context-overflow refusal."""
        self._lock = asyncio.Lock()
        self._config_model = False
        self._known: set[str] = set()
        self._cleared_at = 0
        for event in self.log.events() if self.log.applied_seq else ():
            kept = getattr(event.data, "provider_fields", None) or {}
            if ITEM_FIELD in kept:
                self._known.add(item_key(kept[ITEM_FIELD]))
            if isinstance(event, MessagesRetracted) and event.data.reason == CLEARED:
                self._cleared_at = event.seq

    def close(self) -> None:
        """Close the log (when this session opened it)."""
        if self._owned:
            self.log.close()
        if self._store is not None:
            self._store.close()

    # --- the SDK's session protocol -------------------------------------------------------------

    def view(self) -> list[TResponseInputItem]:
        """Return the log's view as SDK items: the Checkpoint (unless cleared), the kept tail."""
        window = self.log.context
        items: list[TResponseInputItem] = []
        if window.checkpoint is not None and window.checkpoint.last_seq >= self._cleared_at:
            items.append(checkpoint_item(window.checkpoint))
        items += [item_of(m) for m in window.messages]
        # What the log shows (a clipped output, the Checkpoint) comes back from the SDK as input.
        self._known.update(item_key(item) for item in items)
        return items

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """Return the context view as SDK items (the newest `limit` when given)."""
        items = self.view()
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append each item as a `message` event, the item kept verbatim.

        A run's input (a user message) opens a turn first: a `turn/start` in the current mode.

        Raises:
            MessageError: an item is not a dict of a known shape (nothing is appended).
        """
        messages: list[EventData] = list(messages_of(items))
        if not messages:
            return
        self.open_turn(messages)
        async with self._lock:
            self.log.append_many(messages)
            self._known.update(item_key(item) for item in items)

    async def pop_item(self) -> TResponseInputItem | None:
        """Retract the newest message of the context (a tombstone); return its item."""
        async with self._lock:
            window = self.log.context
            if not window.messages:
                return None
            self.log.append(RetractData(seqs=(window.seqs[-1],), reason=POPPED))
            return item_of(window.messages[-1])

    async def clear_session(self) -> None:
        """Retract every message of the context (one tombstone) and hide the Checkpoint."""
        async with self._lock:
            window = self.log.context
            if window.seqs or window.checkpoint is not None:
                event = self.log.append(RetractData(seqs=window.seqs, reason=CLEARED))
                self._cleared_at = event.seq

    async def run_compaction(self, args: OpenAIResponsesCompactionArgs | None = None) -> None:
        """The SDK's compaction hook: compact when the whole request is due (or when forced)."""
        async with self._lock:
            self._compact(force=bool(args.get("force")) if args else False)

    # --- compaction inside a run ----------------------------------------------------------------

    def tools(self, *host_tools: FunctionTool) -> list[FunctionTool]:
        """Return `todo_write` (and the task tools in team mode) bound to the log, then the host's.

        Each host tool is refused with the mode's refusal when the mode forbids it.
        """

        def mode() -> str:
            return self.mode.name

        return session_tools(self.log, self.mode, mode) + [
            guarded(t, self.log, mode) for t in host_tools
        ]

    def run_config(self, **kwargs: Any) -> RunConfig:  # noqa: ANN401 (RunConfig's own fields)
        """Return a ``RunConfig`` that compacts inside the run (other fields as given).

        A ``model=`` given as a `agents.Model` is wrapped in `OverflowGuard`, and the
        ``model_provider`` (yours, or the SDK's ``MultiProvider``) in `GuardedProvider`, so a
        model resolved from a name is guarded too. An `agents.Model` set on the agent itself
        is guarded by `agent`.

        Raises:
            ConfigError: `kwargs` sets ``call_model_input_filter`` (this session's filter).
        """
        if "call_model_input_filter" in kwargs:
            raise ConfigError(
                "run_config sets call_model_input_filter itself; filter the items before "
                "add_items instead, or build your own RunConfig and call session.filter_input"
            )
        model = kwargs.get("model")
        self._config_model = model is not None  # it overrides the agent's own model
        if isinstance(model, Model) and not isinstance(model, OverflowGuard):
            kwargs["model"] = self.guard(model)
        provider = kwargs.get("model_provider") or MultiProvider()
        if not isinstance(provider, GuardedProvider):
            kwargs["model_provider"] = GuardedProvider(provider, self)
        return RunConfig(call_model_input_filter=self.filter_input, **kwargs)

    def guard(self, model: Model) -> OverflowGuard:
        """Return `model` wrapped so that a context overflow gets one compaction and a retry."""
        return OverflowGuard(model, self)

    def agent(self, agent: Agent[Any]) -> Agent[Any]:
        """Return a clone of `agent` whose own `agents.Model` is guarded (its handoffs' too).

        Needed only for a model object set on the agent (``Agent(model=SomeModel(...))``); a
        model name is guarded by `run_config`'s provider. `agent` itself is not changed.
        """
        return guarded_agent(agent, self)

    async def filter_input(self, data: CallModelData[Any]) -> ModelInputData:
        """The ``call_model_input_filter``: compact when due, hand the model the log's view."""
        instructions = data.model_data.instructions
        tools = agent_tools(data)
        if not self._warned and not self._config_model:  # once: the fix is named
            self._warned = warn_unguarded(data.agent)
        async with self._lock:
            unlogged = self._unlogged(data.model_data.input)
            # A call a killed process left without a result gets its placeholder, recorded once.
            self.log.answer_open_calls(held=output_ids(unlogged))
            # What would be sent: the log's view (the SDK's own input only grows in a run).
            items = self.view() + unlogged
            size = self.measure(instructions, tools, items)
            self.fixed_tokens = size.fixed
            if self._policy().should_compact(size.input, size.fixed):
                self._compact(force=True)
                items = self.view() + self._unlogged(data.model_data.input)
                size = self.measure(instructions, tools, items)
            self.requests.append(size)
        return ModelInputData(input=items, instructions=instructions)

    def measure(
        self, instructions: str | None, tools: Sequence[Any], items: Sequence[object]
    ) -> RequestSize:
        """Count a request's fixed part (instructions, tool specs) and its input items."""
        return measure_request(self.log, instructions, tools, items)

    async def after_overflow(
        self,
        instructions: str | None,
        tools: Sequence[Any],
        refused: Sequence[object],
        error: BaseException | None = None,
    ) -> list[TResponseInputItem]:
        """Force one compaction after a provider refused a request as too long; the new input.

        The refusal is recorded (a ``context/overflow`` event: from then on the window is at
        most what it proved), and the compaction runs under `compaction.overflow_policy`: the
        window is at most the refused request's size.
        """
        async with self._lock:
            self.retries += 1
            size = self.measure(instructions, tools, refused)
            self.fixed_tokens = size.fixed
            if error is not None:
                record_overflow(self.log, error, size.fixed + size.input)
            self._compact(
                force=True,
                policy=overflow_policy(self._policy(), size.fixed + size.input),
                quiet=RETRY_ANYWAY,
            )
            return self.view()

    async def record_usage(self, response: ModelResponse, model: Model) -> None:
        """Log what the provider reported of an answered call (a ``usage/report``).

        Never fails the answered call: usage that cannot be read or recorded (a getter that
        raises, a negative or enormous figure) is left out of the log.
        """
        try:
            report = usage_of(response, model)
        except Exception:  # a hostile usage object: the answer still counts
            return
        if report is None:
            return
        async with self._lock:
            self.log.append(report)

    def _unlogged(self, items: Sequence[TResponseInputItem]) -> list[TResponseInputItem]:
        """The input items the log does not hold (the SDK has not saved them yet)."""
        return [item for item in items if item_key(item) not in self._known]

    def _policy(self) -> CompactionPolicy:
        """The policy in counted tokens, its window at most what a provider's refusal proved."""
        capped = self.policy.capped(self.log.refused_window)
        return capped.in_counted_tokens(self.log.token_scale)

    def _compact(
        self,
        *,
        force: bool,
        policy: CompactionPolicy | None = None,
        quiet: Sequence[str] = QUIET_REFUSALS,
    ) -> None:
        """Compact the log (forced, or when the whole request is due); "not now" is quiet."""
        result = compact_log(
            self.log,
            self.policy,
            summarizer=self.summarizer,
            fixed_tokens=self.fixed_tokens,
            forced=(policy or self._policy()) if force else None,
            quiet=quiet,
        )
        if result is not None:
            self.compactions.append(result)


__all__ = [
    "CLEARED",
    "ITEM_FIELD",
    "POPPED",
    "GuardedProvider",
    "LogSession",
    "OverflowGuard",
    "RequestSize",
    "UnguardedModelWarning",
]
