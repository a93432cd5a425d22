"""The Claude Code reader's contracts, pinned on hand-written records (issue 25, part D).

`scripts/mutate --group importer-readers` mutates `compaction/importers/_claude_code.py`; each
test here imports a few hand-written records through `compaction.importers.load` and compares
the events written (their data, in order) and the report's counts with values written out by
hand, so a mutant that changes a message, a request, a turn's mode or directory, a tool call,
a result's status, a usage figure or a skip reason is caught without a real transcript.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from compaction.errors import TranscriptError
from compaction.events import (
    CheckpointData,
    EventData,
    FunctionCall,
    ImagePart,
    ImageURL,
    Message,
    TaskCreateData,
    TaskUpdateData,
    TextPart,
    TodoItem,
    TodoWriteData,
    ToolCall,
    TurnEndData,
    TurnStartData,
    UsageReportData,
)
from compaction.importers import ImportReport, load
from compaction.importers._base import no_result_text
from compaction.importers._claude_code import command_typed, usage_of

Record = Mapping[str, object] | str
PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def _write(tmp_path: Path, *records: Record) -> Path:
    """A transcript of `records`: a dict is a JSON line, a string is written as is."""
    path = tmp_path / "s.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _import(tmp_path: Path, *records: Record) -> tuple[list[EventData], ImportReport]:
    """The data of each event imported from `records`, in order, and the report."""
    path = _write(tmp_path, *records)
    report = ImportReport(path=str(path))
    return [e.data for e in load(path, "claude-code", report=report)], report


def _user(content: object, **fields: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": content}, **fields}


def _assistant(content: object, msg_id: str = "m1", **message: object) -> dict[str, object]:
    body = {"id": msg_id, "role": "assistant", "content": content, **message}
    return {"type": "assistant", "message": body}


def _use(call_id: str, name: str, arguments: object) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def _result(call_id: str, content: object, **fields: object) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **fields}


def _call(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def _request(content: str, mode: str | None = None, cwd: str | None = None) -> list[EventData]:
    return [TurnStartData(mode=mode, cwd=cwd), Message(role="user", content=content, origin="user")]


def _tool(call_id: str, content: object, **fields: object) -> Message:
    return Message(role="tool", tool_call_id=call_id, content=content, **fields)


class TestRecordTypes:
    def test_each_skipped_type_is_counted_by_its_reason(self, tmp_path: Path) -> None:
        """Records that never reach the context write nothing and are counted by reason."""
        events, report = _import(
            tmp_path,
            {"type": "progress"},
            {"type": "file-history-snapshot"},
            {"type": "queue-operation"},
            {"type": "summary"},
            {"type": "custom-title"},
            {"type": "attachment"},
            {"type": "agent-name"},
            {"type": "last-prompt"},
            {"type": "pr-link"},
            {"type": "system", "subtype": "turn_duration"},
            {"type": "system"},
            {**_user("a sub-agent's prompt"), "isSidechain": True},
            {"type": "assistant", "isApiErrorMessage": True, "message": {"content": "429"}},
            {"type": "assistant", "message": "not an object"},
        )
        assert events == []
        assert dict(report.skipped) == {
            "progress (live tool, hook and sub-agent updates)": 1,
            "file-history-snapshot (file backups)": 1,
            "queue-operation (input queued while busy)": 1,
            "summary (a session title)": 1,
            "custom-title (a session title)": 1,
            "attachment (files, hook output and reminders Claude Code attached; not kept)": 1,
            "agent-name (the session's agent name)": 1,
            "last-prompt (a copy of the latest prompt, for the UI)": 1,
            "pr-link (a pull request the session opened)": 1,
            "system/turn_duration (not shown to the model)": 1,
            "system/None (not shown to the model)": 1,
            "sidechain (a sub-agent's own conversation)": 1,
            "API error notice (not model output)": 1,
            "assistant record without a message": 1,
        }
        assert dict(report.handled) == {}

    def test_unknown_types_are_counted_by_type(self, tmp_path: Path) -> None:
        """Another type, a missing one, a type that is not text, a line not an object: counted."""
        events, report = _import(
            tmp_path, {"type": "hologram"}, {}, {"type": ["x"]}, {"type": 7}, "[1]"
        )
        assert events == []
        assert dict(report.skipped) == {
            "unknown record type 'hologram'": 1,
            "unknown record type None": 1,
            "unknown record type ['x']": 1,
            "unknown record type 7": 1,
            "a JSON list where a record (object) was expected": 1,
        }

    def test_strict_refuses_an_unknown_type_naming_its_line(self, tmp_path: Path) -> None:
        """With strict, the first unknown record stops the import with its file and line."""
        path = _write(tmp_path, _user("hi"), {"type": "hologram"})
        report = ImportReport(path=str(path))
        with pytest.raises(TranscriptError) as caught:
            list(load(path, "claude-code", report=report, strict=True))
        assert (caught.value.path, caught.value.line) == (str(path), 2)
        assert caught.value.reason == "unknown record type 'hologram'"

    def test_a_skipped_type_is_not_an_error_when_strict(self, tmp_path: Path) -> None:
        """A known skipped type passes a strict import (only unknown ones are refused)."""
        path = _write(tmp_path, {"type": "progress"}, _user("hi"))
        report = ImportReport(path=str(path))
        events = [e.data for e in load(path, "claude-code", report=report, strict=True)]
        assert events == _request("hi")


class TestPermissionMode:
    def test_the_latest_mode_applies_to_requests_without_their_own(self, tmp_path: Path) -> None:
        """`permission-mode` plan makes later requests plan turns until another mode comes."""
        events, report = _import(
            tmp_path,
            _user("before"),
            {"type": "permission-mode", "permissionMode": "plan"},
            _user("planning"),
            _user("my own mode", permissionMode="default"),
            {"type": "permission-mode", "permissionMode": "acceptEdits"},
            _user("editing"),
            _user("plan again", permissionMode="plan"),
            {"type": "permission-mode", "permissionMode": "plan"},
            {"type": "permission-mode", "permissionMode": 5},
            _user("not text"),
        )
        starts = [e for e in events if isinstance(e, TurnStartData)]
        assert [s.mode for s in starts] == [None, "plan", None, None, "plan", None]
        assert report.handled["permission-mode"] == 4
        assert report.turns == 6


class TestCompactBoundary:
    def test_a_boundary_then_its_summary_is_a_checkpoint(self, tmp_path: Path) -> None:
        """The summary after a boundary replaces everything before it; nothing is skipped."""
        summary = [{"type": "text", "text": "Summary:"}, {"type": "text", "text": "did a"}]
        events, report = _import(
            tmp_path,
            _user("do a"),
            {"type": "system", "subtype": "compact_boundary"},
            _user(summary, isCompactSummary=True),
            _user("next"),
        )
        assert events[:2] == _request("do a")
        checkpoint = events[2]
        assert isinstance(checkpoint, CheckpointData)
        assert (checkpoint.text, checkpoint.first_seq, checkpoint.last_seq) == (
            "Summary:\ndid a",
            1,
            2,
        )
        assert checkpoint.summarizer == "claude-code"
        assert events[3:] == [TurnEndData(), *_request("next")]
        assert report.handled["compact_boundary"] == 1
        assert dict(report.skipped) == {}

    def test_each_boundary_is_counted(self, tmp_path: Path) -> None:
        """Two compactions: two boundaries handled; the second span starts after the first."""
        boundary = {"type": "system", "subtype": "compact_boundary"}
        events, report = _import(
            tmp_path,
            _user("do a"),
            boundary,
            _user("Summary 1", isCompactSummary=True),
            _user("do b"),
            boundary,
            _user("Summary 2", isCompactSummary=True),
        )
        spans = [(e.first_seq, e.last_seq) for e in events if isinstance(e, CheckpointData)]
        assert spans == [(1, 2), (3, 6)]
        assert report.handled["compact_boundary"] == 2
        assert report.checkpoints == 2

    @pytest.mark.parametrize(
        "after",
        [
            [_user("next")],
            [_user("next"), _user("and again")],
            [_assistant("hello")],
            [],
        ],
    )
    def test_a_boundary_without_its_summary_is_counted_once(
        self, tmp_path: Path, after: list[Record]
    ) -> None:
        """A boundary followed by anything but a summary (or by the end) is skipped, once."""
        events, report = _import(
            tmp_path, _user("do a"), {"type": "system", "subtype": "compact_boundary"}, *after
        )
        assert not any(isinstance(e, CheckpointData) for e in events)
        assert dict(report.skipped) == {"compact_boundary with no summary after it": 1}

    @pytest.mark.parametrize(
        ("between", "lost"),
        [(_user("next"), 1), (_assistant("hello"), 1), ({"type": "progress"}, 0)],
    )
    def test_a_message_between_a_boundary_and_a_summary_loses_the_boundary(
        self, tmp_path: Path, between: Record, lost: int
    ) -> None:
        """A message after a boundary means its summary is missing, even if one comes later."""
        boundary = {"type": "system", "subtype": "compact_boundary"}
        summary = _user("Summary", isCompactSummary=True)
        _, report = _import(tmp_path, _user("do a"), boundary, between, summary)
        assert report.skipped["compact_boundary with no summary after it"] == lost
        assert report.checkpoints == 1

    def test_a_summary_string_is_its_text(self, tmp_path: Path) -> None:
        """A summary whose content is one string keeps it as the checkpoint's text."""
        events, _ = _import(
            tmp_path,
            _user("do a"),
            {"type": "system", "subtype": "compact_boundary"},
            _user("Summary: a", isCompactSummary=True),
            {"type": "progress"},
        )
        assert isinstance(events[2], CheckpointData)
        assert events[2].text == "Summary: a"


