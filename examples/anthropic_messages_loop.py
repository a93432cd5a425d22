"""An agent loop over Anthropic messages: the todo list, one host tool, compaction.

Usage: anthropic_messages_loop.py LOG REQUEST; env MODEL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL.
"""

import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import anthropic

import compaction
from compaction import CompactionPolicy, Session, ToolResult, call_tool, compacting_call
from prompts import PromptBuilder, ToolCatalog, anthropic_request, fixed_tokens, get_mode

PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
READ_FILE = {"name": "read_file", "description": "Return a file's text.", "input_schema": PATH}


def read_file(args: dict[str, Any]) -> ToolResult:
    """Read a file for the model; a failure is a result it can read."""
    try:
        return ToolResult(Path(str(args.get("path"))).read_text(encoding="utf-8")[:20_000])
    except (OSError, UnicodeDecodeError) as exc:
        return ToolResult(f"read_file: {exc}", is_error=True)


def run(log: str, request: str) -> None:
    """Run one request to the end: call the model until it stops calling tools."""
    client, model = anthropic.Anthropic(), os.environ.get("MODEL", "claude-sonnet-4-5")
    policy = CompactionPolicy(int(os.environ.get("WINDOW_TOKENS", "140000")))  # Claude's, <200k
    builder, mode = PromptBuilder(ToolCatalog([READ_FILE])), get_mode("agent")
    with Session(log, tool_output_cap=policy.tool_output_tokens) as session:
        session.start_turn(request)
        build = partial(anthropic_request, builder, mode, session, model=model, max_tokens=4096)
        ask = partial(compacting_call, session, policy, fixed_tokens=fixed_tokens(builder, mode))
        while True:  # compacts when due; a context overflow: one forced compaction, one retry
            session.add_message(reply := ask(lambda: client.messages.create(**build())))  # as is
            results = []  # todo_write runs in the session, read_file in its handler
            for block in (b for b in reply.content if b.type == "tool_use"):
                out = call_tool(session, block.name, block.input, handlers={"read_file": read_file})
                results.append({"type": "tool_result", "tool_use_id": block.id, **vars(out)})
            if not results:
                break
            session.add_message({"role": "user", "content": results})
        session.end_turn()
        text = "".join(b.text for b in reply.content if b.type == "text")
        print(text, session.todos.render(), sep="\n\n")  # the task panel


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python examples/anthropic_messages_loop.py LOG REQUEST")
    try:
        run(sys.argv[1], sys.argv[2])
    except (anthropic.AnthropicError, compaction.HarnessError) as exc:  # one line, no key
        sys.exit(compaction.redact(f"error: {type(exc).__name__}: {exc}".splitlines()[0]))
