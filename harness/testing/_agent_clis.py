"""Running the real agent CLIs (Claude Code, Codex CLI, Gemini CLI) offline against `StubModel`.

Each CLI runs in print mode against the stub through its base-URL setting, with HOME (and
``CODEX_HOME``) in a folder of the caller's and non-essential traffic off: `make_agent_run`
prepares the folder (Codex's ``config.toml`` with ``update_plan`` on and an automatic compaction
at 50,000 tokens; Gemini CLI's settings with API-key auth and compression at 5% of the window),
`AgentRun.cli` runs one invocation. The npm packages come from ``scripts/install-agents``
(``HARNESS_AGENTS_DIR``, default ``~/.cache/context-harness/agents``); `agent_binary` returns None
where they are missing, so a test can skip with that reason.

Invariants: every invocation is bounded (`TIMEOUT_S`); the environment holds only what the CLI
needs (no key of the caller's reaches it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.testing._model_server import StubModel

TIMEOUT_S = 180
"""Longest one CLI invocation may take (the router retries of Gemini CLI are avoided by -m)."""


def agents_dir() -> Path:
    """Return the folder ``scripts/install-agents`` installs the npm packages into."""
    env = os.environ.get("HARNESS_AGENTS_DIR")
    return Path(env) if env else Path.home() / ".cache" / "context-harness" / "agents"


AGENT_PACKAGES: dict[str, str] = {
    "claude-code": "@anthropic-ai/claude-code@2.1.332",
    "codex": "@openai/codex@0.171.0",
    "gemini": "@google/gemini-cli@0.61.0",
}
"""The pinned npm package of each agent CLI (``scripts/install-agents`` installs these)."""

BINARIES: dict[str, str] = {
    "claude-code": "node_modules/@anthropic-ai/claude-code-linux-x64/claude",
    "codex": "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    "gemini": "node_modules/@google/gemini-cli/bundle/gemini.js",
}


def agent_binary(agent: str) -> list[str] | None:
    """Return the argv that runs an agent's CLI, or None when it is not installed here."""
    path = agents_dir() / BINARIES[agent]
    if not path.is_file():
        return None
    if agent == "gemini":
        node = shutil.which("node")
        return [node, str(path)] if node else None
    return [str(path)]


def harness_argv() -> list[str]:
    """Return this checkout's harness command, by absolute path."""
    script = Path(sys.executable).parent / "harness"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "harness"]


@dataclass
class AgentRun:
    """One agent's world in a folder: its HOME, project folder, environment."""

    root: Path
    agent: str
    stub: StubModel

    @property
    def home(self) -> Path:
        """The HOME the CLI runs with."""
        return self.root / "home"

    @property
    def project(self) -> Path:
        """The folder the CLI runs in."""
        return self.root / "proj"

    def env(self, extra: Mapping[str, str] = {}) -> dict[str, str]:
        """Return the environment of one invocation."""
        base = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "HARNESS_HOOKS_DIR": str(self.root / "hooks"),
            "LANG": "C.UTF-8",
        }
        if self.agent == "claude-code":
            base |= {
                "ANTHROPIC_BASE_URL": self.stub.root_url,
                "ANTHROPIC_API_KEY": "sk-ant-stub",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
            }
        elif self.agent == "codex":
            base |= {"CODEX_HOME": str(self.root / "codexhome"), "LOCAL_KEY": "sk-stub"}
        else:
            base |= {
                "GEMINI_API_KEY": "stub-key",
                "GOOGLE_GEMINI_BASE_URL": self.stub.root_url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            }
        return base | dict(extra)

    def cli(self, args: Sequence[str], extra: Mapping[str, str] = {}) -> str:
        """Run the agent's CLI once; return its stdout.

        Raises:
            RuntimeError: the CLI is not installed, or it exited with an error (its stderr's tail).
        """
        argv = agent_binary(self.agent)
        if argv is None:
            raise RuntimeError(f"{self.agent} is not installed (run scripts/install-agents)")
        done = subprocess.run(
            [*argv, *args],
            cwd=self.project,
            env=self.env(extra),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{self.agent} exited {done.returncode}: {done.stderr[-2000:]}")
        return done.stdout

    def harness(self, *args: str) -> str:
        """Run this checkout's harness with the run's HOME; return its stdout."""
        done = subprocess.run(
            [*harness_argv(), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout


def make_agent_run(root: Path, agent: str, stub: StubModel) -> AgentRun:
    """Return a fresh run with its folders (and Codex's config, Gemini's settings) made."""
    run = AgentRun(root, agent, stub)
    run.home.mkdir(parents=True)
    run.project.mkdir()
    if agent == "codex":
        home = root / "codexhome"
        home.mkdir()
        (home / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "local"\n'
            "tools.update_plan.enabled = true\nmodel_auto_compact_token_limit = 50000\n\n"
            '[model_providers.local]\nname = "local"\n'
            f'base_url = "{stub.base_url}"\nwire_api = "responses"\nenv_key = "LOCAL_KEY"\n'
        )
    if agent == "gemini":
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "model": {"compressionThreshold": 0.05},
        }
        (run.home / ".gemini").mkdir()
        (run.home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return run


def items_held(body: bytes, items: Sequence[str]) -> int:
    """Return how many of `items` a request body holds verbatim (as JSON text holds them)."""
    text = body.decode("utf-8", "replace")
    return sum(1 for item in items if json.dumps(item)[1:-1] in text)
