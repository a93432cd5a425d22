"""The stale-list reminder: recorded in the log, at the end of the request, once per interval."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli
from loop_sessions import call, result, say, todos

from compaction import (
    CompactionPolicy,
    ConfigError,
    MessageAdded,
    Session,
    compact,
    remind_if_stale,
)
from compaction.compactor.reminders import REMIND_AFTER, stale_reminder
from prompts import PromptBuilder, get_mode, openai_request

LIST = todos(
    ("Fix the parser", "in_progress"), ("Write the docs", "pending"), ("Plan", "completed")
)


def working(path: Path, *, mode: str | None = None, steps: int = 0) -> Session:
    """A turn with a todo list, then `steps` assistant messages (tool loop steps)."""
    session = Session(path)
    session.start_turn("Fix the parser and write the docs", mode=mode)
    assert not session.todo_write(LIST).is_error or mode == "plan"
    work(session, steps)
    return session


def work(session: Session, steps: int) -> None:
    """Append `steps` assistant tool calls, each with its result."""
    for _ in range(steps):
        cid = f"c{session.applied_seq}"
        session.add_message(call(cid))
        session.add_message(result(cid))


def request_messages(session: Session) -> list[dict[str, object]]:
    """Return the messages of the request the model receives (agent mode)."""
    messages = openai_request(PromptBuilder(), get_mode("agent"), session)["messages"]
    assert isinstance(messages, list)
    return messages


class TestWhen:
    @pytest.mark.parametrize(
        ("after", "steps", "due"),
        [(10, 9, False), (10, 10, True), (10, 11, True), (1, 1, True), (3, 2, False)],
    )
    def test_due_exactly_after_n_assistant_messages(
        self, log_path: Path, after: int, steps: int, due: bool
    ) -> None:
        """Stale once `after` assistant messages passed since the last write, not one before."""
        with working(log_path, steps=steps) as session:
            assert (stale_reminder(session, after=after) is not None) is due

    def test_the_default_interval_is_ten(self, log_path: Path) -> None:
        """REMIND_AFTER is 10, as Claude Code's."""
        assert REMIND_AFTER == 10
        with working(log_path, steps=9) as session:
            assert stale_reminder(session) is None
            work(session, 1)
            assert stale_reminder(session) is not None

    def test_a_write_restarts_the_count(self, log_path: Path) -> None:
        """Rewriting the list makes it fresh again."""
        with working(log_path, steps=12) as session:
            session.todo_write(LIST)
            work(session, 9)
            assert stale_reminder(session) is None

    def test_at_most_once_per_interval(self, log_path: Path) -> None:
        """After a reminder, the next comes only after another full interval."""
        with working(log_path, steps=10) as session:
            assert remind_if_stale(session) is not None
            assert remind_if_stale(session) is None
            work(session, 9)
            assert remind_if_stale(session) is None
            work(session, 1)
            assert remind_if_stale(session) is not None

    def test_a_finished_list_is_never_brought_up(self, log_path: Path) -> None:
        """Only unfinished items make a reminder."""
        with Session(log_path) as session:
            session.start_turn("Do it")
            session.todo_write(todos(("A", "completed"), ("B", "completed")))
            work(session, 20)
            assert stale_reminder(session) is None

    def test_never_between_a_tool_call_and_its_result(self, log_path: Path) -> None:
        """A call waiting for its result is never followed by a user message."""
        with working(log_path, steps=12) as session:
            session.add_message(call("pending"))
            assert remind_if_stale(session) is None

    def test_never_about_todos_in_plan_mode(self, log_path: Path) -> None:
        """Plan mode forbids todo_write, so its list is not brought up there."""
        with working(log_path, steps=12) as session:
            session.start_turn("Plan the next part", mode="plan")
            work(session, 12)
            assert stale_reminder(session) is None
            assert stale_reminder(session, mode="agent") is not None

    @pytest.mark.parametrize("after", [0, -1, True, 2.5])
    def test_a_bad_interval_is_a_config_error(self, log_path: Path, after: object) -> None:
        """The interval is a positive integer."""
        with working(log_path) as session, pytest.raises(ConfigError, match="positive integer"):
            stale_reminder(session, after=after)  # type: ignore[arg-type]


