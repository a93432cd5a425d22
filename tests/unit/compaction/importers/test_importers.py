"""Transcript importers on small fixtures written for each format."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

import compaction
from compaction import CompactionPolicy, Session, TodoItem, check_log, compact, importers
from compaction.checkpoint import encode_item, parse_checkpoint
from compaction.compactor.compact import maybe_compact
from compaction.errors import CompactionError, ConfigError, TranscriptError
from compaction.events import (
    CheckpointData,
    CheckpointRecorded,
    Event,
    Message,
    MessageAdded,
    TaskCreated,
    TaskRef,
    TaskUpdated,
    TodoWritten,
)
from compaction.importers import (
    ImportReport,
    ReplayReport,
    import_to_store,
    import_transcript,
    load,
    replay,
)
from compaction.importers._detect import detect_format
from compaction.importers._formats import FORMATS, importer
from compaction.importers._import_report import RuleBreak
from compaction.stores import open_session_store, open_store, read_events
from compaction.stores.log_reader import BadLine
from compaction.summarizers import ExtractiveSummarizer
from compaction.tokens import get_tokenizer
from compaction.views import LatestTodosProjection, TasksProjection, TodosProjection
from compaction.views._projection import fold

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "transcripts"


def message_of(event: Event) -> Message:
    """The message an event records (the test fails if it records something else)."""
    assert isinstance(event.data, Message), event
    return event.data


def checkpoint_of(event: Event) -> CheckpointData:
    """The checkpoint an event records."""
    assert isinstance(event.data, CheckpointData), event
    return event.data


def imported(name: str | Path, **kwargs: Any) -> tuple[list[Event], ImportReport]:
    path = name if isinstance(name, Path) else FIXTURES / name
    report = ImportReport(path=str(path))
    events = list(load(path, report=report, **kwargs))
    return events, report


def assert_paired(events: list[Event]) -> None:
    """Every call is answered by exactly one tool message, right after its assistant message."""
    waiting: list[str] = []
    for event in events:
        if not isinstance(event, MessageAdded):
            continue
        msg = event.data
        if msg.role == "tool":
            assert msg.tool_call_id == (waiting.pop(0) if waiting else None), event.seq
            continue
        assert not waiting, f"calls {waiting} unanswered before seq {event.seq}"
        waiting = [c.id for c in msg.tool_calls or ()]
    assert not waiting
    check_log(events)


def todos_of(events: list[Event]) -> list[tuple[TodoItem, ...]]:
    return [e.data.todos for e in events if isinstance(e, TodoWritten)]


def tasks_of(events: list[Event]) -> list[tuple[str, str, str, str, int]]:
    """(type, id, subject, status, version) of each task event, in order."""
    return [
        (e.type, e.data.task.id, e.data.task.subject, e.data.task.status, e.data.task.version)
        for e in events
        if isinstance(e, TaskCreated | TaskUpdated)
    ]


@contextmanager
def replayed(
    events: list[Event], path: Path, window: int
) -> Iterator[tuple[Session, ReplayReport]]:
    with Session(path, sync="batch") as session:
        yield session, replay(events, session, CompactionPolicy(window_tokens=window))


def assert_tasks_carried(report: ReplayReport) -> None:
    """At every cut, each unfinished item stands verbatim in the right Checkpoint section."""
    assert report.compactions, "the window was meant to force compaction"
    for c in report.compactions:
        pending, current = c.unfinished
        text = c.result.data.text
        parsed = parse_checkpoint(text)
        assert (parsed.pending_jobs, parsed.current_work) == (pending, current)
        assert (c.result.data.pending, c.result.data.current) == (pending, current)
        lines = text.split("\n")
        for task in pending + current:
            assert lines.count(encode_item(task)) == 1


def item(content: str, status: str) -> TodoItem:
    return TodoItem.model_validate({"content": content, "status": status})


class TestClaudeCode:
    def test_event_counts(self):
        """The fixture gives the events, turns and calls it was written to hold."""
        events, report = imported("claude_code_small.jsonl")
        assert report.format == "claude-code"
        assert [e.seq for e in events] == list(range(1, 39))
        assert dict(report.events_by_type) == {
            "turn/start": 3,
            "message": 25,
            "todo/write": 2,
            "task/create": 2,
            "task/update": 3,
            "compaction/checkpoint": 1,
            "turn/end": 2,
        }
        assert (report.records, report.turns, report.tool_calls) == (34, 3, 10)
        assert (report.unanswered_calls, report.orphan_results) == (1, 0)

    def test_calls_paired(self):
        """Records of one message merge; every call is answered (a missing result: placeholder)."""
        events, _ = imported("claude_code_small.jsonl")
        assert_paired(events)
        calls = [
            [c.id for c in e.data.tool_calls or ()]
            for e in events
            if isinstance(e, MessageAdded) and e.data.role == "assistant"
        ]
        assert ["tu_8", "tu_9"] in calls
        last_tool = [e for e in events if isinstance(e, MessageAdded) and e.data.role == "tool"][-1]
        assert last_tool.data.tool_call_id == "tu_10"
        assert "no result" in last_tool.data.text()

    def test_todo_write_drops_active_form(self):
        """TodoWrite becomes todo/write with content and status only."""
        events, _ = imported("claude_code_small.jsonl")
        assert todos_of(events)[0] == (
            item("Add the flag", "in_progress"),
            item("Test it", "pending"),
        )

    def test_rule_breaking_list_kept_and_counted(self):
        """A recorded list with two items in progress is imported as written, and counted."""
        events, report = imported("claude_code_small.jsonl")
        assert todos_of(events)[1] == (
            item("Add the flag", "in_progress"),
            item("Test it", "in_progress"),
        )
        assert [rb.seq for rb in report.rule_breaking_lists] == [9]
        assert "2 items are in_progress" in report.rule_breaking_lists[0].violations[0]

    def test_rejected_call_writes_no_list(self):
        """A TodoWrite whose result is an error changed nothing: no todo/write for it."""
        events, _ = imported("claude_code_small.jsonl")
        assert all(t.content != "Oops" for todos in todos_of(events) for t in todos)

    def test_task_tools_become_task_events(self):
        """TaskCreate/TaskUpdate calls become task/create and task/update events, by their ids."""
        events, _ = imported("claude_code_small.jsonl")
        assert tasks_of(events) == [
            ("task/create", "1", "Write the parser", "pending", 1),
            ("task/create", "2", "Run the tests", "pending", 1),
            ("task/update", "1", "Write the parser", "in_progress", 2),
            ("task/update", "1", "Write the parser", "completed", 3),
            ("task/update", "2", "Run the tests", "in_progress", 2),
        ]
        assert all(e.data.agent == "main" for e in events if isinstance(e, TaskCreated))
        board = fold(TasksProjection(), events)
        assert [(t.id, t.status, t.description) for t in board.live()] == [
            ("1", "completed", "Parse the flag"),
            ("2", "in_progress", "All of them"),
        ]
        assert len(todos_of(events)) == 2, "task calls write no todo list"

    def test_compaction_kept_as_checkpoint(self):
        """compact_boundary + isCompactSummary becomes a checkpoint over everything before it."""
        events, _ = imported("claude_code_small.jsonl")
        (cp,) = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert (cp.seq, cp.data.first_seq, cp.data.last_seq) == (14, 1, 13)
        assert cp.data.summarizer == "claude-code"
        assert cp.data.text.startswith("This session is being continued")
        assert cp.data.current == ("Add the flag", "Test it")
        assert cp.data.tokens_after < cp.data.tokens_before

    def test_only_real_requests_start_turns(self):
        """Meta records, interruptions and tool results start no turn."""
        events, report = imported("claude_code_small.jsonl")
        starts = [e.seq for e in events if e.type == "turn/start"]
        assert [message_of(events[s]).text() for s in starts] == [
            "Add a --verbose flag to the CLI",
            "Now track the work with the task tools",
            "what next?",
        ]
        assert report.handled["meta (kept as context, not a request)"] == 1
        assert report.handled["interruption notice"] == 1

    def test_messy_lines_survived(self):
        """Glued objects are split, a broken line and a truncated tail are reported by number."""
        _, report = imported("claude_code_small.jsonl")
        assert report.glued_lines == [8]
        assert [b.line for b in report.broken_lines] == [17]
        assert report.torn_line == 35

    def test_skips_counted_by_reason(self):
        """Every skipped record is counted under its reason or type."""
        _, report = imported("claude_code_small.jsonl")
        assert dict(report.skipped) == {
            "assistant thinking block (not kept)": 1,
            "file-history-snapshot (file backups)": 1,
            "progress (live tool, hook and sub-agent updates)": 1,
            "sidechain (a sub-agent's own conversation)": 1,
            "summary (a session title)": 1,
            "unknown record type 'mystery-record'": 1,
        }

    def test_views(self):
        """The last request empties the panel; the latest list and the tasks survive."""
        events, _ = imported("claude_code_small.jsonl")
        assert fold(TodosProjection(), events).todos == ()
        assert fold(LatestTodosProjection(), events).todos == (
            item("Add the flag", "in_progress"),
            item("Test it", "in_progress"),
        )
        board = fold(TasksProjection(), events)
        assert board.unfinished("in_progress") == (
            TaskRef(id="2", owner=None, subject="Run the tests"),
        )


def claude_records(*records: dict[str, object]) -> str:
    return "".join(json.dumps({"sessionId": "s", **r}) + "\n" for r in records)


def claude_call(msg_id: str, call_id: str, name: str, args: dict[str, object]) -> dict[str, object]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": args}
    return {"type": "assistant", "message": {"id": msg_id, "role": "assistant", "content": [block]}}


def claude_result(call_id: str, content: str, **extra: object) -> dict[str, object]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    return {"type": "user", "message": {"role": "user", "content": [block]}, **extra}


class TestClaudeCodeEdges:
    def test_enormous_tool_output(self, tmp_path):
        """A 4 MB tool result is imported whole and reported as the largest output."""
        path = tmp_path / "big.jsonl"
        # Lines of 999 letters, not one 4 MB run of "x": tiktoken takes 2.8 CPU s over such a
        # run (one 4 MB word), 0.4 s over these lines; the importer sees the same 4 MB either way.
        path.write_text(
            claude_records(
                {"type": "user", "message": {"role": "user", "content": "dump the log"}},
                claude_call("m1", "t1", "Bash", {"command": "cat huge.log"}),
                claude_result("t1", ("x" * 999 + "\n") * 4_000),
            )
        )
        events, report = imported(path)
        assert report.largest_tool_output == 4_000_000
        assert len(message_of(events[-1]).text()) == 4_000_000
        assert_paired(events)

    def test_lone_surrogate_repaired(self, tmp_path):
        """Half an emoji (a lone surrogate escape) becomes U+FFFD, so the log can be written."""
        path = tmp_path / "s.jsonl"
        path.write_text(
            '{"type": "user", "sessionId": "s", "message": {"role": "user", '
            '"content": "cut \\ud83d here, kept \\ud83d\\ude00"}}\n'
        )
        out = tmp_path / "log.jsonl"
        report = import_transcript(path, out)
        (message,) = [e for e in read_events(out) if isinstance(e, MessageAdded)]
        assert message.data.text() == "cut \ufffd here, kept \U0001f600"
        assert report.handled["record with lone surrogates (each replaced by U+FFFD)"] == 1

    def test_deleted_task_leaves_the_list(self, tmp_path):
        """TaskUpdate with status deleted removes the task; an unknown id changes nothing."""
        path = tmp_path / "tasks.jsonl"
        path.write_text(
            claude_records(
                {"type": "user", "message": {"role": "user", "content": "plan it"}},
                claude_call("m1", "t1", "TaskCreate", {"subject": "A", "description": "a"}),
                claude_result("t1", "Task #1 created successfully: A"),
                claude_call("m2", "t2", "TaskCreate", {"subject": "B", "description": "b"}),
                claude_result("t2", "Task #2 created successfully: B"),
                claude_call("m3", "t3", "TaskUpdate", {"taskId": "1", "status": "deleted"}),
                claude_result("t3", "Updated task #1 deleted"),
                claude_call("m4", "t4", "TaskUpdate", {"taskId": "9", "status": "completed"}),
                claude_result("t4", "Task not found"),
                claude_call("m5", "t5", "TaskUpdate", {"taskId": "2", "subject": "B2"}),
                claude_result("t5", "Updated task #2 subject"),
            )
        )
        events, report = imported(path)
        assert tasks_of(events) == [
            ("task/create", "1", "A", "pending", 1),
            ("task/create", "2", "B", "pending", 1),
            ("task/update", "1", "A", "deleted", 2),
            ("task/update", "2", "B2", "pending", 2),
        ]
        assert [t.id for t in fold(TasksProjection(), events).live()] == ["2"]
        assert report.skipped["TaskUpdate call for an unknown task id"] == 1

    def test_owner_and_blockers_folded(self, tmp_path):
        """owner, addBlockedBy and addBlocks reach the task events; unknown blocker ids do not."""
        path = tmp_path / "team.jsonl"
        path.write_text(
            claude_records(
                {"type": "user", "message": {"role": "user", "content": "split the work"}},
                claude_call("m1", "t1", "TaskCreate", {"subject": "A"}),
                claude_result("t1", "Task #1 created successfully: A"),
                claude_call("m2", "t2", "TaskCreate", {"subject": "B"}),
                claude_result("t2", "ok", toolUseResult={"task": {"id": "7", "subject": "B"}}),
                claude_call("m3", "t3", "TaskUpdate", {"taskId": "7", "addBlockedBy": ["1", "9"]}),
                claude_result("t3", "Updated task #7 blockedBy"),
                claude_call("m4", "t4", "TaskUpdate", {"taskId": "1", "owner": "researcher"}),
                claude_result("t4", "Updated task #1 owner"),
                claude_call("m5", "t5", "TaskCreate", {"subject": "C"}),
                claude_result("t5", "Task #8 created successfully: C"),
                claude_call("m6", "t6", "TaskUpdate", {"taskId": "1", "addBlocks": ["8"]}),
                claude_result("t6", "Updated task #1 blocks"),
            )
        )
        events, _ = imported(path)
        board = fold(TasksProjection(), events)
        assert [(t.id, t.owner, t.blocked_by) for t in board.live()] == [
            ("1", "researcher", ()),
            ("7", None, ("1",)),
            ("8", None, ("1",)),
        ]
        assert board.next_id == "9"


class TestCodex:
    def test_event_counts(self):
        """The rollout fixture gives the events it was written to hold."""
        _, report = imported("codex_small.jsonl")
        assert report.format == "codex"
        assert dict(report.events_by_type) == {
            "message": 16,
            "turn/start": 2,
            "todo/write": 3,
            "compaction/checkpoint": 1,
            "turn/end": 1,
        }
        assert (report.records, report.turns, report.tool_calls) == (26, 2, 6)
        assert report.orphan_results == 1

    def test_calls_paired(self):
        """Parallel calls merge into one message; custom tool calls pair by call_id."""
        events, _ = imported("codex_small.jsonl")
        assert_paired(events)
        assistants = [e.data for e in events if isinstance(e, MessageAdded)]
        shell = [m for m in assistants if m.tool_calls and len(m.tool_calls) == 2]
        assert [c.id for c in shell[0].tool_calls or ()] == ["call_2", "call_3"]

    def test_update_plan_becomes_todo_write(self):
        """update_plan's step becomes content; a duplicate list is kept and counted."""
        events, report = imported("codex_small.jsonl")
        assert todos_of(events) == [
            (item("Find usages", "in_progress"), item("Rename", "pending")),
            (item("Rename", "completed"), item("Rename", "completed")),
            (item("Write the test", "in_progress"),),
        ]
        assert [rb.seq for rb in report.rule_breaking_lists] == [14]

    def test_injected_context_is_not_a_request(self):
        """environment_context is a user message with no turn; the developer message is system."""
        events, report = imported("codex_small.jsonl")
        assert events[0].type == "message"
        assert message_of(events[0]).role == "system"
        assert message_of(events[1]).text().startswith("<environment_context>")
        assert events[2].type == "turn/start"
        assert report.handled["context Codex injected"] == 1

    def test_compacted_becomes_checkpoint(self):
        """A compacted record is a checkpoint with summarizer codex."""
        events, _ = imported("codex_small.jsonl")
        (cp,) = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert (cp.data.summarizer, cp.data.first_seq, cp.data.last_seq) == ("codex", 1, 15)
        assert cp.data.text == "Summary: foo was renamed to bar in a.py."

    def test_skips_counted(self):
        """UI events, metadata and reasoning are skipped and counted; unknown records by type."""
        _, report = imported("codex_small.jsonl")
        assert report.skipped["event_msg/user_message (UI event)"] == 1
        assert report.skipped["reasoning item (not kept)"] == 1
        assert report.skipped["unknown record type 'weird_record'"] == 1


