"""The CLI reports the shared tasks a Checkpoint carries (compact --json, its line, sessions).

The session has the shape of the shared Claude Code 2.1 TaskCreate/TaskUpdate transcript: a
list of tasks, the first ones completed, one in progress, later ones waiting on it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_runner import run_cli

from compaction import Message, Session, TodoItem, TodoWriteData

SUBJECTS = ("Fix maxSessionCheck", "Return error on diff failure", "Update docs", "Run fmt")


def harness(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process (see cli_runner)."""
    return run_cli(*args)


def task_session(path: Path, *, todos: bool) -> None:
    """Tasks 1 completed, 2 in progress (owner w1), 3 and 4 pending, 4 blocked by 2 and 3."""
    with Session(path, agent="lead") as session:
        session.start_turn("Fix the review findings")
        if todos:
            items = (
                TodoItem(content="Read the review", status="in_progress"),
                TodoItem(content="Reply to the reviewer", status="pending"),
            )
            session.append(TodoWriteData(todos=items))
        for subject in SUBJECTS:
            assert not session.task_create({"subject": subject}).is_error
        updates: list[dict[str, object]] = [
            {"id": "1", "status": "in_progress"},
            {"id": "1", "status": "completed"},
            {"id": "2", "status": "in_progress", "owner": "w1"},
            {"id": "4", "blocked_by": ["2", "3"]},
        ]
        for update in updates:
            assert not session.task_update(update).is_error
        for n in range(6):
            session.append(Message(role="assistant", content=f"Working on the fix, step {n}."))


class TestCompactReportsTasks:
    def test_json_lists_pending_and_current_tasks(self, tmp_path: Path) -> None:
        """`compact --json` lists the carried tasks: id, subject, owner, status, blockers."""
        path = tmp_path / "s.jsonl"
        task_session(path, todos=False)
        run = harness("compact", path, "--force", "--json")
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        assert out["current_tasks"] == [
            {
                "id": "2",
                "subject": SUBJECTS[1],
                "owner": "w1",
                "status": "in_progress",
                "blocked_by": [],
            }
        ]
        assert out["pending_tasks"] == [
            {
                "id": "3",
                "subject": SUBJECTS[2],
                "owner": None,
                "status": "pending",
                "blocked_by": [],
            },
            {
                "id": "4",
                "subject": SUBJECTS[3],
                "owner": None,
                "status": "pending",
                "blocked_by": ["2", "3"],
            },
        ]
        assert (out["pending"], out["current"]) == ([], [])
        assert '- task 4 (no owner, blocked by 2, 3): "Run fmt"' in out["checkpoint"]

    def test_report_line_counts_todos_and_tasks(self, tmp_path: Path) -> None:
        """The report says how many todos and how many tasks code carried."""
        path = tmp_path / "s.jsonl"
        task_session(path, todos=True)
        run = harness("compact", path, "--force")
        assert run.returncode == 0, run.stderr
        line = "carried by code: 1 pending, 1 in progress todos; 2 pending, 1 in progress tasks"
        assert line in run.stdout.splitlines()

    def test_report_line_without_tasks_counts_todos(self, tmp_path: Path) -> None:
        """With no shared task list, the line counts the todos alone."""
        path = tmp_path / "s.jsonl"
        with Session(path) as session:
            session.start_turn("Go")
            items = (TodoItem(content="Only item", status="pending"),)
            session.append(TodoWriteData(todos=items))
            for n in range(4):
                session.append(Message(role="assistant", content=f"step {n}"))
        run = harness("compact", path, "--force")
        assert "carried by code: 1 pending, 0 in progress todos" in run.stdout.splitlines()


class TestSessionsCountTasks:
    def test_open_tasks_counts_shared_tasks(self, tmp_path: Path) -> None:
        """`harness sessions` counts the unfinished todo items and the open shared tasks."""
        folder = tmp_path / "store"
        folder.mkdir()
        task_session(folder / "with-todos.jsonl", todos=True)
        task_session(folder / "tasks-only.jsonl", todos=False)
        run = harness("sessions", f"jsonl:///{folder}", "--json")
        assert run.returncode == 0, run.stderr
        rows = {r["session"]: r["open_tasks"] for r in json.loads(run.stdout)["sessions"]}
        assert rows == {"with-todos": 2 + 3, "tasks-only": 3}
