"""An OpenAI Agents SDK agent on a session log: the todo list, one host tool, compaction.

Usage: agents_sdk_session.py LOG REQUEST; env MODEL, OPENAI_API_KEY, OPENAI_BASE_URL.
Needs ``pip install 'context-harness[agents]'``. Tracing is off: nothing leaves the machine
but the model calls.
"""

import asyncio
import os
import sys
from pathlib import Path

from agents import Agent, Runner, function_tool, set_tracing_disabled

import compaction
from compaction import CompactionPolicy
from harness.integrations.openai_agents import LogSession


@function_tool
def read_file(path: str) -> str:
    """Return a file's text."""
    try:
        return Path(path).read_text(encoding="utf-8")[:20_000]
    except (OSError, UnicodeDecodeError) as exc:
        return f"read_file: {exc}"


def run(log: str, request: str) -> None:
    """Run one request to the end; the session logs it and compacts inside the run."""
    set_tracing_disabled(True)
    policy = CompactionPolicy(int(os.environ.get("WINDOW_TOKENS", "128000")))
    session = LogSession(Path(log).stem, log, policy=policy)
    agent = Agent(
        name="coder",
        instructions="Plan with todo_write, then work through the list.",
        tools=[*session.tools(read_file)],
        model=os.environ.get("MODEL", "gpt-5-mini"),
    )
    config = session.run_config()
    result = asyncio.run(Runner.run(agent, request, session=session, run_config=config))
    print(result.final_output)
    print("\n" + session.log.todos.render())


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: agents_sdk_session.py LOG REQUEST")
    try:
        run(sys.argv[1], sys.argv[2])
    except (compaction.HarnessError, OSError, ValueError) as exc:
        sys.exit(f"error: {type(exc).__name__}: {compaction.redact(str(exc))}")
