"""The session's jobs that `scripts/mutate --group session` showed untested (issue 25, part B).

Each mutant of `compaction/session/tool_runs.py` or `live_views.py` changed which agent a task
write names, what an agent counts as seen, which task is stored, what the model reads back, or
what a view holds:

- `task_list` records what the *calling* agent was shown, so its next update is not stale;
- `task_update(agent=...)` names and owns the task as that agent; an update changing nothing
  appends nothing and says so; a task keeps the description it was created with;
- `todo_write` beside another `todo_write` in one response is refused, alone it is accepted;
- the todo panel, the progress counts and the token scale follow every event, not only some.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from compaction import (
    ConfigError,
    Message,
    Session,
    TaskCreated,
    TaskUpdated,
    TodoItem,
    read_events,
)
from compaction.events import FunctionCall, ToolCall, UsageReportData
from compaction.session import live_views
from compaction.stores import open_store
from compaction.tokens import get_tokenizer
from compaction.views import TodoPanel, usage_view
from compaction.views.token_scale import MIN_PAIRS

LIST = {"todos": [{"content": "Parse", "status": "in_progress"}]}


def todo_call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name="todo_write", arguments="{}"))


class TestListShown:
    """`task_list` records what the calling agent was shown: its next update is not stale."""

    def test_an_update_after_a_list_is_accepted(self, log_path: Path) -> None:
        with Session(log_path, agent="a") as a, Session(log_path, agent="b") as b:
            assert not a.task_create({"subject": "A"}).is_error
            assert not b.task_update({"id": "1", "subject": "A2"}).is_error
            assert '#1 pending "A2"' in a.task_list().content
            done = a.task_update({"id": "1", "status": "completed"})
            assert not done.is_error, done.content
            task = a.tasks.get("1")
        assert task is not None
        assert (task.status, task.version) == ("completed", 3)

    def test_the_list_counts_for_the_agent_that_called_it(self, log_path: Path) -> None:
        """One session serving two agents: a list by `w-1` is not a list by the session's."""
        with Session(log_path, agent="lead") as session, Session(log_path, agent="b") as b:
            assert not session.task_create({"subject": "A"}, agent="w-1").is_error
            assert not b.task_update({"id": "1", "subject": "A2"}).is_error
            assert not session.task_list(agent="w-1").is_error
            done = session.task_update({"id": "1", "status": "in_progress"}, agent="w-1")
            assert not done.is_error, done.content

    def test_a_list_by_another_agent_does_not_refresh_this_one(self, log_path: Path) -> None:
        with Session(log_path, agent="lead") as session, Session(log_path, agent="b") as b:
            assert not session.task_create({"subject": "A"}, agent="w-1").is_error
            assert not b.task_update({"id": "1", "subject": "A2"}).is_error
            assert not session.task_list(agent="w-2").is_error
            stale = session.task_update({"id": "1", "status": "in_progress"}, agent="w-1")
        assert stale.is_error
        assert "task 1 changed since you last listed it" in stale.content


