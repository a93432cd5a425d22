"""The importers' shared rules, pinned on small hand-written records (issue 25, part B).

`scripts/mutate --group importers` mutates `compaction/importers/`; these tests drive the
`EventBuilder`, the Claude Code task folder and the record helpers directly, so a mutant that
changes a seq, a turn, a call's pairing, a todo list, a task, or a recorded checkpoint's span is
caught without a real transcript (those are read by `test_importers.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction.errors import TranscriptError
from compaction.events import (
    CheckpointData,
    Event,
    Message,
    TaskCreateData,
    TaskUpdateData,
    TextPart,
    TodoItem,
    TodoWriteData,
    TurnStartData,
    UsageReportData,
)
from compaction.importers._base import EventBuilder, no_result_text
from compaction.importers._claude_code_tasks import TaskFolder
from compaction.importers._import_report import ImportReport
from compaction.importers._reader import RecordReader
from compaction.importers._recorded_calls import (
    RecordedCall,
    UnreadableTodos,
    call_from,
    content_text,
    todo_items,
    token_figure,
    unknown,
)
from compaction.tokens import get_tokenizer

TOKENIZER = get_tokenizer()


def todo_hook(call: RecordedCall) -> tuple[TodoItem, ...] | None:
    """The test format's todo tool: `TodoWrite` with a `todos` list."""
    if call.name != "TodoWrite":
        return None
    return todo_items(call.input["todos"] if isinstance(call.input, dict) else None)


def builder() -> EventBuilder:
    return EventBuilder(ImportReport(path="t.jsonl"), TOKENIZER, todo_hook)


def kinds(events: list[Event]) -> list[str]:
    return [e.type if e.type != "message" else f"message:{e.data.role}" for e in events]


def todo_call(call_id: str, *items: tuple[str, str]) -> RecordedCall:
    todos = [{"content": c, "status": s, "activeForm": c} for c, s in items]
    return call_from(call_id, "TodoWrite", {"todos": todos})


class TestSeqsAndTurns:
    def test_seqs_run_from_one_in_order(self) -> None:
        b = builder()
        b.request("first")
        b.assistant("m1", ["ok"], [])
        b.request("second")
        events = b.finish()
        assert [e.seq for e in events] == list(range(1, 7))
        assert kinds(events) == [
            "turn/start",
            "message:user",
            "message:assistant",
            "turn/end",
            "turn/start",
            "message:user",
        ]
        assert b.report.events == 6
        assert b.report.turns == 2
        assert b.report.events_by_type["turn/start"] == 2
        assert b.report.events_by_type["message"] == 3

    def test_a_request_carries_mode_origin_and_cwd(self) -> None:
        b = builder()
        b.request("/compact", mode="plan", origin="command", cwd="/repo")
        b.request("go", cwd="")
        start, user, _end, start2, _user2 = b.finish()
        assert start.data == TurnStartData(mode="plan", cwd="/repo")
        assert isinstance(user.data, Message)
        assert (user.data.content, user.data.origin) == ("/compact", "command")
        assert start2.data == TurnStartData(mode=None, cwd=None)

    def test_take_returns_each_event_once(self) -> None:
        b = builder()
        b.request("go")
        assert [e.seq for e in b.take()] == [1, 2]
        assert b.take() == []
        b.message(Message(role="system", content="notice"), "notice")
        assert [e.seq for e in b.take()] == [3]
        assert b.report.handled["notice"] == 1


