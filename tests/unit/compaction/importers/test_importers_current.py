"""Transcripts as agents write them today: Gemini CLI, Claude Code 2.1.x records, usage kept."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest
from cli_runner import run_cli

from compaction import check_log
from compaction.errors import TranscriptError
from compaction.events import (
    Event,
    MessageAdded,
    TodoItem,
    TodoWritten,
    TurnStarted,
    UsageReported,
)
from compaction.importers import ImportReport, import_transcript, load
from compaction.importers._detect import detect_format
from compaction.stores.log_reader import read_events

GEMINI = "gemini-cli_entire-cli_ab-2b9748b105.json"
CLAUDE_21 = "claude-code-2.1_entire-cli_7b-e20d70c73b_injected-text_compaction.jsonl"
CLAUDE_FILES = [
    CLAUDE_21,
    "claude-code-2.1_spotter_fa812bfe_task-tools_2compactions.jsonl",
    "claude-code_entire-cli_cd95adddad32_3compactions.jsonl",
    "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl",
]


def imported(path: Path, **kwargs: object) -> tuple[list[Event], ImportReport]:
    report = ImportReport(path=str(path))
    return list(load(path, report=report, **kwargs)), report  # type: ignore[arg-type]


def usages(events: list[Event]) -> list[UsageReported]:
    return [e for e in events if isinstance(e, UsageReported)]


def write_json(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def gemini_call(call_id: str, name: str, args: object, output: str, status: str = "success"):
    response = {"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}
    return {"id": call_id, "name": name, "args": args, "result": [response], "status": status}


@pytest.mark.transcripts
class TestGeminiReal:
    def test_detected_as_gemini_not_openai(self, transcripts):
        """The real Gemini CLI session is told apart from an OpenAI messages file."""
        assert detect_format(transcripts / GEMINI) == "gemini"

    def test_events_follow_the_messages(self, transcripts):
        """One request, each gemini message an assistant turn, each call answered by its result."""
        doc = json.loads((transcripts / GEMINI).read_text(encoding="utf-8"))
        messages = doc["messages"]
        events, report = imported(transcripts / GEMINI, strict=True)
        check_log(events)
        calls = [c for m in messages if m["type"] == "gemini" for c in m.get("toolCalls", [])]
        assert report.turns == sum(1 for m in messages if m["type"] == "user") == 1
        assert report.tool_calls == len(calls) == 9
        results = {
            e.data.tool_call_id: e.data.text()
            for e in events
            if isinstance(e, MessageAdded) and e.data.role == "tool"
        }
        for call in calls:
            expected = call["result"][0]["functionResponse"]["response"]["output"]
            assert results[call["id"]] == expected
        notices = sum(1 for m in messages if m["type"] == "info")
        assert report.skipped["info message (a CLI notice, not sent to the model)"] == notices

    def test_usage_reports_match_the_tokens(self, transcripts):
        """Every gemini message's `tokens` becomes one usage/report with the same figures."""
        doc = json.loads((transcripts / GEMINI).read_text(encoding="utf-8"))
        tokens = [m["tokens"] for m in doc["messages"] if "tokens" in m]
        events, _ = imported(transcripts / GEMINI)
        reports = [u.data for u in usages(events)]
        assert [(r.prompt_tokens, r.cached_tokens) for r in reports] == [
            (t["input"], t["cached"]) for t in tokens
        ]
        assert all(r.model == "gemini-2.5-flash" and r.purpose == "turn" for r in reports)

    def test_cli_import_and_log_show_cache_share(self, transcripts, tmp_path):
        """`harness import auto` reads it; `harness log` prints the real cache-hit share."""
        doc = json.loads((transcripts / GEMINI).read_text(encoding="utf-8"))
        tokens = [m["tokens"] for m in doc["messages"] if "tokens" in m]
        share = sum(t["cached"] for t in tokens) / sum(t["input"] for t in tokens)
        out = tmp_path / "g.jsonl"
        run = harness("import", "auto", transcripts / GEMINI, "-o", out)
        assert run.returncode == 0, run.stderr
        assert "(gemini)" in run.stdout
        log = harness("log", out, "--json")
        turn = json.loads(log.stdout)["provider_usage"]["turn"]
        assert turn["cache_hit_share"] == pytest.approx(share)
        assert f"cache-hit share {share:.1%}" in harness("log", out).stdout


