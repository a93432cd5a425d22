"""LangChain-family driver parts: the scripted fake chat model, the scripted tools, a token counter.

Runs under a peer venv that has `langchain-core` (LangChain v1 and deepagents both do). The fake
model answers each agent call with the session's next scripted step and records the prompt it was
sent; a call made without tools bound is a summary request and gets the fake summarizer's text.

Invariants: no randomness and no clock; tool outputs are looked up by tool-call id, so parallel
tool execution cannot reorder them.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from benchmarks.peers.drivers._common import (
    TODO_TOOL,
    Recorder,
    Script,
    StepQueue,
    count_text,
    count_tools,
    message_text,
    summarize,
    versions,
    write_record,
)

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable, RunnableConfig


def openai_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Convert messages to OpenAI chat dicts; text-only block lists become one string."""
    out = []
    for message in convert_to_openai_messages(list(messages)):
        content = message.get("content")
        if isinstance(content, list) and all(
            isinstance(b, dict) and b.get("type") == "text" for b in content
        ):
            message["content"] = "".join(b["text"] for b in content)
        out.append(message)
    return out


def count_tokens(messages: Iterable[BaseMessage]) -> int:
    """Count messages with o200k_base, the benchmark's tokenizer (a LangChain `token_counter`)."""
    return count_text(openai_messages(list(messages)))


def count_request(
    messages: Iterable[BaseMessage], *, tools: Sequence[BaseTool | dict[str, Any]] | None = None
) -> int:
    """Count messages (the system message among them) and tool specs with o200k_base."""
    specs = [convert_to_openai_tool(t) for t in tools or ()]
    return count_tokens(messages) + count_tools(specs)


def whole_request_counter(recorder: Recorder) -> Callable[[Iterable[BaseMessage]], int]:
    """Return a counter of the conversation plus the fixed prompt the model was last sent.

    LangChain's middlewares count only the conversation (the state's messages); adding the
    system message and tool specs of the latest model call makes their trigger a whole-request
    budget, the same as every other peer's and ours.
    """

    def count(messages: Iterable[BaseMessage]) -> int:
        return count_tokens(messages) + recorder.fixed_tokens()

    return count


class ScriptedTool(BaseTool):
    """A tool whose output for each call id is the session's recorded output."""

    outputs: dict[str, str]

    def invoke(self, input: object, config: object = None, **kwargs: object) -> ToolMessage:
        """Answer a tool call with its scripted output."""
        if not (isinstance(input, dict) and input.get("type") == "tool_call"):
            raise TypeError(f"{self.name}: expected a tool call, got {type(input).__name__}")
        call_id = str(input["id"])
        content = self.outputs.get(call_id, f"{self.name}: no scripted output for {call_id}")
        return ToolMessage(content=content, tool_call_id=call_id, name=self.name)

    def _run(self, *args: object, **kwargs: object) -> str:
        # BaseTool requires _run; the agent loop only ever calls invoke() with a tool call.
        raise TypeError(f"{self.name}: scripted tools answer tool calls through invoke()")


def make_tools(script: Script, rename: Callable[[str], str]) -> list[BaseTool]:
    """Build one scripted tool per session tool spec, named through `rename`."""
    outputs = script.results()
    return [
        ScriptedTool(
            name=rename(spec["name"]),
            description=spec.get("description") or spec["name"],
            args_schema=spec.get("parameters") or {"type": "object", "properties": {}},
            outputs=outputs,
        )
        for spec in script.tools
    ]


class ScriptedChatModel(BaseChatModel):
    """A chat model that replays a session: agent calls get the next step, summaries are faked."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    queue: StepQueue
    recorder: Recorder
    summarizer: str = "structural"
    todo_tool: str = "write_todos"
    rename: Callable[[str], str] = str
    always_summarize: bool = False
    """Treat every call as a summary request (a model given to a middleware as its summarizer)."""

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: object) -> Runnable[Any, Any]:
        """Bind tools the way real chat models do: as OpenAI function specs."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: object = None,
        **kwargs: object,
    ) -> ChatResult:
        tools = kwargs.get("tools")
        if self.always_summarize or not isinstance(tools, list):
            reply = AIMessage(content=self._summary(messages))
        else:
            reply = self._agent_step(messages, tools)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _summary(self, messages: list[BaseMessage]) -> str:
        sent = openai_messages(messages)
        self.recorder.record_summary(sent)
        text = "\n".join(message_text(m) for m in sent)
        return summarize(self.summarizer, text)

    def _agent_step(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        step = self.queue.pop()
        self.recorder.record(openai_messages(messages), tools, overrun=step is None)
        if step is None:
            return AIMessage(content="")
        calls = [
            {
                "id": call["id"],
                "name": self.todo_tool if call["name"] == TODO_TOOL else self.rename(call["name"]),
                "args": call["arguments"],
                "type": "tool_call",
            }
            for call in step.tool_calls
        ]
        return AIMessage(content=step.content, tool_calls=calls)


def run_turns(
    agent: Runnable[Any, Any],
    args: argparse.Namespace,
    script: Script,
    queue: StepQueue,
    recorder: Recorder,
    *,
    peer: str,
    dists: Sequence[str],
) -> None:
    """Send each of the session's user requests through the agent's loop, then write the record."""
    config: RunnableConfig = {
        "configurable": {"thread_id": script.name},
        "recursion_limit": 100_000,
    }
    started = time.perf_counter()
    for index, turn in enumerate(script.turns):
        queue.start_turn(index)
        agent.invoke({"messages": [HumanMessage(turn.user)]}, config)
        while queue.remaining():  # the recorded turn went on past a reply without tool calls
            agent.invoke({"messages": []}, config)
    wall = time.perf_counter() - started
    write_record(
        args,
        recorder,
        peer=peer,
        wall_time_s=wall,
        versions=versions(*dists),
        extra={"overruns": queue.overruns},
    )