class TestAssistant:
    def test_blocks_become_text_and_calls(self, tmp_path: Path) -> None:
        """Text is kept, tool_use becomes a call, other blocks are skipped by their type."""
        content = [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Looking."},
            {"type": "text", "text": 7},
            "loose",
            _use("t1", "Bash", {"command": "ls"}),
            {"type": "tool_use"},
        ]
        events, report = _import(tmp_path, _user("go"), _assistant(content))
        assert events[2:] == [
            Message(
                role="assistant",
                content="Looking.",
                tool_calls=(
                    _call("t1", "Bash", '{"command": "ls"}'),
                    _call("None", "None", "{}"),
                ),
            ),
            _tool("t1", no_result_text()),
            _tool("None", no_result_text()),
        ]
        assert dict(report.skipped) == {
            "assistant thinking block (not kept)": 1,
            "assistant text block (not kept)": 1,
            "assistant None block (not kept)": 1,
        }
        assert report.unanswered_calls == 2

    def test_a_string_content_is_one_text(self, tmp_path: Path) -> None:
        """An assistant message whose content is a string is that text."""
        events, report = _import(tmp_path, _user("go"), _assistant("Done."))
        assert events[2:] == [Message(role="assistant", content="Done.")]
        assert report.handled["assistant message"] == 1

    def test_records_of_one_message_id_merge(self, tmp_path: Path) -> None:
        """Claude Code's one record per block, under one message id, is one assistant message."""
        events, _ = _import(
            tmp_path,
            _user("go"),
            _assistant([{"type": "text", "text": "First."}]),
            _assistant([{"type": "text", "text": "Second."}]),
            _assistant([{"type": "text", "text": "Other."}], msg_id="m2"),
        )
        assert events[2:] == [
            Message(role="assistant", content="First.\n\nSecond."),
            Message(role="assistant", content="Other."),
        ]

    def test_without_a_message_id_the_record_uuid_is_the_key(self, tmp_path: Path) -> None:
        """No text id: records sharing a uuid merge; without either, records stay apart."""
        one = {"role": "assistant", "content": "One."}
        two = {"role": "assistant", "content": "Two."}
        events, _ = _import(
            tmp_path,
            _user("go"),
            {"type": "assistant", "uuid": "u1", "message": {**one, "id": 5}},
            {"type": "assistant", "uuid": "u1", "message": two},
            {"type": "assistant", "uuid": 9, "message": one},
            {"type": "assistant", "uuid": 9, "message": two},
        )
        assert events[2:] == [
            Message(role="assistant", content="One.\n\nTwo."),
            Message(role="assistant", content="One."),
            Message(role="assistant", content="Two."),
        ]

    def test_content_neither_text_nor_blocks_writes_only_its_usage(self, tmp_path: Path) -> None:
        """A message with unusable content writes no message, but its usage is kept."""
        message = {"id": "m1", "model": "claude-x", "content": 42, "usage": {"input_tokens": 3}}
        events, _ = _import(tmp_path, {"type": "assistant", "message": message})
        assert events == [
            UsageReportData(
                purpose="turn",
                model="claude-x",
                prompt_tokens=3,
                completion_tokens=0,
                cached_tokens=0,
                cache_write_tokens=0,
            )
        ]


