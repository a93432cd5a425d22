"""Compaction checked against an independent reference model (tests/reference.py).

The expected Pending Jobs and Current Work are folded by hand from the payloads the test
appended, never from `Session.latest_todos` or `unfinished`; the Checkpoint text is read back
with the reference parser; every refusal must be justified by the reference (no message, or no
safe cut), never skipped.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from reference import (
    ReferenceLog,
    check_against_reference,
    check_refusal,
    safe_cuts,
)
from strategies import INVISIBLE_TEXTS, reference_sessions

from compaction import (
    CompactionError,
    CompactionPolicy,
    Message,
    Session,
    TodoItem,
    TodoWriteData,
    TurnEndData,
    TurnStartData,
    compact,
    read_events,
)

Script = tuple[list[Any], list[int], int, float]


def run_reference_script(path: Path, script: Script) -> tuple[int, int]:
    """Append, compact at each point and check each outcome; return (compactions, refusals)."""
    payloads, points, window, retain = script
    policy = CompactionPolicy(window_tokens=window, retain=retain)
    ref = ReferenceLog()
    done = refused = 0
    with Session(path) as session:
        appended = 0
        for point in points:
            for payload in payloads[appended:point]:
                session.append(payload)
                ref.append(payload)
            appended = point
            messages = ref.context_messages()
            try:
                result = compact(session, policy, force=True)
            except CompactionError as exc:
                check_refusal(ref, exc, policy)
                refused += 1
                continue
            assert safe_cuts(messages), "the code compacted where the reference finds no cut"
            assert result.replaced_messages in safe_cuts(messages)
            assert result.request_tokens_after + policy.output_reserve <= policy.window_tokens
            check_against_reference(ref, result)
            ref.append(result.data)
            assert list(session.context.messages) == messages[result.replaced_messages :]
            done += 1
    assert (len(list(read_events(path))) if path.exists() else 0) == len(ref.entries)
    return done, refused


@given(reference_sessions())
def test_compaction_matches_the_reference(script: Script) -> None:
    """Over generated sessions, each compaction copies exactly the reference's unfinished tasks."""
    with tempfile.TemporaryDirectory() as tmp:
        done, refused = run_reference_script(Path(tmp) / "s.jsonl", script)
    event(f"compacted {min(done, 3)}+, refused {min(refused, 2)}+")


class TestReferenceExamples:
    """Named cases the generator should reach, pinned so they always run."""

    def run(self, tmp_path: Path, payloads: list[Any]) -> ReferenceLog:
        ref = ReferenceLog()
        with Session(tmp_path / "s.jsonl") as session:
            for p in payloads:
                session.append(p)
                ref.append(p)
            result = compact(session, CompactionPolicy(window_tokens=2_000), force=True)
        check_against_reference(ref, result)
        return ref

    def test_several_in_progress_all_in_current_work(self, tmp_path: Path) -> None:
        """Every in-progress item of a parallel list reaches Current Work, in list order."""
        todos = (
            TodoItem(content="Run the linter", status="in_progress"),
            TodoItem(content="Write docs", status="pending"),
            TodoItem(content="Run the tests", status="in_progress"),
            TodoItem(content="Ship", status="in_progress"),
        )
        ref = self.run(
            tmp_path,
            [
                TurnStartData(),
                Message(role="user", content="go"),
                TodoWriteData(todos=todos),
                Message(role="assistant", content="on it"),
            ],
        )
        assert ref.expected_sections() == (
            ["Write docs"],
            ["Run the linter", "Run the tests", "Ship"],
        )

    def test_list_from_an_earlier_request_is_carried(self, tmp_path: Path) -> None:
        """A list written before the latest request is carried over, and says so."""
        todos = (TodoItem(content="Old task", status="pending"),)
        ref = self.run(
            tmp_path,
            [
                TurnStartData(),
                Message(role="user", content="first"),
                TodoWriteData(todos=todos),
                Message(role="assistant", content="ok"),
                TurnEndData(),
                TurnStartData(),
                Message(role="user", content="second"),
                Message(role="assistant", content="sure"),
            ],
        )
        assert ref.list_predates_request()

    @pytest.mark.parametrize("text", INVISIBLE_TEXTS)
    def test_invisible_characters_round_trip(self, tmp_path: Path, text: str) -> None:
        """Zero-width, BOM, U+2028, CR and bidi text come back exactly, never raw in a line."""
        todos = (TodoItem(content=text, status="in_progress"),)
        self.run(
            tmp_path,
            [
                TurnStartData(),
                Message(role="user", content=text),
                TodoWriteData(todos=todos),
                Message(role="assistant", content=text),
            ],
        )

    def test_refusal_needs_a_waiting_call(self, tmp_path: Path) -> None:
        """With only an assistant call awaiting its result, no cut exists: a justified refusal.

        A lone waiting call admits no cut: after it would keep the result without its call.
        (After a user request, the cut before the call would be allowed.)
        """
        from compaction import FunctionCall, ToolCall

        call = ToolCall(id="c1", function=FunctionCall(name="bash", arguments="{}"))
        ref = ReferenceLog()
        policy = CompactionPolicy(window_tokens=2_000)
        with Session(tmp_path / "s.jsonl") as session:
            for p in (TurnStartData(), Message(role="assistant", tool_calls=(call,))):
                session.append(p)
                ref.append(p)
            with pytest.raises(CompactionError) as info:
                compact(session, policy, force=True)
        assert safe_cuts(ref.context_messages()) == []
        check_refusal(ref, info.value, policy)
        assert info.value.code == "no_safe_cut"

    def test_cut_before_a_waiting_call(self, tmp_path: Path) -> None:
        """After a request, a waiting call is kept verbatim and the request is summarized."""
        from compaction import FunctionCall, ToolCall

        call = ToolCall(id="c1", function=FunctionCall(name="bash", arguments="{}"))
        messages = [
            Message(role="user", content="go"),
            Message(role="assistant", tool_calls=(call,)),
        ]
        assert safe_cuts(messages) == [1]
        with Session(tmp_path / "s.jsonl") as session:
            session.append(TurnStartData())
            for m in messages:
                session.append(m)
            result = compact(session, CompactionPolicy(window_tokens=2_000), force=True)
        assert result.replaced_messages == 1


@settings(max_examples=5)
@given(reference_sessions())
def test_reference_parser_sees_all_sections(script: Script) -> None:
    """Smoke: the reference parser reads all eight sections of what the compactor wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        run_reference_script(Path(tmp) / "s.jsonl", script)