class TestTaskWrites:
    def test_an_update_names_and_owns_the_calling_agent(self, log_path: Path) -> None:
        """Starting a task as `w-1` through a session of `lead`: the event and owner are w-1's."""
        with Session(log_path, agent="lead") as session:
            session.task_create({"subject": "A"}, agent="w-1")
            result = session.task_update({"id": "1", "status": "in_progress"}, agent="w-1")
        assert result.content == 'Updated task 1 (v2): status in_progress, owner "w-1".'
        update = list(read_events(log_path))[-1]
        assert isinstance(update, TaskUpdated)
        assert (update.data.agent, update.data.task.owner) == ("w-1", "w-1")

    def test_an_update_that_changes_nothing_appends_nothing(self, log_path: Path) -> None:
        with Session(log_path) as session:
            session.task_create({"subject": "A"})
            before = log_path.read_bytes()
            result = session.task_update({"id": "1", "status": "pending"})
        assert result.content == "Task 1 unchanged (v1): it already has those values."
        assert not result.is_error
        assert log_path.read_bytes() == before

    def test_a_task_keeps_its_description(self, log_path: Path) -> None:
        with Session(log_path) as session:
            made = session.task_create({"subject": "A", "description": "the parser's tests"})
        assert made.content == 'Created task 1: "A" (pending, no owner).'
        (event,) = list(read_events(log_path))
        assert isinstance(event, TaskCreated)
        assert event.data.task.description == "the parser's tests"

    @pytest.mark.parametrize(
        ("tool", "arguments", "problem"),
        [
            ("task_create", {"subject": ""}, "subject"),
            ("task_list", {"filter": "all"}, "filter"),
            ("todo_write", {"todos": "none"}, "todos"),
        ],
    )
    def test_a_bad_call_is_told_what_to_fix(
        self, log_path: Path, tool: str, arguments: object, problem: str
    ) -> None:
        with Session(log_path) as session:
            result = getattr(session, tool)(arguments)
        assert result.is_error
        assert result.content.startswith(f"{tool}: ")
        assert problem in result.content
        assert not log_path.exists() or log_path.read_bytes() == b""

    def test_a_bad_agent_name_is_named(self, log_path: Path) -> None:
        with Session(log_path) as session, pytest.raises(ConfigError, match=r"agent 'w 1' must"):
            session.task_list(agent="w 1")


class TestOneListPerResponse:
    def test_a_lone_call_is_accepted(self, log_path: Path) -> None:
        with Session(log_path) as session:
            session.append(Message(role="assistant", tool_calls=(todo_call("c1"),)))
            result = session.todo_write(LIST)
        assert not result.is_error
        assert session.latest_todos == (TodoItem(content="Parse", status="in_progress"),)

    def test_two_calls_in_one_response_are_refused(self, log_path: Path) -> None:
        with Session(log_path) as session:
            session.append(Message(role="assistant", tool_calls=(todo_call("c1"), todo_call("c2"))))
            result = session.todo_write(LIST)
        assert result.is_error
        assert "this response makes 2 todo_write calls" in result.content
        assert session.latest_todos == ()


class TestViewsFollowEveryEvent:
    def test_the_panel_outlives_later_messages(self, log_path: Path) -> None:
        with Session(log_path) as session:
            session.start_turn("go")
            session.todo_write(LIST)
            session.append(Message(role="assistant", content="working"))
            assert session.todos.todos == (TodoItem(content="Parse", status="in_progress"),)

    def test_progress_counts_assistant_messages(self, log_path: Path) -> None:
        with Session(log_path) as session:
            session.todo_write(LIST)
            for _ in range(3):
                session.append(Message(role="assistant", content="working"))
            assert session.progress.assistant_messages == 3
            assert session.progress.since_todo_write() == 3

    def test_the_token_scale_is_learned_from_usage_reports(self, log_path: Path) -> None:
        """Each call's provider prompt grows 1.25 times the counted context: the scale is 1.25."""
        with Session(log_path) as session:
            session.start_turn("read every file")
            assert session.token_scale is None
            for i in range(MIN_PAIRS + 2):
                prompt = 900 + round(1.25 * session.context_tokens)
                session.append(
                    UsageReportData(
                        purpose="turn", model="m1", prompt_tokens=prompt, completion_tokens=5
                    )
                )
                function = {"name": "read", "arguments": "{}"}
                call = {"id": f"c{i}", "type": "function", "function": function}
                session.add_message(
                    {"role": "assistant", "content": f"step {i} " * 20, "tool_calls": [call]}
                )
                session.add_message(
                    {"role": "tool", "tool_call_id": f"c{i}", "content": "x\n" * 40}
                )
            assert session.token_scale == pytest.approx(1.25, abs=0.02)


