"""The built-in tools as Agents SDK `FunctionTool`s, bound to a session log and a mode.

`session_tools` gives `todo_write` (the project's strict schema and the mode's description) and,
in a mode that offers them (``team``), the shared task tools. Each runs through
`compaction.call_tool` against the log under the given mode: a call with bad arguments gets
every violation back as the tool result the model reads, a call the mode forbids (`todo_write`
in Plan mode) gets the mode's refusal; either way nothing is appended. `guarded` wraps a host's
own `FunctionTool` so that a tool the mode forbids is refused the same way before it runs.

Invariants: a tool here never raises for anything the model sent; a refused call never runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from agents import FunctionTool
from agents.tool_context import ToolContext

from compaction import Session, call_tool
from prompts import Mode, ToolCatalog

ModeName = Callable[[], str]
"""The mode a call runs under, read when the call runs (a host may switch between runs)."""


def _bound(session: Session, name: str, mode: ModeName) -> Callable[[ToolContext[Any], str], Any]:
    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        return call_tool(session, name, arguments, mode=mode()).content

    return invoke


def session_tools(session: Session, mode: Mode, current: ModeName) -> list[FunctionTool]:
    """Return `todo_write` (and the task tools where `mode` offers them) bound to the log.

    Each call runs under the mode `current` names when it runs.
    """
    specs = ToolCatalog([]).tools(
        allow_parallel_in_progress=mode.todo.allow_parallel_in_progress,
        task_tools=mode.tasks.enabled,
    )
    return [
        FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=spec.parameters,
            on_invoke_tool=_bound(session, spec.name, current),
            strict_json_schema=False,
        )
        for spec in specs
    ]


def guarded(tool: FunctionTool, session: Session, mode: ModeName) -> FunctionTool:
    """Return `tool` answering with the mode's refusal, not running, when `mode()` forbids it."""
    inner = tool.on_invoke_tool

    async def invoke(ctx: ToolContext[Any], arguments: str) -> object:
        refused = session.refusal(tool.name, mode=mode())
        if refused is not None:
            return refused
        return await inner(ctx, arguments)

    return dataclasses.replace(tool, on_invoke_tool=invoke)


def tool_specs(tools: list[Any]) -> list[dict[str, Any]]:
    """Return what the model is sent of each tool: name, description and parameters."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        spec: dict[str, Any] = {"name": getattr(tool, "name", type(tool).__name__)}
        if isinstance(tool, FunctionTool):
            spec |= {"description": tool.description, "parameters": tool.params_json_schema}
        out.append(spec)
    return out


__all__ = ["guarded", "session_tools", "tool_specs"]
