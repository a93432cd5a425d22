"""One entry point for every tool call of an agent loop: `call_tool(session, name, arguments)`.

The dispatcher applies the tool policy of the session's current mode to *any* tool, the
built-in ones (`todo_write`, `task_create`, `task_update`, `task_list`, run by the session) and
the host's own (run by the handler the host registers for the name). ``compact_context`` runs a
compaction, above this room: `compaction.call_tool` (in
`compaction.compactor.tool_calls`) registers it as a handler. A refused call returns the
mode's refusal; an unknown tool, or arguments that are not a JSON object, return an error result
the model can read. Nothing here raises for what a model sends.

Invariants: a tool the mode forbids is never run and appends nothing; the same call on the same
log gives the same result text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from compaction.contract import COMPACT_CONTEXT
from compaction.errors import ToolInputError
from compaction.tools.arguments import Arguments, load_arguments, show
from compaction.tools.tasks import TASK_CREATE, TASK_LIST, TASK_UPDATE
from compaction.tools.todos import TOOL_NAME
from compaction.tools.tool_result import ToolResult

BUILTIN_TOOLS: Final = (COMPACT_CONTEXT, TASK_CREATE, TASK_LIST, TASK_UPDATE, TOOL_NAME)
"""The built-in tools, sorted by name: the session runs all but ``compact_context``, which
`compaction.call_tool` (above the compactor) hands in as a handler."""

ToolHandler = Callable[[dict[str, Any]], "str | ToolResult"]
"""A host's tool: takes the parsed arguments, returns the result text (or a `ToolResult`)."""


class ToolHost(Protocol):
    """What the dispatcher needs of a session (`compaction.Session` is one).

    The session runs the built-in tools and knows the turn's mode; this room imports no session,
    so the dispatcher is typed against this protocol instead.
    """

    def refusal(self, tool: str, *, mode: str | None = None) -> str | None:
        """The refusal of `tool` under `mode` (default: the current turn's), or None."""

    def todo_write(self, arguments: Arguments, *, mode: str | None = None) -> ToolResult:
        """Run ``todo_write``."""

    def task_create(
        self, arguments: Arguments, *, agent: str | None = None, mode: str | None = None
    ) -> ToolResult:
        """Run ``task_create``."""

    def task_update(
        self, arguments: Arguments, *, agent: str | None = None, mode: str | None = None
    ) -> ToolResult:
        """Run ``task_update``."""

    def task_list(
        self,
        arguments: Arguments | None = None,
        *,
        agent: str | None = None,
        mode: str | None = None,
    ) -> ToolResult:
        """Run ``task_list``."""


def call_tool(
    session: ToolHost,
    name: str,
    arguments: Arguments | None = None,
    *,
    handlers: Mapping[str, ToolHandler] | None = None,
    agent: str | None = None,
    mode: str | None = None,
) -> ToolResult:
    """Run the tool `name` with the model's `arguments`, under the session's mode policy.

    Args:
        session: the live session; its current turn's mode decides what is allowed.
        name: the tool the model called.
        arguments: the raw arguments (JSON text, bytes, or a mapping); None means ``{}``.
        handlers: the host's tools by name; each is called with the parsed arguments.
        agent: the agent making the call, for the task tools (default: the session's).
        mode: run under this mode instead of the current turn's.

    Returns:
        The result for the model; ``is_error`` when the call was refused or rejected.
    """
    raw: Arguments = "{}" if arguments is None else arguments
    if name == TOOL_NAME:
        return session.todo_write(raw, mode=mode)
    if name == TASK_CREATE:
        return session.task_create(raw, agent=agent, mode=mode)
    if name == TASK_UPDATE:
        return session.task_update(raw, agent=agent, mode=mode)
    if name == TASK_LIST:
        return session.task_list(raw, agent=agent, mode=mode)
    refused = session.refusal(name, mode=mode)
    if refused is not None:
        return ToolResult(refused, is_error=True)
    handler = (handlers or {}).get(name)
    if handler is None:
        known = ", ".join(sorted({*BUILTIN_TOOLS, *(handlers or {})}))
        return ToolResult(f"unknown tool {show(name)}; the tools are {known}", is_error=True)
    try:
        parsed = load_arguments(raw, name, example="{}", shape="of the tool's parameters")
    except ToolInputError as exc:
        return ToolResult(str(exc), is_error=True)
    out = handler(parsed)
    return out if isinstance(out, ToolResult) else ToolResult(out)
