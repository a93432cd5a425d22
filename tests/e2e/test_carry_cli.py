"""The CLI shows the running jobs and the approved plan: tasks, todos, compact --json, log --seq."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import FunctionCall, Message, Session, ToolCall

PLAN = "# Plan\n\n1. Dump\n2. Migrate"


@pytest.fixture
def carried_log(tmp_path: Path) -> Path:
    """A log with an approved plan, one job ended and one still running."""
    path = tmp_path / "s.jsonl"
    with Session(path) as session:
        session.start_turn("Plan it", mode="plan")
        session.add_message(Message(role="assistant", content=PLAN))
        session.start_turn("Go")
        session.start_job("b7b23b2", "command", "npm test")
        session.start_job("a93ccab", "agent", "Check the schema")
        session.end_job("b7b23b2")
        call = ToolCall(id="c1", function=FunctionCall(name="bash", arguments='{"cmd": "ls"}'))
        session.add_message(Message(role="assistant", tool_calls=(call,)))
        session.add_message(Message(role="tool", tool_call_id="c1", content="a\nb"))
    return path


def test_tasks_json_lists_running_jobs_and_the_plan(carried_log: Path) -> None:
    """`harness tasks --json` holds the running jobs (not the ended one) and the plan."""
    out = run_cli("tasks", carried_log, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [j["id"] for j in data["jobs"]] == ["a93ccab"]
    assert data["plan"]["text"] == PLAN


@pytest.mark.parametrize("command", ["tasks", "todos"])
def test_panels_show_the_running_job_and_the_plan(carried_log: Path, command: str) -> None:
    """The panels list each running job by id and the plan's first line."""
    out = run_cli(command, carried_log)
    assert out.returncode == 0, out.stderr
    assert "▶ job a93ccab (agent, since seq" in out.stdout
    assert "b7b23b2" not in out.stdout
    assert "plan approved (seq" in out.stdout
    assert "# Plan" in out.stdout


def test_compact_json_carries_jobs_and_plan(carried_log: Path) -> None:
    """`harness compact --json` reports the jobs and the plan the Checkpoint carries."""
    out = run_cli("compact", carried_log, "--force", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [j["id"] for j in data["jobs"]] == ["a93ccab"]
    assert data["plan"]["text"] == PLAN
    assert "- job a93ccab (agent, since seq " in data["checkpoint"]


def test_log_seq_prints_the_calls_of_a_calls_only_message(carried_log: Path) -> None:
    """An assistant message with only tool calls prints its calls, not an empty line."""
    with Session(carried_log) as session:
        seq = next(e.seq for e in session.events() if e.type == "message" and e.data.tool_calls)
    out = run_cli("log", carried_log, "--seq", str(seq))
    assert out.returncode == 0, out.stderr
    assert out.stdout == 'call c1: bash {"cmd": "ls"}\n'
