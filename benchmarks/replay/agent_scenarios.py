"""The sessions the agent benchmark runs each real CLI through, and the compaction in each.

Each `Scenario` scripts the model (a todo list, shared tasks or a plan written with the agent's
own tool, then work) and the invocations that make the agent compact: Claude Code's manual
``/compact`` and its automatic compaction (usage near ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``),
Codex's automatic compaction (``model_auto_compact_token_limit``), Gemini CLI's compression
(``model.compressionThreshold``). The scripted summary keeps none of the open items. A shared
real Claude Code transcript is cut where the most items are open (`real_cut`) and resumed.

Invariants: the scripts are fixed; a scenario's open items are the ones the script leaves open.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.hooks import agent, fold_lines, fold_transcript, pick
from harness.testing import AgentRun, Reply, ToolCall

TODOS = (
    ("TODO-ALPHA read the code", "completed"),
    ("TODO-BRAVO write the parser", "in_progress"),
    ("TODO-CHARLIE add tests", "pending"),
    ("TODO-DELTA update docs", "pending"),
)
OPEN_TODOS = tuple(text for text, status in TODOS if status != "completed")
TASKS = ("TASK-BRAVO write the parser", "TASK-CHARLIE add tests")
SUMMARY = "<summary>The user asked to plan a refactor. Work is under way.</summary>"
SNAPSHOT = "<state_snapshot>\nThe user asked to plan a refactor.\n</state_snapshot>"
HIGH = {"input_tokens": 70000, "output_tokens": 50}
"""Usage past Claude Code's automatic compaction at a 100,000-token window."""
CODEX_HIGH = {"input_tokens": 60000, "output_tokens": 50}
"""Usage past Codex's ``model_auto_compact_token_limit = 50000`` and Gemini's 5% threshold."""


@dataclass(frozen=True)
class Scenario:
    """One agent session that ends in the agent's own compaction."""

    name: str
    agent: str
    script: Sequence[Reply]
    summary: str
    items: tuple[str, ...]
    drive: Callable[[AgentRun], None]
    """Runs the CLI invocations (the hooks are installed, or not, before)."""


def _claude_todos(usage: dict[str, int] | None) -> list[Reply]:
    todos = [{"content": t, "status": s, "activeForm": t} for t, s in TODOS]
    return [
        Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:TodoWrite"})]),
        Reply(tool_calls=[ToolCall("TodoWrite", {"todos": todos})], usage=usage),
        Reply("Planned the work in four steps."),
    ]


def _claude_tasks() -> list[Reply]:
    def create(subject: str) -> ToolCall:
        return ToolCall("TaskCreate", {"subject": subject, "description": subject})

    def update(**fields: object) -> ToolCall:
        return ToolCall("TaskUpdate", fields)

    search = [
        ToolCall("ToolSearch", {"query": f"select:{n}"}) for n in ("TaskCreate", "TaskUpdate")
    ]
    updates = [
        update(taskId="1", status="completed"),
        update(taskId="2", status="in_progress", owner="main"),
        update(taskId="3", addBlockedBy=["2"]),
    ]
    return [
        Reply(tool_calls=search),
        Reply(tool_calls=[create("TASK-ALPHA read the code"), *map(create, TASKS)]),
        Reply(tool_calls=updates),
        Reply("Created the tasks."),
    ]


def claude_compact(
    env: dict[str, str], prompt: str = "Plan the refactor."
) -> Callable[[AgentRun], None]:
    """Return a drive: one prompt, then ``/compact``, then the next prompt."""

    def drive(run: AgentRun) -> None:
        out = json.loads(run.cli(["-p", prompt, "--output-format", "json"], env))
        session = out["session_id"]
        run.cli(["-p", "/compact", "--resume", session, "--output-format", "json"], env)
        run.cli(["-p", "What is next?", "--resume", session], env)

    return drive


