"""A live Session: replay on open, torn tails, other writers, bad lines."""

from __future__ import annotations

import contextlib
import json
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from compaction import (
    ConfigError,
    LogError,
    LogFormatError,
    LogIntegrityError,
    Message,
    ModePolicy,
    Session,
    SessionLog,
    TaskCreated,
    TaskUpdated,
    TodoItem,
    ToolResult,
    read_events,
)
from compaction.errors import SeqConflictError
from compaction.events import FunctionCall, ToolCall, UsageReportData
from compaction.session import live_views
from compaction.stores import open_store
from compaction.tokens import get_tokenizer
from compaction.views import TodoPanel
from compaction.views import _usage_view as usage_view
from compaction.views.token_scale import MIN_PAIRS

WRITE = '{"todos": [{"content": "Run tests", "status": "in_progress"}]}'


def line(seq: int, type_: str = "turn/start") -> bytes:
    """Return one valid log line."""
    return json.dumps({"v": 1, "seq": seq, "type": type_, "data": {}}).encode() + b"\n"


class TestSession:
    def test_replays_existing_log(self, log_path: Path) -> None:
        """Opening a session on a log rebuilds its views."""
        with Session(log_path) as s:
            s.start_turn("go")
            s.todo_write(WRITE)
        with Session(log_path) as s:
            assert s.applied_seq == 3
            assert s.todos.todos == (TodoItem(content="Run tests", status="in_progress"),)
            assert s.report.by_type == {"turn/start": 1, "message": 1, "todo/write": 1}

    def test_torn_tail_reported_then_cut_by_append(self, log_path: Path) -> None:
        """A torn tail shows in the report; the next append cuts it and the views follow."""
        log_path.write_bytes(line(1) + b'{"v":1,"seq":2,"type":"todo/wri')
        with Session(log_path) as s:
            assert (s.applied_seq, s.report.torn_line) == (1, 2)
            assert s.todo_write(WRITE).content.startswith("Todo list updated")
            assert s.applied_seq == 2
            assert s.report.torn_line is None
            assert s.todos.seq == 2
        assert log_path.read_bytes().count(b"\n") == 2
        with Session(log_path) as s:
            assert s.todos.seq == 2

    def test_sees_another_writer_on_next_append(self, log_path: Path) -> None:
        """Events another handle appended are applied before the session's own."""
        with Session(log_path) as s:
            s.start_turn("go")
            with SessionLog(log_path) as other:
                other.append(Message(role="assistant", content="from elsewhere"))
            event = s.add_message({"role": "user", "content": "mine"})
            assert event.seq == 4
            assert [m.text() for m in s.context.messages] == ["go", "from elsewhere", "mine"]

    def test_refresh_returns_new_events(self, log_path: Path) -> None:
        """refresh() applies and returns what other writers appended, once."""
        with Session(log_path) as s:
            assert s.refresh() == []
            with SessionLog(log_path) as other:
                other.append(Message(role="user", content="hi"))
            assert [e.seq for e in s.refresh()] == [1]
            assert s.refresh() == []

    def test_bad_line_raises_unless_skipped(self, log_path: Path) -> None:
        """A malformed line stops the session with path:line, or is counted when skipping."""
        log_path.write_bytes(line(1) + b"oops\n" + line(3))
        with pytest.raises(LogFormatError, match=r"session\.jsonl:2: not JSON"):
            Session(log_path)
        with Session(log_path, skip_bad_lines=True) as s:
            assert s.applied_seq == 3
            assert [b.line for b in s.report.bad_lines] == [2]

    def test_seq_gap_raises(self, log_path: Path) -> None:
        """A log whose seqs skip a number is an integrity error, not silently accepted."""
        log_path.write_bytes(line(1) + line(3))
        with pytest.raises(LogIntegrityError, match="line 2 has seq 3, expected 2"):
            Session(log_path)

    def test_rejected_call_touches_nothing(self, log_path: Path) -> None:
        """A rejected todo_write leaves views, seq and file as they were."""
        with Session(log_path) as s:
            s.todo_write(WRITE)
            before = (log_path.read_bytes(), s.applied_seq, s.todos, s.usage)
            assert s.todo_write('{"todos": [{"content": " "}]}').is_error
            assert (log_path.read_bytes(), s.applied_seq, s.todos, s.usage) == before


# Pinned by mutation testing (folded in from tests/unit/compaction/session/test_session.py):
# The session's jobs that `scripts/mutate --group session` showed untested (issue 25, part B).
#
# Each mutant of `compaction/session/_tool_runs.py` or `live_views.py` changed which agent a task
# write names, what an agent counts as seen, which task is stored, what the model reads back, or
# what a view holds:
#
# - `task_list` records what the *calling* agent was shown, so its next update is not stale;
# - `task_update(agent=...)` names and owns the task as that agent; an update changing nothing
#   appends nothing and says so; a task keeps the description it was created with;
# - `todo_write` beside another `todo_write` in one response is refused, alone it is accepted;
# - the todo panel, the progress counts and the token scale follow every event, not only some.


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


