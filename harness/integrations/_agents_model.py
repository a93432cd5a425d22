"""An Agents SDK `Model` wrapper: a context-overflow refusal is answered by one compaction.

`OverflowGuard` forwards every call to the model it wraps. When the provider refuses the
request as too long (`compaction.is_context_overflow`: OpenAI's ``context_length_exceeded``,
Anthropic's "prompt is too long", DeepSeek's "maximum context length"), it asks its
`LogSession` to compact the log (forced), sends the log's view instead of the refused input,
once; a second refusal raises `compaction.RequestOverflowError`, one line naming the request's
size. Each answered call's provider-reported input tokens are logged as a ``usage/report`` (so
the session learns the provider's token scale).

Where the model comes from decides how it is guarded (the SDK resolves it per call: the run
config's ``model``, else the agent's; a name goes through the run config's ``model_provider``):

- a name (``Agent(model="gpt-4.1")``, no model, or ``run_config(model="...")``): `GuardedProvider`
  wraps the run config's ``model_provider`` and guards every model it resolves;
- an `agents.Model` passed to ``run_config(model=...)``: wrapped there;
- an `agents.Model` set on the agent itself: `guarded_agent` returns a clone of the agent (and
  of each agent it hands off to) whose model is guarded.

Invariants: at most one retry per model call; the retry sends the log's view; a non-overflow
error passes through untouched; a model is never guarded twice.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol

from agents import (
    Agent,
    AgentOutputSchemaBase,
    Handoff,
    Model,
    ModelProvider,
    ModelResponse,
    ModelSettings,
    ModelTracing,
    Tool,
    TResponseInputItem,
)
from agents.items import TResponseStreamEvent
from openai.types.responses.response_prompt_param import ResponsePromptParam

from compaction import (
    CompactionPolicy,
    RequestOverflowError,
    UsageReportData,
    is_context_overflow,
)


class Sized(Protocol):
    """A counted request: its size in the provider's tokens."""

    @property
    def total(self) -> int:
        """Fixed part plus input."""
        ...


class OverflowHost(Protocol):
    """What the guard needs of its session (`LogSession` is one)."""

    policy: CompactionPolicy

    def measure(
        self, instructions: str | None, tools: Sequence[Any], items: Sequence[object]
    ) -> Sized:
        """Count a request."""
        ...

    async def after_overflow(
        self,
        instructions: str | None,
        tools: Sequence[Any],
        refused: Sequence[object],
        error: BaseException | None = None,
    ) -> list[TResponseInputItem]:
        """Record the refusal, compact; return the input to resend."""
        ...

    async def record_usage(self, response: ModelResponse, model: Model) -> None:
        """Log an answered call's usage."""
        ...


class OverflowGuard(Model):
    """A model whose context-overflow errors are answered by one compaction and one retry.

    Args:
        model: the model to call.
        session: the `LogSession` whose log is compacted and whose view is resent.
    """

    def __init__(self, model: Model, session: OverflowHost) -> None:
        self.model = model
        self.session = session
        self.retries = 0
        """How many calls were sent again after an overflow."""

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> ModelResponse:
        """Call the model; on an overflow, compact, resend the log's view once."""

        async def send(items: str | list[TResponseInputItem]) -> ModelResponse:
            return await self.model.get_response(
                system_instructions,
                items,
                model_settings,
                tools,
                output_schema,
                handoffs,
                tracing,
                previous_response_id=previous_response_id,
                conversation_id=conversation_id,
                prompt=prompt,
            )

        try:
            response = await send(input)
        except Exception as exc:
            if not is_context_overflow(exc):
                raise
            tried = [*tools, *handoffs]
            response = await self._retry(send, system_instructions, input, tried, exc)
        await self.session.record_usage(response, self.model)
        return response

    async def _retry(
        self,
        send: Callable[[list[TResponseInputItem]], Awaitable[ModelResponse]],
        instructions: str | None,
        refused: str | list[TResponseInputItem],
        tools: Sequence[Any],
        error: BaseException,
    ) -> ModelResponse:
        """Compact after a refusal and send the log's view once; a second refusal raises."""
        items = refused if isinstance(refused, list) else [{"role": "user", "content": refused}]
        retry = await self.session.after_overflow(instructions, tools, items, error)
        self.retries += 1
        try:
            return await send(retry)
        except Exception as again:
            if not is_context_overflow(again):
                raise
            size = self.session.measure(instructions, tools, retry)
            total = size.total + self.session.policy.output_reserve
            raise RequestOverflowError(total, self.session.policy.window_tokens, again) from None

    def stream_response(
        self,
        *args: Any,  # noqa: ANN401 - the SDK's arguments, passed through whole
        **kwargs: Any,  # noqa: ANN401
    ) -> AsyncIterator[TResponseStreamEvent]:
        """Stream from the model, arguments unchanged (an overflow propagates as it is)."""
        return self.model.stream_response(*args, **kwargs)

    async def close(self) -> None:
        """Close the wrapped model."""
        await self.model.close()