class TestWhat:
    def test_the_reminder_names_in_progress_and_pending_never_completed(
        self, log_path: Path
    ) -> None:
        """The text names each unfinished item by status; completed ones are left out."""
        with working(log_path, steps=10) as session:
            event = remind_if_stale(session)
        assert isinstance(event, MessageAdded)
        text = event.data.text()
        assert 'In progress: "Fix the parser".' in text
        assert 'Pending: "Write the docs".' in text
        assert '"Plan"' not in text
        assert "last 10 messages" in text

    def test_it_is_recorded_and_ends_the_request_with_its_own_origin(self, log_path: Path) -> None:
        """The reminder is a logged user message of origin reminder, last in the request."""
        with working(log_path, steps=10) as session:
            before = request_messages(session)
            event = remind_if_stale(session)
            after = request_messages(session)
            again = Session(log_path)
            replayed = request_messages(again)
            again.close()
        assert isinstance(event, MessageAdded)
        assert event.data.origin == "reminder"
        assert event.data.role == "user"
        assert after[: len(before)] == before  # the prefix the provider cached stays
        assert after[-1] == {"role": "user", "content": event.data.text()}
        assert replayed == after  # recorded: a restarted process sends the same request

    def test_the_shared_task_list_is_brought_up_by_id(self, log_path: Path) -> None:
        """Unfinished shared tasks are named with their ids."""
        with Session(log_path) as session:
            session.start_turn("Split the work")
            session.task_create({"subject": "Write the lexer"})
            session.task_create({"subject": "Write the parser"})
            session.task_update({"id": "1", "status": "in_progress"})
            work(session, 10)
            message = stale_reminder(session)
        assert message is not None
        assert 'In progress: #1 "Write the lexer".' in message.text()
        assert 'Pending: #2 "Write the parser".' in message.text()
        assert "task_update" in message.text()

    def test_many_items_are_named_by_the_first_five(self, log_path: Path) -> None:
        """At most five items a status, then how many more."""
        with Session(log_path) as session:
            session.start_turn("Do it")
            session.todo_write(todos(*[(f"Item {i}", "pending") for i in range(8)]))
            work(session, 10)
            message = stale_reminder(session)
        assert message is not None
        assert '"Item 4" and 3 more.' in message.text()
        assert '"Item 5"' not in message.text()


class TestCli:
    def test_harness_context_remind_records_and_shows_it(self, log_path: Path) -> None:
        """`harness context LOG --remind` records the due reminder; the request ends with it."""
        working(log_path, steps=10).close()
        run = run_cli("context", log_path, "--format", "text", "--remind")
        assert run.returncode == 0, run.stderr
        assert "--- user (reminder) ---\n<reminder>" in run.stdout
        assert run.stdout.rstrip().endswith("</reminder>")
        shown = run_cli("context", log_path, "--format", "text")  # recorded: shown again
        assert "--- user (reminder) ---" in shown.stdout
        twice = run_cli("context", log_path, "--format", "text", "--remind")
        assert twice.stdout.count("(reminder)") == 1  # once per interval

    def test_harness_context_without_remind_appends_nothing(self, log_path: Path) -> None:
        """Without the flag the command only reads."""
        working(log_path, steps=10).close()
        size = log_path.stat().st_size
        run_cli("context", log_path, "--format", "text")
        assert log_path.stat().st_size == size

    def test_a_final_answer_then_a_reminder_still_waits_for_the_user(self, log_path: Path) -> None:
        """A reminder is not a person's turn: compaction awaits the user, never quotes it."""
        with working(log_path, steps=10) as session:
            session.add_message(say("Parser fixed."))
            assert remind_if_stale(session) is not None
            r = compact(session, CompactionPolicy(window_tokens=8_000), force=True)
        assert r.data.resume == "await_user"
        assert "reminder" not in r.checkpoint.primary_request
