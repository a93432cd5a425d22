"""The agents the hooks reach, one entry each: where their settings live, which events to hook.

Each `Agent` names its transcript format (for `compaction.importers`), the lines of its
transcript that can change the open items (`needles`), its settings file per scope, and the hook
points installed there with what each one does.

Evidence for each point (Claude Code 2.1.332, Codex CLI 0.171.0, Gemini CLI 0.61.0, run offline
against `harness.testing`; docs/agents.md): Claude Code appends a PreCompact hook's stdout to its
summary prompt ("Additional Instructions") and sends a SessionStart (source ``compact``) hook's
``additionalContext`` in the first request after its compaction; Codex sends the same
SessionStart output as a developer message after its summary, and sends a PreCompact hook's
output nowhere; Gemini CLI has no hook after its compression, and a BeforeModel hook may rewrite
the request the model gets.

Invariants: one entry per agent; an event's `role` is one of `ROLES`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from compaction import ConfigError

Role = Literal["before", "after", "request"]
"""What a hook point does: ``before`` the agent compacts (summary instructions, the moment
recorded), ``after`` it compacted (the restore block), on each model ``request`` (restore when
the request holds a compaction)."""

ROLES: Final = ("before", "after", "request")


@dataclass(frozen=True)
class Point:
    """One hook point installed into an agent's settings."""

    event: str
    """The agent's event name (``PreCompact``, ``SessionStart``, ``BeforeModel``)."""
    matcher: str | None
    """The entry's ``matcher`` (``compact`` for SessionStart); None writes none."""
    role: Role


@dataclass(frozen=True)
class Agent:
    """One agent CLI the hooks reach."""

    name: str
    """The name on the command line: ``claude-code``, ``codex``, ``gemini``."""
    label: str
    format: str
    """Its transcript format in `compaction.importers`."""
    needles: tuple[bytes, ...]
    """Bytes a transcript line holds when it can change the open items."""
    points: tuple[Point, ...]
    project_file: str | None
    """The settings file under a project folder; None where the agent reads none (Codex CLI
    0.171.0 ran no hook of a project's ``.codex/hooks.json`` in our runs)."""
    user_file: str
    """The settings file under the user's home (``~``), or a ``$VAR/`` path."""
    accepts_summary_instructions: bool
    """Whether text printed before the compaction reaches the agent's summary prompt."""

    def settings_path(self, project: Path | None) -> Path:
        """Return the settings file for a project folder, or the user's when `project` is None.

        Raises:
            ConfigError: a project folder for an agent that reads no project hooks.
        """
        if project is not None:
            if self.project_file is None:
                raise ConfigError(
                    f"{self.label} reads no project hooks file; install with --user instead"
                )
            return project / self.project_file
        if self.user_file.startswith("$CODEX_HOME/"):
            home = os.environ.get("CODEX_HOME") or str(Path.home() / ".codex")
            return Path(home) / self.user_file.split("/", 1)[1]
        return Path.home() / self.user_file


AGENTS: Final[tuple[Agent, ...]] = (
    Agent(
        "claude-code",
        "Claude Code",
        "claude-code",
        (
            *(b"TodoWrite", b"TaskCreate", b"TaskUpdate", b"compact_boundary", b"isCompactSummary"),
            *(b"ExitPlanMode", b"run_in_background", b"backgroundTaskId", b"KillShell"),
            *(b"KillBash", b"TaskStop", b'"name":"Task"', b'"name":"Agent"'),
        ),
        (Point("PreCompact", None, "before"), Point("SessionStart", "compact", "after")),
        ".claude/settings.json",
        ".claude/settings.json",
        accepts_summary_instructions=True,
    ),
    Agent(
        "codex",
        "Codex CLI",
        "codex",
        (b"update_plan", b'"compacted"'),
        (Point("PreCompact", None, "before"), Point("SessionStart", "compact", "after")),
        None,
        "$CODEX_HOME/hooks.json",
        accepts_summary_instructions=False,
    ),
    Agent(
        "gemini",
        "Gemini CLI",
        "gemini",
        (b"write_todos", b"<state_snapshot>"),
        (Point("BeforeModel", None, "request"),),
        ".gemini/settings.json",
        ".gemini/settings.json",
        accepts_summary_instructions=False,
    ),
)
"""Every agent, in the order they are listed."""

NAMES: Final = tuple(a.name for a in AGENTS)


def agent(name: str) -> Agent:
    """Return the entry of an agent name.

    Raises:
        KeyError: no agent has that name.
    """
    for entry in AGENTS:
        if entry.name == name:
            return entry
    raise KeyError(name)
