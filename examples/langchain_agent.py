"""A LangChain v1 agent with the harness middleware: the todo list, one host tool, compaction.

Usage: langchain_agent.py LOG REQUEST; env MODEL, OPENAI_API_KEY, OPENAI_BASE_URL.
Needs ``pip install 'context-harness[langchain]'`` (LangChain and its OpenAI chat model).
"""

import os
import sys
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

import compaction
from compaction import CompactionPolicy, Session
from harness.integrations.langchain_agents import HarnessMiddleware


@tool
def read_file(path: str) -> str:
    """Return a file's text."""
    try:
        return Path(path).read_text(encoding="utf-8")[:20_000]
    except (OSError, UnicodeDecodeError) as exc:
        return f"read_file: {exc}"


def run(log: str, request: str) -> None:
    """Run one request to the end; the middleware writes the log and compacts when due."""
    policy = CompactionPolicy(int(os.environ.get("WINDOW_TOKENS", "128000")))
    harness = HarnessMiddleware(log, policy=policy)
    model = ChatOpenAI(model=os.environ.get("MODEL", "gpt-5-mini"))  # reads OPENAI_BASE_URL
    agent = create_agent(model, tools=[read_file], middleware=[harness])
    result = agent.invoke({"messages": [{"role": "user", "content": request}]})
    print(result["messages"][-1].content)
    with Session(log) as session:
        print("\n" + session.todos.render())


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: langchain_agent.py LOG REQUEST")
    try:
        run(sys.argv[1], sys.argv[2])
    except (compaction.HarnessError, OSError, ValueError) as exc:
        sys.exit(f"error: {type(exc).__name__}: {compaction.redact(str(exc))}")
