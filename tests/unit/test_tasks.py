"""The task tools: exact model-facing strings, every rejection rule, and what is appended."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compaction import (
    ConfigError,
    ModePolicy,
    Session,
    TaskCreated,
    TaskUpdated,
    ToolResult,
    call_tool,
    read_events,
)
from compaction.tools import TASK_TOOL_NAMES, task_parameters_schema

HEAD = "task_update: rejected, nothing was changed. Fix the arguments and call again:\n"
CREATE_HEAD = "task_create: rejected, nothing was changed. Fix the arguments and call again:\n"


@pytest.fixture
def team(log_path: Path) -> Iterator[Session]:
    """A team session: the lead created tasks 1 (Parse), 2 (Test, blocked by 1) and 3 (Ship)."""
    with Session(log_path, agent="lead") as session:
        session.start_turn("Split the work", mode="team")
        for subject in ("Parse", "Test", "Ship"):
            assert not session.task_create({"subject": subject}).is_error
        assert not session.task_update({"id": "2", "blocked_by": ["1"]}).is_error
        yield session


class TestCreate:
    def test_exact_result_and_event(self, log_path: Path) -> None:
        """The result names the new id; one task/create event records the agent and task."""
        with Session(log_path, agent="lead") as session:
            result = session.task_create(
                '{"subject": "  Write the parser ", "description": "Parse --verbose"}'
            )
        assert result == ToolResult('Created task 1: "Write the parser" (pending, no owner).')
        (event,) = read_events(log_path)
        assert isinstance(event, TaskCreated)
        assert event.data.agent == "lead"
        assert event.data.task.model_dump() == {
            "id": "1",
            "subject": "Write the parser",
            "description": "Parse --verbose",
            "status": "pending",
            "owner": None,
            "blocked_by": (),
            "version": 1,
        }

    def test_ids_are_short_and_deterministic(self, log_path: Path) -> None:
        """Ids run 1, 2, 3 whoever creates, and a replay of the log gives the same next id."""
        with Session(log_path, agent="lead") as a, Session(log_path, agent="worker-1") as b:
            assert a.task_create({"subject": "A"}).content.startswith("Created task 1:")
            assert b.task_create({"subject": "B"}).content.startswith("Created task 2:")
            assert a.task_create({"subject": "C"}).content.startswith("Created task 3:")
        assert Session(log_path).tasks.next_id == "4"

    @pytest.mark.parametrize(
        ("arguments", "violations"),
        [
            pytest.param(
                {"subject": "A", "priority": 1},
                '- unknown parameter "priority"; task_create takes "subject" and, optionally, '
                '"description"',
                id="unknown-field",
            ),
            pytest.param({"subject": "   "}, "- subject is blank", id="blank"),
            pytest.param(
                {},
                '- missing the required parameter "subject" (the task, as a short sentence)',
                id="missing",
            ),
            pytest.param({"subject": 3}, "- subject must be a string, not 3", id="not-text"),
            pytest.param(
                {"subject": "x" * 1001},
                "- subject is longer than 1000 characters; keep it to one sentence and put "
                'details in "description"',
                id="too-long",
            ),
            pytest.param(
                {"subject": "A", "description": 5},
                "- description must be a string, not 5",
                id="bad-description",
            ),
            pytest.param(
                "[1]",
                '- arguments must be a JSON object with a "subject", like {"subject": "Write the '
                'parser", "description": "Parse the --verbose flag"}',
                id="not-an-object",
            ),
        ],
    )
    def test_rejections_exact_and_nothing_appended(
        self, log_path: Path, arguments: Any, violations: str
    ) -> None:
        """Each malformed create is rejected with its exact text; the log is not even created."""
        with Session(log_path) as session:
            result = session.task_create(arguments)
        assert result == ToolResult(CREATE_HEAD + violations, is_error=True)
        assert not log_path.exists()


class TestUpdate:
    def test_exact_result_and_whole_state_event(self, team: Session, log_path: Path) -> None:
        """An accepted update names what changed and records the task's whole new state."""
        result = team.task_update({"id": 1, "status": "in_progress"})
        assert result == ToolResult('Updated task 1 (v2): status in_progress, owner "lead".')
        last = list(read_events(log_path))[-1]
        assert isinstance(last, TaskUpdated)
        assert (last.data.agent, last.data.task.owner, last.data.task.version) == (
            "lead",
            "lead",
            2,
        )
        assert last.data.task.subject == "Parse"

    def test_unchanged_appends_nothing(self, team: Session, log_path: Path) -> None:
        """An update that changes nothing says so and appends nothing."""
        before = log_path.read_bytes()
        assert team.task_update({"id": "3", "status": "pending"}) == ToolResult(
            "Task 3 unchanged (v1): it already has those values."
        )
        assert log_path.read_bytes() == before

    @pytest.mark.parametrize(
        ("agent", "arguments", "violation"),
        [
            pytest.param(
                "lead",
                {"id": "9", "status": "completed"},
                'no task "9"; the tasks are 1, 2, 3 (call task_list)',
                id="unknown-id",
            ),
            pytest.param(
                "lead",
                {"id": "1", "status": "done"},
                'status must be one of pending, in_progress, completed, deleted, not "done"',
                id="unknown-status",
            ),
            pytest.param(
                "lead",
                {"id": "1", "priority": "high"},
                'unknown parameter "priority"; task_update takes "id", any of "status", '
                '"subject", "owner", "blocked_by", and optionally "version"',
                id="unknown-field",
            ),
            pytest.param(
                "lead",
                {"id": "1"},
                'nothing to update: send at least one of "status", "subject", "owner", '
                '"blocked_by"',
                id="nothing",
            ),
            pytest.param("lead", {"id": "1", "subject": " "}, "subject is blank", id="blank"),
            pytest.param(
                "lead",
                {"status": "completed"},
                'missing the required parameter "id" (the task\'s id, as task_create or '
                "task_list gave it)",
                id="no-id",
            ),
            pytest.param(
                "lead",
                {"id": "2", "status": "in_progress"},
                "task 2 is blocked by 1 (pending); finish those first or remove them from "
                '"blocked_by"',
                id="blocked",
            ),
            pytest.param(
                "lead",
                {"id": "1", "blocked_by": ["2"]},
                "blocked_by would make a cycle: 1 -> 2 -> 1",
                id="cycle",
            ),
            pytest.param(
                "lead",
                {"id": "1", "blocked_by": ["1"]},
                "blocked_by: task 1 cannot block itself",
                id="self-block",
            ),
            pytest.param(
                "lead",
                {"id": "1", "blocked_by": ["7"]},
                'blocked_by: no task "7"',
                id="unknown-blocker",
            ),
            pytest.param(
                "lead",
                {"id": "1", "blocked_by": ["3", "3"]},
                'blocked_by lists "3" twice',
                id="duplicate-blocker",
            ),
            pytest.param(
                "lead",
                {"id": "1", "owner": "two words"},
                'owner must be an agent name (letters, digits and "_.@-", up to 64) or null, '
                'not "two words"',
                id="bad-owner",
            ),
        ],
    )
    def test_rejections_exact_and_nothing_appended(
        self, team: Session, log_path: Path, agent: str, arguments: Any, violation: str
    ) -> None:
        """Each rule breach is rejected with its exact text and the log stays as it was."""
        before = log_path.read_bytes()
        result = team.task_update(arguments, agent=agent)
        assert result == ToolResult(HEAD + "- " + violation, is_error=True)
        assert log_path.read_bytes() == before

    def test_cannot_complete_a_task_another_agent_owns(self, team: Session, log_path: Path) -> None:
        """Completing another agent's task is refused unless the call takes it."""
        with Session(log_path, agent="worker-1") as worker:
            assert not worker.task_update({"id": "3", "status": "in_progress"}).is_error
        with Session(log_path, agent="worker-2") as other:
            before = log_path.read_bytes()
            refused = other.task_update({"id": "3", "status": "completed"})
            assert refused == ToolResult(
                HEAD + '- task 3 is owned by "worker-1"; to change it, take it in the same call '
                '("owner": "worker-2") or leave it to its owner',
                is_error=True,
            )
            assert log_path.read_bytes() == before
            taken = other.task_update({"id": "3", "status": "completed", "owner": "worker-2"})
            assert taken.content == 'Updated task 3 (v3): status completed, owner "worker-2".'

    def test_stale_update_rejected_with_current_state(self, team: Session, log_path: Path) -> None:
        """An agent updating a task that changed since it last saw it gets the current state."""
        with Session(log_path, agent="worker-1") as worker:
            worker.task_update({"id": "3", "subject": "Ship it"})
        before = log_path.read_bytes()
        stale = team.task_update({"id": "3", "status": "completed"})
        assert stale == ToolResult(
            HEAD + '- task 3 changed since you last listed it; it is now: #3 pending "Ship it" '
            "(no owner, v2). Check the new state and call again if your change still applies",
            is_error=True,
        )
        assert log_path.read_bytes() == before
        assert not team.task_update({"id": "3", "status": "completed"}).is_error

    def test_deleted_task_is_gone_and_unblocks(self, team: Session) -> None:
        """A deleted task leaves the list, cannot change again, and no longer blocks."""
        assert team.task_update({"id": "1", "status": "deleted"}).content == (
            "Updated task 1 (v2): status deleted."
        )
        assert [t.id for t in team.tasks.live()] == ["2", "3"]
        assert team.task_update({"id": "1", "status": "pending"}).content == (
            HEAD + "- task 1 was deleted; it can no longer change"
        )
        assert not team.task_update({"id": "2", "status": "in_progress"}).is_error