class TestOpenAI:
    def test_array_event_counts(self):
        """A JSON array of chat messages gives the events it was written to hold."""
        events, report = imported("openai_small.json")
        assert report.format == "openai"
        assert dict(report.events_by_type) == {
            "message": 18,
            "turn/start": 2,
            "todo/write": 4,
            "turn/end": 1,
        }
        assert (report.tool_calls, report.turns, report.todo_writes) == (7, 2, 4)
        assert_paired(events)

    def test_todo_tool_names(self):
        """todo_write, write_todos, update_plan and TodoWrite all write the list; extras dropped."""
        events, report = imported("openai_small.json")
        assert todos_of(events) == [
            (item("Bump the version", "in_progress"), item("Write the changelog", "pending")),
            (item("Bump the version", "completed"), item("Write the changelog", "in_progress")),
            (item("Write the changelog", "in_progress"), item("Publish", "in_progress")),
            (item("Publish the docs", "pending"),),
        ]
        assert [rb.seq for rb in report.rule_breaking_lists] == [12]

    def test_jsonl_with_broken_and_torn_lines(self):
        """JSONL of messages: a broken line and a truncated tail are reported, the rest read."""
        events, report = imported("openai_small.jsonl")
        assert len(events) == 6
        assert [b.line for b in report.broken_lines] == [5]
        assert report.torn_line == 8
        assert report.skipped == {"message with role 'robot'": 1}

    def test_truncated_array(self, tmp_path):
        """An array cut off mid-item yields every item before the cut."""
        text = (FIXTURES / "openai_small.json").read_text()
        cut = tmp_path / "cut.json"
        cut.write_text(text[: text.index("Also publish") + 5])
        events, report = imported(cut)
        assert report.turns == 1
        assert report.torn_line is not None
        assert_paired(events)

    def test_messages_object(self, tmp_path):
        """An object with a messages array is read like the array."""
        messages = json.loads((FIXTURES / "openai_small.json").read_text())
        path = tmp_path / "conv.json"
        path.write_text(json.dumps({"model": "gpt-4o", "messages": messages}, indent=1))
        events, report = imported(path)
        assert (len(events), report.records) == (25, 18)


