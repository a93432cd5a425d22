"""Hooks for the agents people already run: Claude Code, Codex CLI and Gemini CLI.

`install` merges hook entries into an agent's own settings (`AGENTS` says where and which
events); the hooks call ``harness hooks run AGENT`` (`run`), which folds the agent's transcript
through `compaction.importers` and, after the agent's own compaction, prints a block restoring
every open item verbatim, headed with what the agent's summary kept; `audit` reports, for any
recorded session, what each of the agent's compactions kept; `receipts` lists the hook's log.

Rule of this room: it imports `compaction`'s roots only; a hook run never fails the agent.

The root is lazy: ``harness hooks run`` loads only what an input needs (`harness.hooks._gate`).
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from harness.hooks._agents import AGENTS, NAMES, Agent, Point, agent
    from harness.hooks._audit import audit, audit_json, audit_text
    from harness.hooks._fold import Compaction, Fold, Item, fold
    from harness.hooks._gate import MAX_STDIN, needs_reading
    from harness.hooks._receipts import hooks_dir, receipts
    from harness.hooks._restore import output_for, restore_block, summary_instructions
    from harness.hooks._run import run
    from harness.hooks._settings import (
        MARK,
        Change,
        apply,
        hook_command,
        install,
        installed,
        read_settings,
        uninstall,
    )
    from harness.hooks._transcript import fold_lines, fold_transcript, pick

_HOMES: dict[str, str] = {
    "AGENTS": "harness.hooks._agents",
    "Agent": "harness.hooks._agents",
    "Change": "harness.hooks._settings",
    "Compaction": "harness.hooks._fold",
    "Fold": "harness.hooks._fold",
    "Item": "harness.hooks._fold",
    "MAX_STDIN": "harness.hooks._gate",
    "MARK": "harness.hooks._settings",
    "NAMES": "harness.hooks._agents",
    "Point": "harness.hooks._agents",
    "agent": "harness.hooks._agents",
    "apply": "harness.hooks._settings",
    "audit": "harness.hooks._audit",
    "audit_json": "harness.hooks._audit",
    "audit_text": "harness.hooks._audit",
    "fold": "harness.hooks._fold",
    "fold_lines": "harness.hooks._transcript",
    "fold_transcript": "harness.hooks._transcript",
    "hook_command": "harness.hooks._settings",
    "hooks_dir": "harness.hooks._receipts",
    "install": "harness.hooks._settings",
    "installed": "harness.hooks._settings",
    "needs_reading": "harness.hooks._gate",
    "output_for": "harness.hooks._restore",
    "pick": "harness.hooks._transcript",
    "read_settings": "harness.hooks._settings",
    "receipts": "harness.hooks._receipts",
    "restore_block": "harness.hooks._restore",
    "run": "harness.hooks._run",
    "summary_instructions": "harness.hooks._restore",
    "uninstall": "harness.hooks._settings",
}
"""Where each public name lives."""

__all__ = [
    "AGENTS",
    "MARK",
    "MAX_STDIN",
    "NAMES",
    "Agent",
    "Change",
    "Compaction",
    "Fold",
    "Item",
    "Point",
    "agent",
    "apply",
    "audit",
    "audit_json",
    "audit_text",
    "fold",
    "fold_lines",
    "fold_transcript",
    "hook_command",
    "hooks_dir",
    "install",
    "installed",
    "needs_reading",
    "output_for",
    "pick",
    "read_settings",
    "receipts",
    "restore_block",
    "run",
    "summary_instructions",
    "uninstall",
]


def __getattr__(name: str) -> object:
    """Import a public name's module on first use."""
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'harness.hooks' has no attribute {name!r}")
