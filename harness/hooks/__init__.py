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
    from harness.hooks._agents import AGENTS, agent
    from harness.hooks._audit import audit, audit_json, audit_text
    from harness.hooks._gate import MAX_STDIN, needs_reading
    from harness.hooks._receipts import receipts
    from harness.hooks._run import run
    from harness.hooks._settings import Change, apply, install, installed, uninstall
    from harness.hooks._transcript import fold_lines, fold_transcript, pick

_HOMES: dict[str, str] = {
    "AGENTS": "harness.hooks._agents",
    "Change": "harness.hooks._settings",
    "MAX_STDIN": "harness.hooks._gate",
    "agent": "harness.hooks._agents",
    "apply": "harness.hooks._settings",
    "audit": "harness.hooks._audit",
    "audit_json": "harness.hooks._audit",
    "audit_text": "harness.hooks._audit",
    "fold_lines": "harness.hooks._transcript",
    "fold_transcript": "harness.hooks._transcript",
    "install": "harness.hooks._settings",
    "installed": "harness.hooks._settings",
    "needs_reading": "harness.hooks._gate",
    "pick": "harness.hooks._transcript",
    "receipts": "harness.hooks._receipts",
    "run": "harness.hooks._run",
    "uninstall": "harness.hooks._settings",
}
"""Where each public name lives."""

__all__ = [
    "AGENTS",
    "MAX_STDIN",
    "Change",
    "agent",
    "apply",
    "audit",
    "audit_json",
    "audit_text",
    "fold_lines",
    "fold_transcript",
    "install",
    "installed",
    "needs_reading",
    "pick",
    "receipts",
    "run",
    "uninstall",
]


def __getattr__(name: str) -> object:
    """Import a public name's module on first use."""
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'harness.hooks' has no attribute {name!r}")