class TestSweAgent:
    def test_history_event_counts(self):
        """Actions become calls, observations their results; the demo is not a request."""
        events, report = imported("swe_agent_small.traj")
        assert report.format == "swe-agent"
        assert dict(report.events_by_type) == {"message": 9, "turn/start": 1}
        assert (report.turns, report.tool_calls, report.unanswered_calls) == (1, 3, 1)
        assert report.handled["demonstration"] == 1
        assert_paired(events)

    def test_action_is_a_bash_call(self):
        """The action is the command of a bash call; the thought is the text."""
        events, _ = imported("swe_agent_small.traj")
        msg = message_of(events[4])
        assert msg.role == "assistant"
        assert msg.text() == "Let me find the function.\n\n"
        (call,) = msg.tool_calls or ()
        assert call.function.name == "bash"
        assert json.loads(call.function.arguments) == {"command": 'search_dir "def divide"\n'}

    def test_v1_tool_calls_kept(self):
        """SWE-agent 1.x messages keep their tool calls and tool_call_ids."""
        events, report = imported("swe_agent_v1_small.traj")
        assert (report.turns, report.tool_calls, report.unanswered_calls) == (1, 2, 0)
        assert_paired(events)


class TestReplay:
    def test_replay_compacts_and_keeps_tasks(self, tmp_path):
        """Replaying an import with a tiny window compacts, carrying every unfinished task."""
        events, _ = imported("claude_code_small.jsonl")
        with replayed(events, tmp_path / "r.jsonl", 300) as (session, report):
            assert_tasks_carried(report)
            assert any(c.unfinished != ((), ()) for c in report.compactions)
            check_log(session.events())

    def test_recorded_checkpoint_moved_to_new_seqs(self, tmp_path):
        """The agent's own compaction keeps its text; its span follows the replayed log."""
        events, _ = imported("codex_small.jsonl")
        with replayed(events, tmp_path / "r.jsonl", 100_000) as (session, report):
            assert (report.compactions, report.recorded_checkpoints) == ([], 1)
            (cp,) = [e for e in session.events() if isinstance(e, CheckpointRecorded)]
            assert (cp.data.first_seq, cp.data.last_seq, cp.data.summarizer) == (1, 15, "codex")
            assert session.todos.todos == (item("Write the test", "in_progress"),)