class TestList:
    def test_compact_lines(self, team: Session) -> None:
        """task_list: a counts line, then one line per live task with owner, blockers, version."""
        team.task_update({"id": "1", "status": "in_progress"})
        assert team.task_list().content == (
            "Tasks: 2 pending, 1 in progress, 0 completed.\n"
            '#1 in_progress "Parse" (owner lead, v2)\n'
            '#2 pending "Test" (no owner, blocked by 1, v2)\n'
            '#3 pending "Ship" (no owner, v1)'
        )

    def test_empty_and_rejected(self, log_path: Path) -> None:
        """No tasks yet says so; any parameter is rejected."""
        with Session(log_path) as session:
            assert session.task_list("{}").content == "No tasks yet. Create one with task_create."
            assert session.task_list({"all": True}) == ToolResult(
                "task_list: rejected, nothing was changed. Fix the arguments and call again:\n"
                '- unknown parameter "all"; task_list takes no parameters; send {}',
                is_error=True,
            )


class TestPolicy:
    def test_plan_mode_refuses_task_writes_not_list(self, team: Session, log_path: Path) -> None:
        """In a Plan turn the session refuses task_create/task_update; task_list still reads."""
        team.start_turn("Plan the release", mode="plan")
        before = log_path.read_bytes()
        for tool, args in (("task_create", {"subject": "X"}), ("task_update", {"id": "3"})):
            result = call_tool(team, tool, args)
            assert result.is_error
            assert result.content.startswith(f"{tool}: refused, nothing was changed.")
        assert log_path.read_bytes() == before
        assert not call_tool(team, "task_list").is_error

    def test_dispatcher_runs_host_tools_under_the_policy(self, log_path: Path) -> None:
        """call_tool runs host tools with parsed arguments, refuses forbidden ones, names others."""
        table = {"review": ModePolicy(refusals={"write_file": "write_file: refused in review"})}
        seen: list[dict[str, Any]] = []

        def write_file(a: dict[str, Any]) -> str:
            seen.append(a)
            return "written"

        handlers = {"write_file": write_file, "grep": lambda a: "hit"}
        with Session(log_path, policies=table) as session:
            session.start_turn("look", mode="agent")
            assert call_tool(session, "write_file", '{"path": "a"}', handlers=handlers) == (
                ToolResult("written")
            )
            session.start_turn("review", mode="review")
            assert call_tool(session, "write_file", {"path": "b"}, handlers=handlers) == (
                ToolResult("write_file: refused in review", is_error=True)
            )
            assert call_tool(session, "grep", "{}", handlers=handlers) == ToolResult("hit")
            unknown = call_tool(session, "rm", "{}", handlers=handlers)
        assert seen == [{"path": "a"}]
        assert unknown == ToolResult(
            'unknown tool "rm"; the tools are compact_context, grep, task_create, task_list, '
            "task_update, todo_write, write_file",
            is_error=True,
        )

    def test_bad_agent_name_is_a_config_error(self, log_path: Path) -> None:
        """A session's agent name is checked when it is built."""
        with pytest.raises(ConfigError, match="agent 'two words' must match"):
            Session(log_path, agent="two words")


