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
from reference import SECTIONS, ReferenceLog, read_back, safe_cuts
from strategies import INVISIBLE_TEXTS, reference_sessions

from compaction import (
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    Message,
    Session,
    TodoItem,
    TodoWriteData,
    TurnEndData,
    TurnStartData,
    compact,
    parse_checkpoint,
    read_events,
)

Script = tuple[list[Any], list[int], int, float]


def check_against_reference(ref: ReferenceLog, result: CompactionResult) -> None:
    """The Checkpoint holds exactly the reference's unfinished items, by status, in order."""
    pending, current = ref.expected_sections()
    back = read_back(result.data.text)
    assert back.headings == list(SECTIONS)
    assert back.pending == pending
    assert back.current == current
    assert list(result.data.pending) == pending
    assert list(result.data.current) == current
    carried = bool(pending or current) and ref.list_predates_request()
    assert back.carried_note is carried
    assert result.checkpoint.carried_over is carried
    for line in back.item_lines:  # nothing invisible, line-breaking or unpaired stands raw
        assert not any(0xD800 <= ord(ch) <= 0xDFFF or ch in "\u200b\ufeff\u2028\r" for ch in line)
        assert line.isascii() or not any(ch in line for ch in ("\u202e", "\u200e", "\u2029"))
    # The code's own parser agrees with the reference one on the same text.
    parsed = parse_checkpoint(result.data.text)
    assert (list(parsed.pending_jobs), list(parsed.current_work)) == (pending, current)


def check_refusal(ref: ReferenceLog, exc: CompactionError) -> None:
    """A refusal is justified only by the reference: no message, or no safe cut."""
    messages = ref.context_messages()
    match exc.code:
        case "nothing_to_compact":
            assert messages == []
        case "no_safe_cut":
            assert messages
            assert safe_cuts(messages) == []
        case _:
            raise AssertionError(f"unjustified refusal: {exc}")


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
                check_refusal(ref, exc)
                refused += 1
                continue
            assert safe_cuts(messages), "the code compacted where the reference finds no cut"
            assert result.replaced_messages in safe_cuts(messages)
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
        """With only a call awaiting its result after the request, the refusal is justified."""
        from compaction import FunctionCall, ToolCall

        call = ToolCall(id="c1", function=FunctionCall(name="bash", arguments="{}"))
        ref = ReferenceLog()
        with Session(tmp_path / "s.jsonl") as session:
            for p in (
                TurnStartData(),
                Message(role="user", content="go"),
                Message(role="assistant", tool_calls=(call,)),
            ):
                session.append(p)
                ref.append(p)
            with pytest.raises(CompactionError) as info:
                compact(session, CompactionPolicy(window_tokens=2_000), force=True)
        check_refusal(ref, info.value)
        assert info.value.code == "no_safe_cut"


@settings(max_examples=5)
@given(reference_sessions())
def test_reference_parser_sees_all_sections(script: Script) -> None:
    """Smoke: the reference parser reads all eight sections of what the compactor wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        run_reference_script(Path(tmp) / "s.jsonl", script)
