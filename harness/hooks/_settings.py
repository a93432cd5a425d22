"""Merging the hooks into an agent's own settings file, and taking them out again.

All three agents keep hooks as ``{"hooks": {EVENT: [{"matcher"?, "hooks": [{"type": "command",
"command": ...}]}]}}``. The command written names the harness that installed it by absolute path
and checks that it is still there, so a harness uninstalled since leaves a hook that does
nothing (exit 0) instead of an error on every compaction; it ends with `MARK` and the agent's
name, which is how `uninstall` and `status` know the entries this module wrote.

Invariants: install is idempotent and keeps every other key and hook of the file; uninstall
removes exactly the entries carrying the mark (and an event list or ``hooks`` table it left
empty); a file is replaced atomically, never half-written; a file that is not a JSON object is
refused with one line naming it.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compaction import ConfigError
from harness.hooks._agents import Agent, Point

MARK = "# context-harness hook"
"""The tail of every command this module writes (then the agent's name)."""

TIMEOUT_S = 30
"""The timeout written for Claude Code and Codex hooks, in seconds (the hook bounds itself)."""


def hook_command(agent: Agent, harness: Sequence[str]) -> str:
    """Return the shell command a hook runs: the harness by absolute path, if it is still there."""
    exe, *rest = harness
    call = " ".join(shlex.quote(a) for a in [exe, *rest, "hooks", "run", agent.name])
    return f"if [ -x {shlex.quote(exe)} ]; then {call}; fi {MARK} {agent.name}"


def is_ours(command: object, agent: Agent) -> bool:
    """Tell whether a hook command is one this module wrote for `agent`."""
    return isinstance(command, str) and command.endswith(f"{MARK} {agent.name}")


@dataclass
class Change:
    """What an install or uninstall did (or, dry, would do) to one settings file."""

    path: Path
    added: list[str] = field(default_factory=list)
    """Events given a hook."""
    updated: list[str] = field(default_factory=list)
    """Events whose hook now names another harness."""
    kept: list[str] = field(default_factory=list)
    """Events already hooked as asked."""
    removed: list[str] = field(default_factory=list)
    """Events whose hook was taken out."""
    text: str | None = None
    """The file's new text (None: the file is removed)."""
    command: str = ""
    """The hook command written (install)."""

    @property
    def changed(self) -> bool:
        """Tell whether the file changes."""
        return bool(self.added or self.updated or self.removed)


def read_settings(path: Path) -> dict[str, Any]:
    """Return a settings file's object ({} when it does not exist).

    Raises:
        ConfigError: the file is not a JSON object, or cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror})") from None
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); fix or move it, then retry") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: not a JSON object; fix or move it, then retry")
    return value


def _hooks_table(settings: dict[str, Any], path: Path) -> dict[str, Any]:
    table = settings.setdefault("hooks", {})
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: "hooks" is not an object; fix it, then retry')
    return table


def _entry(agent: Agent, point: Point, command: str) -> dict[str, Any]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if agent.name == "gemini":
        hook["name"] = "context-harness"
    else:
        hook["timeout"] = TIMEOUT_S
    entry: dict[str, Any] = {} if point.matcher is None else {"matcher": point.matcher}
    return entry | {"hooks": [hook]}


def _our_hooks(entries: list[Any], agent: Agent) -> list[dict[str, Any]]:
    return [
        hook
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("hooks"), list)
        for hook in entry["hooks"]
        if isinstance(hook, dict) and is_ours(hook.get("command"), agent)
    ]


def install(agent: Agent, path: Path, harness: Sequence[str]) -> Change:
    """Return the change that hooks `agent`'s points into the settings at `path`."""
    settings = read_settings(path)
    table = _hooks_table(settings, path)
    command = hook_command(agent, harness)
    change = Change(path, command=command)
    for point in agent.points:
        entries = table.setdefault(point.event, [])
        if not isinstance(entries, list):
            raise ConfigError(f"{path}: hooks.{point.event} is not a list; fix it, then retry")
        ours = _our_hooks(entries, agent)
        if not ours:
            entries.append(_entry(agent, point, command))
            change.added.append(point.event)
        elif all(h.get("command") == command for h in ours):
            change.kept.append(point.event)
        else:
            for hook in ours:
                hook["command"] = command
            change.updated.append(point.event)
    change.text = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    return change


def uninstall(agent: Agent, path: Path) -> Change:
    """Return the change that takes this module's hooks for `agent` out of `path`."""
    settings = read_settings(path)
    change = Change(path)
    table = settings.get("hooks")
    if not isinstance(table, dict):
        return change
    for event in list(table):
        entries = table[event]
        if not isinstance(entries, list) or not _our_hooks(entries, agent):
            continue
        for entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
                entry["hooks"] = [
                    h
                    for h in entry["hooks"]
                    if not (isinstance(h, dict) and is_ours(h.get("command"), agent))
                ]
        table[event] = [e for e in entries if not (isinstance(e, dict) and e.get("hooks") == [])]
        change.removed.append(event)
        if not table[event]:
            del table[event]
    if not table:
        del settings["hooks"]
    change.text = json.dumps(settings, indent=2, ensure_ascii=False) + "\n" if settings else None
    return change


def installed(agent: Agent, path: Path) -> list[str]:
    """Return the commands of this module's hooks for `agent` in `path` (none: [])."""
    try:
        table = read_settings(path).get("hooks")
    except ConfigError:
        return []
    if not isinstance(table, dict):
        return []
    return [
        str(h["command"])
        for entries in table.values()
        if isinstance(entries, list)
        for h in _our_hooks(entries, agent)
    ]


def apply(change: Change) -> None:
    """Write a change to its file atomically (or remove a file left empty)."""
    if not change.changed:
        return
    if change.text is None:
        change.path.unlink(missing_ok=True)
        return
    change.path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", dir=change.path.parent, suffix=".tmp", delete=False, encoding="utf-8"
    ) as fh:
        fh.write(change.text)
    os.replace(fh.name, change.path)
