"""An agent loop over OpenAI chat completions: the todo list, one host tool, compaction.

Usage: openai_chat_loop.py LOG REQUEST; env MODEL, OPENAI_API_KEY, OPENAI_BASE_URL (optional).
"""

import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import openai

import compaction
from compaction import CompactionPolicy, Session, ToolResult, call_tool, compacting_call
from prompts import PromptBuilder, ToolCatalog, fixed_tokens, get_mode, openai_request

PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
READ_FILE = {"name": "read_file", "description": "Return a file's text.", "parameters": PATH}


def read_file(args: dict[str, Any]) -> ToolResult:
    """Read a file for the model; a failure is a result it can read."""
    try:
        return ToolResult(Path(str(args.get("path"))).read_text(encoding="utf-8")[:20_000])
    except (OSError, UnicodeDecodeError) as exc:
        return ToolResult(f"read_file: {exc}", is_error=True)


def run(log: str, request: str) -> None:
    """Run one request to the end: call the model until it stops calling tools."""
    client, model = openai.OpenAI(), os.environ.get("MODEL", "gpt-4.1-mini")
    policy = CompactionPolicy(window_tokens=int(os.environ.get("WINDOW_TOKENS", "128000")))
    builder, mode = PromptBuilder(ToolCatalog([READ_FILE])), get_mode("agent")
    with Session(log, tool_output_cap=policy.tool_output_tokens) as session:
        session.start_turn(request)
        build = partial(openai_request, builder, mode, session, model=model)
        ask = partial(compacting_call, session, policy, fixed_tokens=fixed_tokens(builder, mode))
        while True:  # compacts when due; a context overflow: one forced compaction, one retry
            message = ask(lambda: client.chat.completions.create(**build())).choices[0].message
            session.add_message(message)  # the SDK's ChatCompletionMessage, as is
            calls = [c for c in message.tool_calls or [] if c.type == "function"]
            for c in calls:  # todo_write runs in the session, read_file in the handler
                name, args = c.function.name, c.function.arguments
                out = call_tool(session, name, args, handlers={"read_file": read_file})
                session.add_message({"role": "tool", "tool_call_id": c.id, "content": out.content})
            if not calls:
                break
        session.end_turn()
        print(message.content or "", session.todos.render(), sep="\n\n")  # the task panel


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python examples/openai_chat_loop.py LOG REQUEST")
    try:
        run(sys.argv[1], sys.argv[2])
    except (openai.OpenAIError, compaction.HarnessError) as exc:  # one line, no key
        sys.exit(compaction.redact(f"error: {type(exc).__name__}: {exc}".splitlines()[0]))