class TestDetect:
    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("claude_code_small.jsonl", "claude-code"),
            ("codex_small.jsonl", "codex"),
            ("openai_small.json", "openai"),
            ("openai_small.jsonl", "openai"),
            ("swe_agent_small.traj", "swe-agent"),
        ],
    )
    def test_fixture_formats(self, name, expected):
        """Each fixture is told apart from its first records."""
        assert detect_format(FIXTURES / name) == expected

    def test_traj_without_suffix(self, tmp_path):
        """A trajectory renamed to .json is still told by its history."""
        path = tmp_path / "run.json"
        path.write_text((FIXTURES / "swe_agent_small.traj").read_text())
        assert detect_format(path) == "swe-agent"

    def test_unknown_format_rejected(self, tmp_path):
        """A file of records no importer knows names the formats to choose from."""
        path = tmp_path / "x.jsonl"
        path.write_text('{"hello": 1}\n')
        with pytest.raises(TranscriptError, match="cannot tell the transcript format"):
            load(path)


class TestStrict:
    @pytest.mark.parametrize(
        ("lines", "match"),
        [
            (['{"type": "summary", "summary": "t"}', "not json"], r":2: not JSON"),
            (['{"type": "summary", "summary": "t"}', '{"type": "mystery"}'], r":2: unknown record"),
            (['{"type": "summary", "summary": "t"}', "[1, 2]"], r":2: a JSON list"),
        ],
    )
    def test_strict_raises_on_first_bad_line(self, tmp_path, lines, match):
        """With strict, the first line that would be skipped raises, naming the line."""
        path = tmp_path / "s.jsonl"
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(TranscriptError, match=match):
            list(load(path, "claude-code", strict=True))

    def test_strict_raises_on_torn_line(self, tmp_path):
        """With strict, a truncated last line raises too."""
        path = tmp_path / "s.jsonl"
        path.write_text('{"type": "summary", "summary": "t"}\n{"type": "us')
        with pytest.raises(TranscriptError, match=r":2: truncated last line"):
            list(load(path, "claude-code", strict=True))

    def test_bad_format_name(self):
        """An unknown format name is a ConfigError listing the choices."""
        with pytest.raises(ConfigError, match="format must be one of auto"):
            # A name outside the importer table: the runtime check is under test.
            load(FIXTURES / "codex_small.jsonl", "aider")

    def test_missing_file(self, tmp_path):
        """A missing file is a TranscriptError naming it."""
        with pytest.raises(TranscriptError, match="no such file"):
            load(tmp_path / "absent.jsonl")


class TestImportTranscript:
    def test_writes_a_valid_log(self, tmp_path):
        """The log on disk replays to the events load yields."""
        out = tmp_path / "s.jsonl"
        report = import_transcript(FIXTURES / "claude_code_small.jsonl", out)
        assert [e.seq for e in read_events(out)] == list(range(1, report.events + 1))
        assert list(read_events(out)) == list(load(FIXTURES / "claude_code_small.jsonl"))

    def test_refuses_existing_log(self, tmp_path):
        """An existing log is never overwritten unless asked."""
        out = tmp_path / "s.jsonl"
        out.write_text("keep me\n")
        with pytest.raises(TranscriptError, match="already exists"):
            import_transcript(FIXTURES / "codex_small.jsonl", out)
        assert out.read_text() == "keep me\n"
        import_transcript(FIXTURES / "codex_small.jsonl", out, overwrite=True)
        assert len(list(read_events(out))) == 23

    def test_failed_import_leaves_nothing(self, tmp_path):
        """A strict import that fails writes no log, not even a partial one."""
        out = tmp_path / "s.jsonl"
        with pytest.raises(TranscriptError):
            import_transcript(FIXTURES / "claude_code_small.jsonl", out, strict=True)
        assert list(tmp_path.iterdir()) == []

    def test_never_overwrites_the_transcript(self, tmp_path):
        """Writing the log over the transcript it reads is refused, even when forced."""
        path = tmp_path / "t.json"
        path.write_text((FIXTURES / "openai_small.json").read_text())
        with pytest.raises(TranscriptError, match="would replace the transcript"):
            import_transcript(path, path, overwrite=True)

    def test_deterministic(self, tmp_path):
        """The same transcript gives the same bytes."""
        a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
        import_transcript(FIXTURES / "openai_small.json", a)
        import_transcript(FIXTURES / "openai_small.json", b)
        assert a.read_bytes() == b.read_bytes()


PENDING = "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
THREE_COMPACTIONS = "claude-code_entire-cli_cd95adddad32_3compactions.jsonl"
SPOTTER = "claude-code-2.1_spotter_fa812bfe_task-tools_2compactions.jsonl"
SWE = "swe-agent_gpt4_pydicom-1458.traj"

EXPECTED: dict[str, dict[str, int]] = {
    PENDING: {
        "turn/start": 10,
        "message": 210,
        "todo/write": 14,
        "turn/end": 9,
        "usage/report": 104,
    },
    THREE_COMPACTIONS: {
        "turn/start": 43,
        "message": 482,
        "todo/write": 16,
        "turn/end": 42,
        "compaction/checkpoint": 3,
        "usage/report": 225,
        "plan/approve": 1,  # the approved ExitPlanMode
    },
    SPOTTER: {
        "turn/start": 2,
        "message": 357,
        "turn/end": 1,
        "compaction/checkpoint": 1,
        "usage/report": 157,
        "job/start": 1,  # "Command running in background with ID: b7b23b2"
        "job/end": 1,  # its TaskOutput says completed (the later notice is counted, not written)
    },
    SWE: {"turn/start": 1, "message": 27},
}
"""Events by type of each import, counted by hand from the records (see the tests below)."""

