"""A host loop run in its own process, to be killed inside a tool call and then resumed.

``python killed_loop.py HOST LOG URL BLOCKER REQUEST``: runs one agent turn of HOST
(``langchain``, ``langchain_checkpointer``, ``agents``) over the scripted model at URL (the
stub's ``/v1``), logging to LOG. The host tool ``read_file`` opens BLOCKER: a FIFO blocks it
until the test, having seen the open, kills this process with SIGKILL; a plain file lets it
return. With ``langchain_checkpointer`` the graph's state is kept in ``LOG.graph`` (a file-backed
checkpointer), so a resumed process starts from the state the killed one saved.
"""

# mypy: allow-untyped-defs

from __future__ import annotations

import asyncio
import pickle
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

THREAD: Any = {"configurable": {"thread_id": "t1"}, "recursion_limit": 20}


def read_blocker(path: str) -> str:
    """Open `path` and read it (a FIFO holds the caller here until the test kills it)."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def langchain_model(url: str) -> Any:
    """A LangChain chat model that sends each request to `url` with the OpenAI SDK."""
    import openai
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, convert_to_openai_messages
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.runnables import Runnable
    from langchain_core.utils.function_calling import convert_to_openai_tool

    class OverHttp(BaseChatModel):
        base_url: str

        @property
        def _llm_type(self) -> str:
            return "over-http"

        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, Any]:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _generate(
            self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> ChatResult:
            client = openai.OpenAI(base_url=self.base_url, api_key="sk-test", max_retries=0)
            sent: Any = convert_to_openai_messages(messages)
            answer = client.chat.completions.create(
                model="stub", messages=sent, tools=kw.get("tools") or openai.omit
            )
            message = answer.choices[0].message
            calls = [
                {"name": c.function.name, "args": __import__("json").loads(c.function.arguments),
                 "id": c.id, "type": "tool_call"}
                for c in message.tool_calls or () if c.type == "function"
            ]  # fmt: skip
            reply = AIMessage(content=message.content or "", tool_calls=calls)
            return ChatResult(generations=[ChatGeneration(message=reply)])

    return OverHttp(base_url=url)


def file_saver(path: Path) -> Any:
    """An in-memory LangGraph checkpointer that keeps its state in `path` across processes."""
    from langgraph.checkpoint.memory import InMemorySaver

    lock = threading.Lock()

    class FileSaver(InMemorySaver):
        def __init__(self) -> None:
            super().__init__()
            if path.exists():
                storage, writes, blobs = pickle.loads(path.read_bytes())
                for thread, spaces in storage.items():
                    self.storage[thread].update(spaces)
                self.writes.update(writes)
                self.blobs.update(blobs)

        def _save(self) -> None:
            with lock:  # LangGraph saves from its executor's threads
                storage = {k: dict(v) for k, v in self.storage.items()}
                state = pickle.dumps((storage, dict(self.writes), dict(self.blobs)))
                fresh = path.with_suffix(".tmp")  # whole or not at all: the kill comes any time
                fresh.write_bytes(state)
                fresh.replace(path)

        def put(self, *args: Any, **kwargs: Any) -> Any:
            out = super().put(*args, **kwargs)
            self._save()
            return out

        def put_writes(self, *args: Any, **kwargs: Any) -> None:
            super().put_writes(*args, **kwargs)
            self._save()

    return FileSaver()


def run_langchain(log: str, url: str, blocker: str, request: str, *, saved: bool) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    from harness.integrations.langchain_agents import HarnessMiddleware

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return read_blocker(blocker)

    middleware = HarnessMiddleware(log)
    saver = file_saver(Path(log + ".graph")) if saved else None
    agent = create_agent(
        model=langchain_model(url), tools=[read_file], middleware=[middleware],
        checkpointer=saver,
    )  # fmt: skip
    state = agent.invoke({"messages": [HumanMessage(content=request)]}, THREAD)
    print(state["messages"][-1].content)
    middleware.close()


def run_agents(log: str, url: str, blocker: str, request: str) -> None:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    from harness.integrations.openai_agents import LogSession

    set_tracing_disabled(True)

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return read_blocker(blocker)

    client = AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="stub", openai_client=client)
    session = LogSession("s1", log)
    agent = Agent(name="a", instructions="Work.", tools=[*session.tools(), read_file])

    async def go() -> Any:
        config = session.run_config(model=model)
        return await Runner.run(agent, request, session=session, run_config=config)

    print(asyncio.run(go()).final_output)
    session.close()


def main(argv: list[str]) -> None:
    host, log, url, blocker, request = argv
    if host == "agents":
        run_agents(log, url, blocker, request)
    else:
        run_langchain(log, url, blocker, request, saved=host == "langchain_checkpointer")


if __name__ == "__main__":
    main(sys.argv[1:])