class TestUsage:
    def test_the_prompt_is_the_sum_of_the_three_input_figures(self) -> None:
        """Prompt = input + cache reads + cache writes; cached and written kept apart."""
        usage = {
            "input_tokens": 3,
            "cache_read_input_tokens": 500,
            "cache_creation_input_tokens": 40,
            "output_tokens": 21,
        }
        assert usage_of({"model": "claude-opus", "usage": usage}) == UsageReportData(
            purpose="turn",
            model="claude-opus",
            prompt_tokens=543,
            completion_tokens=21,
            cached_tokens=500,
            cache_write_tokens=40,
        )

    @pytest.mark.parametrize(
        "message",
        [
            {"model": "<synthetic>", "usage": {"input_tokens": 1}},
            {"model": "claude", "usage": [1]},
            {"model": "claude"},
        ],
    )
    def test_no_usage_object_or_a_synthetic_message_has_none(
        self, message: dict[str, object]
    ) -> None:
        """A made-up message, or one with no usage mapping, reports nothing."""
        assert usage_of(message) is None

    def test_a_model_that_is_not_text_is_unknown(self) -> None:
        """Figures that are missing, negative or booleans count 0; a model not text: unknown."""
        usage = {"input_tokens": -1, "output_tokens": True, "cache_read_input_tokens": 2}
        assert usage_of({"model": 4, "usage": usage}) == UsageReportData(
            purpose="turn",
            model="unknown",
            prompt_tokens=2,
            completion_tokens=0,
            cached_tokens=2,
            cache_write_tokens=0,
        )

    def test_the_latest_usage_of_a_message_is_written_before_it(self, tmp_path: Path) -> None:
        """Records of one message repeat its usage: the last one is written, once."""
        events, _ = _import(
            tmp_path,
            _user("go"),
            _assistant("a", model="claude", usage={"input_tokens": 1, "output_tokens": 1}),
            _assistant("b", model="claude", usage={"input_tokens": 1, "output_tokens": 9}),
        )
        assert events[2:] == [
            UsageReportData(
                purpose="turn",
                model="claude",
                prompt_tokens=1,
                completion_tokens=9,
                cached_tokens=0,
                cache_write_tokens=0,
            ),
            Message(role="assistant", content="a\n\nb"),
        ]