TOOL_CALLS = {PENDING: 96, THREE_COMPACTIONS: 206, SPOTTER: 197, SWE: 12}
"""Tool calls per file, as SOURCES.md counts them (and the SWE-agent history's 12 actions)."""


WITH_TASKS = {PENDING: 1, THREE_COMPACTIONS: 1, SPOTTER: 0, SWE: 0}
"""Compactions that must cut while todos are open (the other files record no todo list)."""


def imported_real(directory: Path, name: str) -> tuple[list[Event], ImportReport]:
    report = ImportReport(path=name)
    return list(load(directory / name, report=report)), report


@pytest.mark.transcripts
class TestRealTranscripts:
    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_event_counts(self, transcripts, name):
        """Each real transcript imports to the events its records hold."""
        _, report = imported_real(transcripts, name)
        assert dict(report.events_by_type) == EXPECTED[name]
        assert report.tool_calls == TOOL_CALLS[name]
        assert not report.broken_lines
        assert report.torn_line is None

    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_every_call_paired_with_its_result(self, transcripts, name):
        """Every tool call is answered by its own recorded result, none orphaned."""
        events, report = imported_real(transcripts, name)
        assert_paired(events)
        assert report.orphan_results == 0
        # The SWE-agent run ends on `submit`, whose output the history does not hold.
        assert report.unanswered_calls == (1 if name == SWE else 0)
        answered = {
            e.data.tool_call_id
            for e in events
            if isinstance(e, MessageAdded) and e.data.tool_call_id
        }
        assert len(answered) == TOOL_CALLS[name]

    def test_ends_with_one_in_progress_one_pending(self, transcripts):
        """The todos view at the end of the session is its last TodoWrite (line 356), text exact."""
        events, _ = imported_real(transcripts, PENDING)
        expected = (
            TodoItem(
                content="Reverse search order: HEAD first, branch hint as fallback",
                status="completed",
            ),
            TodoItem(content="Consider showing merge status in session list", status="in_progress"),
            TodoItem(content="Test the changes", status="pending"),
        )
        assert fold(TodosProjection(), events).todos == expected
        assert fold(LatestTodosProjection(), events).todos == expected

    def test_glued_line_read(self, transcripts):
        """Line 172 holds an assistant record and a summary glued together: both are read."""
        _, report = imported_real(transcripts, PENDING)
        assert report.glued_lines == [172]
        assert report.records == 360
        assert report.skipped["summary (a session title)"] == 2

    def test_recorded_compactions(self, transcripts):
        """Claude Code's three compactions are checkpoints; the first carries the two open todos."""
        events, _ = imported_real(transcripts, THREE_COMPACTIONS)
        checkpoints = [e for e in events if e.type == "compaction/checkpoint"]
        first = checkpoint_of(checkpoints[0])
        assert first.summarizer == "claude-code"
        assert first.current == ("Add tests for attribution calculation",)
        assert first.pending == ("Run tests and lint",)
        spans = [
            (checkpoint_of(c).first_seq, checkpoint_of(c).last_seq, c.seq) for c in checkpoints
        ]
        assert all(last == seq - 1 for _, last, seq in spans)

    def test_progress_records_skipped(self, transcripts):
        """The spotter session's 1,332 progress records are skipped on purpose and counted."""
        _, report = imported_real(transcripts, SPOTTER)
        assert report.skipped["progress (live tool, hook and sub-agent updates)"] == 1332
        assert report.handled["background task notification"] == 1
        assert report.turns == 2

    def test_spotter_task_tools(self, transcripts, tmp_path):
        """Spotter with task calls before its compaction: ids kept, carried by the checkpoint.

        The shared file holds no TaskCreate/TaskUpdate record (its SOURCES.md line says it
        does; the records are not there), so the calls are spliced in, in Claude Code 2.1's
        shape, just before its real compact_boundary; the rest is the real session.
        """
        lines = (transcripts / SPOTTER).read_text(encoding="utf-8").splitlines(keepends=True)
        assert not any('"TaskCreate"' in line or '"TaskUpdate"' in line for line in lines)
        boundary = next(i for i, line in enumerate(lines) if '"compact_boundary"' in line)
        calls = claude_records(
            claude_call("mt1", "tt1", "TaskCreate", {"subject": "Add the registry"}),
            claude_result("tt1", "Task #1 created successfully: Add the registry"),
            claude_call("mt2", "tt2", "TaskCreate", {"subject": "Wire the hooks"}),
            claude_result("tt2", "Task #2 created successfully: Wire the hooks"),
            claude_call("mt3", "tt3", "TaskUpdate", {"taskId": "1", "status": "in_progress"}),
            claude_result("tt3", "Updated task #1 status"),
            claude_call("mt4", "tt4", "TaskUpdate", {"taskId": "2", "owner": "explorer"}),
            claude_result("tt4", "Updated task #2 owner"),
        )
        path = tmp_path / "spotter_tasks.jsonl"
        path.write_text("".join([*lines[:boundary], calls, *lines[boundary:]]), encoding="utf-8")
        events, report = imported(path)
        assert tasks_of(events) == [
            ("task/create", "1", "Add the registry", "pending", 1),
            ("task/create", "2", "Wire the hooks", "pending", 1),
            ("task/update", "1", "Add the registry", "in_progress", 2),
            ("task/update", "2", "Wire the hooks", "pending", 2),
        ]
        (checkpoint,) = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert checkpoint.data.current_tasks == (TaskRef(id="1", subject="Add the registry"),)
        assert checkpoint.data.pending_tasks == (
            TaskRef(id="2", owner="explorer", subject="Wire the hooks"),
        )
        assert report.events_by_type["compaction/checkpoint"] == 1
        with replayed(events, tmp_path / "r.jsonl", 8192) as (session, replay_report):
            assert replay_report.compactions, "the replay compacts at least once"
            newest = parse_checkpoint(session.context.checkpoint.text)  # type: ignore[union-attr]
            assert newest.current_tasks == (TaskRef(id="1", subject="Add the registry"),)
            assert newest.pending_tasks == (
                TaskRef(id="2", owner="explorer", subject="Wire the hooks"),
            )

    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_compaction_keeps_unfinished_todos(self, transcripts, tmp_path, name):
        """Import, then compact in an 8k window: every unfinished todo stands in the checkpoint."""
        events, _ = imported_real(transcripts, name)
        with replayed(events, tmp_path / "r.jsonl", 8192) as (session, report):
            assert_tasks_carried(report)
            with_tasks = sum(1 for c in report.compactions if c.unfinished != ((), ()))
            assert with_tasks >= WITH_TASKS[name]
            check_log(session.events())
            assert session.todos.todos == fold(TodosProjection(), events).todos

    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_compact_once_after_import(self, transcripts, tmp_path, name):
        """Import to a log, then compact it once: the open todos at the end are the checkpoint's."""
        out = tmp_path / "s.jsonl"
        import_transcript(transcripts / name, out)
        with Session(out) as session:
            latest = session.latest_todos
            result = compact(session, CompactionPolicy(window_tokens=8192), force=True)
        parsed = parse_checkpoint(result.data.text)
        pending = tuple(t.content for t in latest if t.status == "pending")
        current = tuple(t.content for t in latest if t.status == "in_progress")
        assert (parsed.pending_jobs, parsed.current_work) == (pending, current)
        assert result.tokens_after < result.tokens_before
        if name == PENDING:
            assert (pending, current) == (
                ("Test the changes",),
                ("Consider showing merge status in session list",),
            )


