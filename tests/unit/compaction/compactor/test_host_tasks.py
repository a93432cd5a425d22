"""Tasks without a todo tool: the host's tasks are carried, reminded and shown all the same."""

from __future__ import annotations

from pathlib import Path

from cli_runner import run_cli
from loop_sessions import call, result

from compaction import (
    CheckpointRecorded,
    CompactionPolicy,
    MessageAdded,
    Session,
    compact,
    maybe_compact,
    parse_checkpoint,
)
from compaction.compactor.reminders import remind_if_stale

MODEL_TOOLS = ("bash", "read_file")
"""What the model sees: no todo_write, no task tool."""
POLICY = CompactionPolicy(window_tokens=6_000)


def host_session(path: Path) -> Session:
    """The host turns a ticket into tasks by code; the model only calls bash."""
    session = Session(path, agent="host")
    session.start_turn("Fix ticket #42: the parser drops trailing commas")
    for subject in ("Reproduce the bug", "Fix the parser", "Add a regression test"):
        assert not session.task_create({"subject": subject}).is_error
    assert not session.task_update({"id": "1", "status": "in_progress"}).is_error
    return session


def model_steps(session: Session, steps: int, *, tools: tuple[str, ...]) -> list[str]:
    """Run model calls that use only `tools`; return the reminders recorded."""
    reminders = []
    for i in range(steps):
        event = remind_if_stale(session, tools=tools)
        if isinstance(event, MessageAdded):
            reminders.append(event.data.text())
        maybe_compact(session, POLICY)
        call_id = f"c{session.applied_seq}_{i}"
        session.add_message(call(call_id, tools[0], cmd="pytest -x"))
        session.add_message(result(call_id, "FAILED test_commas " * 150))
    return reminders


def test_the_hosts_tasks_survive_every_compaction(tmp_path: Path) -> None:
    """Carried by code in every Checkpoint, though the model never saw a task tool."""
    with host_session(tmp_path / "s.jsonl") as session:
        model_steps(session, 12, tools=MODEL_TOOLS)
        session.task_update({"id": "1", "status": "completed"})  # the host moves on, by code
        session.task_update({"id": "2", "status": "in_progress"})
        model_steps(session, 12, tools=MODEL_TOOLS)
        checkpoints = [
            parse_checkpoint(e.data.text)
            for e in session.events()
            if isinstance(e, CheckpointRecorded)
        ]
        last = parse_checkpoint(compact(session, POLICY, force=True).data.text)
    assert len(checkpoints) >= 2
    for checkpoint in checkpoints:
        carried = [t.subject for t in (*checkpoint.current_tasks, *checkpoint.pending_tasks)]
        assert "Add a regression test" in carried
    assert [t.subject for t in last.current_tasks] == ["Fix the parser"]
    assert [t.subject for t in last.pending_tasks] == ["Add a regression test"]


def test_reminded_without_asking_for_a_tool_the_model_lacks(tmp_path: Path) -> None:
    """The reminder names the host's tasks and never asks for task_update or todo_write."""
    with host_session(tmp_path / "s.jsonl") as session:
        reminders = model_steps(session, 12, tools=MODEL_TOOLS)
    assert reminders
    assert all('#1 "Reproduce the bug"' in r for r in reminders)
    assert all("task_update" not in r and "todo_write" not in r for r in reminders)
    assert all("The tasks the host keeps for you" in r for r in reminders)


def test_with_the_tool_the_reminder_asks_for_it(tmp_path: Path) -> None:
    """A model that has task_update is asked to use it (the default, unchanged)."""
    with host_session(tmp_path / "s.jsonl") as session:
        reminders = model_steps(session, 12, tools=("bash", "task_update"))
    assert reminders
    assert all("Update a task with task_update" in r for r in reminders)


def test_shown_in_the_panel(tmp_path: Path) -> None:
    """`harness tasks` shows the host's tasks."""
    log = tmp_path / "s.jsonl"
    with host_session(log) as session:
        model_steps(session, 3, tools=MODEL_TOOLS)
    out = run_cli("tasks", log)
    assert out.returncode == 0, out.stderr
    assert "0 completed, 1 in progress, 2 pending" in out.stdout
    assert "Reproduce the bug" in out.stdout
