"""Claude Code's task folder and the importers' record helpers, on hand-written records.

Part of `scripts/mutate --group importers` (issue 25, part B), beside
`test_importer_mutants.py`: a task's id, subject, description, owner, blockers and version as
`TaskFolder` writes them; calls read from text or parsed arguments; recorded todo lists and
token figures; the count-or-raise rule for a record no importer knows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction.errors import TranscriptError
from compaction.events import TaskCreateData, TaskUpdateData, TextPart, TodoItem
from compaction.importers.base import EventBuilder, RecordReader
from compaction.importers.claude_code_tasks import TaskFolder
from compaction.importers.import_report import ImportReport
from compaction.importers.recorded_calls import (
    UnreadableTodos,
    call_from,
    content_text,
    todo_items,
    token_figure,
    unknown,
)
from compaction.tokens import get_tokenizer


def builder() -> EventBuilder:
    return EventBuilder(ImportReport(path="t.jsonl"), get_tokenizer(), lambda call: None)


def task_events(b: EventBuilder) -> list[Any]:
    return [e.data for e in b.finish() if isinstance(e.data, TaskCreateData | TaskUpdateData)]


class TestTaskFolder:
    def test_the_id_comes_from_the_result_then_the_text_then_the_board(self) -> None:
        b = builder()
        folder = TaskFolder(b)
        meta = call_from("a", "TaskCreate", {"subject": "A", "description": "why"})
        meta.meta = {"task": {"id": 7}}
        folder.create(meta)
        text = call_from("b", "TaskCreate", {"subject": "B", "description": "  "})
        text.result = "Task #12 created successfully"
        folder.create(text)
        folder.create(call_from("c", "TaskCreate", {"subject": "C"}))
        made = [(d.task.id, d.task.subject, d.task.description, d.agent) for d in task_events(b)]
        assert made == [
            ("7", "A", "why", "main"),
            ("12", "B", None, "main"),
            ("13", "C", None, "main"),
        ]

    def test_unusable_creates_write_nothing(self) -> None:
        b = builder()
        folder = TaskFolder(b)
        folder.create(call_from("a", "TaskCreate", {"subject": "A"}))
        repeat = call_from("b", "TaskCreate", {"subject": "again"})
        repeat.meta = {"task": {"id": "1"}}
        folder.create(repeat)
        folder.create(call_from("c", "TaskCreate", {"description": "no subject"}))
        bad = call_from("d", "TaskCreate", {"subject": "D"})
        bad.meta = {"task": {"id": "not an id!"}}
        folder.create(bad)
        assert [d.task.id for d in task_events(b)] == ["1"]
        assert b.report.skipped["TaskCreate call without a subject"] == 1
        assert b.report.skipped["TaskCreate call with an unusable or repeated id"] == 2

    def test_an_update_writes_the_whole_new_state_once(self) -> None:
        b = builder()
        folder = TaskFolder(b)
        for subject in ("A", "B"):
            folder.create(call_from(subject, "TaskCreate", {"subject": subject}))
        change = {"taskId": "2", "status": "in_progress", "owner": "w1", "subject": "B2"}
        folder.update(call_from("u1", "TaskUpdate", {**change, "addBlockedBy": ["1", "9"]}))
        folder.update(call_from("u2", "TaskUpdate", {"taskId": "2", "status": "in_progress"}))
        folder.update(call_from("u3", "TaskUpdate", {"taskId": "5", "status": "completed"}))
        folder.update(call_from("u4", "TaskUpdate", {"taskId": 1, "status": "bogus"}))
        updates = [d.task for d in task_events(b) if isinstance(d, TaskUpdateData)]
        assert [(t.id, t.status, t.owner, t.subject, t.blocked_by, t.version) for t in updates] == [
            ("2", "in_progress", "w1", "B2", ("1",), 2)
        ]
        assert b.report.skipped["TaskUpdate call for an unknown task id"] == 1

    def test_add_blocks_blocks_the_other_task_once(self) -> None:
        b = builder()
        folder = TaskFolder(b)
        for subject in ("A", "B", "C"):
            folder.create(call_from(subject, "TaskCreate", {"subject": subject}))
        folder.update(call_from("u1", "TaskUpdate", {"taskId": "1", "addBlocks": ["2", 3, "8"]}))
        folder.update(call_from("u2", "TaskUpdate", {"taskId": "1", "addBlocks": ["2"]}))
        folder.update(
            call_from("u3", "TaskUpdate", {"taskId": "3", "addBlockedBy": ["2", "1", "2"]})
        )
        board = b.tasks()
        blocked = {t.id: (t.blocked_by, t.version) for t in board.tasks}
        assert blocked == {"1": ((), 1), "2": (("1",), 2), "3": (("1", "2"), 3)}


class TestRecordHelpers:
    def test_call_from_text_or_parsed_arguments(self) -> None:
        text = call_from("c", "Read", '{"path": "é"}')
        assert (text.arguments, text.input) == ('{"path": "é"}', {"path": "é"})
        broken = call_from("c", "Read", "{not json")
        assert (broken.arguments, broken.input) == ("{not json", None)
        parsed = call_from("c", "Read", {"path": "é"})
        assert (parsed.arguments, parsed.input) == ('{"path": "é"}', {"path": "é"})
        empty = call_from("c", "Read", None)
        assert (empty.arguments, empty.input) == ("{}", None)

    def test_result_text(self) -> None:
        call = call_from("c", "Read", {})
        assert call.result_text() == ""
        call.result = "plain"
        assert call.result_text() == "plain"
        call.result = (TextPart(text="a"), TextPart(text="b"))
        assert call.result_text() == "a\nb"

    @pytest.mark.parametrize(
        ("raw", "reason"),
        [
            ({"content": "a"}, "the list is not an array"),
            (["a"], "item 0 is not an object"),
            (
                [{"content": "a", "status": "pending"}, {"status": "pending"}],
                "item 1 has no 'content' text",
            ),
            ([{"content": "a", "status": "done"}], "item 0 has status 'done'"),
        ],
    )
    def test_unreadable_lists_say_why(self, raw: object, reason: str) -> None:
        with pytest.raises(UnreadableTodos) as caught:
            todo_items(raw)
        assert str(caught.value) == reason

    def test_todo_items_by_another_text_key(self) -> None:
        raw = [{"step": "Parse", "status": "completed", "extra": 1}]
        assert todo_items(raw, "step") == (TodoItem(content="Parse", status="completed"),)

    def test_content_text(self) -> None:
        parts = [{"text": "a"}, {"type": "image"}, "stray", {"text": 3}, {"text": "b"}]
        assert content_text(parts) == "a\nb"
        assert content_text("plain") == "plain"
        assert content_text({"text": "a"}) == ""

    @pytest.mark.parametrize(
        ("value", "expected"), [(7, 7), (0, 0), (-1, 0), (True, 0), (2.0, 0), (None, 0)]
    )
    def test_token_figure(self, value: object, expected: int) -> None:
        assert token_figure(value) == expected

    def test_unknown_counts_or_raises_with_its_line(self, tmp_path: Path) -> None:
        report = ImportReport(path="t")
        unknown(report, tmp_path / "t.jsonl", 4, "a thing", strict=False)
        assert report.skipped["a thing"] == 1
        with pytest.raises(TranscriptError, match=r"t\.jsonl.*4") as caught:
            unknown(report, tmp_path / "t.jsonl", 4, "a thing", strict=True)
        assert "a thing" in str(caught.value)
        assert "--strict" in str(caught.value)

    def test_as_object(self, tmp_path: Path) -> None:
        b = builder()
        reader = RecordReader(b, b.report, tmp_path / "t.jsonl", strict=False)
        assert reader.as_object(1, {"a": 1}, "record") == {"a": 1}
        assert reader.as_object(2, [1], "record") is None
        assert b.report.skipped["a JSON list where a record (object) was expected"] == 1


class TestTaskUpdateEdges:
    def test_every_field_an_update_names_is_changed(self) -> None:
        b = builder()
        folder = TaskFolder(b)
        folder.create(call_from("a", "TaskCreate", {"subject": "A", "description": "old"}))
        change = {"taskId": "1", "subject": "A2", "description": "new", "owner": "w1"}
        folder.update(call_from("u", "TaskUpdate", change))
        task = b.tasks().get("1")
        assert task is not None
        assert (task.subject, task.description, task.owner, task.version) == ("A2", "new", "w1", 2)

    @pytest.mark.parametrize("arguments", ["{not json", "[1]", '{"status": "completed"}'])
    def test_an_update_without_a_readable_id_changes_nothing(self, arguments: str) -> None:
        """Not even a task whose id reads like a missing one ("None", "XXXX", "")."""
        b = builder()
        folder = TaskFolder(b)
        for task_id in ("None", "XXXX"):
            made = call_from(task_id, "TaskCreate", {"subject": task_id})
            made.meta = {"task": {"id": task_id}}
            folder.create(made)
        folder.update(call_from("u", "TaskUpdate", arguments))
        assert [(t.id, t.status, t.version) for t in b.tasks().tasks] == [
            ("None", "pending", 1),
            ("XXXX", "pending", 1),
        ]
        assert b.report.skipped["TaskUpdate call for an unknown task id"] == 1

    @pytest.mark.parametrize("arguments", ["{not json", "[1]"])
    def test_a_create_without_readable_arguments_writes_nothing(self, arguments: str) -> None:
        b = builder()
        TaskFolder(b).create(call_from("a", "TaskCreate", arguments))
        assert b.tasks().tasks == ()
        assert b.report.skipped["TaskCreate call without a subject"] == 1


def test_a_strict_reader_names_the_file_and_line(tmp_path: Path) -> None:
    b = builder()
    reader = RecordReader(b, b.report, tmp_path / "t.jsonl", strict=True)
    with pytest.raises(TranscriptError) as caught:
        reader.as_object(3, "text", "record")
    assert str(tmp_path / "t.jsonl") in str(caught.value)
    assert "a JSON str where a record (object) was expected" in str(caught.value)