class TestToolResults:
    def _answered(
        self, tmp_path: Path, *results: dict[str, object], **fields: object
    ) -> list[EventData]:
        calls = [_use(str(r["tool_use_id"]), "Bash", {"command": "ls"}) for r in results]
        events, _ = _import(
            tmp_path, _user("go"), _assistant(calls), _user(list(results), **fields)
        )
        return events[3:]

    def test_result_contents(self, tmp_path: Path) -> None:
        """A string, text blocks joined by newlines, none, a number, stray blocks skipped."""
        results = (
            _result("t1", "plain"),
            _result("t2", [{"type": "text", "text": "a"}, 5, {"type": "text", "text": "b"}]),
            _result("t3", None),
            _result("t4", 42),
            _result("t5", [{"type": "text", "text": 1}, {"type": "other"}]),
        )
        assert self._answered(tmp_path, *results) == [
            _tool("t1", "plain", failed=False),
            _tool("t2", "a\nb", failed=False),
            _tool("t3", "", failed=False),
            _tool("t4", "42", failed=False),
            _tool("t5", "", failed=False),
        ]

    def test_a_result_with_an_image_keeps_its_parts(self, tmp_path: Path) -> None:
        """Text and an image stay parts, in order; an image without a source is left out."""
        image = {"type": "image", "source": {"type": "url", "url": "https://example.invalid/i"}}
        blocks = [{"type": "text", "text": "see"}, {"type": "image"}, image]
        assert self._answered(tmp_path, _result("t1", blocks)) == [
            _tool(
                "t1",
                (
                    TextPart(text="see"),
                    ImagePart(image_url=ImageURL(url="https://example.invalid/i")),
                ),
                failed=False,
            )
        ]

    @pytest.mark.parametrize(
        ("content", "exit_code"),
        [
            ("Exit code 2\nls: no such file", 2),
            ("  \n Exit code 3\n", 3),
            ([{"type": "text", "text": "Exit code 4"}, {"type": "text", "text": "out"}], 4),
            ("error: Exit code 5", None),
            ("failed\nExit code 5", None),
            ([{"type": "text", "text": "Exit code 6"}, {"type": "image", "source": PNG}], 6),
            (
                [
                    {"type": "text", "text": " "},
                    {"type": "text", "text": "Exit code 8"},
                    {"type": "image", "source": PNG},
                ],
                8,
            ),
            ("Exit code" + " " * 70 + "7", 7),
            ("Exit code" + " " * 71 + "7", None),
            ("Permission denied", None),
        ],
    )
    def test_a_failed_result_reads_its_exit_code(
        self, tmp_path: Path, content: object, exit_code: int | None
    ) -> None:
        """An error result's `Exit code N` (in its first 80 characters) is its exit code."""
        [tool] = self._answered(tmp_path, _result("t1", content, is_error=True))
        assert isinstance(tool, Message)
        assert (tool.exit_code, tool.failed) == (exit_code, True)

    def test_a_result_not_marked_failed_has_no_exit_code(self, tmp_path: Path) -> None:
        """`Exit code N` in a result not marked as an error is its text, not its status."""
        [tool] = self._answered(tmp_path, _result("t1", "Exit code 2", is_error=False))
        assert tool == _tool("t1", "Exit code 2", failed=False)

    def test_a_result_meta_names_the_created_task(self, tmp_path: Path) -> None:
        """The record's `toolUseResult` reaches the task tools: the new task's id is its own."""
        call = _use("t1", "TaskCreate", {"subject": "Write docs", "description": "the API"})
        events, _ = _import(
            tmp_path,
            _user("go"),
            _assistant([call]),
            _user([_result("t1", "created")], toolUseResult={"task": {"id": "17"}}),
        )
        [created] = [e for e in events if isinstance(e, TaskCreateData)]
        assert (created.task.id, created.task.subject) == ("17", "Write docs")
        assert created.task.description == "the API"

    def test_a_task_update_is_written(self, tmp_path: Path) -> None:
        """A TaskUpdate call after its task's creation changes that task."""
        create = _use("t1", "TaskCreate", {"subject": "Write docs"})
        update = _use("t2", "TaskUpdate", {"taskId": "3", "status": "in_progress"})
        events, _ = _import(
            tmp_path,
            _user("go"),
            _assistant([create]),
            _user([_result("t1", "Task #3 created")]),
            _assistant([update], msg_id="m2"),
            _user([_result("t2", "updated")]),
        )
        tasks = [e.task for e in events if isinstance(e, TaskCreateData | TaskUpdateData)]
        assert [(t.id, t.status, t.version) for t in tasks] == [
            ("3", "pending", 1),
            ("3", "in_progress", 2),
        ]

    def test_text_beside_results_follows_them(self, tmp_path: Path) -> None:
        """Text in the results' record is written after them, with the origin of its kind."""
        results = [
            _result("t1", "ok"),
            {"type": "text", "text": "also this"},
            {"type": "text", "text": "<system-reminder>remember</system-reminder>"},
        ]
        events, report = _import(
            tmp_path, _user("go"), _assistant([_use("t1", "Bash", {})]), _user(results)
        )
        content = (
            TextPart(text="also this"),
            TextPart(text="<system-reminder>remember</system-reminder>"),
        )
        assert events[3:] == [
            _tool("t1", "ok", failed=False),
            Message(role="user", content=content, origin="injected"),
        ]
        assert report.handled["user text beside results"] == 1

    @pytest.mark.parametrize(
        ("text", "origin", "kind"),
        [
            ("[Request interrupted by user for tool use]", "interruption", "interruption notice"),
            ("<system-reminder>x</system-reminder>", "injected", "system reminder"),
        ],
    )
    def test_a_notice_beside_results_keeps_its_kind(
        self, tmp_path: Path, text: str, origin: str, kind: str
    ) -> None:
        """A notice alone beside the results is one text, of its kind's origin."""
        results = [_result("t1", "ok"), {"type": "text", "text": text}]
        events, report = _import(
            tmp_path, _user("go"), _assistant([_use("t1", "Bash", {})]), _user(results)
        )
        assert events[3:] == [
            _tool("t1", "ok", failed=False),
            Message(role="user", content=text, origin=origin),
        ]
        assert report.handled[kind] == 1
        assert report.turns == 1

    def test_a_todo_write_with_no_list_is_counted(self, tmp_path: Path) -> None:
        """TodoWrite whose arguments are not an object writes no list and says why."""
        calls = [_use("t1", "TodoWrite", ["x"]), _use("t2", "TodoWrite", {"todos": "x"})]
        results = [_result("t1", "ok"), _result("t2", "ok")]
        events, report = _import(tmp_path, _user("go"), _assistant(calls), _user(results))
        assert not any(isinstance(e, TodoWriteData) for e in events)
        reason = "TodoWrite call with an unreadable list (the list is not an array)"
        assert report.skipped[reason] == 2

    def test_a_todo_write_writes_its_list(self, tmp_path: Path) -> None:
        """TodoWrite's list is written just before its result, activeForm dropped."""
        todos = [{"content": "a", "status": "in_progress", "activeForm": "Doing a"}]
        events, _ = _import(
            tmp_path,
            _user("go"),
            _assistant([_use("t1", "TodoWrite", {"todos": todos})]),
            _user([_result("t1", "ok")]),
        )
        assert events[3:] == [
            TodoWriteData(todos=(TodoItem(content="a", status="in_progress"),)),
            _tool("t1", "ok", failed=False),
        ]