class TestPublicApi:
    def test_all_sorted_and_importable(self):
        """compaction.importers.__all__ is sorted, unique, and every name is importable."""
        names = importers.__all__
        kinds = [(0 if n.isupper() else 1 if n[0].isupper() else 2, n) for n in names]
        assert kinds == sorted(set(kinds))
        assert all(getattr(importers, n) is not None for n in names)

    def test_error_in_the_tree(self):
        """TranscriptError is a HarnessError, exported from compaction."""
        assert issubclass(compaction.TranscriptError, compaction.HarnessError)


# Pinned by mutation testing (folded in from tests/unit/compaction/importers/test_importers.py):
# The importers' entry points, pinned on small hand-written transcripts (issue 25, part G).
#
# `scripts/mutate --group importer-entry` mutates `compaction/importers/__init__.py` (`load`,
# `import_transcript`, `import_to_store`, `_refuse_existing`, `_progress`) against these tests and
# the importer table's, so a mutant that changes an imported event, a seq, the report's counts or
# what the store holds is caught in seconds, without the real transcripts.


def transcript(tmp_path: Path, turns: int = 1, name: str = "t.jsonl") -> Path:
    """An OpenAI messages transcript of `turns` user/assistant pairs: 4 * turns - 1 events."""
    path = tmp_path / name
    lines = []
    for n in range(turns):
        lines.append(json.dumps({"role": "user", "content": f"request {n}"}))
        lines.append(json.dumps({"role": "assistant", "content": f"answer {n}"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def shape(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.seq, e.type) for e in events]


ONE_TURN = [(1, "turn/start"), (2, "message"), (3, "message")]


class TestLoad:
    def test_streams_the_events_and_fills_the_report(self, tmp_path: Path) -> None:
        report = ImportReport(path="given")
        events = list(load(transcript(tmp_path), report=report))
        assert shape(events) == ONE_TURN
        assert report.path == "given"
        assert report.format == "openai"
        assert (report.events, report.records, report.lines) == (3, 2, 2)
        assert report.tokenizer == "tiktoken:o200k_base"

    def test_a_named_format_is_used_not_detected(self, tmp_path: Path) -> None:
        report = ImportReport(path="x")
        list(load(transcript(tmp_path), "openai", report=report))
        assert report.format == "openai"
        with pytest.raises(TranscriptError):
            list(load(transcript(tmp_path), "gemini", report=ImportReport(path="x")))

    def test_the_tokenizer_given_counts(self, tmp_path: Path) -> None:
        report = ImportReport(path="x")
        list(load(transcript(tmp_path), report=report, tokenizer=get_tokenizer("cl100k_base")))
        assert report.tokenizer == "tiktoken:cl100k_base"

    def test_an_unknown_format_is_one_clear_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError) as err:
            load(transcript(tmp_path), "word")
        assert str(err.value) == (
            "format must be one of auto, claude-code, codex, gemini, openai, swe-agent, not 'word'"
        )

    def test_a_missing_file_or_a_folder_is_refused(self, tmp_path: Path) -> None:
        for path in (tmp_path / "missing.jsonl", tmp_path):
            with pytest.raises(TranscriptError) as err:
                load(path)
            assert err.value.path == str(path)
            assert err.value.line is None
            assert str(err.value) == f"{path}: no such file"

    def test_strict_is_passed_on(self, tmp_path: Path) -> None:
        path = transcript(tmp_path)
        path.write_text(path.read_text(encoding="utf-8") + "{broken\n", encoding="utf-8")
        report = ImportReport(path="x")
        assert shape(list(load(path, "openai", report=report))) == ONE_TURN
        assert [b.line for b in report.broken_lines] == [3]
        with pytest.raises(TranscriptError):
            list(load(path, "openai", strict=True))


class TestImportTranscriptEntry:
    def test_writes_the_loaded_events_to_a_new_log(self, tmp_path: Path) -> None:
        src = transcript(tmp_path, turns=2)
        out = tmp_path / "out.jsonl"
        report = import_transcript(src, out)
        written = list(read_events(out))
        assert [e.model_dump() for e in written] == [e.model_dump() for e in load(src)]
        assert [e.seq for e in written] == list(range(1, 8))
        assert report.path == str(src)
        assert (report.format, report.events, report.records) == ("openai", 7, 4)

    def test_a_sql_store_needs_the_session_and_holds_the_import(self, tmp_path: Path) -> None:
        url = f"sqlite:///{tmp_path / 's.db'}"
        src = transcript(tmp_path)
        with pytest.raises(ConfigError):
            import_transcript(src, url)
        report = import_transcript(src, url, session="one")
        store = open_store(url)
        try:
            assert shape(list(store.read("one"))) == ONE_TURN
            assert [(i.session, i.events) for i in store.sessions()] == [("one", 3)]
        finally:
            store.close()
        assert report.events == 3

    def test_an_existing_sql_session_is_refused_unless_forced(self, tmp_path: Path) -> None:
        url = f"sqlite:///{tmp_path / 's.db'}"
        import_transcript(transcript(tmp_path), url, session="one")
        bigger = transcript(tmp_path, turns=2, name="big.jsonl")
        with pytest.raises(TranscriptError) as err:
            import_transcript(bigger, url, session="one")
        assert err.value.path == f"{url}#one"
        assert str(err.value) == (
            f"{url}#one: the output session already exists. Choose a new --session, or pass --force"
        )
        import_transcript(bigger, url, session="two")  # another session is free
        report = import_transcript(bigger, url, session="one", overwrite=True)
        assert report.events == 7
        store = open_store(url)
        try:
            assert store.last_seq("one") == 7
        finally:
            store.close()

    def test_the_transcript_itself_is_never_the_output(self, tmp_path: Path) -> None:
        src = transcript(tmp_path)
        before = src.read_bytes()
        for overwrite in (False, True):
            with pytest.raises(TranscriptError) as err:
                import_transcript(src, tmp_path / "." / "t.jsonl", overwrite=overwrite)
            assert err.value.path == str(src)  # the output, named as its store names it
            assert str(err.value) == f"{src}: the output log would replace the transcript itself"
        assert src.read_bytes() == before

    def test_an_existing_log_is_refused_unless_forced(self, tmp_path: Path) -> None:
        src = transcript(tmp_path, turns=2)
        out = tmp_path / "out.jsonl"
        out.write_bytes(b"x")  # one byte, not a log: still refused
        with pytest.raises(TranscriptError) as err:
            import_transcript(src, out)
        assert err.value.path == str(out)
        assert str(err.value) == (
            f"{out}: the output log already exists. Choose a new path, or pass --force"
        )
        assert out.read_bytes() == b"x"
        assert import_transcript(src, out, overwrite=True).events == 7
        assert len(list(read_events(out))) == 7

    def test_an_empty_existing_file_is_written(self, tmp_path: Path) -> None:
        out = tmp_path / "out.jsonl"
        out.write_bytes(b"")
        assert import_transcript(transcript(tmp_path), out).events == 3
        assert shape(list(read_events(out))) == ONE_TURN

    def test_zero_events_is_an_error_and_writes_nothing(self, tmp_path: Path) -> None:
        src = tmp_path / "t.jsonl"
        src.write_text(
            json.dumps({"role": "tool", "tool_call_id": "c1", "content": "r"}) + "\n",
            encoding="utf-8",
        )
        out = tmp_path / "out.jsonl"
        with pytest.raises(TranscriptError) as err:
            import_transcript(src, out, "openai")
        assert err.value.path == str(src)
        assert str(err.value) == (
            f"{src}: the transcript holds no session events when read as openai. "
            "Check the file, or name its format (harness import FORMAT FILE)"
        )
        assert not out.exists()

    def test_strict_and_tokenizer_are_passed_on(self, tmp_path: Path) -> None:
        src = transcript(tmp_path)
        src.write_text(src.read_text(encoding="utf-8") + "{broken\n", encoding="utf-8")
        with pytest.raises(TranscriptError):
            import_transcript(src, tmp_path / "a.jsonl", "openai", strict=True)
        assert not (tmp_path / "a.jsonl").exists()
        report = import_transcript(
            src, tmp_path / "b.jsonl", "openai", tokenizer=get_tokenizer("cl100k_base")
        )
        assert report.tokenizer == "tiktoken:cl100k_base"
        assert [b.line for b in report.broken_lines] == [3]


class TestProgress:
    def test_called_after_every_batch_of_512_events(self, tmp_path: Path) -> None:
        src = transcript(tmp_path, turns=300)  # 1,199 events: two whole batches
        seen: list[tuple[int, int]] = []
        report = import_transcript(
            src, tmp_path / "out.jsonl", on_progress=lambda r: seen.append((r.events, r.lines))
        )
        assert report.events == 1199
        # Event 512 is turn 128's `turn/end`, read with the next request's `turn/start` and
        # message (events 513, 514): the report has counted those when the 512th is written.
        assert [events for events, _ in seen] == [514, 1026]
        assert all(0 < lines <= 600 for _, lines in seen)

    def test_no_call_below_one_batch(self, tmp_path: Path) -> None:
        seen: list[ImportReport] = []
        import_transcript(
            transcript(tmp_path, turns=128), tmp_path / "o.jsonl", on_progress=seen.append
        )
        assert seen == []

    def test_the_store_form_reports_progress_too(self, tmp_path: Path) -> None:
        store = open_store(f"sqlite:///{tmp_path / 's.db'}")
        seen: list[int] = []
        try:
            report = import_to_store(
                transcript(tmp_path, turns=129),
                store,
                "one",
                on_progress=lambda r: seen.append(r.events),
            )
            assert store.last_seq("one") == 515
        finally:
            store.close()
        assert report.events == 515
        assert seen == [514]


FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "transcripts"


def small_claude() -> list[Event]:
    """The Claude Code fixture: 38 events, a todo list, the agent's own checkpoint at seq 14."""
    return list(load(FIXTURES / "claude_code_small.jsonl"))


class TestReplayEntry:
    def test_every_event_is_appended_in_order(self, tmp_path: Path) -> None:
        events = small_claude()
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(events, session, CompactionPolicy(window_tokens=100_000))
            written = list(session.events())
        assert report.compactions == []
        assert report.refused == Counter()
        assert report.recorded_checkpoints == 1
        assert [e.seq for e in written] == list(range(1, 39))
        for old, new in zip(events, written, strict=True):
            if isinstance(old.data, CheckpointData):
                assert isinstance(new.data, CheckpointData)
                assert (new.data.first_seq, new.data.last_seq) == (1, 13)
                assert new.data.text == old.data.text
            else:
                assert new.data == old.data

    def test_the_peak_is_the_largest_context_after_any_event(self, tmp_path: Path) -> None:
        events = small_claude()
        peak = 0
        with Session(tmp_path / "by-hand.jsonl", sync="batch") as session:
            for event in events[:13]:  # before the recorded checkpoint shrinks the context
                session.append(event.data)
                peak = max(peak, session.context_tokens)
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(events[:13], session, CompactionPolicy(window_tokens=100_000))
            assert report.peak_context_tokens == peak == session.context_tokens > 0

    def test_a_recorded_checkpoint_with_nothing_before_it_is_dropped(self, tmp_path: Path) -> None:
        events = small_claude()
        checkpoint = events[13]
        assert isinstance(checkpoint.data, CheckpointData)
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(
                [checkpoint, *events[:2]], session, CompactionPolicy(window_tokens=10**5)
            )
            written = list(session.events())
        assert report.recorded_checkpoints == 0
        assert [e.data for e in written] == [events[0].data, events[1].data]

    def test_a_second_recorded_checkpoint_spans_from_the_first(self, tmp_path: Path) -> None:
        events = small_claude()
        again = [*events[:14], *events[1:13], events[13]]  # the agent compacts twice
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(again, session, CompactionPolicy(window_tokens=100_000))
            spans = [
                (e.data.first_seq, e.data.last_seq)
                for e in session.events()
                if isinstance(e.data, CheckpointData)
            ]
        assert report.recorded_checkpoints == 2
        # The second span starts right after the first span (seq 14, the first checkpoint itself).
        assert spans == [(1, 13), (14, 26)]

    def test_each_compaction_keeps_the_unfinished_items_at_its_cut(self, tmp_path: Path) -> None:
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(small_claude(), session, CompactionPolicy(window_tokens=300))
            cuts = [e for e in session.events() if isinstance(e.data, CheckpointData)]
        assert len(report.compactions) >= 2
        assert len(cuts) == len(report.compactions) + report.recorded_checkpoints
        for c in report.compactions:
            assert c.unfinished == (c.result.data.pending, c.result.data.current)
        assert any(c.unfinished != ((), ()) for c in report.compactions)
        assert sum(report.refused.values()) > 0


class TestArgumentsPassedOn:
    def test_the_named_format_reaches_the_reader(self, tmp_path: Path) -> None:
        """An OpenAI file named as Gemini is read as Gemini (and refused), not detected."""
        with pytest.raises(TranscriptError):
            import_transcript(transcript(tmp_path), tmp_path / "o.jsonl", "gemini")
        assert not (tmp_path / "o.jsonl").exists()

    def test_the_store_form_defaults_to_lenient_and_no_overwrite(self, tmp_path: Path) -> None:
        src = transcript(tmp_path)
        src.write_text(src.read_text(encoding="utf-8") + "{broken\n", encoding="utf-8")
        store = open_store(f"sqlite:///{tmp_path / 's.db'}")
        try:
            report = import_to_store(src, store, "one")  # not strict: the line is skipped
            assert [b.line for b in report.broken_lines] == [3]
            with pytest.raises(TranscriptError):  # not overwrite: the session is kept
                import_to_store(transcript(tmp_path, 2, "b.jsonl"), store, "one")
            assert store.last_seq("one") == 3
        finally:
            store.close()

    def test_the_output_store_is_opened_for_batched_sync(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An import syncs once when it commits, not after every event (`sync="batch"`)."""
        seen: list[object] = []
        real = open_session_store

        def spy(target: str | Path, session: str | None = None, **kwargs: Any) -> Any:
            seen.append(kwargs.get("sync"))
            return real(target, session, **kwargs)

        monkeypatch.setattr("compaction.importers.open_session_store", spy)
        import_transcript(transcript(tmp_path), tmp_path / "o.jsonl")
        assert seen == ["batch"]


class TestReplayCalls:
    def test_a_checkpoint_after_one_event_spans_that_event(self, tmp_path: Path) -> None:
        events = small_claude()
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay([events[0], events[13]], session, CompactionPolicy(window_tokens=10**5))
            spans = [
                (e.data.first_seq, e.data.last_seq)
                for e in session.events()
                if isinstance(e.data, CheckpointData)
            ]
        assert report.recorded_checkpoints == 1
        assert spans == [(1, 1)]

    def test_each_compaction_check_gets_the_summarizer_and_fixed_tokens(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`maybe_compact` is asked after every event, with the replay's summarizer and budget."""
        asked: list[tuple[object, int]] = []
        refusals: Counter[str] = Counter()
        real = maybe_compact

        def spy(session: Session, policy: CompactionPolicy, **kwargs: Any) -> Any:
            asked.append((kwargs.get("summarizer"), kwargs.get("fixed_tokens", 0)))
            try:
                return real(session, policy, **kwargs)
            except CompactionError as exc:
                refusals[exc.code] += 1
                raise

        monkeypatch.setattr("compaction.importers._session_replay.maybe_compact", spy)
        summarizer = ExtractiveSummarizer()
        events = small_claude()
        with Session(tmp_path / "a.jsonl", sync="batch") as session:
            report = replay(events, session, CompactionPolicy(window_tokens=300))
        assert asked == [(None, 0)] * len(events)
        assert report.refused == refusals
        assert max(refusals.values()) > 1  # counted, not just flagged
        asked.clear()
        with Session(tmp_path / "b.jsonl", sync="batch") as session:
            replay(
                events,
                session,
                CompactionPolicy(window_tokens=300),
                summarizer=summarizer,
                fixed_tokens=77,
            )
        assert asked == [(summarizer, 77)] * len(events)

    def test_fixed_tokens_count_in_the_budget(self, tmp_path: Path) -> None:
        events = small_claude()[:13]
        policy = CompactionPolicy(window_tokens=100_000)
        with Session(tmp_path / "a.jsonl", sync="batch") as session:
            assert replay(events, session, policy).compactions == []
        with Session(tmp_path / "b.jsonl", sync="batch") as session:
            assert replay(events, session, policy, fixed_tokens=99_000).compactions != []


class TestReport:
    def test_skip_counts_one_by_default_and_adds_up(self) -> None:
        report = ImportReport(path="x")
        report.skip("unknown record")
        report.skip("unknown record", 3)
        report.skip("image block", 2)
        assert report.skipped == Counter({"unknown record": 4, "image block": 2})

    def test_as_dict_holds_every_field_and_sorts_the_counters(self) -> None:
        report = ImportReport(
            path="t.jsonl",
            format="codex",
            lines=11,
            records=12,
            events=13,
            events_by_type=Counter({"turn/start": 2, "message": 9}),
            turns=2,
            tool_calls=3,
            unanswered_calls=1,
            orphan_results=4,
            todo_writes=5,
            rule_breaking_lists=[RuleBreak(seq=7, violations=["two in progress"])],
            checkpoints=6,
            handled=Counter({"user request": 2, "assistant message": 3}),
            skipped=Counter({"z": 1, "a": 2}),
            broken_lines=[BadLine(line=8, reason="not JSON")],
            torn_line=10,
            glued_lines=[9],
            largest_tool_output=14,
            tokenizer="tiktoken:o200k_base",
            total_tokens=15,
            context_tokens=16,
        )
        data = report.as_dict()
        assert data == {
            "path": "t.jsonl",
            "format": "codex",
            "lines": 11,
            "records": 12,
            "events": 13,
            "events_by_type": {"message": 9, "turn/start": 2},
            "turns": 2,
            "tool_calls": 3,
            "unanswered_calls": 1,
            "orphan_results": 4,
            "todo_writes": 5,
            "rule_breaking_lists": [{"seq": 7, "violations": ["two in progress"]}],
            "checkpoints": 6,
            "handled": {"assistant message": 3, "user request": 2},
            "skipped": {"a": 2, "z": 1},
            "broken_lines": [{"line": 8, "reason": "not JSON"}],
            "torn_line": 10,
            "glued_lines": [9],
            "largest_tool_output": 14,
            "tokenizer": "tiktoken:o200k_base",
            "total_tokens": 15,
            "context_tokens": 16,
        }
        assert list(data) == [f.name for f in fields(ImportReport)]  # the fields' order
        for key in ("events_by_type", "handled", "skipped"):
            assert list(data[key]) == sorted(data[key])
        assert json.loads(json.dumps(data)) == data


class TestFormatTable:
    def test_an_unknown_name_raises_key_error_naming_it(self) -> None:
        with pytest.raises(KeyError) as err:
            importer("auto")
        assert err.value.args == ("auto",)
        assert [importer(name).name for name in FORMATS] == list(FORMATS)
