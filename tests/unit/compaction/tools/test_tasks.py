"""The task tools: exact model-facing strings, every rejection rule, and what is appended."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
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
from compaction.errors import ToolInputError
from compaction.events import Task
from compaction.tools import TASK_TOOL_NAMES, task_parameters_schema
from compaction.tools.task_rules import plan_update
from compaction.tools.tasks import (
    list_line,
    parse_task_create,
    parse_task_list,
    read_update,
    updated_line,
)
from compaction.views.board import TaskBoard

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


# Pinned by mutation testing (folded in from tests/unit/compaction/tools/test_tasks.py):
# Task-tool rules that `scripts/mutate` showed untested (issue 25).
#
# Each mutant changed what the model is offered or told, a task's stored state, or its version:
#
# - the three schemas the model is given, whole, and what they accept and refuse;
# - the pure parsers (`parse_task_create`, `read_update`, `_task_id`) on edge inputs;
# - `plan_update`'s rules (version, stale, ownership, blockers, cycles) on a board built here;
# - the exact lines the model reads (created, updated, unchanged, listed).


class TestSchemaStrings:
    def test_task_create_schema_whole(self) -> None:
        """task_create: subject (required) and description, each described, closed."""
        assert task_parameters_schema("task_create") == {
            "type": "object",
            "properties": {
                "subject": {
                    "type": "string",
                    "description": "The task, as a short imperative sentence.",
                },
                "description": {
                    "type": "string",
                    "description": "Optional detail: what done looks like.",
                },
            },
            "required": ["subject"],
            "additionalProperties": False,
        }

    def test_task_update_schema_whole(self) -> None:
        """task_update: id (required), status enum, subject, owner or null, blockers, version."""
        assert task_parameters_schema("task_update") == {
            "type": "object",
            "properties": {
                "id": {
                    "type": "string",
                    "description": "The task's id, as task_create or task_list gave it.",
                },
                "status": {
                    "type": "string",
                    "enum": ["pending", "in_progress", "completed", "deleted"],
                },
                "subject": {"type": "string", "description": "A new subject."},
                "owner": {
                    "type": ["string", "null"],
                    "description": "The agent that works on it (yourself to take it); null: none.",
                },
                "blocked_by": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The complete list of ids that must be completed first.",
                },
                "version": {
                    "type": "integer",
                    "description": "Optional: the version you last saw (2 for v2); rejected if "
                    "the task has changed since.",
                },
            },
            "required": ["id"],
            "additionalProperties": False,
        }

    def test_task_list_schema_has_no_keys_and_no_required(self) -> None:
        """task_list: an empty closed object, with no "required" key at all."""
        assert task_parameters_schema("task_list") == {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }

    @pytest.mark.parametrize(
        ("tool", "arguments", "valid"),
        [
            ("task_create", {"subject": "A"}, True),
            ("task_create", {"subject": "A", "description": "B"}, True),
            ("task_create", {"description": "B"}, False),
            ("task_create", {"subject": "A", "owner": "x"}, False),
            ("task_update", {"id": "1", "status": "deleted", "owner": None}, True),
            ("task_update", {"id": "1", "blocked_by": ["2"], "version": 2}, True),
            ("task_update", {"id": "1", "status": "done"}, False),
            ("task_update", {"id": "1", "blocked_by": [2]}, False),
            ("task_update", {"id": "1", "version": "2"}, False),
            ("task_update", {"status": "pending"}, False),
            ("task_list", {}, True),
            ("task_list", {"all": True}, False),
        ],
    )
    def test_schemas_accept_and_refuse(self, tool: str, arguments: Any, valid: bool) -> None:
        """A JSON Schema validator takes the schema's calls and refuses the others."""
        validator = jsonschema.Draft202012Validator(task_parameters_schema(tool))
        assert validator.is_valid(arguments) is valid

    def test_unknown_tool_names_the_choices(self) -> None:
        """Asking for another tool's schema names the task tools."""
        with pytest.raises(ValueError, match="not a task tool") as caught:
            task_parameters_schema("todo_write")
        assert str(caught.value) == (
            "not a task tool: 'todo_write'; choose one of task_create, task_list, task_update"
        )
        assert TASK_TOOL_NAMES == ("task_create", "task_list", "task_update")


def rejected(tool: str, *violations: str) -> str:
    return "\n".join(
        [f"{tool}: rejected, nothing was changed. Fix the arguments and call again:"]
        + [f"- {v}" for v in violations]
    )


def refusal(call: Any, *arguments: Any) -> ToolInputError:
    with pytest.raises(ToolInputError) as caught:
        call(*arguments)
    return caught.value


