"""Tool policies by mode: the built-in table, the session's enforcement, and the log's warnings."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from compaction import (
    ConfigError,
    ModePolicy,
    Session,
    TodoWriteData,
    TurnStartData,
    builtin_policies,
    read_events,
)
from compaction.tools import PolicyChecker, dump_policies
from compaction.tools.mode_policy import DEFAULT_POLICY, load_policies, policy_for
from prompts import BUILTIN_MODES, Mode, TodoPolicy, ToolPolicy, policy_table, tool_refusal

ONE = '{"todos": [{"content": "Read the code", "status": "in_progress"}]}'
TWO = json.dumps({"todos": [{"content": c, "status": "in_progress"} for c in ("a", "b")]})
REGENERATE = "regenerate it: harness modes --policies > compaction/schemas/mode_policies.json"


class TestTable:
    def test_committed_table_is_what_prompts_builds(self) -> None:
        """Compaction's built-in table is byte for byte prompts.policy_table of the built-ins."""
        text = resources.files("compaction").joinpath("schemas", "mode_policies.json")
        assert text.read_text(encoding="utf-8") == dump_policies(policy_table()), REGENERATE
        assert dict(builtin_policies()) == policy_table()

    def test_plan_forbids_todo_write_and_task_writes(self) -> None:
        """Plan refuses todo_write, task_create and task_update, each with its mode's text."""
        plan = builtin_policies()["plan"]
        assert sorted(plan.refusals) == ["task_create", "task_update", "todo_write"]
        assert plan.refusal("todo_write") == tool_refusal(BUILTIN_MODES["plan"], "todo_write")
        assert plan.refusal("task_list") is None
        for name in ("agent", "parallel", "team"):
            assert builtin_policies()[name].refusals == {}
        assert builtin_policies()["parallel"].allow_parallel_in_progress

    def test_user_mode_policies_rendered(self, tmp_path: Path) -> None:
        """A user mode's forbidden tools get the tool refusal; its todo rule is kept."""
        review = Mode(
            name="review",
            title="Review",
            tools=ToolPolicy(forbidden=("write_file",)),
            todo=TodoPolicy(allow_parallel_in_progress=True),
        )
        policy = policy_table({"review": review})["review"]
        assert list(policy.refusals) == ["write_file"]
        assert policy.refusals["write_file"].startswith("write_file: refused, nothing was run.")
        assert policy.allow_parallel_in_progress

    def test_unknown_or_missing_mode_is_permissive(self) -> None:
        """A mode the table lacks, or no mode at all, gets the default policy."""
        assert policy_for(builtin_policies(), "review") is DEFAULT_POLICY
        assert policy_for(builtin_policies(), None) is DEFAULT_POLICY

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("{", "not valid JSON"),
            ("[]", "expected an object of mode name -> policy"),
            ('{"plan": {"refusals": 3}}', "plan"),
        ],
    )
    def test_bad_table_text(self, text: str, message: str) -> None:
        """A policy table that cannot be read is a ConfigError naming its source."""
        with pytest.raises(ConfigError, match=message):
            load_policies(text, source="t.json")


class TestSessionEnforces:
    def test_plan_turn_refuses_todo_write(self, log_path: Path) -> None:
        """Session.todo_write in a Plan turn returns Plan's refusal and appends nothing."""
        with Session(log_path) as session:
            session.start_turn("Plan it", mode="plan")
            before = log_path.read_bytes()
            result = session.todo_write(ONE)
            assert result.is_error
            assert result.content == builtin_policies()["plan"].refusals["todo_write"]
            assert log_path.read_bytes() == before
            assert session.mode == "plan"

    def test_turn_started_by_another_writer_counts(self, log_path: Path) -> None:
        """A Plan turn another process recorded is seen before the call runs."""
        with Session(log_path) as session, Session(log_path) as other:
            session.start_turn("Do it", mode="agent")
            other.start_turn("Plan it first", mode="plan")
            assert session.todo_write(ONE).is_error

    def test_parallel_rule_follows_the_turn(self, log_path: Path) -> None:
        """allow_parallel_in_progress follows the turn's mode unless given."""
        with Session(log_path) as session:
            session.start_turn("one at a time", mode="agent")
            assert session.todo_write(TWO).is_error
            assert not session.todo_write(TWO, allow_parallel_in_progress=True).is_error
            session.start_turn("fan out", mode="parallel")
            assert not session.todo_write(TWO).is_error
            assert session.todo_write(TWO, allow_parallel_in_progress=False).is_error

    def test_explicit_mode_overrides_the_turn(self, log_path: Path) -> None:
        """A host that tracks the mode itself passes mode=; the turn's is not used then."""
        with Session(log_path) as session:
            session.start_turn("go", mode="agent")
            assert session.todo_write(ONE, mode="plan").is_error
            assert not session.todo_write(ONE).is_error

    def test_given_table_replaces_the_default(self, log_path: Path) -> None:
        """With a table that does not forbid it, even a mode named plan allows todo_write."""
        with Session(log_path, policies={"plan": ModePolicy()}) as session:
            session.start_turn("plan", mode="plan")
            assert not session.todo_write(ONE).is_error


class TestChecker:
    def test_warns_about_forbidden_tool_events(self, log_path: Path) -> None:
        """Recorded tool events inside a turn that forbids them are reported, others are not."""
        with Session(log_path) as session:
            session.append_many(
                [
                    TurnStartData(mode="plan"),
                    TodoWriteData(todos=()),
                    TurnStartData(mode="agent"),
                    TodoWriteData(todos=()),
                ]
            )
        checker = PolicyChecker()
        warnings = [w for e in read_events(log_path) if (w := checker.feed(e)) is not None]
        assert [str(w) for w in warnings] == [
            "seq 2: todo/write in a plan turn (turn/start at seq 1), whose mode forbids todo_write"
        ]