class TestGeminiShapes:
    def test_write_todos_becomes_todo_write(self, tmp_path):
        """write_todos: description becomes content; a cancelled item leaves the list."""
        todos = [
            {"description": "Read the code", "status": "completed"},
            {"description": "Drop the cache", "status": "cancelled"},
            {"description": "Fix the bug", "status": "in_progress"},
            {"description": "Run tests", "status": "pending"},
        ]
        doc = {
            "sessionId": "s",
            "messages": [
                {"id": "1", "type": "user", "content": [{"text": "fix it"}]},
                {
                    "id": "2",
                    "type": "gemini",
                    "content": "Planning.",
                    "toolCalls": [gemini_call("c1", "write_todos", {"todos": todos}, "ok")],
                },
                {"id": "3", "type": "warning", "content": "quota"},
            ],
        }
        events, report = imported(write_json(tmp_path / "s.json", doc))
        lists = [e.data.todos for e in events if isinstance(e, TodoWritten)]
        assert lists == [
            (
                TodoItem(content="Read the code", status="completed"),
                TodoItem(content="Fix the bug", status="in_progress"),
                TodoItem(content="Run tests", status="pending"),
            )
        ]
        assert report.skipped["cancelled todo (left out of the list)"] == 1
        assert report.format == "gemini"

    def test_failed_call_writes_no_list(self, tmp_path):
        """A write_todos call whose status is not success changed nothing: no todo/write."""
        todos = [{"description": "A", "status": "pending"}]
        call = gemini_call("c1", "write_todos", {"todos": todos}, "boom", status="error")
        doc = {
            "sessionId": "s",
            "messages": [
                {"id": "1", "type": "user", "content": "go"},
                {"id": "2", "type": "gemini", "content": "", "toolCalls": [call]},
            ],
        }
        events, _ = imported(write_json(tmp_path / "s.json", doc))
        assert not [e for e in events if isinstance(e, TodoWritten)]

    def test_unknown_type_strict(self, tmp_path):
        """With strict, an unknown message type raises naming the message."""
        doc = {"sessionId": "s", "messages": [{"type": "user", "content": "x"}, {"type": "odd"}]}
        path = write_json(tmp_path / "s.json", doc)
        with pytest.raises(TranscriptError, match=r"messages\[1\] has unknown type 'odd'"):
            list(load(path, strict=True))

    def test_typed_messages_without_session_id(self, tmp_path):
        """Messages typed `user`/`gemini` with no `role` are Gemini's even without a sessionId."""
        doc = {"messages": [{"type": "user", "content": "x"}]}
        assert detect_format(write_json(tmp_path / "s.json", doc)) == "gemini"
        chat = {"messages": [{"role": "user", "content": "x"}]}
        assert detect_format(write_json(tmp_path / "c.json", chat)) == "openai"


class TestZeroEvents:
    @pytest.mark.parametrize(
        ("name", "doc"),
        [
            ("notices.json", {"sessionId": "s", "messages": [{"type": "info", "content": "hi"}]}),
            ("empty.json", {"messages": []}),
        ],
    )
    def test_is_an_error_and_writes_no_log(self, tmp_path, name, doc):
        """A transcript that imports to zero events raises and leaves no log behind."""
        out = tmp_path / "out.jsonl"
        with pytest.raises(TranscriptError, match="holds no session events"):
            import_transcript(write_json(tmp_path / name, doc), out)
        assert not out.exists()
        assert not list(tmp_path.glob(".out.jsonl*"))

    def test_cli_exits_non_zero(self, tmp_path):
        """`harness import` on such a file exits 2 with one line, not a success."""
        path = write_json(tmp_path / "s.json", {"sessionId": "s", "messages": []})
        run = harness("import", "auto", path, "-o", tmp_path / "out.jsonl")
        assert run.returncode == 2
        assert "holds no session events" in run.stderr
        assert "Traceback" not in run.stderr


CLAUDE_BASE = {"sessionId": "s", "uuid": "u", "parentUuid": None, "isSidechain": False}


def claude(kind: str, **fields: object) -> dict[str, object]:
    return {**CLAUDE_BASE, "type": kind, **fields}


def assistant(msg_id: str, text: str, usage: dict[str, int], model: str = "claude-x"):
    message = {"id": msg_id, "model": model, "content": [{"type": "text", "text": text}]}
    return claude("assistant", message={**message, "usage": usage})


