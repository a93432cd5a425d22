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

from compaction.tools.arguments import (
    MAX_ARGUMENT_BYTES,
    MAX_ITEM_CHARS,
    Arguments,
    load_arguments,
    show,
)
from compaction.tools.dispatch import BUILTIN_TOOLS, ToolHandler, call_tool
from compaction.tools.mode_policy import (
    DEFAULT_POLICY,
    EVENT_TOOLS,
    POLICY_FILE,
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
    TodoWriteArgs,
    is_blank,
    parameters_schema,
    parse_todo_write,
    summary_line,
)
from compaction.tools.tool_result import ToolResult

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
    "TodoWriteArgs",
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
    "plan_update",
    "policy_for",
    "read_update",
    "show",
    "summary_line",
    "task_parameters_schema",
]