def _claude_auto(run: AgentRun) -> None:
    env = {**TODO_ENV, "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}
    run.cli(["-p", "Plan the refactor.", "--output-format", "json"], env)


def _codex(run: AgentRun) -> None:
    flags = ["exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust"]
    out = run.cli([*flags, "Plan the refactor."])
    thread = json.loads(out.splitlines()[0])["thread_id"]
    run.cli([*flags, "resume", thread, "What is next?"])


def _gemini(run: AgentRun) -> None:
    flags = ["-m", "gemini-2.5-pro", "--approval-mode", "yolo", "-o", "json"]
    run.cli([*flags, "-p", "Plan the refactor."])
    run.cli([*flags, "--resume", "latest", "-p", "Do step two."])


TODO_ENV = {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1", "CLAUDE_CODE_ENABLE_TASKS": "0"}


def scenarios() -> list[Scenario]:
    """Return the scripted scenarios, one or more per agent."""
    plan = [{"step": t, "status": s} for t, s in TODOS]
    gemini_todos = [{"description": t, "status": s} for t, s in TODOS]
    return [
        Scenario(
            "claude-code todos, /compact", "claude-code", _claude_todos(None), SUMMARY,
            OPEN_TODOS, claude_compact(TODO_ENV),
        ),
        Scenario(
            "claude-code todos, automatic", "claude-code", _claude_todos(HIGH), SUMMARY,
            OPEN_TODOS, _claude_auto,
        ),
        Scenario(
            "claude-code shared tasks, /compact", "claude-code", _claude_tasks(), SUMMARY, TASKS,
            claude_compact({"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}),
        ),
        Scenario(
            "codex plan, automatic", "codex",
            [
                Reply(tool_calls=[ToolCall("update_plan", {"explanation": "p", "plan": plan})]),
                Reply("Planned the work.", usage=CODEX_HIGH),
                Reply("Continuing after the compaction."),
            ],
            SUMMARY, OPEN_TODOS, _codex,
        ),
        Scenario(
            "gemini todos, compression", "gemini",
            [
                Reply(tool_calls=[ToolCall("write_todos", {"todos": gemini_todos})]),
                Reply("Planned the work in four steps."),
                Reply(tool_calls=[ToolCall("list_directory", {"dir_path": "."})], usage=CODEX_HIGH),
                Reply("Continuing after the compression."),
            ],
            SNAPSHOT, OPEN_TODOS, _gemini,
        ),
    ]  # fmt: skip


def real_cut(source: Path) -> tuple[list[bytes], tuple[str, ...]]:
    """Return a transcript's lines up to the tool result after which the most items are open.

    The latest such point wins; no open item anywhere gives ([], ()).
    """
    claude = agent("claude-code")
    kept = set(pick(source, claude.needles, None).lines)
    raw = source.read_bytes().splitlines(keepends=True)
    best: tuple[int, tuple[str, ...]] = (-1, ())
    for index, line in enumerate(raw):
        if line not in kept or b"tool_use_id" not in line:
            continue
        items = _open_at(raw[: index + 1], kept)
        if items and len(items) >= len(best[1]):
            best = (index, items)
    return (raw[: best[0] + 1], best[1]) if best[0] >= 0 else ([], ())


def _open_at(prefix: Sequence[bytes], kept: set[bytes]) -> tuple[str, ...]:
    lines = [prefix[0], *(line for line in prefix[1:] if line in kept)]
    return tuple(i.text for i in fold_lines(lines, "claude-code", ".jsonl").open_items())


def plant(run: AgentRun, lines: Sequence[bytes]) -> str:
    """Write a cut where Claude Code resumes it (ids and cwd rewritten); return the session id."""
    session = "0c0ffee0-0000-4000-8000-000000000001"
    folder = re.sub(r"[^A-Za-z0-9]", "-", str(run.project.resolve()))
    target = run.home / ".claude" / "projects" / folder / f"{session}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for raw in lines:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and "sessionId" in record:
            record |= {"sessionId": session, "cwd": str(run.project)}
        out.append(json.dumps(record))
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return session


def open_items_now(path: Path) -> tuple[str, ...]:
    """Return the open items of a whole transcript (the hook's own fold)."""
    folded, _ = fold_transcript(path, "claude-code", agent("claude-code").needles, None)
    return tuple(i.text for i in folded.open_items())
