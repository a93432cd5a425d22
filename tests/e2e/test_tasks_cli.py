"""The task and policy commands end to end: harness tool, harness tasks, log warnings, policies."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from cli_runner import run_cli

from compaction import Session, TodoWriteData, TurnStartData
from compaction.tools import dump_policies
from prompts import policy_table

ROOT = Path(__file__).resolve().parents[2]


def harness(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process from the checkout's root (see cli_runner).

    `--follow`, which must be stopped from outside, runs in a real process below.
    """
    return run_cli(*args, stdin=stdin, cwd=ROOT)


class TestToolAndTasks:
    def test_lead_and_two_sub_agents(self, log_path: Path) -> None:
        """The README's example: a lead splits the work, two sub-agents take and finish tasks."""
        log = str(log_path)
        with Session(log_path) as session:
            session.start_turn("Add --verbose to the CLI", mode="team")
        calls = [
            ("lead", "task_create", '{"subject": "Add the flag"}'),
            ("lead", "task_create", '{"subject": "Test the flag"}'),
            ("lead", "task_update", '{"id": "2", "blocked_by": ["1"]}'),
            ("worker-1", "task_update", '{"id": "1", "status": "in_progress"}'),
            ("worker-2", "task_update", '{"id": "2", "status": "in_progress"}'),
            ("worker-1", "task_update", '{"id": "1", "status": "completed"}'),
            ("worker-2", "task_update", '{"id": "2", "status": "in_progress"}'),
        ]
        out = [
            harness("tool", log, tool, "--agent", agent, "--args", args)
            for agent, tool, args in calls
        ]
        assert [r.returncode for r in out] == [0, 0, 0, 0, 1, 0, 0]
        assert out[0].stdout == 'Created task 1: "Add the flag" (pending, no owner).\n'
        assert out[4].stdout.startswith("task_update: rejected, nothing was changed.")
        assert "task 2 is blocked by 1 (in_progress)" in out[4].stdout
        assert out[6].stdout == 'Updated task 2 (v3): status in_progress, owner "worker-2".\n'
        panel = harness("tasks", log)
        assert panel.returncode == 0, panel.stderr
        assert panel.stdout == (
            "1 completed, 1 in progress, 0 pending\n"
            '✓ #1 "Add the flag" · worker-1\n'
            '◉ #2 "Test the flag" · worker-2 · blocked by #1\n'
        )
        data = json.loads(harness("tasks", log, "--json").stdout)
        assert data["counts"] == {"completed": 1, "in_progress": 1, "pending": 0}
        assert data["next_id"] == "3"
        assert [(t["id"], t["owner"], t["version"]) for t in data["tasks"]] == [
            ("1", "worker-1", 3),
            ("2", "worker-2", 3),
        ]
        listed = harness("tool", log, "task_list", "--args", "{}")
        assert listed.stdout.splitlines()[0] == "Tasks: 0 pending, 1 in progress, 1 completed."

    def test_plan_turn_refuses_and_bad_agent_is_one_line(self, log_path: Path) -> None:
        """A Plan turn refuses `harness tool` (exit 1); a bad --agent is one error line (2)."""
        with Session(log_path) as session:
            session.start_turn("Plan it", mode="plan")
        before = log_path.read_bytes()
        result = harness("tool", str(log_path), "task_create", "--args", '{"subject": "X"}')
        assert result.returncode == 1
        assert result.stdout.startswith(
            "task_create: refused, nothing was changed. You are in Plan"
        )
        assert log_path.read_bytes() == before
        bad = harness("tool", str(log_path), "task_list", "--agent", "two words", "--args", "{}")
        assert bad.returncode == 2
        assert bad.stderr.count("\n") == 1
        assert "Traceback" not in bad.stderr

    def test_follow_redraws_when_another_agent_writes(self, log_path: Path) -> None:
        """`harness tasks --follow` prints the panel, then again when another process updates."""
        with Session(log_path, agent="lead") as lead:
            lead.task_create({"subject": "Add the flag"})
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "harness",
                "tasks",
                str(log_path),
                "--follow",
                "--interval",
                "0.05",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        lines: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        out = proc.stdout

        def pump() -> None:
            for x in out:
                lines.put(x)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()

        def read_until(wanted: str) -> list[str]:
            seen: list[str] = []
            deadline = time.monotonic() + 60
            while wanted not in seen:
                if time.monotonic() > deadline:
                    raise AssertionError(f"never saw {wanted!r}; saw {seen!r}")
                try:
                    seen.append(lines.get(timeout=1).rstrip("\n"))
                except queue.Empty:
                    continue
            return seen

        try:
            assert read_until('○ #1 "Add the flag" · unowned') == [
                "0 completed, 0 in progress, 1 pending",
                '○ #1 "Add the flag" · unowned',
            ]
            with Session(log_path, agent="worker-1") as worker:
                worker.task_update({"id": "1", "status": "in_progress"})
            assert read_until('◉ #1 "Add the flag" · worker-1') == [
                "",
                "0 completed, 1 in progress, 0 pending",
                '◉ #1 "Add the flag" · worker-1',
            ]
        finally:
            proc.terminate()
            proc.communicate(timeout=30)
        reader.join(timeout=30)


class TestLogWarnings:
    def test_forbidden_events_are_warned(self, log_path: Path) -> None:
        """`harness log` lists a recorded todo/write inside a Plan turn, and still exits 0."""
        with Session(log_path) as session:
            session.append_many([TurnStartData(mode="plan"), TodoWriteData(todos=())])
        result = harness("log", str(log_path))
        assert result.returncode == 0, result.stderr
        assert (
            "warning: seq 2: todo/write in a plan turn (turn/start at seq 1), whose mode forbids "
            "todo_write"
        ) in result.stdout
        data = json.loads(harness("log", str(log_path), "--json").stdout)
        assert len(data["policy_warnings"]) == 1


class TestPolicies:
    def test_modes_policies_prints_the_committed_table(self) -> None:
        """`harness modes --policies` prints compaction/schemas/mode_policies.json."""
        result = harness("modes", "--policies")
        assert result.returncode == 0, result.stderr
        assert result.stdout == dump_policies(policy_table())
        committed = ROOT / "compaction" / "schemas" / "mode_policies.json"
        assert result.stdout == committed.read_text(encoding="utf-8")