class TestTaskList:
    @pytest.mark.parametrize("arguments", [None, "", "  \n", b"", b" "])
    def test_no_arguments_or_blank_text_is_accepted(self, arguments: Any) -> None:
        """Nothing, or blank text or bytes, is an empty call."""
        parse_task_list(arguments)  # raises ToolInputError if refused

    @pytest.mark.parametrize(
        ("arguments", "violation"),
        [
            ("[1]", "arguments must be a JSON object with no keys, like {}"),
            (b"[]", "arguments must be a JSON object with no keys, like {}"),
            (" x", "arguments are not valid JSON; send an object like {}"),
            ('{"a": 1}', 'unknown parameter "a"; task_list takes no parameters; send {}'),
        ],
    )
    def test_rejections_name_the_tool_and_the_shape(self, arguments: Any, violation: str) -> None:
        """A bad task_list call is refused under its own name with an example of {}."""
        error = refusal(parse_task_list, arguments)
        assert (error.tool, str(error)) == ("task_list", rejected("task_list", violation))


class TestBlockersShape:
    @pytest.mark.parametrize(
        ("raw", "shown"), [("2", '"2"'), (2, "2"), ({"id": "2"}, '{"id": "2"}'), (None, "null")]
    )
    def test_blocked_by_not_an_array(self, raw: Any, shown: str) -> None:
        """blocked_by that is not an array is refused, quoting what was sent."""
        error = refusal(read_update, {"id": "1", "blocked_by": raw})
        assert str(error) == rejected(
            "task_update", f'blocked_by must be an array of task ids like ["1", "2"], not {shown}'
        )

    @pytest.mark.parametrize(
        ("raw", "violations"),
        [
            (["1", 2, True], ['blocked_by[2] must be a task id like "1", not true']),
            (["1", "a b", None], [
                'blocked_by[1] must be a task id like "1", not "a b"',
                'blocked_by[2] must be a task id like "1", not null',
            ]),
        ],
    )  # fmt: skip
    def test_each_bad_blocker_is_named_by_index(self, raw: Any, violations: list[str]) -> None:
        """Every bad blocker id is refused by index, quoting what was sent."""
        error = refusal(read_update, {"id": "1", "blocked_by": raw})
        assert str(error) == rejected("task_update", *violations)


class TestReadUpdate:
    @pytest.mark.parametrize(
        ("raw", "task_id"), [(0, "0"), (12, "12"), ("#3", "3"), (" 7 ", "7"), ("a.b:c", "a.b:c")]
    )
    def test_ids_read(self, raw: Any, task_id: str) -> None:
        """An id is a whole number from 0 or a short id string (a leading "#" dropped)."""
        assert read_update({"id": raw, "status": "completed"}) == (
            task_id,
            {"status": "completed"},
        )

    def test_not_an_object_names_the_tool_and_an_example(self) -> None:
        """Arguments that are not an object are refused under task_update, with an example."""
        error = refusal(read_update, "[1]")
        assert (error.tool, error.violations) == (
            "task_update",
            ['arguments must be a JSON object with an "id", like {"id": "3", "status": '
             '"in_progress"}'],
        )  # fmt: skip

    @pytest.mark.parametrize(
        ("arguments", "first"),
        [
            ({"status": "done"}, 'missing the required parameter "id" (the task\'s id, as '
             "task_create or task_list gave it)"),
            ({"id": "a b", "status": "done"}, 'id must be a task id like "3", not "a b"'),
            ({"id": -1, "status": "done"}, 'id must be a task id like "3", not -1'),
            ({"id": True, "status": "done"}, 'id must be a task id like "3", not true'),
        ],
    )  # fmt: skip
    def test_the_id_problem_comes_first(self, arguments: Any, first: str) -> None:
        """A missing or bad id is listed before the other fields' problems."""
        error = refusal(read_update, arguments)
        assert error.violations == [
            first,
            'status must be one of pending, in_progress, completed, deleted, not "done"',
        ]


class TestCreateRules:
    @pytest.mark.parametrize(
        ("arguments", "violation"),
        [
            ({"subject": "a\ud800"}, "subject must be valid Unicode text"),
            ({"subject": "A", "description": "b\udcff"}, "description must be valid Unicode text"),
            (
                {"\ud800": 1, "subject": "A"},
                'unknown parameter "\\ud800"; task_create takes "subject" and, optionally, '
                '"description"',
            ),
        ],
    )
    def test_lone_surrogates_in_a_mapping_are_refused(self, arguments: Any, violation: str) -> None:
        """A mapping's lone surrogate (which JSON text cannot carry) is refused, never stored."""
        error = refusal(parse_task_create, arguments)
        assert (error.tool, error.violations) == ("task_create", [violation])

    @pytest.mark.parametrize("description", [None, "", "  \n"])
    def test_no_description_is_none(self, description: str | None) -> None:
        """No description, or a blank one, is stored as None; a 1000-character subject fits."""
        arguments = {"subject": "x" * 1000}
        if description is not None:
            arguments["description"] = description
        assert parse_task_create(arguments) == ("x" * 1000, None)


def board(*tasks: Task) -> TaskBoard:
    return TaskBoard(tasks=tasks, next_id=str(len(tasks) + 1))


def task(task_id: str, **fields: Any) -> Task:
    return Task(id=task_id, subject=f"Task {task_id}", **fields)


