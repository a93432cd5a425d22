"""The importers' shared rules, pinned on small hand-written records (issue 25, part B).

`scripts/mutate --group importers` mutates `compaction/importers/`; these tests drive the
`EventBuilder`, the Claude Code task folder and the record helpers directly, so a mutant that
changes a seq, a turn, a call's pairing, a todo list, a task, or a recorded checkpoint's span is
caught without a real transcript (those are read by `tests/unit/test_importers.py`).
"""

from __future__ import annotations

from compaction.events import (
    CheckpointData,
    Event,
    Message,
    TextPart,
    TodoItem,
    TodoWriteData,
    TurnStartData,
    UsageReportData,
)
from compaction.importers.base import EventBuilder, no_result_text
from compaction.importers.claude_code_tasks import TaskFolder
from compaction.importers.import_report import ImportReport
from compaction.importers.recorded_calls import (
    RecordedCall,
    call_from,
    todo_items,
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
