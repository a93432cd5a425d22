"""The tool side of the LangChain middleware: the `todo_write` tool, and the calls it answers.

`todo_write` is run by the middleware itself (``wrap_tool_call``) through
`compaction.Session.todo_write`: the `todo/write` event is appended to the log first, then the
state's ``todos`` key is set to the log's latest list. A tool the mode forbids is refused with
the mode's refusal as the tool result; any other call is left to the agent's own tool node.

Invariants: a refused or invalid call appends nothing and leaves the state's ``todos`` alone;
the tool's schema is the mode's `todo_write` spec.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command

from compaction import TOOL_NAME, Session
from prompts import Mode, todo_write_spec


def _unreachable(**arguments: object) -> str:
    """`todo_write` runs in the middleware's ``wrap_tool_call``; this body never runs there."""
    raise RuntimeError("todo_write is run by HarnessMiddleware.wrap_tool_call")


def todo_tool(mode: Mode) -> BaseTool:
    """Return the `todo_write` tool the agent is given under `mode` (its schema, its rules)."""
    todo = todo_write_spec(allow_parallel_in_progress=mode.todo.allow_parallel_in_progress)
    return StructuredTool.from_function(
        func=_unreachable,
        name=TOOL_NAME,
        description=todo.description,
        args_schema=todo.parameters,
        infer_schema=False,
    )


def answer_tool_call(
    session: Session, mode: str, request: ToolCallRequest
) -> ToolMessage | Command[Any] | None:
    """Run `todo_write` against the log, or refuse a tool `mode` forbids; None: run it as is."""
    call = request.tool_call
    name, call_id = call["name"], str(call["id"])
    if name == TOOL_NAME:
        result = session.todo_write(dict(call["args"]), mode=mode)
        reply = ToolMessage(
            content=result.content,
            tool_call_id=call_id,
            name=name,
            status="error" if result.is_error else "success",
        )
        if result.is_error:  # nothing changed; parallel refusals must not race on "todos"
            return reply
        todos = [t.model_dump(mode="json") for t in session.latest_todos]
        return Command(update={"messages": [reply], "todos": todos})
    refused = session.refusal(name, mode=mode)
    if refused is None:
        return None
    return ToolMessage(content=refused, tool_call_id=call_id, name=name, status="error")


__all__ = ["answer_tool_call", "todo_tool"]