class TestUserRecords:
    def test_blocks_that_are_not_kept_are_counted(self, tmp_path: Path) -> None:
        """Unknown blocks, stray values and text that is not a string are skipped by type."""
        blocks = [
            {"type": "document"},
            "loose",
            {"type": "text", "text": 3},
            {"type": "text", "text": "kept"},
        ]
        events, report = _import(tmp_path, _user(blocks))
        assert events == _request("kept")
        assert dict(report.skipped) == {
            "user document block (not kept)": 1,
            "user None block (not kept)": 1,
            "user text block (not kept)": 1,
        }

    @pytest.mark.parametrize(
        "record",
        [
            {"type": "user"},
            {"type": "user", "message": "text"},
            _user(None),
            _user({"text": "a"}),
        ],
    )
    def test_a_record_without_content_is_counted(
        self, tmp_path: Path, record: dict[str, object]
    ) -> None:
        """No message, a message not an object, no content: nothing written, counted."""
        events, report = _import(tmp_path, record)
        assert events == []
        assert dict(report.skipped) == {"user record without content": 1}

    def test_a_record_of_blocks_with_nothing_kept_writes_nothing(self, tmp_path: Path) -> None:
        """Blocks none of which is kept start no turn."""
        events, report = _import(tmp_path, _user([{"type": "document"}]))
        assert events == []
        assert report.turns == 0

    def test_two_texts_are_kept_as_parts(self, tmp_path: Path) -> None:
        """A request of two text blocks keeps both parts."""
        blocks = [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
        events, _ = _import(tmp_path, _user(blocks))
        assert events == [
            TurnStartData(),
            Message(
                role="user", content=(TextPart(text="one"), TextPart(text="two")), origin="user"
            ),
        ]

    @pytest.mark.parametrize(
        ("text", "origin", "kind"),
        [
            ("[Request interrupted by user]", "interruption", "interruption notice"),
            ("<local-command-caveat>Caveat</local-command-caveat>", "injected", None),
            ("<local-command-stdout>out</local-command-stdout>", "command", None),
            ("<local-command-stderr>err</local-command-stderr>", "command", None),
            ("<task-notification>done</task-notification>", "injected", None),
            ("<system-reminder>r</system-reminder>", "injected", None),
            ("<bash-input>ls</bash-input>", "shell", "shell escape"),
            ("<bash-stdout>a</bash-stdout>", "shell", None),
            ("<bash-stderr>b</bash-stderr>", "shell", None),
            ("Operation stopped by hook: no", "hook", "hook notice"),
            ("[Operation stopped by hook: no]", "hook", "hook notice"),
            ("  \n<system-reminder>indented</system-reminder>", "injected", "system reminder"),
        ],
    )
    def test_text_the_tool_wrote_starts_no_turn(
        self, tmp_path: Path, text: str, origin: str, kind: str | None
    ) -> None:
        """Notices, caveats, command output and shell escapes are messages of their origin."""
        events, report = _import(tmp_path, _user(text))
        assert events == [Message(role="user", content=text, origin=origin)]
        assert report.turns == 0
        if kind is not None:
            assert dict(report.handled) == {kind: 1}

    def test_a_notice_split_over_blocks_is_told_from_their_joined_text(
        self, tmp_path: Path
    ) -> None:
        """Text blocks are read as one text, lines joined: a notice after a blank block."""
        blocks = [{"type": "text", "text": " "}, {"type": "text", "text": "<system-reminder>r"}]
        events, report = _import(tmp_path, _user(blocks))
        parts = (TextPart(text=" "), TextPart(text="<system-reminder>r"))
        assert events == [Message(role="user", content=parts, origin="injected")]
        assert report.turns == 0

    def test_each_kind_is_counted_by_its_name(self, tmp_path: Path) -> None:
        """The report names each kind of tool-written text."""
        _, report = _import(
            tmp_path,
            _user("<local-command-caveat>c</local-command-caveat>"),
            _user("<local-command-stdout>o</local-command-stdout>"),
            _user("<local-command-stderr>e</local-command-stderr>"),
            _user("<task-notification>n</task-notification>"),
            _user("<system-reminder>r</system-reminder>"),
            _user("<bash-stdout>a</bash-stdout>"),
            _user("<bash-stderr>b</bash-stderr>"),
        )
        assert dict(report.handled) == {
            "local command caveat": 1,
            "local command output": 2,
            "background task notification": 1,
            "system reminder": 1,
            "shell escape output": 2,
        }

    def test_a_meta_record_is_context_not_a_request(self, tmp_path: Path) -> None:
        """`isMeta` text is a skill body (origin skill), or injected when it is a notice."""
        events, report = _import(
            tmp_path,
            _user("Base directory for this skill: ...", isMeta=True),
            _user("<system-reminder>r</system-reminder>", isMeta=True),
            _user([{"type": "text", "text": "skill part"}], isMeta=True),
        )
        assert events == [
            Message(role="user", content="Base directory for this skill: ...", origin="skill"),
            Message(role="user", content="<system-reminder>r</system-reminder>", origin="injected"),
            Message(role="user", content="skill part", origin="skill"),
        ]
        assert dict(report.handled) == {"meta (kept as context, not a request)": 3}
        assert report.turns == 0

    @pytest.mark.parametrize(
        ("cwd", "kept"),
        [
            ("/repo", "/repo"),
            ("repo", None),
            ("", None),
            (7, None),
            ("/" + "a" * 4094, "/" + "a" * 4094),
            ("/" + "a" * 4095, None),
        ],
    )
    def test_a_request_keeps_an_absolute_working_directory(
        self, tmp_path: Path, cwd: object, kept: str | None
    ) -> None:
        """The record's `cwd` is the turn's when it is an absolute path under 4096 characters."""
        events, _ = _import(tmp_path, _user("go", cwd=cwd))
        assert events == _request("go", cwd=kept)

    @pytest.mark.parametrize(
        ("text", "content", "origin"),
        [
            (
                "<command-name>/clear</command-name>",
                "<command-name>/clear</command-name>",
                "command",
            ),
            (
                " \n<command-message>init</command-message>",
                " \n<command-message>init</command-message>",
                "command",
            ),
            (
                "<command-name>/review</command-name><command-args>this</command-args>",
                "/review this",
                "user",
            ),
            ("see <command-name>/x</command-name>", "see <command-name>/x</command-name>", "user"),
            ("see <command-args>x</command-args>", "see <command-args>x</command-args>", "user"),
        ],
    )
    def test_slash_commands_are_requests(
        self, tmp_path: Path, text: str, content: str, origin: str
    ) -> None:
        """A command opens a turn: its tags as a command, or what the user typed."""
        events, report = _import(tmp_path, _user(text, cwd="/r"))
        assert events == [
            TurnStartData(cwd="/r"),
            Message(role="user", content=content, origin=origin),
        ]
        assert dict(report.handled) == {"user request": 1}

    @pytest.mark.parametrize(
        ("text", "content", "origin"),
        [
            ("<command-name>/plan</command-name>", "<command-name>/plan</command-name>", "command"),
            ("<command-name>/r</command-name><command-args>go</command-args>", "/r go", "user"),
        ],
    )
    def test_a_slash_command_in_plan_mode_starts_a_plan_turn(
        self, tmp_path: Path, text: str, content: str, origin: str
    ) -> None:
        """A command, with or without arguments, takes the request's permission mode."""
        events, _ = _import(tmp_path, _user(text, permissionMode="plan"))
        assert events == [
            TurnStartData(mode="plan"),
            Message(role="user", content=content, origin=origin),
        ]


class TestCommandTyped:
    @pytest.mark.parametrize(
        ("tags", "typed"),
        [
            ("<command-name> /review </command-name><command-args>a</command-args>", "/review a"),
            ("<command-name>/r</command-name><command-args>a\nb</command-args>", "/r a\nb"),
            (
                "<command-name>/r</command-name><command-args>one</command-args>"
                "<command-args>two</command-args>",
                "/r one",
            ),
            ("<command-name></command-name><command-args>x</command-args>", "/command x"),
            ("<command-args>\n x \n</command-args>", "/command x"),
            ("<command-args> </command-args>", None),
            ("<command-args></command-args>", None),
            ("<command-name>/r</command-name>", None),
        ],
    )
    def test_what_the_user_typed(self, tags: str, typed: str | None) -> None:
        """The name (a `/` added), a space and the first arguments, stripped; none: None."""
        assert command_typed(tags) == typed