class TestCallsAndResults:
    def test_records_sharing_a_key_merge_into_one_message(self) -> None:
        b = builder()
        b.request("go")
        b.assistant("m1", ["part one", "  "], [call_from("c1", "Read", {"path": "a"})])
        b.assistant("m1", ["part two"], [call_from("c2", "Read", '{"path": "b"}')])
        assert b.result("c2", "B")
        assert b.result("c1", "A")
        events = b.finish()
        assistant = events[2].data
        assert isinstance(assistant, Message)
        assert assistant.content == "part one\n\npart two"
        assert assistant.tool_calls is not None
        assert [c.id for c in assistant.tool_calls] == ["c1", "c2"]
        assert assistant.tool_calls[0].function.arguments == '{"path": "a"}'
        results = [(e.data.tool_call_id, e.data.content) for e in events[3:]]  # type: ignore[union-attr]
        assert results == [("c1", "A"), ("c2", "B")]
        assert b.report.tool_calls == 2

    def test_a_new_key_starts_a_new_message(self) -> None:
        b = builder()
        b.assistant("m1", ["one"], [])
        b.assistant("m2", ["two"], [])
        b.assistant(None, ["three"], [])
        b.assistant(None, ["four"], [])
        texts = [e.data.content for e in b.finish()]  # type: ignore[union-attr]
        assert texts == ["one", "two", "three", "four"]
        assert b.report.handled["assistant message"] == 4

    def test_a_repeated_call_id_is_skipped_and_counted(self) -> None:
        b = builder()
        b.assistant("m1", [], [call_from("c1", "Read", {})])
        b.assistant("m2", [], [call_from("c1", "Read", {})])
        events = b.finish()
        assert kinds(events) == ["message:assistant", "message:tool"]
        assert b.report.skipped["tool call with an id already used"] == 1

    def test_an_unanswered_call_gets_the_placeholder(self) -> None:
        b = builder()
        b.assistant("m1", [], [call_from("c1", "Read", {})])
        b.request("next")
        events = b.finish()
        tool = events[1].data
        assert isinstance(tool, Message)
        assert (tool.role, tool.tool_call_id, tool.content) == ("tool", "c1", no_result_text())
        assert b.report.unanswered_calls == 1
        assert b.report.tool_calls == 1

    def test_a_result_without_its_open_call_is_counted_not_written(self) -> None:
        b = builder()
        assert not b.result("c9", "lost")
        b.assistant("m1", [], [call_from("c1", "Read", {})])
        assert b.result("c1", "first", exit_code=2, failed=True)
        assert not b.result("c1", "second")
        assert b.open_calls() == []
        events = b.finish()
        assert len(events) == 2
        tool = events[1].data
        assert isinstance(tool, Message)
        assert (tool.content, tool.exit_code, tool.failed) == ("first", 2, True)
        assert b.report.orphan_results == 2
        assert b.report.skipped["tool result without its call"] == 2
        assert b.report.handled["tool result"] == 1

    def test_open_calls_are_those_still_waiting(self) -> None:
        b = builder()
        assert b.open_calls() == []
        b.assistant("m1", [], [call_from("c1", "Read", {}), call_from("c2", "Read", {})])
        b.result("c1", "done")
        assert [c.id for c in b.open_calls()] == ["c2"]

    def test_usage_goes_before_its_message_and_the_latest_wins(self) -> None:
        b = builder()
        first = UsageReportData(purpose="turn", model="m", prompt_tokens=10, completion_tokens=1)
        b.usage(first)
        b.assistant("m1", ["a"], [call_from("c1", "Read", {})])
        b.usage(UsageReportData(purpose="turn", model="m", prompt_tokens=20, completion_tokens=2))
        b.usage(UsageReportData(purpose="turn", model="m", prompt_tokens=30, completion_tokens=3))
        b.result("c1", "r")
        events = b.finish()
        assert kinds(events) == [
            "usage/report",
            "usage/report",
            "message:assistant",
            "message:tool",
        ]
        assert [e.data.prompt_tokens for e in events[:2]] == [10, 30]  # type: ignore[union-attr]

    def test_trailing_messages_follow_the_results(self) -> None:
        b = builder()
        b.trailing(Message(role="user", content="alone"), "notice")
        b.assistant("m1", [], [call_from("c1", "Read", {})])
        b.trailing(Message(role="user", content="after"), "notice")
        b.result("c1", "r")
        events = b.finish()
        contents = [e.data.content for e in events]  # type: ignore[union-attr]
        assert contents[0] == "alone"
        assert contents[-2:] == ["r", "after"]
        assert b.report.handled["notice"] == 2

    def test_an_empty_assistant_writes_only_its_trailing_messages(self) -> None:
        b = builder()
        b.assistant("m1", ["   "], [])
        b.trailing(Message(role="user", content="after"), "notice")
        events = b.finish()
        assert kinds(events) == ["message:user"]
        assert b.report.handled["assistant message"] == 0

    def test_largest_output_counts_text_parts_only(self) -> None:
        b = builder()
        b.assistant("m1", [], [call_from("c1", "Read", {}), call_from("c2", "Read", {})])
        b.result("c1", "x" * 30)
        b.result("c2", (TextPart(text="y" * 50), TextPart(text="z")))
        b.finish()
        assert b.report.largest_tool_output == 52


