"""Refusals: what a call to a tool the mode forbids returns, and the policy table built from them.

This is the one home of refusal text. Each refusal renders from a template of the mode
(`TodoPolicy.refusal`, `TaskPolicy.refusal`, ``refusals/tool.md.j2`` for the user tools a mode
forbids), sandboxed for user modes. `policy_table(modes)` renders them all into the plain data
the session enforces (`compaction.ModePolicy` by mode name), so `compaction` never imports
`prompts`; `compaction/schemas/mode_policies.json` is this table for the built-in modes.

Invariants: a tool is refused by the session exactly when `tool_refusal` returns text for it;
the same modes give the same table bytes (`compaction.dump_policies`); a template sees the mode
as plain data (`mode_data`), never the object.
"""

from __future__ import annotations

from collections.abc import Mapping

from compaction import TOOL_NAME, ModePolicy
from compaction.tools import TASK_WRITE_TOOLS
from prompts.builder import mode_data
from prompts.modes import BUILTIN_MODES, Mode
from prompts.rendering import render


def refusal(mode: Mode) -> str | None:
    """Return the model-facing refusal of `todo_write` in `mode`, or None when it is allowed."""
    if mode.todo_write_allowed:
        return None
    context = {"mode": mode_data(mode)}
    return render(mode.todo.refusal, context, folder=mode.template_dir).rstrip("\n")


def tool_refusal(mode: Mode, tool: str) -> str | None:
    """Return the model-facing refusal of a call to `tool` in `mode`, or None when allowed.

    Covers `todo_write` (the todo policy), the task writes (the task policy) and the user tools
    the mode's tool policy forbids.
    """
    if tool == TOOL_NAME:
        return refusal(mode)
    if tool in TASK_WRITE_TOOLS and mode.tasks.forbidden:
        context = {"mode": mode_data(mode), "tool": tool}
        return render(mode.tasks.refusal, context, folder=mode.template_dir).rstrip("\n")
    if tool not in mode.tools.forbidden:
        return None
    context = {"mode": mode_data(mode), "tool": tool}
    text = render("refusals/tool.md.j2", context, folder=mode.template_dir)
    return text.rstrip("\n")


def mode_policy(mode: Mode) -> ModePolicy:
    """Return the tool policy the session enforces for `mode`, every refusal rendered."""
    tools = sorted({TOOL_NAME, *TASK_WRITE_TOOLS, *mode.tools.forbidden})
    refusals = {t: text for t in tools if (text := tool_refusal(mode, t)) is not None}
    return ModePolicy(
        refusals=refusals, allow_parallel_in_progress=mode.todo.allow_parallel_in_progress
    )


def policy_table(modes: Mapping[str, Mode] | None = None) -> dict[str, ModePolicy]:
    """Return the policy table of `modes` (default: the built-in ones), for `Session(policies=)`."""
    pool = BUILTIN_MODES if modes is None else modes
    return {name: mode_policy(mode) for name, mode in sorted(pool.items())}
