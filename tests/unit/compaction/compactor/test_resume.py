"""The resume decision: continue the tool loop, or wait for the user; Next Step agrees."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_sessions import call, reads, result, say, todos

from compaction import CompactionPolicy, Message, Session, compact
from compaction.compactor._resume import resume_decision
from compaction.events import Resume
from prompts import PromptBuilder, get_mode, openai_request

POLICY = CompactionPolicy(window_tokens=6_000)
REMINDER = Message(role="user", content="<reminder>...</reminder>", origin="reminder")
SYSTEM = Message(role="system", content="You are an agent.")
INTERRUPTED = Message(
    role="user", content="[Request interrupted by user for tool use]", origin="interruption"
)
EXIT = Message(role="user", content="<command-name>/exit</command-name>", origin="command")
COPY_OUTPUT = Message(
    role="user", content="<local-command-stdout>Copied</local-command-stdout>", origin="command"
)


@pytest.mark.parametrize(
    ("ending", "expected"),
    [
        ([say("Here is the fix.")], "await_user"),
        ([call("c1")], "continue"),
        ([call("c1"), result("c1")], "continue"),
        ([say("Done."), Message(role="user", content="Now the docs")], "continue"),
        ([say("Done."), REMINDER], "await_user"),
        ([call("c1"), result("c1"), REMINDER], "continue"),
        ([say("Done."), SYSTEM], "await_user"),
        ([], "continue"),
        ([call("c1"), result("c1"), INTERRUPTED], "await_user"),
        ([call("c1"), result("c1"), EXIT], "await_user"),
        ([say("Done."), COPY_OUTPUT], "await_user"),
        ([INTERRUPTED, Message(role="user", content="go on")], "continue"),
    ],
    ids=[
        "answer",
        "call",
        "result",
        "new-request",
        "answer+reminder",
        "result+reminder",
        "answer+system",
        "request-only",
        "interrupted",
        "exit-command",
        "copy-output",
        "typed-after-interruption",
    ],
)
def test_the_decision_follows_the_last_turn(ending: list[Message], expected: Resume) -> None:
    """A tool loop (or an unanswered request) continues; a final answer waits for the user."""
    assert resume_decision([Message(role="user", content="Fix it"), *ending]) == expected


def test_no_message_at_all_waits_for_the_user() -> None:
    """With nothing to go on there is no loop to continue."""
    assert resume_decision([]) == "await_user"


def working_session(path: Path) -> Session:
    """A turn with a todo list and many reads (enough to compact), not yet ended."""
    session = Session(path)
    session.start_turn("Fix the parser in src/parse.py and write the docs")
    session.todo_write(todos(("Fix the parser", "in_progress"), ("Write the docs", "pending")))
    reads(session, [f"src/m{i}.py" for i in range(6)])
    return session


def request_text(session: Session) -> str:
    """Return the text of every message of the request the model receives."""
    request = openai_request(PromptBuilder(), get_mode("agent"), session)
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


class TestRecorded:
    def test_a_final_answer_makes_the_checkpoint_wait_for_the_user(self, log_path: Path) -> None:
        """await_user: recorded; Next Step and the preamble say to wait; no pending item starts."""
        with working_session(log_path) as session:
            session.add_message(say("I fixed the parser. Shall I write the docs now?"))
            session.end_turn()
            r = compact(session, POLICY, force=True)
            sent = request_text(session)
        assert r.data.resume == "await_user"
        assert r.event is not None
        assert r.event.data.resume == "await_user"
        assert r.checkpoint.next_step.startswith("- Wait for the user's next request")
        assert "Write the docs" not in r.checkpoint.next_step  # never starts a pending item
        assert r.checkpoint.next_step.endswith(
            "When the user asks you to go on, continue the task in progress: Fix the parser"
        )
        assert r.checkpoint.pending_jobs == ("Write the docs",)  # still carried, by code
        assert "wait for the user's next request, and do not start a pending item" in sent

    def test_inside_a_tool_loop_the_checkpoint_continues_current_work(self, log_path: Path) -> None:
        """continue: recorded; Next Step continues the task in progress; the preamble carries on."""
        with working_session(log_path) as session:
            session.add_message(call("c9", "bash", command="pytest"))
            r = compact(session, POLICY, force=True)
            sent = request_text(session)
        assert r.data.resume == "continue"
        assert "Fix the parser" in r.checkpoint.next_step
        assert "Wait for the user" not in r.checkpoint.next_step
        assert "Carry on from Current Work" in sent

    def test_a_dry_run_reports_the_same_decision(self, log_path: Path) -> None:
        """The decision is a pure function of the context: a dry run and the real one agree."""
        with working_session(log_path) as session:
            session.add_message(say("Done for now."))
            dry = compact(session, POLICY, force=True, dry_run=True)
            real = compact(session, POLICY, force=True)
        assert dry.data.resume == real.data.resume == "await_user"
        assert dry.data.text == real.data.text