class TestTodos:
    def test_a_todo_call_writes_its_list_after_the_result(self) -> None:
        b = builder()
        b.assistant("m1", [], [todo_call("c1", ("Parse", "in_progress"), ("Test", "pending"))])
        b.result("c1", "ok")
        events = b.finish()
        assert kinds(events) == ["message:assistant", "todo/write", "message:tool"]
        assert events[1].data == TodoWriteData(
            todos=(
                TodoItem(content="Parse", status="in_progress"),
                TodoItem(content="Test", status="pending"),
            )
        )
        assert b.report.todo_writes == 1
        assert b.report.rule_breaking_lists == []

    def test_a_rejected_or_unanswered_call_writes_no_list(self) -> None:
        b = builder()
        b.assistant(
            "m1", [], [todo_call("c1", ("A", "pending")), todo_call("c2", ("B", "pending"))]
        )
        b.result("c1", "rejected", is_error=True)
        events = b.finish()
        assert "todo/write" not in kinds(events)
        assert b.report.todo_writes == 0

    def test_an_unreadable_list_is_skipped_with_its_reason(self) -> None:
        b = builder()
        b.assistant("m1", [], [todo_call("c1", ("A", "blocked"))])
        b.result("c1", "ok")
        assert "todo/write" not in kinds(b.finish())
        assert (
            b.report.skipped["TodoWrite call with an unreadable list (item 0 has status 'blocked')"]
            == 1
        )

    def test_a_rule_breaking_list_is_kept_and_counted_at_its_seq(self) -> None:
        b = builder()
        b.request("go")
        b.todo_write(
            (
                TodoItem(content="A", status="in_progress"),
                TodoItem(content="B", status="in_progress"),
            )
        )
        (event,) = [e for e in b.finish() if e.type == "todo/write"]
        (broken,) = b.report.rule_breaking_lists
        assert broken.seq == event.seq == 3
        assert broken.violations


class TestCheckpoints:
    def test_spans_follow_one_another(self) -> None:
        b = builder()
        b.request("go")
        b.assistant("m1", ["a"], [])
        b.checkpoint("summary one", "claude-code")
        b.request("more")
        b.checkpoint("summary two", "claude-code")
        events = b.finish()
        cps = [e for e in events if isinstance(e.data, CheckpointData)]
        assert [(c.data.first_seq, c.data.last_seq, c.seq) for c in cps] == [(1, 3, 4), (4, 7, 8)]
        assert [c.data.text for c in cps] == ["summary one", "summary two"]
        assert cps[0].data.summarizer == "claude-code"
        assert b.report.checkpoints == 2

    def test_token_figures_before_and_after(self) -> None:
        b = builder()
        b.request("word " * 400)
        b.checkpoint("short", "codex")
        (cp,) = [e.data for e in b.finish() if isinstance(e.data, CheckpointData)]
        assert cp.tokens_before > 400
        assert 0 < cp.tokens_after < cp.tokens_before - 200
        assert b.report.context_tokens < b.report.total_tokens

    def test_a_summary_with_nothing_before_it_is_kept_as_a_message(self) -> None:
        b = builder()
        b.checkpoint("the goal so far", "claude-code")
        (event,) = b.finish()
        assert isinstance(event.data, Message)
        assert (event.data.role, event.data.content, event.data.origin) == (
            "user",
            "the goal so far",
            "recorded_summary",
        )
        assert b.report.checkpoints == 0
        assert b.report.handled["recorded summary with nothing to replace"] == 1

    def test_unfinished_items_and_tasks_are_carried(self) -> None:
        b = builder()
        b.request("go")
        b.todo_write(
            (
                TodoItem(content="Done", status="completed"),
                TodoItem(content="Now", status="in_progress"),
                TodoItem(content="Next", status="pending"),
            )
        )
        folder = TaskFolder(b)
        folder.create(call_from("t1", "TaskCreate", {"subject": "Port"}))
        folder.create(call_from("t2", "TaskCreate", {"subject": "Ship"}))
        folder.update(call_from("t3", "TaskUpdate", {"taskId": "2", "status": "in_progress"}))
        b.checkpoint("summary", "claude-code")
        (cp,) = [e.data for e in b.finish() if isinstance(e.data, CheckpointData)]
        assert (cp.pending, cp.current) == (("Next",), ("Now",))
        assert cp.pending_tasks is not None
        assert cp.current_tasks is not None
        assert [t.id for t in cp.pending_tasks] == ["1"]
        assert [t.id for t in cp.current_tasks] == ["2"]