# Pinned by mutation testing (folded in from tests/unit/compaction/session/test_session.py):
# Session rules that `scripts/mutate` showed untested (issue 25).
#
# Each mutant changed which session a URL opens, which tool policy a task call runs under, what
# the model reads when the shared list keeps changing, or which event a seq names:
#
# - `Session.open` hands every argument on (tokenizer, sync, bad lines, agent, policies);
# - `task_update` and `task_list` run under the `mode` given, and a refusal is an error result;
# - a task write that loses every race says so and appends nothing;
# - `Session.event` reads seqs 1..`applied_seq` and names the range otherwise.


REVIEW = {
    "review": ModePolicy(
        refusals={
            "task_create": "task_create: refused in review",
            "task_list": "task_list: refused in review",
            "task_update": "task_update: refused in review",
            "todo_write": "todo_write: refused in review",
        }
    ),
    "parallel": ModePolicy(allow_parallel_in_progress=True),
}
TWO_STARTED = {
    "todos": [
        {"content": "Parse", "status": "in_progress"},
        {"content": "Test", "status": "in_progress"},
    ]
}


class TestOpen:
    def test_every_argument_reaches_the_session(self, log_path: Path) -> None:
        """Session.open passes its tokenizer, sync, bad-line rule, agent and policies on."""
        tokenizer = get_tokenizer("cl100k_base")
        with Session.open(
            str(log_path),
            tokenizer=tokenizer,
            sync="batch",
            skip_bad_lines=True,
            agent="w-1",
            policies=REVIEW,
        ) as session:
            assert session.tokenizer is tokenizer
            assert session.log.sync == "batch"
            assert session.skip_bad_lines is True
            assert session.agent == "w-1"
            assert session.policies is REVIEW

    def test_defaults_are_the_constructors(self, log_path: Path) -> None:
        """By default: agent main, fsync always, built-in policies, bad lines refused."""
        with Session.open(str(log_path)) as session:
            assert (session.agent, session.log.sync) == ("main", "always")
            assert session.policies == Session(log_path).policies
            assert session.policy("plan").forbids("task_create")
            session.start_turn("go")
        with log_path.open("a", encoding="utf-8") as f:
            f.write("not an event\n")
        with pytest.raises(LogFormatError):
            Session.open(str(log_path))

    def test_the_usage_view_counts_with_the_tokenizer_given(self, log_path: Path) -> None:
        """The first count of the waiting events uses the session's tokenizer, not a default."""
        text = "Grüße, 東京; naïve façade — ünïcödé " * 20
        counts = []
        for name in ("cl100k_base", "o200k_base"):
            tokenizer = get_tokenizer(name)
            with Session(log_path.with_name(f"{name}.jsonl"), tokenizer=tokenizer) as session:
                session.start_turn(text)
                counts.append(session.event_tokens(2))
                assert counts[-1] > len(tokenizer.encode(text)) // 2
        assert counts[0] != counts[1]


class TestModes:
    def test_task_list_refused_under_the_mode_given(self, log_path: Path) -> None:
        """task_list(mode=...) checks that mode's policy, and a refusal is an error result."""
        with Session(log_path, policies=REVIEW) as session:
            session.start_turn("look", mode="agent")
            assert not session.task_list().is_error
            assert session.task_list(mode="review") == ToolResult(
                "task_list: refused in review", is_error=True
            )
            session.start_turn("review it", mode="review")
            assert session.task_list() == ToolResult("task_list: refused in review", is_error=True)

    def test_task_update_refused_under_the_mode_given(self, log_path: Path) -> None:
        """task_update(mode=...) checks that mode's policy; nothing is appended."""
        with Session(log_path, policies=REVIEW) as session:
            session.start_turn("look", mode="agent")
            assert not session.task_create({"subject": "A"}).is_error
            before = log_path.read_bytes()
            refused = session.task_update({"id": "1", "status": "completed"}, mode="review")
            assert refused == ToolResult("task_update: refused in review", is_error=True)
            assert log_path.read_bytes() == before

    @pytest.mark.parametrize(
        ("tool", "arguments"), [("task_create", {"subject": "B"}), ("todo_write", TWO_STARTED)]
    )
    def test_writes_refused_under_the_mode_given(
        self, log_path: Path, tool: str, arguments: Any
    ) -> None:
        """task_create(mode=...) and todo_write(mode=...) check that mode's policy."""
        with Session(log_path, policies=REVIEW) as session:
            session.start_turn("look", mode="agent")
            before = log_path.read_bytes()
            refused = getattr(session, tool)(arguments, mode="review")
            assert refused == ToolResult(f"{tool}: refused in review", is_error=True)
            assert log_path.read_bytes() == before

    def test_parallel_in_progress_follows_the_mode_given(self, log_path: Path) -> None:
        """Two in-progress todos pass only under a mode that allows them."""
        with Session(log_path, policies=REVIEW) as session:
            session.start_turn("look", mode="agent")
            assert session.todo_write(TWO_STARTED).is_error
            assert not session.todo_write(TWO_STARTED, mode="parallel").is_error
            assert [t.status for t in session.latest_todos] == ["in_progress", "in_progress"]


