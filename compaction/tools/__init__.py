"""Tools: what the model calls, validated, and what it gets back.

- `todos`: the `todo_write` tool (one agent's full-overwrite list), over `_todo_rules`, the one
  module of its rules, limits and model-facing strings (standard library only);
- `_plain_call`: `plain_todo_call`, an accepted call decided without pydantic (the CLI's fast
  path), by the same rules and the shipped policy table;
- `tasks`: the id-based task tools (`task_create`, `task_update`, `task_list`) for shared lists;
- `task_rules`: the rules a `task_update` keeps (`plan_update`), against the board as stored;
- `arguments`: reading a call's raw arguments, bounded in size;
- `tool_result`: what a built-in call returns;
- `mode_policy`: which tools a turn's mode forbids, as plain data;
- `dispatch`: `call_tool`, the one entry point of an agent loop.

Rule of this room: a model's bad arguments become a `ToolResult` or `ToolInputError` the model can
read, never a crash; the tools read views, and never write the log themselves (the session does).

Invariants: a rejected call appends nothing and changes no view; a forbidden tool is never run.
The root loads each name on first use, so the fast path reaches `_todo_rules` without pydantic.
"""

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.tools._plain_call import plain_todo_call
    from compaction.tools.dispatch import BUILTIN_TOOLS, ToolHandler
    from compaction.tools.mode_policy import (
        ModePolicy,
        PolicyChecker,
        PolicyTable,
        builtin_policies,
        dump_policies,
    )
    from compaction.tools.tasks import TASK_TOOL_NAMES, TASK_WRITE_TOOLS, task_parameters_schema
    from compaction.tools.todos import TOOL_NAME, parameters_schema, parse_todo_write, summary_line
    from compaction.tools.tool_result import ToolResult

_EXPORTS: dict[str, str] = {
    "BUILTIN_TOOLS": "compaction.tools.dispatch",
    "ModePolicy": "compaction.tools.mode_policy",
    "PolicyChecker": "compaction.tools.mode_policy",
    "PolicyTable": "compaction.tools.mode_policy",
    "TASK_TOOL_NAMES": "compaction.tools.tasks",
    "TASK_WRITE_TOOLS": "compaction.tools.tasks",
    "TOOL_NAME": "compaction.tools.todos",
    "ToolHandler": "compaction.tools.dispatch",
    "ToolResult": "compaction.tools.tool_result",
    "builtin_policies": "compaction.tools.mode_policy",
    "dump_policies": "compaction.tools.mode_policy",
    "parameters_schema": "compaction.tools.todos",
    "parse_todo_write": "compaction.tools.todos",
    "plain_todo_call": "compaction.tools._plain_call",
    "summary_line": "compaction.tools.todos",
    "task_parameters_schema": "compaction.tools.tasks",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "BUILTIN_TOOLS",
    "TASK_TOOL_NAMES",
    "TASK_WRITE_TOOLS",
    "TOOL_NAME",
    "ModePolicy",
    "PolicyChecker",
    "PolicyTable",
    "ToolHandler",
    "ToolResult",
    "builtin_policies",
    "dump_policies",
    "parameters_schema",
    "parse_todo_write",
    "plain_todo_call",
    "summary_line",
    "task_parameters_schema",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