class TestFacade:
    def test_open_picks_the_named_session_of_a_store(self, tmp_path: Path) -> None:
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
        with Session.open(url, session="a") as a:
            a.start_turn("for a")
        with Session.open(url, session="b") as b:
            assert b.where.endswith("#b")
            assert b.applied_seq == 0
        with Session.open(url, session="a") as again:
            assert again.applied_seq == 2

    def test_report_usage_records_when_and_against_which_seq(self, log_path: Path) -> None:
        usage = UsageReportData(purpose="turn", model="m", prompt_tokens=9, completion_tokens=1)
        with Session(log_path) as session:
            session.start_turn("go")
            first = session.report_usage(usage, at=12.5, context_seq=1)
            second = session.report_usage(first.data, at=20.0)  # type: ignore[arg-type]
            third = session.report_usage(usage)
        assert isinstance(first.data, UsageReportData)
        assert (first.data.at, first.data.context_seq, first.data.prompt_tokens) == (12.5, 1, 9)
        assert isinstance(second.data, UsageReportData)
        assert (second.data.at, second.data.context_seq) == (20.0, 1)
        assert third.data == usage
        assert [e.seq for e in (first, second, third)] == [3, 4, 5]

    def test_todo_write_allows_parallel_work_when_asked(self, log_path: Path) -> None:
        two = {
            "todos": [
                {"content": "Parse", "status": "in_progress"},
                {"content": "Test", "status": "in_progress"},
            ]
        }
        with Session(log_path) as session:
            assert session.todo_write(two).is_error
            assert not session.todo_write(two, allow_parallel_in_progress=True).is_error
            assert [t.status for t in session.latest_todos] == ["in_progress", "in_progress"]


class TestConstructor:
    def test_the_default_agent_is_main(self, log_path: Path) -> None:
        with Session(log_path) as session:
            assert session.agent == "main"
            session.task_create({"subject": "A"})
        (event,) = list(read_events(log_path))
        assert isinstance(event, TaskCreated)
        assert event.data.agent == "main"

    def test_a_cap_of_one_token_is_allowed_zero_is_not(self, log_path: Path) -> None:
        with Session(log_path, tool_output_cap=1) as session:
            assert session.tool_output_cap == 1
        with pytest.raises(ConfigError, match="tool_output_cap must be a positive integer"):
            Session(log_path, tool_output_cap=0)

    def test_a_bad_agent_is_named(self, log_path: Path) -> None:
        with pytest.raises(ConfigError, match=r"agent 'w 1' must match"):
            Session(log_path, agent="w 1")

    def test_a_store_and_its_session_reach_the_source(self, tmp_path: Path) -> None:
        with closing(open_store(f"sqlite:///{tmp_path / 's.db'}")) as store:
            with Session(store=store, session="a") as a:
                a.start_turn("for a")
            with Session(store=store, session="b") as b:
                assert (b.in_store, b.applied_seq) == (True, 0)
            with Session(store=store, session="a") as again:
                assert again.applied_seq == 2
                assert again.where.endswith("#a")

    def test_a_fresh_session_has_no_mode_and_an_empty_panel(self, log_path: Path) -> None:
        with Session(log_path) as session:
            assert session.mode is None
            assert session.todos == TodoPanel()
            assert session.policy() == session.policy(None)

    def test_no_tokenizer_is_loaded_until_a_count_is_asked_for(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A session that only writes todos never loads a tokenizer (the default is lazy)."""
        loads: list[str] = []

        def load(name: str = "o200k_base") -> object:
            loads.append(name)
            return get_tokenizer(name)

        monkeypatch.setattr(usage_view, "get_tokenizer", load)
        monkeypatch.setattr(live_views, "get_tokenizer", load)
        with Session(log_path, tool_output_cap=None) as session:
            session.start_turn("go")
            session.todo_write(LIST)
            assert loads == []
            assert session.context_tokens > 0
        assert loads == ["o200k_base"]