class TestAgents:
    def test_task_create_records_the_calling_agent(self, log_path: Path) -> None:
        """task_create(agent=...) records that agent, not the session's."""
        with Session(log_path, agent="lead") as session:
            session.task_create({"subject": "A"}, agent="w-2")
        (event,) = read_events(log_path)
        assert isinstance(event, TaskCreated)
        assert event.data.agent == "w-2"

    def test_stale_after_an_accepted_update(self, log_path: Path) -> None:
        """After its own update an agent has seen that version: a later change makes it stale."""
        with Session(log_path, agent="a") as a, Session(log_path, agent="b") as b:
            assert not a.task_create({"subject": "A"}).is_error
            assert not a.task_update({"id": "1", "subject": "A2"}).is_error
            assert not b.task_update({"id": "1", "subject": "A3"}).is_error
            stale = a.task_update({"id": "1", "status": "completed"})
            assert stale.is_error
            assert "task 1 changed since you last listed it" in stale.content

    def test_stale_again_after_a_rejection(self, log_path: Path) -> None:
        """A rejection shows the current state; a change after it makes the retry stale too."""
        with Session(log_path, agent="a") as a, Session(log_path, agent="b") as b:
            assert not a.task_create({"subject": "A"}).is_error
            assert not b.task_update({"id": "1", "subject": "A2"}).is_error
            assert a.task_update({"id": "1", "status": "completed"}).is_error
            assert not b.task_update({"id": "1", "subject": "A3"}).is_error
            again = a.task_update({"id": "1", "status": "completed"})
            assert again.is_error
            assert '#1 pending "A3" (no owner, v3)' in again.content
            assert not a.task_update({"id": "1", "status": "completed"}).is_error


class TestRaces:
    def test_a_write_that_loses_once_is_planned_again(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A writer that gets in between the check and the append makes the call check again.

        The file lock would keep the other writer out; it is lifted here, as on a store whose
        transactions do not serialize writers, so only the expected seq guards the append.
        """
        with Session(log_path, agent="a") as a, Session(log_path, agent="b") as b:
            monkeypatch.setattr(a, "batch", contextlib.nullcontext)
            real_append = a.append
            calls: list[int] = []

            def racing(*args: Any, **kwargs: Any) -> Any:
                calls.append(1)
                if len(calls) == 1:
                    assert not b.task_create({"subject": "B"}).is_error
                return real_append(*args, **kwargs)

            monkeypatch.setattr(a, "append", racing)
            result = a.task_create({"subject": "A"})
        assert result.content == 'Created task 2: "A" (pending, no owner).'
        assert len(calls) == 2
        created = [e.data.task.id for e in read_events(log_path) if isinstance(e, TaskCreated)]
        assert created == ["1", "2"]


class TestBusy:
    @pytest.mark.parametrize(
        ("tool", "arguments"),
        [("task_create", {"subject": "B"}), ("task_update", {"id": "1", "status": "completed"})],
    )
    def test_a_write_that_always_loses_the_race(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, arguments: Any
    ) -> None:
        """When another writer always gets in first, the model is told to list and retry."""
        with Session(log_path) as session:
            assert not session.task_create({"subject": "A"}).is_error
            before = log_path.read_bytes()
            tries: list[int] = []

            def lose(*_: object, **__: object) -> None:
                tries.append(1)
                raise SeqConflictError(str(log_path), 1, 2)

            monkeypatch.setattr(session, "append", lose)
            result = getattr(session, tool)(arguments)
        assert result == ToolResult(
            f"{tool}: rejected, nothing was changed. The shared task list kept changing while "
            "this call was checked; call task_list, then call again.",
            is_error=True,
        )
        assert len(tries) == 50
        assert log_path.read_bytes() == before


class TestEvent:
    def test_first_last_and_out_of_range(self, log_path: Path) -> None:
        """event(seq) returns that seq's event for 1..applied_seq; others name the range."""
        with Session(log_path) as session:
            session.start_turn("one")
            session.start_turn("two")
            assert [session.event(s).seq for s in (1, 2, 4)] == [1, 2, 4]
            assert session.event(2).data.model_dump()["content"] == "one"
            for seq in (0, 5):
                with pytest.raises(LogError) as caught:
                    session.event(seq)
                assert str(caught.value) == f"no event with seq {seq} (the log holds 1..4)"