def usage_of(response: ModelResponse, model: Model) -> UsageReportData | None:
    """The ``usage/report`` of an answered call (None without a prompt size).

    Raises:
        Exception: whatever a hostile usage object raises, or a figure out of the event's
            bounds (`LogSession.record_usage` keeps the answer and logs nothing).
    """
    usage = response.usage
    if not usage.input_tokens:
        return None
    name = getattr(model, "model", None)
    return UsageReportData(
        purpose="turn",
        model=name if isinstance(name, str) else type(model).__name__,
        prompt_tokens=usage.input_tokens,
        completion_tokens=usage.output_tokens,
        cached_tokens=usage.input_tokens_details.cached_tokens,
    )


class UnguardedModelWarning(UserWarning):
    """An agent's own model object runs without the overflow guard (see `LogSession.agent`)."""


def warn_unguarded(agent: Agent[Any]) -> bool:
    """Warn when `agent` has its own unguarded model object; return whether it warned."""
    if not isinstance(agent.model, Model) or isinstance(agent.model, OverflowGuard):
        return False
    warnings.warn(
        f"LogSession: agent {agent.name!r} has its own model object, which run_config cannot "
        "guard: a context overflow would propagate unanswered; run "
        "Runner.run(session.agent(agent), ...) instead",
        UnguardedModelWarning,
        stacklevel=3,
    )
    return True


class GuardedProvider(ModelProvider):
    """A model provider whose every model is wrapped in `OverflowGuard`.

    Args:
        provider: the provider that resolves model names (the SDK's ``MultiProvider`` by
            default in a ``RunConfig``).
        session: the `LogSession` the guards compact.
    """

    def __init__(self, provider: ModelProvider, session: OverflowHost) -> None:
        self.provider = provider
        self.session = session

    def get_model(self, model_name: str | None) -> Model:
        """Resolve `model_name` with the wrapped provider and guard the model."""
        model = self.provider.get_model(model_name)
        return model if isinstance(model, OverflowGuard) else OverflowGuard(model, self.session)

    async def aclose(self) -> None:
        """Close the wrapped provider."""
        await self.provider.aclose()


def guarded_agent(agent: Agent[Any], session: OverflowHost) -> Agent[Any]:
    """Return a clone of `agent` whose `agents.Model` (and its handoff agents') is guarded.

    An agent whose model is a name or None is cloned all the same (`GuardedProvider` guards
    it at run time); a handoff given as a ``Handoff`` object is kept as it is. The original
    agents are not changed.
    """
    clones: dict[int, Agent[Any]] = {}

    def clone(one: Agent[Any]) -> Agent[Any]:
        if id(one) in clones:
            return clones[id(one)]
        model = one.model
        if isinstance(model, Model) and not isinstance(model, OverflowGuard):
            model = OverflowGuard(model, session)
        copy = one.clone(model=model)
        clones[id(one)] = copy
        copy.handoffs = [clone(h) if isinstance(h, Agent) else h for h in one.handoffs]
        return copy

    return clone(agent)
