"""Peer: LangChain `trim_messages` in front of every model call of a v1 `create_agent` loop.

The documented way to keep a history within a budget without summarizing: before each call, keep
the newest messages that fit (``strategy="last"``), end on a human or tool message, keep the system
message; the budget is the whole request's (system message, tool specs and the kept messages).
The guides' ``start_on="human"`` is widened to ``("human", "ai")``: inside one long
tool-calling turn the only human message is far back, and starting on it leaves nothing but the
system prompt; starting on an assistant message keeps every tool result with its call. The agent
state keeps every message; only the prompt is trimmed. ``TodoListMiddleware`` gives the model the
same todo tool as the other LangChain peers. There is no summarizer, so the record's summarizer is
``none``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    TodoListMiddleware,
)
from langchain_core.messages import AnyMessage, trim_messages
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.peers.drivers._common import (
    Recorder,
    StepQueue,
    load_script,
    parse_args,
)
from benchmarks.peers.drivers._lc import (
    ScriptedChatModel,
    count_request,
    count_tokens,
    make_tools,
    run_turns,
)


class TrimMiddleware(AgentMiddleware):
    """Trim the prompt of each model call to the budget with `trim_messages`."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Send only the newest messages that fit beside the system prompt and tool specs."""
        system = [request.system_message] if request.system_message is not None else []
        fixed = count_request(system, tools=list(request.tools))
        room = max(self.budget - fixed, 0)
        kept = trim_messages(
            request.messages,
            max_tokens=room,
            token_counter=count_tokens,
            strategy="last",
            start_on=("human", "ai"),
            end_on=("human", "tool"),
            include_system=True,
        )
        return handler(request.override(messages=cast(list[AnyMessage], kept)))


def main() -> None:
    """Replay one session through the agent and write the record."""
    args = parse_args()
    script = load_script(args.session)
    queue = StepQueue(script)
    recorder = Recorder()
    model = ScriptedChatModel(queue=queue, recorder=recorder)
    agent = create_agent(
        model,
        tools=make_tools(script, str),
        system_prompt=script.system or None,
        middleware=cast(
            list[AgentMiddleware[Any, Any, Any]],
            [TodoListMiddleware(), TrimMiddleware(args.budget)],
        ),
        checkpointer=InMemorySaver(),
    )
    run_turns(
        agent,
        args,
        script,
        queue,
        recorder,
        peer="langchain-trim",
        dists=("langchain", "langchain-core", "langgraph"),
    )


if __name__ == "__main__":
    main()