class TestClaudeCode21:
    NEW_TYPES: ClassVar[dict[str, str]] = {
        "attachment": (
            "attachment (files, hook output and reminders Claude Code attached; not kept)"
        ),
        "agent-name": "agent-name (the session's agent name)",
        "last-prompt": "last-prompt (a copy of the latest prompt, for the UI)",
        "pr-link": "pr-link (a pull request the session opened)",
    }

    def test_new_record_types_counted_and_strict_accepts(self, tmp_path):
        """permission-mode, attachment, agent-name, last-prompt, pr-link pass --strict, counted."""
        records = [
            claude("permission-mode", permissionMode="plan"),
            claude("user", message={"role": "user", "content": "plan it"}),
            *[claude(kind) for kind in self.NEW_TYPES],
            claude("permission-mode", permissionMode="default"),
            claude("user", message={"role": "user", "content": "do it"}),
        ]
        events, report = imported(write_jsonl(tmp_path / "c.jsonl", records), strict=True)
        for reason in self.NEW_TYPES.values():
            assert report.skipped[reason] == 1
        assert report.handled["permission-mode"] == 2
        modes = [e.data.mode for e in events if isinstance(e, TurnStarted)]
        assert modes == ["plan", None]

    def test_record_mode_wins_over_permission_mode_record(self, tmp_path):
        """A request's own permissionMode wins over the latest permission-mode record."""
        records = [
            claude("permission-mode", permissionMode="plan"),
            claude("user", message={"role": "user", "content": "x"}, permissionMode="default"),
        ]
        events, _ = imported(write_jsonl(tmp_path / "c.jsonl", records))
        assert [e.data.mode for e in events if isinstance(e, TurnStarted)] == [None]

    def test_usage_once_per_message_latest_record_wins(self, tmp_path):
        """Records of one message id give one usage/report, from the last record's figures."""
        first = {"input_tokens": 3, "cache_read_input_tokens": 100, "output_tokens": 1}
        last = {**first, "cache_creation_input_tokens": 20, "output_tokens": 9}
        records = [
            claude("user", message={"role": "user", "content": "x"}),
            assistant("m1", "a", first),
            assistant("m1", "b", last),
            assistant("m2", "c", {"input_tokens": 5, "output_tokens": 2}),
            assistant("m3", "d", {"input_tokens": 0, "output_tokens": 0}, model="<synthetic>"),
        ]
        events, _ = imported(write_jsonl(tmp_path / "c.jsonl", records))
        got = [
            (u.data.model, u.data.prompt_tokens, u.data.cached_tokens, u.data.cache_write_tokens)
            for u in usages(events)
        ]
        assert got == [("claude-x", 123, 100, 20), ("claude-x", 5, 0, 0)]
        assert [u.data.completion_tokens for u in usages(events)] == [9, 2]
        check_log(events)

    @pytest.mark.transcripts
    @pytest.mark.parametrize("name", CLAUDE_FILES)
    def test_real_files_pass_strict_with_real_usage(self, transcripts, name):
        """Each real file imports with --strict; its usage equals the records', one per message."""
        expected: dict[str, tuple[int, int, int]] = {}
        for line in (transcripts / name).read_text(encoding="utf-8").splitlines():
            for rec in _records(line):
                msg: Any = rec.get("message") if rec.get("type") == "assistant" else None
                usage = msg.get("usage") if isinstance(msg, dict) else None
                if rec.get("isSidechain") or rec.get("isApiErrorMessage") or not usage:
                    continue
                if msg.get("model") == "<synthetic>":
                    continue
                read = usage.get("cache_read_input_tokens", 0)
                write = usage.get("cache_creation_input_tokens", 0)
                expected[msg["id"]] = (usage["input_tokens"] + read + write, read, write)
        events, _ = imported(transcripts / name, strict=True)
        got = [
            (u.data.prompt_tokens, u.data.cached_tokens, u.data.cache_write_tokens)
            for u in usages(events)
        ]
        assert len(got) == len(expected) > 50
        assert sorted(got) == sorted(expected.values())


def _records(line: str) -> list[dict[str, Any]]:
    decoder, out, pos = json.JSONDecoder(), [], 0
    while pos < len(line.strip()):
        value, pos = decoder.raw_decode(line, pos)
        out.append(value)
        while pos < len(line) and line[pos] in " \t\r\n":
            pos += 1
    return out


class TestCodexUsage:
    def test_token_count_becomes_usage_report(self, tmp_path):
        """token_count's last_token_usage is a usage/report; a repeated total is skipped."""

        def count(total: int, last_in: int, cached: int, out: int) -> dict[str, object]:
            last = {"input_tokens": last_in, "cached_input_tokens": cached, "output_tokens": out}
            info = {"total_token_usage": {"total_tokens": total}, "last_token_usage": last}
            return {"type": "event_msg", "payload": {"type": "token_count", "info": info}}

        def item(payload: dict[str, object]) -> dict[str, object]:
            return {"type": "response_item", "payload": payload}

        records: list[dict[str, object]] = [
            {"type": "session_meta", "payload": {"id": "x"}},
            {"type": "turn_context", "payload": {"model": "gpt-5-codex"}},
            item({"type": "message", "role": "user", "content": [{"text": "hi"}]}),
            item({"type": "message", "role": "assistant", "content": [{"text": "hello"}]}),
            count(1200, 1000, 800, 200),
            count(1200, 1000, 800, 200),
            {"type": "event_msg", "payload": {"type": "token_count", "info": None}},
        ]
        events, report = imported(write_jsonl(tmp_path / "r.jsonl", records))
        got = [
            (u.data.model, u.data.prompt_tokens, u.data.cached_tokens, u.data.completion_tokens)
            for u in usages(events)
        ]
        assert got == [("gpt-5-codex", 1000, 800, 200)]
        assert report.skipped["event_msg/token_count repeating the previous count"] == 1
        assert report.skipped["event_msg/token_count without counts"] == 1
        check_log(events)


def harness(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process (see cli_runner: the same exit status and output)."""
    return run_cli(*args)


def test_usage_round_trips_through_a_log(tmp_path):
    """Imported usage/report events survive a write and a read unchanged."""
    records = [
        claude("user", message={"role": "user", "content": "x"}),
        assistant("m1", "a", {"input_tokens": 1, "cache_read_input_tokens": 9, "output_tokens": 1}),
    ]
    out = tmp_path / "o.jsonl"
    import_transcript(write_jsonl(tmp_path / "c.jsonl", records), out)
    read = [e for e in read_events(out) if isinstance(e, UsageReported)]
    assert [(u.data.prompt_tokens, u.data.cached_tokens) for u in read] == [(10, 9)]