class TestSchemas:
    @pytest.mark.parametrize("name", TASK_TOOL_NAMES)
    def test_closed_schemas(self, name: str) -> None:
        """Each task tool's parameters are a closed object schema."""
        schema = task_parameters_schema(name)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert json.dumps(schema) == json.dumps(task_parameters_schema(name))

    def test_update_fields(self) -> None:
        """task_update takes id, the four changeable fields and an optional version."""
        schema = task_parameters_schema("task_update")
        assert sorted(schema["properties"]) == [
            "blocked_by", "id", "owner", "status", "subject", "version",
        ]  # fmt: skip
        assert schema["properties"]["version"]["type"] == "integer"
        assert schema["required"] == ["id"]


class TestOnAStore:
    def test_two_agents_on_one_sqlite_session(self, tmp_path: Path) -> None:
        """On a SQLite store the task tools behave as on a file: ids, claims, stale checks."""
        url = f"sqlite:///{tmp_path / 's.db'}"
        with (
            Session.open(url, session="team", agent="lead") as lead,
            Session.open(url, session="team", agent="worker-1") as worker,
        ):
            assert lead.task_create({"subject": "A"}).content.startswith("Created task 1:")
            assert worker.task_create({"subject": "B"}).content.startswith("Created task 2:")
            assert not worker.task_update({"id": "1", "status": "in_progress"}).is_error
            stale = lead.task_update({"id": "1", "status": "completed"})
            assert "task 1 changed since you last listed it" in stale.content
            lead.refresh()
            assert [(t.id, t.owner, t.version) for t in lead.tasks.live()] == [
                ("1", "worker-1", 2),
                ("2", None, 1),
            ]
