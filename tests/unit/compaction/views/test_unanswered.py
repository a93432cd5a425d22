"""Unanswered tool calls: found, answered once at append, shown answered in an old log."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import run_cli

from compaction import Message, Session, make_event
from compaction.events import EventData, FunctionCall, ToolCall, TurnStartData, dump_event
from compaction.views import interrupted_text, unanswered_calls, with_answers
from compaction.views.unanswered import unanswered_in_log


def calls(*ids: str) -> Message:
    made = tuple(ToolCall(id=i, function=FunctionCall(name="read", arguments="{}")) for i in ids)
    return Message(role="assistant", tool_calls=made)


def result(call_id: str) -> Message:
    return Message(role="tool", tool_call_id=call_id, content="ok")


USER = Message(role="user", content="go on")


class TestFinding:
    def test_only_the_newest_assistant_message_is_read(self) -> None:
        """Its calls minus those answered after it; an earlier message is never reached."""
        newest_first = [result("b"), calls("a", "b", "c"), USER, calls("x")]
        assert [c.id for c in unanswered_calls(newest_first)] == ["a", "c"]
        assert unanswered_calls([USER, calls("x")]) == ()

    def test_every_call_left_in_a_log_is_listed_with_its_seq(self) -> None:
        """A call a later message left open, and one open at the end."""
        events = [
            make_event(i, m)
            for i, m in enumerate([USER, calls("a", "b"), result("a"), USER, calls("z")], 1)
        ]
        assert [(s, c.id) for s, c in unanswered_in_log(events)] == [(2, "b"), (5, "z")]


class TestAnsweringAtAppend:
    def test_the_answer_goes_before_the_first_message_that_closes_the_calls(self) -> None:
        """Results the host brings first count; the rest get the placeholder, then the turn."""
        out = with_answers([c for c in calls("a", "b").tool_calls or ()], [result("a"), USER])
        assert [(m.role, m.tool_call_id) for m in out if isinstance(m, Message)] == [
            ("tool", "a"),
            ("tool", "b"),
            ("user", None),
        ]
        assert isinstance(out[1], Message)
        assert out[1].text() == interrupted_text()

    def test_a_new_turn_answers_the_calls_once(self, tmp_path: Path) -> None:
        """A turn after a crash: one placeholder per open call; a second turn adds none."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("read")
            session.add_message(calls("a", "b"))
            session.add_message(result("a"))
        for turn in ("again", "and again"):
            with Session(tmp_path / "s.jsonl") as session:
                session.start_turn(turn)
                assert session.answer_open_calls() == []
        with Session(tmp_path / "s.jsonl") as session:
            texts = [m.text() for m in session.context.messages]
            assert texts.count(interrupted_text()) == 1
            assert unanswered_in_log(session.events()) == []

    def test_calls_whose_results_the_host_holds_are_left_open(self, tmp_path: Path) -> None:
        """`held`: results not appended yet (the Agents SDK's) are not answered for it."""
        with Session(tmp_path / "s.jsonl") as session:
            session.add_message(calls("a", "b"))
            made = session.answer_open_calls(held=["a"])
            assert [e.data.tool_call_id for e in made] == ["b"]  # type: ignore[union-attr]
            assert [c.id for c in session.open_calls] == ["a"]


class TestOldLogs:
    def test_harness_log_names_a_call_an_old_log_left_open(self, tmp_path: Path) -> None:
        """A log written before the answers (a later turn after the call): warned about."""
        lines: list[EventData] = [TurnStartData(), USER, calls("a"), TurnStartData(), USER]
        log = tmp_path / "old.jsonl"
        log.write_text("".join(dump_event(make_event(i, d)) + "\n" for i, d in enumerate(lines, 1)))
        done = run_cli("log", log)
        assert done.returncode == 0
        assert "warning: tool call a (read) at seq 3 has no result" in done.stdout
        data = json.loads(run_cli("log", log, "--json").stdout)
        assert data["unanswered_calls"] == [{"seq": 3, "id": "a", "name": "read"}]
