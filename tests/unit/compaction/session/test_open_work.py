"""Open work at turn end: `Session.end_turn()` records and returns the unfinished items."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import run_cli
from loop_sessions import say, todos

from compaction import OpenWork, Session, TurnEnded, dump_event, parse_event


def last_turn_end(session: Session) -> TurnEnded:
    """Return the latest turn/end event of the log."""
    ends = [e for e in session.events() if isinstance(e, TurnEnded)]
    assert ends
    return ends[-1]


class TestEndTurn:
    def test_unfinished_todos_and_tasks_are_recorded_and_returned(self, log_path: Path) -> None:
        """Counts per status and the unfinished task ids, in the event and the return value."""
        with Session(log_path) as session:
            session.start_turn("Do three things")
            session.todo_write(
                todos(("A", "completed"), ("B", "in_progress"), ("C", "pending"), ("D", "pending"))
            )
            for subject in ("Lexer", "Parser", "Docs", "Old"):
                session.task_create({"subject": subject})
            session.task_update({"id": "1", "status": "completed"})
            session.task_update({"id": "2", "status": "in_progress"})
            session.task_update({"id": "4", "status": "deleted"})
            session.add_message(say("Stopping here."))
            left = session.end_turn()
            event = last_turn_end(session)
        assert left == OpenWork(
            todos_pending=2,
            todos_in_progress=1,
            tasks_pending=1,
            tasks_in_progress=1,
            task_ids=("2", "3"),
        )
        assert left.total == 5
        assert event.data.open == left

    def test_several_pending_tasks_are_each_counted_and_named(self, log_path: Path) -> None:
        """Four pending tasks (one finished among them), two pending items: every one counted."""
        with Session(log_path) as session:
            session.start_turn("Do many things")
            session.todo_write(todos(("A", "pending"), ("B", "completed"), ("C", "pending")))
            for subject in ("Lexer", "Parser", "Docs", "Tests", "Bench"):
                session.task_create({"subject": subject})
            session.task_update({"id": "3", "status": "completed"})
            left = session.end_turn()
            event = last_turn_end(session)
        assert left == OpenWork(todos_pending=2, tasks_pending=4, task_ids=("1", "2", "4", "5"))
        assert left.total == 6
        assert event.data.open == left

    def test_a_turn_with_nothing_open_records_no_open_field(self, log_path: Path) -> None:
        """Nothing open: the turn/end line is the one old logs hold."""
        with Session(log_path) as session:
            session.start_turn("Do it")
            session.todo_write(todos(("A", "completed")))
            left = session.end_turn()
            event = last_turn_end(session)
        assert left.total == 0
        assert dump_event(event) == json.dumps(
            {"v": 1, "seq": event.seq, "type": "turn/end", "data": {}}, separators=(",", ":")
        )

    def test_the_reason_is_recorded(self, log_path: Path) -> None:
        """`end_turn(reason=...)` keeps the host's reason beside the open work."""
        with Session(log_path) as session:
            session.start_turn("Do it")
            session.end_turn("max_turns")
            assert last_turn_end(session).data.reason == "max_turns"

    def test_an_old_turn_end_line_still_parses(self) -> None:
        """`open` is optional: a turn/end written before it is valid."""
        line = '{"v":1,"seq":3,"type":"turn/end","data":{"reason":"done"}}'
        event = parse_event(line)
        assert isinstance(event, TurnEnded)
        assert event.data.open is None
        assert dump_event(event) == line

    def test_a_host_can_continue_once_and_stop(self, log_path: Path) -> None:
        """The bounded loop a host writes: one more turn when work is open, then stop."""
        with Session(log_path) as session:
            session.start_turn("Do two things")
            session.todo_write(todos(("A", "in_progress"), ("B", "pending")))
            continued = 0
            while session.end_turn().total and continued < 1:
                continued += 1
                session.start_turn("Continue with the open items.")
                session.todo_write(todos(("A", "completed"), ("B", "in_progress")))
            ends = [e for e in session.events() if isinstance(e, TurnEnded)]
        assert continued == 1
        assert [e.data.open.todos_in_progress if e.data.open else 0 for e in ends] == [1, 1]


class TestHarnessLog:
    def test_harness_log_lists_turns_that_ended_with_open_work(self, log_path: Path) -> None:
        """Text and JSON both show each turn/end with open work, with its seq and counts."""
        with Session(log_path) as session:
            session.start_turn("First")
            session.todo_write(todos(("A", "completed")))
            session.end_turn()
            session.start_turn("Second")
            session.todo_write(todos(("A", "completed"), ("B", "pending")))
            session.task_create({"subject": "Review"})
            session.end_turn()
            seq = session.applied_seq
        text = run_cli("log", log_path)
        assert text.returncode == 0, text.stderr
        assert "turns that ended with open work: 1\n" in text.stdout
        assert (
            f"  turn/end at seq {seq}: todos 0 in progress, 1 pending; "
            "tasks 0 in progress, 1 pending (ids 1)\n" in text.stdout
        )
        summary = json.loads(run_cli("log", log_path, "--json").stdout)
        assert summary["turns_with_open_work"] == [
            {
                "seq": seq,
                "todos_pending": 1,
                "todos_in_progress": 0,
                "tasks_pending": 1,
                "tasks_in_progress": 0,
                "task_ids": ["1"],
            }
        ]