class TestCountsAndEdges:
    def test_each_kind_of_message_is_counted(self) -> None:
        b = builder()
        for text in ("one", "two"):
            b.message(Message(role="system", content=text), "system prompt")
        b.finish()
        assert b.report.handled["system prompt"] == 2

    def test_a_checkpoint_may_replace_a_single_event(self) -> None:
        b = builder()
        b.message(Message(role="user", content="hello"), "notice")
        b.checkpoint("summary", "codex")
        _first, cp = b.finish()
        assert isinstance(cp.data, CheckpointData)
        assert (cp.data.first_seq, cp.data.last_seq, cp.seq) == (1, 1, 2)

    def test_requests_results_and_unanswered_calls_are_counted(self) -> None:
        b = builder()
        for text in ("one", "two"):
            b.request(text)
            calls = [call_from(f"{text}-{n}", "Read", {}) for n in "ab"]
            b.assistant(text, [], calls)
            b.result(f"{text}-a", "done")
        b.finish()
        assert b.report.handled["user request"] == 2
        assert b.report.handled["tool result"] == 2
        assert (b.report.tool_calls, b.report.unanswered_calls) == (4, 2)

    def test_a_repeated_id_skips_only_that_call(self) -> None:
        b = builder()
        b.assistant("m1", [], [call_from("c1", "Read", {})])
        b.assistant("m1", [], [call_from("c1", "Read", {}), call_from("c2", "Grep", {})])
        assert [c.id for c in b.open_calls()] == ["c1", "c2"]
        assert b.report.skipped["tool call with an id already used"] == 1

    def test_the_tokenizer_given_counts_everything(self) -> None:
        text = "Grüße, 東京; naïve façade — ünïcödé " * 20
        totals = []
        for name in ("cl100k_base", "o200k_base"):
            b = EventBuilder(ImportReport(path="t"), get_tokenizer(name), todo_hook)
            b.request(text)
            b.checkpoint("summary", "codex")
            (cp,) = [e.data for e in b.finish() if isinstance(e.data, CheckpointData)]
            assert b.report.tokenizer == f"tiktoken:{name}"
            totals.append((b.report.total_tokens, cp.tokens_before))
        assert totals[0][0] != totals[1][0]
        assert totals[0][1] != totals[1][1]

    def test_an_assistant_with_calls_only_has_no_text(self) -> None:
        b = builder()
        b.assistant("m1", [], [call_from("c1", "Read", {})])
        assistant = b.finish()[0].data
        assert isinstance(assistant, Message)
        assert assistant.content is None


# Pinned by mutation testing (folded in from tests/unit/compaction/importers/test_importer_base.py):
# Claude Code's task folder and the importers' record helpers, on hand-written records.
#
# Part of `scripts/mutate --group importers` (issue 25, part B), beside
# `test_importer_mutants.py`: a task's id, subject, description, owner, blockers and version as
# `TaskFolder` writes them; calls read from text or parsed arguments; recorded todo lists and
# token figures; the count-or-raise rule for a record no importer knows.


def plain_builder() -> EventBuilder:
    return EventBuilder(ImportReport(path="t.jsonl"), get_tokenizer(), lambda call: None)


def task_events(b: EventBuilder) -> list[Any]:
    return [e.data for e in b.finish() if isinstance(e.data, TaskCreateData | TaskUpdateData)]


class TestTaskFolder:
    def test_the_id_comes_from_the_result_then_the_text_then_the_board(self) -> None:
        b = plain_builder()
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
        b = plain_builder()
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
        b = plain_builder()
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
        b = plain_builder()
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
        b = plain_builder()
        reader = RecordReader(b, b.report, tmp_path / "t.jsonl", strict=False)
        assert reader.as_object(1, {"a": 1}, "record") == {"a": 1}
        assert reader.as_object(2, [1], "record") is None
        assert b.report.skipped["a JSON list where a record (object) was expected"] == 1


class TestTaskUpdateEdges:
    def test_every_field_an_update_names_is_changed(self) -> None:
        b = plain_builder()
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
        b = plain_builder()
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
        b = plain_builder()
        TaskFolder(b).create(call_from("a", "TaskCreate", arguments))
        assert b.tasks().tasks == ()
        assert b.report.skipped["TaskCreate call without a subject"] == 1


def test_a_strict_reader_names_the_file_and_line(tmp_path: Path) -> None:
    b = plain_builder()
    reader = RecordReader(b, b.report, tmp_path / "t.jsonl", strict=True)
    with pytest.raises(TranscriptError) as caught:
        reader.as_object(3, "text", "record")
    assert str(tmp_path / "t.jsonl") in str(caught.value)
    assert "a JSON str where a record (object) was expected" in str(caught.value)