class TestPlanUpdate:
    def test_unknown_id_on_an_empty_board(self) -> None:
        """With no tasks at all the refusal says so."""
        error = refusal(plan_update, board(), "1", {"status": "completed"}, "lead")
        assert error.violations == ['no task "1"; there are no tasks yet (call task_list)']

    @pytest.mark.parametrize(
        ("count", "shown"),
        [
            (20, ", ".join(str(i) for i in range(1, 21))),
            (21, ", ".join(str(i) for i in range(1, 21)) + ", ..."),
        ],
    )
    def test_unknown_id_names_at_most_twenty_live_ids(self, count: int, shown: str) -> None:
        """The refusal lists the first 20 live ids, and "..." only when there are more."""
        tasks = [task(str(i)) for i in range(1, count + 1)]
        error = refusal(plan_update, board(*tasks), "99", {"status": "completed"}, "lead")
        assert error.violations == [f'no task "99"; the tasks are {shown} (call task_list)']

    def test_a_version_mismatch_shows_the_current_line(self) -> None:
        """A stated version that is not the task's is refused, under task_update, with its line."""
        current = task("2", owner="w-1", version=3)
        error = refusal(plan_update, board(task("1"), current), "2", {"version": 2}, "lead")
        assert (error.tool, error.violations) == (
            "task_update",
            [
                "task 2 is at v3, not v2: it changed since you saw it; it is now: #2 pending "
                '"Task 2" (owner w-1, v3). Check the new state and call again with "version": 3 '
                "if your change still applies"
            ],
        )

    def test_a_matching_version_wins_over_a_stale_seen_version(self) -> None:
        """A stated version that matches is checked instead of the version last shown."""
        current = task("1", version=3)
        new = plan_update(board(current), "1", {"version": 3, "status": "completed"}, "a", 1)
        assert new == current.model_copy(update={"status": "completed", "version": 4})

    def test_a_stale_seen_version_is_refused_under_task_update(self) -> None:
        """Without a stated version, a task changed since this agent saw it is refused."""
        stale = board(task("1", version=2))
        error = refusal(plan_update, stale, "1", {"status": "completed"}, "a", 1)
        assert (error.tool, error.violations) == (
            "task_update",
            [
                'task 1 changed since you last listed it; it is now: #1 pending "Task 1" '
                "(no owner, v2). Check the new state and call again if your change still applies"
            ],
        )

    def test_a_deleted_blocker_is_refused_when_set(self) -> None:
        """Setting a deleted task as a blocker is refused, naming it."""
        gone = board(task("1"), task("2", status="deleted"))
        error = refusal(plan_update, gone, "1", {"blocked_by": ("2",)}, "lead")
        assert error.violations == ["blocked_by: task 2 was deleted"]

    @pytest.mark.parametrize("status", ["in_progress", "completed"])
    def test_a_task_neither_starts_nor_completes_behind_an_open_blocker(self, status: str) -> None:
        """Starting or completing waits for every pending or in-progress blocker."""
        tasks = board(task("1"), task("2", status="in_progress"), task("3", blocked_by=("1", "2")))
        error = refusal(plan_update, tasks, "3", {"status": status}, "lead")
        assert error.violations == [
            "task 3 is blocked by 1 (pending), 2 (in_progress); finish those first or remove them "
            'from "blocked_by"'
        ]


class TestLines:
    def test_list_line_with_blockers_and_owner(self) -> None:
        """A listed task names its owner, every blocker (comma-separated) and its version."""
        line = list_line(task("4", owner="w-1", blocked_by=("1", "2"), version=3))
        assert line == '#4 pending "Task 4" (owner w-1, blocked by 1, 2, v3)'

    @pytest.mark.parametrize(
        ("old", "new", "line"),
        [
            ((), ("1", "2"), "Updated task 3 (v2): blocked by 1, 2."),
            (("1",), (), "Updated task 3 (v2): blocked by none."),
        ],
    )
    def test_updated_line_names_new_blockers(
        self, old: tuple[str, ...], new: tuple[str, ...], line: str
    ) -> None:
        """A change of blockers reads "blocked by" with the new ids, or "none"."""
        before = task("3", blocked_by=old)
        after = before.model_copy(update={"blocked_by": new, "version": 2})
        assert updated_line(before, after) == line

    def test_updated_line_names_every_changed_field_in_order(self) -> None:
        """Subject, status, owner and blockers, in that order, each as the model reads it."""
        before = task("3", owner="a")
        after = Task(
            id="3", subject="New", status="in_progress", owner=None, blocked_by=("1",), version=2
        )
        assert updated_line(before, after) == (
            'Updated task 3 (v2): subject "New", status in_progress, owner none, blocked by 1.'
        )


class TestHandOver:
    def test_another_agents_task_may_be_handed_over(self) -> None:
        """Changing only the owner of a task owned by another agent is a hand-over: accepted."""
        owned = Task(id="1", subject="A", owner="w1")
        new = plan_update(board(owned), "1", {"owner": "w3"}, "w2", 1)
        assert new is not None
        assert (new.owner, new.version, new.status) == ("w3", 2, "pending")
        with pytest.raises(ToolInputError, match='task 1 is owned by "w1"'):
            plan_update(board(owned), "1", {"subject": "B"}, "w2", 1)
