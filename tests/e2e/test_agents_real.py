"""The real Claude Code, Codex CLI and Gemini CLI compact; with the hooks, every open item is back.

Each CLI runs offline against `harness.testing.StubModel` (tests/agent_clis.py). The model
writes a todo list (or creates shared tasks), works, the agent compacts (manual ``/compact``, or
automatically through the usage figures the stub reports) and the scripted summary keeps none
of the open items. With ``harness hooks install AGENT`` the first request after the compaction
holds every open item verbatim; without, it holds none (the figure the issue records).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.testing import (
    AgentRun,
    RecordedRequest,
    Reply,
    StubModel,
    ToolCall,
    agent_binary,
    api_of,
    items_held,
    make_agent_run,
    summary_rule,
)
from harness.testing import is_summary_request as summary_request

pytestmark = [pytest.mark.agents, pytest.mark.slow]

TODOS = [
    ("TODO-ALPHA read the code", "completed"),
    ("TODO-BRAVO write the parser", "in_progress"),
    ("TODO-CHARLIE add tests", "pending"),
    ("TODO-DELTA update docs", "pending"),
]
OPEN = [text for text, status in TODOS if status != "completed"]
SUMMARY = "<summary>The user asked to plan a refactor. Work is under way.</summary>"
SNAPSHOT = (
    "<state_snapshot>\nThe user asked to plan a refactor. Work is under way.\n</state_snapshot>"
)


def _need(agent: str) -> None:
    if agent_binary(agent) is None:
        pytest.skip(f"{agent} is not installed here (run scripts/install-agents)")


def first_after_compaction(requests: Sequence[RecordedRequest]) -> RecordedRequest:
    """Return the first model request after the (last) summary request."""
    decoded = [(r, api_of(r.path), r.json()) for r in requests]
    last = max(i for i, (_, api, body) in enumerate(decoded) if summary_request(str(api), body))
    later = [r for r, api, body in decoded[last + 1 :] if not summary_request(str(api), body)]
    assert later, "no request after the compaction"
    return later[0]


def _claude_todo_script(usage: dict[str, int] | None = None) -> list[Reply]:
    todos = [{"content": t, "status": s, "activeForm": t} for t, s in TODOS]
    return [
        Reply(
            "Loading the todo tool.",
            tool_calls=[ToolCall("ToolSearch", {"query": "select:TodoWrite"})],
        ),
        Reply(tool_calls=[ToolCall("TodoWrite", {"todos": todos})], usage=usage),
        Reply("Planned the work in four steps."),
    ]


TASKS = ["TASK-BRAVO write the parser", "TASK-CHARLIE add tests"]
"""The shared tasks the task script leaves open (#2 in progress, owner main; #3 blocked by #2)."""


def _claude_task_script() -> list[Reply]:
    def create(subject: str) -> ToolCall:
        return ToolCall("TaskCreate", {"subject": subject, "description": subject})

    def update(**fields: object) -> ToolCall:
        return ToolCall("TaskUpdate", fields)

    return [
        Reply(
            tool_calls=[
                ToolCall("ToolSearch", {"query": "select:TaskCreate"}),
                ToolCall("ToolSearch", {"query": "select:TaskUpdate"}),
            ]
        ),
        Reply(tool_calls=[create("TASK-ALPHA read the code"), *map(create, TASKS)]),
        Reply(
            tool_calls=[
                update(taskId="1", status="completed"),
                update(taskId="2", status="in_progress", owner="main"),
                update(taskId="3", addBlockedBy=["2"]),
            ]
        ),
        Reply("Created the tasks."),
    ]


def _claude(
    tmp: Path, hooks: bool, auto: bool, tasks: bool = False
) -> tuple[AgentRun, RecordedRequest]:
    usage = {"input_tokens": 70000, "output_tokens": 50} if auto else None
    script = _claude_task_script() if tasks else _claude_todo_script(usage)
    stub = StubModel(script, rules=[summary_rule(SUMMARY)])
    with stub:
        run = make_agent_run(tmp, "claude-code", stub)
        if hooks:
            run.harness("hooks", "install", "claude-code", "--project", str(run.project))
        extra = {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}
        extra |= {} if tasks else {"CLAUDE_CODE_ENABLE_TASKS": "0"}
        if auto:
            extra["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = "100000"
        out = json.loads(run.cli(["-p", "Plan the refactor.", "--output-format", "json"], extra))
        if not auto:
            run.cli(
                ["-p", "/compact", "--resume", out["session_id"], "--output-format", "json"], extra
            )
            run.cli(["-p", "What is next?", "--resume", out["session_id"]], extra)
    return run, first_after_compaction(stub.requests)


class TestClaudeCode:
    @pytest.mark.parametrize("auto", [False, True], ids=["manual", "auto"])
    def test_hooks_restore_every_open_todo(self, tmp_path: Path, auto: bool) -> None:
        """After /compact (or an automatic compaction) the next request holds every open todo."""
        _need("claude-code")
        run, first = _claude(tmp_path, hooks=True, auto=auto)
        assert items_held(first.body, OPEN) == len(OPEN)
        assert b"the summary kept 0 of 3 open items" in first.body
        log = run.harness("hooks", "log")
        assert "the summary kept 0 of 3 open items" in log

    def test_without_hooks_none_survives(self, tmp_path: Path) -> None:
        """Without the hooks, the request after /compact holds none of the open todos."""
        _need("claude-code")
        _, first = _claude(tmp_path, hooks=False, auto=False)
        assert items_held(first.body, OPEN) == 0

    @pytest.mark.parametrize("hooks", [True, False], ids=["hooks", "no hooks"])
    def test_shared_tasks_with_ids_owners_blockers(self, tmp_path: Path, hooks: bool) -> None:
        """Open shared tasks come back by id with owner and blockers; without hooks, none."""
        _need("claude-code")
        _, first = _claude(tmp_path, hooks=hooks, auto=False, tasks=True)
        if hooks:
            assert items_held(first.body, TASKS) == 2
            assert b"#2 [in_progress] TASK-BRAVO write the parser (owner: main)" in first.body
            assert b"#3 [pending] TASK-CHARLIE add tests (blocked by: #2)" in first.body
        else:
            assert items_held(first.body, TASKS) == 0

    def test_resumed_real_transcript(self, tmp_path: Path, transcripts: Path) -> None:
        """A shared real session, resumed and compacted, gets its two open todos back."""
        _need("claude-code")
        source = transcripts / "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
        with StubModel([Reply("Continuing.")], rules=[summary_rule(SUMMARY)]) as stub:
            run = make_agent_run(tmp_path, "claude-code", stub)
            run.harness("hooks", "install", "claude-code", "--project", str(run.project))
            session = _plant(run, source)
            open_items = _audit_open(run, source)
            run.cli(["-p", "/compact", "--resume", session, "--output-format", "json"])
            run.cli(["-p", "Go on.", "--resume", session])
        first = first_after_compaction(stub.requests)
        assert len(open_items) == 2
        assert items_held(first.body, open_items) == 2


def _plant(run: AgentRun, source: Path) -> str:
    """Copy a recorded transcript where Claude Code resumes it; return its session id."""
    session = "0c0ffee0-0000-4000-8000-000000000001"
    folder = re.sub(r"[^A-Za-z0-9]", "-", str(run.project.resolve()))
    target = run.home / ".claude" / "projects" / folder / f"{session}.jsonl"
    target.parent.mkdir(parents=True)
    lines = []
    for raw in source.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            record |= (
                {"sessionId": session, "cwd": str(run.project)} if "sessionId" in record else {}
            )
            lines.append(json.dumps(record))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return session


def _audit_open(run: AgentRun, source: Path) -> list[str]:
    from harness.hooks import fold_transcript

    folded, _ = fold_transcript(source, "claude-code", (b"TodoWrite",), None)
    return [i.text for i in folded.open_items()]


def _codex(tmp: Path, hooks: bool) -> RecordedRequest:
    plan = [{"step": t, "status": s} for t, s in TODOS]
    script = [
        Reply(tool_calls=[ToolCall("update_plan", {"explanation": "plan", "plan": plan})]),
        Reply(
            "Planned the work in four steps.", usage={"input_tokens": 60000, "output_tokens": 50}
        ),
        Reply("Continuing after the compaction."),
    ]
    with StubModel(script, rules=[summary_rule(SUMMARY)]) as stub:
        run = make_agent_run(tmp, "codex", stub)
        if hooks:
            run.harness("hooks", "install", "codex", "--user")
        flags = ["exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust"]
        out = run.cli([*flags, "Plan the refactor."])
        thread = json.loads(out.splitlines()[0])["thread_id"]
        run.cli([*flags, "resume", thread, "What is next?"])
    return first_after_compaction(stub.requests)


class TestCodex:
    def test_hooks_restore_the_plan(self, tmp_path: Path) -> None:
        """After Codex's automatic compaction, the next request holds every open plan step."""
        _need("codex")
        first = _codex(tmp_path, hooks=True)
        assert items_held(first.body, OPEN) == len(OPEN)

    def test_without_hooks_the_plan_is_gone(self, tmp_path: Path) -> None:
        """Without the hooks, the request after Codex's compaction holds no open step."""
        _need("codex")
        assert items_held(_codex(tmp_path, hooks=False).body, OPEN) == 0


def _gemini(tmp: Path, hooks: bool) -> RecordedRequest:
    todos = [{"description": t, "status": s} for t, s in TODOS]
    script = [
        Reply(tool_calls=[ToolCall("write_todos", {"todos": todos})]),
        Reply("Planned the work in four steps."),
        Reply(
            tool_calls=[ToolCall("list_directory", {"dir_path": "."})],
            usage={"input_tokens": 60000, "output_tokens": 50},
        ),
        Reply("Continuing after the compression."),
    ]
    with StubModel(script, rules=[summary_rule(SNAPSHOT)]) as stub:
        run = make_agent_run(tmp, "gemini", stub)
        if hooks:
            run.harness("hooks", "install", "gemini", "--user")
        flags = ["-m", "gemini-2.5-pro", "--approval-mode", "yolo", "-o", "json"]
        run.cli([*flags, "-p", "Plan the refactor."])
        run.cli([*flags, "--resume", "latest", "-p", "Do step two."])
    return first_after_compaction(stub.requests)


class TestGemini:
    def test_hooks_restore_every_open_todo(self, tmp_path: Path) -> None:
        """After Gemini CLI's compression, the next request holds every open todo."""
        _need("gemini")
        assert items_held(_gemini(tmp_path, hooks=True).body, OPEN) == len(OPEN)

    def test_without_hooks_none_survives(self, tmp_path: Path) -> None:
        """Without the hooks, the request after the compression holds no open todo."""
        _need("gemini")
        assert items_held(_gemini(tmp_path, hooks=False).body, OPEN) == 0
