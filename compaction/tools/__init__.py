"""Tools: what the model calls, validated, and what it gets back.

- `todos`: the `todo_write` tool (one agent's full-overwrite list);
- `tasks`: the id-based task tools (`task_create`, `task_update`, `task_list`) for shared lists;
- `task_rules`: the rules a `task_update` keeps (`plan_update`), against the board as stored;
- `arguments`: reading a call's raw arguments, bounded in size;
- `tool_result`: what a built-in call returns;
- `mode_policy`: which tools a turn's mode forbids, as plain data;
- `dispatch`: `call_tool`, the one entry point of an agent loop.

Rule of this room: a model's bad arguments become a `ToolResult` or `ToolInputError` the model can
read, never a crash; the tools read views, and never write the log themselves (the session does).

Invariants: a rejected call appends nothing and changes no view; a forbidden tool is never run.
"""

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.contract import MAX_ARGUMENT_BYTES, MAX_ITEM_CHARS
    from compaction.tools._plain_call import POLICY_FILE, plain_todo_call
    from compaction.tools.arguments import (
        Arguments,
        load_arguments,
        show,
    )
    from compaction.tools.dispatch import BUILTIN_TOOLS, ToolHandler, call_tool
    from compaction.tools.mode_policy import (
        DEFAULT_POLICY,
        EVENT_TOOLS,
        ModePolicy,
        PolicyChecker,
        PolicyTable,
        PolicyWarning,
        builtin_policies,
        dump_policies,
        load_policies,
        policy_for,
    )
    from compaction.tools.task_rules import plan_update
    from compaction.tools.tasks import (
        TASK_CREATE,
        TASK_LIST,
        TASK_TOOL_NAMES,
        TASK_UPDATE,
        TASK_WRITE_TOOLS,
        parse_task_create,
        parse_task_list,
        read_update,
        task_parameters_schema,
    )
    from compaction.tools.todos import (
        TOOL_NAME,
        is_blank,
        parameters_schema,
        parse_todo_write,
        summary_line,
    )
    from compaction.tools.tool_result import ToolResult

_EXPORTS: dict[str, str] = {
    "Arguments": "compaction.tools.arguments",
    "BUILTIN_TOOLS": "compaction.tools.dispatch",
    "DEFAULT_POLICY": "compaction.tools.mode_policy",
    "EVENT_TOOLS": "compaction.tools.mode_policy",
    "MAX_ARGUMENT_BYTES": "compaction.contract",
    "MAX_ITEM_CHARS": "compaction.contract",
    "ModePolicy": "compaction.tools.mode_policy",
    "POLICY_FILE": "compaction.tools._plain_call",
    "PolicyChecker": "compaction.tools.mode_policy",
    "PolicyTable": "compaction.tools.mode_policy",
    "PolicyWarning": "compaction.tools.mode_policy",
    "TASK_CREATE": "compaction.tools.tasks",
    "TASK_LIST": "compaction.tools.tasks",
    "TASK_TOOL_NAMES": "compaction.tools.tasks",
    "TASK_UPDATE": "compaction.tools.tasks",
    "TASK_WRITE_TOOLS": "compaction.tools.tasks",
    "TOOL_NAME": "compaction.tools.todos",
    "ToolHandler": "compaction.tools.dispatch",
    "ToolResult": "compaction.tools.tool_result",
    "builtin_policies": "compaction.tools.mode_policy",
    "call_tool": "compaction.tools.dispatch",
    "dump_policies": "compaction.tools.mode_policy",
    "is_blank": "compaction.tools.todos",
    "load_arguments": "compaction.tools.arguments",
    "load_policies": "compaction.tools.mode_policy",
    "parameters_schema": "compaction.tools.todos",
    "parse_task_create": "compaction.tools.tasks",
    "parse_task_list": "compaction.tools.tasks",
    "parse_todo_write": "compaction.tools.todos",
    "plain_todo_call": "compaction.tools._plain_call",
    "plan_update": "compaction.tools.task_rules",
    "policy_for": "compaction.tools.mode_policy",
    "read_update": "compaction.tools.tasks",
    "show": "compaction.tools.arguments",
    "summary_line": "compaction.tools.todos",
    "task_parameters_schema": "compaction.tools.tasks",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "BUILTIN_TOOLS",
    "DEFAULT_POLICY",
    "EVENT_TOOLS",
    "MAX_ARGUMENT_BYTES",
    "MAX_ITEM_CHARS",
    "POLICY_FILE",
    "TASK_CREATE",
    "TASK_LIST",
    "TASK_TOOL_NAMES",
    "TASK_UPDATE",
    "TASK_WRITE_TOOLS",
    "TOOL_NAME",
    "Arguments",
    "ModePolicy",
    "PolicyChecker",
    "PolicyTable",
    "PolicyWarning",
    "ToolHandler",
    "ToolResult",
    "builtin_policies",
    "call_tool",
    "dump_policies",
    "is_blank",
    "load_arguments",
    "load_policies",
    "parameters_schema",
    "parse_task_create",
    "parse_task_list",
    "parse_todo_write",
    "plain_todo_call",
    "plan_update",
    "policy_for",
    "read_update",
    "show",
    "summary_line",
    "task_parameters_schema",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
