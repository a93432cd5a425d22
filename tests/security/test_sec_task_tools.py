"""Issue 25, cases 7, 9 and 10: the task tools across processes, names matched whole, stdin closed.

`harness tool` runs each call in a fresh `Session` (as a separate process would): only the
optional ``version`` argument can catch a stale update there, and it must.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import ConfigError, Session, TaskCreated, TaskUpdated, call_tool


def _tool(log: Path, name: str, agent: str, arguments: dict[str, object]) -> tuple[int, str]:
    done = run_cli("tool", log, name, "--agent", agent, "--args", json.dumps(arguments))
    return done.returncode, done.stdout + done.stderr


def _task_events(log: Path) -> int:
    with Session(log) as session:
        return sum(isinstance(e, TaskCreated | TaskUpdated) for e in session.events())


class TestVersionAcrossProcesses:
    def test_a_stale_version_is_rejected_with_the_current_state(self, tmp_path: Path) -> None:
        """Worker and lead in separate calls: the lead's update naming v1 after v2 is refused."""
        log = tmp_path / "team.jsonl"
        assert _tool(log, "task_create", "lead", {"subject": "Add the flag"})[0] == 0
        code, out = _tool(log, "task_update", "w1", {"id": "1", "status": "in_progress"})
        assert code == 0, out
        before = _task_events(log)
        code, out = _tool(log, "task_update", "lead", {"id": "1", "subject": "X", "version": 1})
        assert code == 1
        assert "task 1 is at v2, not v1" in out
        assert '#1 in_progress "Add the flag" (owner w1, v2)' in out
        assert '"version": 2' in out
        assert _task_events(log) == before

    def test_the_current_version_is_accepted(self, tmp_path: Path) -> None:
        """Naming the version the task is at lets the update through, and bumps it."""
        log = tmp_path / "team.jsonl"
        _tool(log, "task_create", "lead", {"subject": "Add the flag"})
        code, out = _tool(
            log, "task_update", "lead", {"id": "1", "status": "pending", "version": 1}
        )
        assert code == 0
        assert "unchanged (v1)" in out
        code, out = _tool(log, "task_update", "lead", {"id": "1", "subject": "Y", "version": 1})
        assert (code, out.strip()) == (0, 'Updated task 1 (v2): subject "Y".')

    @pytest.mark.parametrize(
        ("version", "problem"),
        [
            (0, "version must be the task's version as a whole number (2 for v2), not 0"),
            ("2", 'version must be the task\'s version as a whole number (2 for v2), not "2"'),
            (True, "not true"),
            (1.5, "not 1.5"),
        ],
    )
    def test_a_bad_version_is_rejected(self, version: object, problem: str, log_path: Path) -> None:
        """A version that is not a positive whole number is a model-readable rejection."""
        with Session(log_path) as session:
            session.task_create({"subject": "a"})
            result = session.task_update({"id": "1", "status": "completed", "version": version})
            assert result.is_error
            assert problem in result.content
            assert session.tasks.get("1").status == "pending"  # type: ignore[union-attr]

    def test_version_alone_is_nothing_to_update(self, log_path: Path) -> None:
        """A call with only id and version changes nothing and says what to send."""
        with Session(log_path) as session:
            session.task_create({"subject": "a"})
            result = session.task_update({"id": "1", "version": 1})
            assert result.is_error
            assert "nothing to update" in result.content


def test_the_stale_rule_holds_per_calling_agent(log_path: Path) -> None:
    """One Session serving two agents: each agent's own view decides its stale check."""
    with Session(log_path, agent="lead") as session:
        call_tool(session, "task_create", {"subject": "Parse flags"}, agent="lead")
        assert not call_tool(session, "task_list", agent="a").is_error
        assert not call_tool(session, "task_list", agent="b").is_error
        moved = call_tool(session, "task_update", {"id": "1", "owner": "b"}, agent="b")
        assert not moved.is_error
        stale = call_tool(session, "task_update", {"id": "1", "status": "completed"}, agent="a")
        assert stale.is_error
        assert "changed since you last listed it" in stale.content
        again = call_tool(session, "task_update", {"id": "1", "subject": "Parse all"}, agent="b")
        assert not again.is_error


@pytest.mark.parametrize("name", ["w1\n", "w1\r\n", "w1 ", "\nw1", "w1\x00"])
def test_names_match_whole(name: str, log_path: Path) -> None:
    """A name with a trailing newline (or other extra) is refused as owner, agent and session."""
    with Session(log_path) as session:
        session.task_create({"subject": "a"})
        result = session.task_update({"id": "1", "owner": name})
        assert result.is_error
        assert "owner must be an agent name" in result.content
        with pytest.raises(ConfigError, match="must match"):
            call_tool(session, "task_list", agent=name)
        with pytest.raises(ConfigError, match="must match"):
            session.task_update({"id": "1", "status": "completed"}, agent=name)
    with pytest.raises(ConfigError, match="must match"):
        Session(log_path, agent=name)


@pytest.mark.parametrize(
    "subject", ["\u200b", "\ufeff", "\u202e", "\x00", " \u200b\x00\ufeff ", "\u2800", "\u00ad"]
)
def test_invisible_subjects_are_blank(subject: str, log_path: Path) -> None:
    """A subject of only invisible characters is refused as blank, as a todo item is."""
    with Session(log_path) as session:
        created = session.task_create({"subject": subject})
        assert created.is_error
        assert "- subject is blank" in created.content
        session.task_create({"subject": "real"})
        updated = session.task_update({"id": "1", "subject": subject})
        assert updated.is_error
        assert "- subject is blank" in updated.content
        todo = session.todo_write({"todos": [{"content": subject, "status": "pending"}]})
        assert todo.is_error
        assert "todos[0].content is blank" in todo.content
        assert len(session.tasks.tasks) == 1


@pytest.mark.parametrize("name", ["task_create", "task_update", "todo_write", "task_list"])
def test_harness_tool_with_stdin_closed(name: str, tmp_path: Path) -> None:
    """`harness tool LOG NAME <&-` is one line (stdin closed), exit 3, never an AttributeError."""
    log = tmp_path / "s.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "harness", "tool", str(log), name],
        stdin=subprocess.PIPE,
        preexec_fn=lambda: os.close(0),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if name == "task_list":  # takes no arguments: stdin is not needed
        assert done.returncode == 0, done.stderr
        assert "No tasks yet" in done.stdout
        return
    assert done.returncode == 3, done.stderr
    assert "AttributeError" not in done.stderr
    assert "stdin is closed" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not log.exists() or _task_events(log) == 0
