"""Hooks for the agents people already run: Claude Code, Codex CLI and Gemini CLI.

`install` merges hook entries into an agent's own settings (`AGENTS` says where and which
events); the hooks call ``harness hooks run AGENT`` (`run`), which folds the agent's transcript
through `compaction.importers` and, after the agent's own compaction, prints a block restoring
every open item verbatim, headed with what the agent's summary kept; `audit` reports, for any
recorded session, what each of the agent's compactions kept; `receipts` lists the hook's log.

Rule of this room: it imports `compaction`'s roots only; a hook run never fails the agent.
"""

from harness.hooks._agents import AGENTS, NAMES, Agent, Point, agent
from harness.hooks._audit import audit, audit_json, audit_text
from harness.hooks._fold import Compaction, Fold, Item, fold
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

__all__ = [
    "AGENTS",
    "MARK",
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
    "output_for",
    "pick",
    "read_settings",
    "receipts",
    "restore_block",
    "run",
    "summary_instructions",
    "uninstall",
]
