"""The format readers' contracts, pinned on small hand-written records (issue 25, part C).

`scripts/mutate --group importer-readers` mutates the format readers (`claude_code.py`,
`codex.py`, ...); these tests import hand-written transcripts through `compaction.importers.load`
and assert on the events written (a message's content and origin, a request's text, the skips
reported), so a mutant that changes what a view shows is caught without a real transcript.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction.errors import TranscriptError
from compaction.events import (
    CheckpointData,
    Event,
    EventData,
    FunctionCall,
    ImagePart,
    ImageURL,
    Message,
    MessageAdded,
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
from compaction.importers._records import MAX_DOCUMENT_BYTES


def _write(tmp_path: Path, *records: dict[str, object]) -> Path:
    path = tmp_path / "s.jsonl"
    lines = [json.dumps({"sessionId": "s", "uuid": f"u{i}", **r}) for i, r in enumerate(records)]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _import(path: Path) -> tuple[list[Event], ImportReport]:
    report = ImportReport(path=str(path))
    return list(load(path, "claude-code", report=report)), report


def _messages(events: list[Event], role: str) -> list[MessageAdded]:
    return [e for e in events if isinstance(e, MessageAdded) and e.data.role == role]


def _user(content: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": content}}


PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


class TestImages:
    def test_a_base64_image_becomes_a_data_url_beside_the_text(self, tmp_path: Path) -> None:
        """A user message's base64 image is kept as a data URL part after its text part."""
        path = _write(
            tmp_path, _user([{"type": "text", "text": "look"}, {"type": "image", "source": PNG}])
        )
        events, _ = _import(path)
        [message] = _messages(events, "user")
        assert message.data.content == (
            TextPart(text="look"),
            ImagePart(image_url=ImageURL(url="data:image/png;base64,iVBORw0KGgo=")),
        )

    def test_an_image_by_url_keeps_its_url(self, tmp_path: Path) -> None:
        """An image whose source is a URL is kept as that URL."""
        source = {"type": "url", "url": "https://example.invalid/a.png"}
        path = _write(tmp_path, _user([{"type": "image", "source": source}]))
        events, _ = _import(path)
        [message] = _messages(events, "user")
        assert message.data.content == (
            ImagePart(image_url=ImageURL(url="https://example.invalid/a.png")),
        )

    @pytest.mark.parametrize(
        "source", [None, "iVBORw0KGgo=", {"type": "file", "file_id": "f1"}, {"url": 7}]
    )
    def test_an_image_without_a_usable_source_is_skipped(
        self, tmp_path: Path, source: object
    ) -> None:
        """No mapping, no base64 data and no URL string: the block is skipped and reported."""
        path = _write(
            tmp_path, _user([{"type": "text", "text": "look"}, {"type": "image", "source": source}])
        )
        events, report = _import(path)
        [message] = _messages(events, "user")
        assert message.data.content == "look"
        assert report.skipped["user image block (not kept)"] == 1

    def test_a_tool_result_keeps_its_image(self, tmp_path: Path) -> None:
        """A tool result holding text and an image keeps both, in order."""
        call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file": "a.png"}}
        result = {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [{"type": "text", "text": "the file"}, {"type": "image", "source": PNG}],
        }
        path = _write(
            tmp_path,
            _user("show me a.png"),
            {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [call]}},
            _user([result]),
        )
        events, _ = _import(path)
        [tool] = _messages(events, "tool")
        assert tool.data.content == (
            TextPart(text="the file"),
            ImagePart(image_url=ImageURL(url="data:image/png;base64,iVBORw0KGgo=")),
        )


class TestTypedCommands:
    @pytest.mark.parametrize(
        ("content", "typed"),
        [
            (
                "<command-message>review</command-message>\n<command-name>/review</command-name>"
                "\n<command-args>this branch</command-args>",
                "/review this branch",
            ),
            (
                "<command-name>review</command-name><command-args>  a b </command-args>",
                "/review a b",
            ),
            (
                "<command-message>m</command-message><command-args>go on</command-args>",
                "/command go on",
            ),
        ],
    )
    def test_a_command_with_arguments_is_the_users_request(
        self, tmp_path: Path, content: str, typed: str
    ) -> None:
        """The arguments are typed words: the request reads `/name args` (a `/` added)."""
        events, _ = _import(_write(tmp_path, _user(content)))
        [message] = _messages(events, "user")
        assert (message.data.origin, message.data.content) == ("user", typed)

    @pytest.mark.parametrize(
        "content",
        [
            "<command-name>/exit</command-name>\n <command-args>   </command-args>",
            "<command-name>/clear</command-name>",
        ],
    )
    def test_a_command_without_arguments_stays_a_command(
        self, tmp_path: Path, content: str
    ) -> None:
        """No arguments (or blank ones): the tags are kept whole, as a command."""
        events, _ = _import(_write(tmp_path, _user(content)))
        [message] = _messages(events, "user")
        assert (message.data.origin, message.data.content) == ("command", content)


# Pinned by mutation testing (folded in from tests/unit/compaction/importers/test_formats.py):
# The Codex, Gemini CLI, SWE-agent and OpenAI readers, pinned on hand-written records (issue 25).
#
# `scripts/mutate --group importer-readers` mutates the format readers; these tests import small
# hand-written transcripts through `compaction.importers.load` and compare every event written
# (its data, in order, seqs 1..n) and the report's counts with values written out by hand, so a
# mutant that changes what a user or the model would see of an import is caught. There is no
# Codex rollout among the real transcripts: the Codex records here follow the rollout JSONL shape
# the reader documents (``{"timestamp", "type", "payload"}`` lines, and the older bare items).


def _import_format(
    path: Path, fmt: Any, *, strict: bool = False
) -> tuple[list[Event], ImportReport]:
    report = ImportReport(path=str(path))
    events = list(load(path, fmt, report=report, strict=strict))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    return events, report


def _datas(events: list[Event]) -> list[EventData]:
    """Each event's data, a checkpoint's token figures and a turn's recorded time zeroed.

    The token figures are the tokenizer's; `test_jobs.TestRecordedTimes` checks the times.
    """
    out: list[EventData] = []
    for event in events:
        data = event.data
        if isinstance(data, CheckpointData):
            data = data.model_copy(update={"tokens_before": 0, "tokens_after": 0})
        if isinstance(data, TurnStartData):
            data = data.model_copy(update={"at": None})
        out.append(data)
    return out


def _call(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def _user_line(text: str) -> Message:
    return Message(role="user", content=text, origin="user")


def _tool(
    call_id: str, content: Any, *, exit_code: int | None = None, failed: bool | None = None
) -> Message:
    return Message(
        role="tool", tool_call_id=call_id, content=content, exit_code=exit_code, failed=failed
    )


def _checkpoint(text: str, first: int, last: int, summarizer: str) -> CheckpointData:
    return CheckpointData(
        text=text,
        first_seq=first,
        last_seq=last,
        tokens_before=0,
        tokens_after=0,
        summarizer=summarizer,
    )


# --- Codex -----------------------------------------------------------------------------------


def _rollout(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "rollout.jsonl"
    lines = [json.dumps({"timestamp": "2025-10-29T01:00:00Z", **r}) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response_item", "payload": payload}


def _said(role: str, *texts: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": t} for t in texts]
    return _item({"type": "message", "role": role, "content": content})


def _count(total: object, last_in: int, cached: int, out: int) -> dict[str, Any]:
    last = {"input_tokens": last_in, "cached_input_tokens": cached, "output_tokens": out}
    info: dict[str, Any] = {"last_token_usage": last}
    if total is not None:
        info["total_token_usage"] = total
    return {"type": "event_msg", "payload": {"type": "token_count", "info": info}}


class TestCodexRollout:
    def test_a_rollout_imports_event_by_event(self, tmp_path: Path) -> None:
        """Every record kind of a current rollout becomes the events the module docstring names."""
        action = {"type": "exec", "command": ["ls", "-a"]}
        path = _rollout(
            tmp_path,
            {"type": "session_meta", "payload": {"id": "x", "cwd": "/repo"}},
            {"type": "turn_context", "payload": {"model": "gpt-5-codex", "cwd": "/repo/sub"}},
            _said("developer", "Sandbox rules"),
            _said("system", "Be brief"),
            _said("user", "  <environment_context>/repo</environment_context>"),
            _said("user", "Fix the build", "now"),
            _item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"}),
            _said("assistant", "Looking."),
            _item(
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": '{"command": ["make"]}',
                    "call_id": "c1",
                }
            ),
            _item(
                {"type": "custom_tool_call", "name": "apply_patch", "input": "é", "call_id": "c2"}
            ),
            _item({"type": "local_shell_call", "id": "ls1", "action": action}),
            _count({"total_tokens": 9}, 7, 3, 2),
            _item(
                {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": "Process exited with code 2\nboom",
                }
            ),
            _item(
                {
                    "type": "custom_tool_call_output",
                    "call_id": "c2",
                    "output": [{"type": "input_text", "text": "done"}],
                }
            ),
            _item(
                {
                    "type": "function_call_output",
                    "call_id": "ls1",
                    "output": {"content": "a\nb", "success": False},
                }
            ),
            _said("assistant", "Fixed."),
            _item({"type": "web_search_call", "action": {"query": "q"}}),
            {"type": "event_msg", "payload": {"type": "agent_message", "message": "Fixed."}},
            {"type": "compacted", "payload": {"message": "Summary: the build was fixed."}},
            _said("tool", "?"),
        )
        events, report = _import_format(path, "codex")
        assert _datas(events) == [
            Message(role="system", content="Sandbox rules"),
            Message(role="system", content="Be brief"),
            Message(
                role="user",
                content="  <environment_context>/repo</environment_context>",
                origin="injected",
            ),
            TurnStartData(cwd="/repo/sub"),
            _user_line("Fix the build\nnow"),
            UsageReportData(
                purpose="turn",
                model="gpt-5-codex",
                prompt_tokens=7,
                completion_tokens=2,
                cached_tokens=3,
            ),
            Message(
                role="assistant",
                content="Looking.",
                tool_calls=(
                    _call("c1", "shell", '{"command": ["make"]}'),
                    _call("c2", "apply_patch", '{"input": "é"}'),
                    _call("ls1", "local_shell", json.dumps(action)),
                ),
            ),
            _tool("c1", "Process exited with code 2\nboom", exit_code=2, failed=True),
            _tool("c2", "done"),
            _tool("ls1", "a\nb", failed=True),
            Message(role="assistant", content="Fixed."),
            _checkpoint("Summary: the build was fixed.", 1, 11, "codex"),
        ]
        assert dict(report.handled) == {
            "developer message": 1,
            "system message": 1,
            "context Codex injected": 1,
            "user request": 1,
            "assistant message": 2,
            "tool result": 3,
            "event_msg/token_count": 1,
        }
        assert dict(report.skipped) == {
            "session_meta (session metadata)": 1,
            "turn_context (model and sandbox settings)": 1,
            "reasoning item (not kept)": 1,
            "response_item/web_search_call (not kept)": 1,
            "event_msg/agent_message (UI event)": 1,
            "message with role 'tool'": 1,
        }
        assert (report.records, report.tool_calls, report.checkpoints) == (20, 3, 1)

    def test_the_older_rollout_shape(self, tmp_path: Path) -> None:
        """A metadata first line, state markers and bare response items (no payload) are read."""
        path = _rollout(
            tmp_path,
            {"id": "x", "instructions": None},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"text": "Go"}]},
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            {"record_type": "state", "type": "message", "role": "user", "content": "x"},
            {"type": "mystery"},
            {"type": "reasoning", "summary": []},
        )
        events, report = _import_format(path, "codex")
        assert _datas(events) == [
            TurnStartData(),
            _user_line("Go"),
            Message(role="assistant", tool_calls=(_call("c1", "shell", "{}"),)),
            _tool("c1", "ok"),
        ]
        assert dict(report.skipped) == {
            "session metadata (older rollout)": 1,
            "record_type state marker (older rollout)": 2,
            "unknown record type 'mystery'": 1,
            "reasoning item (not kept)": 1,
        }

    def test_an_item_on_the_first_line_of_an_older_rollout_is_read(self, tmp_path: Path) -> None:
        """A bare response item on line 1 is an item, not the metadata line."""
        path = _rollout(tmp_path, {"type": "message", "role": "user", "content": "Hi"})
        events, _ = _import_format(path, "codex")
        assert _datas(events) == [TurnStartData(), _user_line("Hi")]

    def test_the_working_directory_a_turn_records(self, tmp_path: Path) -> None:
        """A turn's cwd is the latest absolute path under 4096 characters; others are ignored."""
        longest = "/" + "a" * 4094
        path = _rollout(
            tmp_path,
            _said("user", "no cwd yet"),
            {"type": "session_meta", "payload": {"cwd": longest}},
            _said("user", "at the longest"),
            {"type": "turn_context", "payload": {"cwd": longest + "b", "model": 5}},
            {"type": "turn_context", "payload": {"cwd": "relative/dir"}},
            {"type": "turn_context", "payload": {"cwd": 7}},
            _said("user", "still the longest"),
            {"type": "session_meta", "payload": {"cwd": "/srv"}},
            _said("user", "in /srv"),
        )
        events, _ = _import_format(path, "codex")
        cwds = [e.data.cwd for e in events if isinstance(e.data, TurnStartData)]
        assert cwds == [None, longest, longest, "/srv"]

    def test_the_model_of_the_latest_turn_context(self, tmp_path: Path) -> None:
        """A count names the latest string model; a non-string model keeps the one before."""
        path = _rollout(
            tmp_path,
            _count(1, 1, 0, 1),
            {"type": "turn_context", "payload": {"model": "gpt-5"}},
            _count(2, 2, 0, 1),
            {"type": "turn_context", "payload": {"model": None}},
            _count(3, 3, 0, 1),
        )
        events, _ = _import_format(path, "codex")
        models = [(e.data.model, e.data.prompt_tokens) for e in events if e.type == "usage/report"]
        assert models == [("unknown", 1), ("gpt-5", 2), ("gpt-5", 3)]

    def test_injected_user_text_by_its_opening(self, tmp_path: Path) -> None:
        """Each injected opening, after leading blanks, gives its origin; other text: a request."""
        texts = [
            "\n<user_instructions>be careful</user_instructions>",
            " <user_shell_command>ls</user_shell_command>",
            "\t<turn_aborted>stopped</turn_aborted>",
            "# AGENTS.md instructions for /repo",
            "Please see <environment_context>",
        ]
        path = _rollout(tmp_path, *(_said("user", t) for t in texts))
        events, report = _import_format(path, "codex")
        assert _datas(events) == [
            Message(role="user", content=texts[0], origin="injected"),
            Message(role="user", content=texts[1], origin="command"),
            Message(role="user", content=texts[2], origin="interruption"),
            Message(role="user", content=texts[3], origin="injected"),
            TurnStartData(),
            _user_line(texts[4]),
        ]
        assert report.handled["context Codex injected"] == 4

    def test_message_content_with_images(self, tmp_path: Path) -> None:
        """Text parts and input images are kept in order; other parts and bad images dropped."""
        content = [
            "not a part",
            {"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            {"type": "input_image", "image_url": {"url": "x"}},
            {"type": "output_text", "text": 5},
            {"type": "input_text", "text": "this"},
        ]
        path = _rollout(
            tmp_path,
            _item({"type": "message", "role": "user", "content": content}),
            _item({"type": "message", "role": "user", "content": "plain"}),
            _item({"type": "message", "role": "user", "content": {"text": "a dict"}}),
            _item({"type": "message", "role": "assistant", "content": content}),
        )
        events, _ = _import_format(path, "codex")
        assert _datas(events)[:6] == [
            TurnStartData(),
            Message(
                role="user",
                content=(
                    TextPart(text="see"),
                    ImagePart(image_url=ImageURL(url="data:image/png;base64,AAAA")),
                    TextPart(text="this"),
                ),
                origin="user",
            ),
            TurnEndData(),
            TurnStartData(),
            _user_line("plain"),
            TurnEndData(),
        ]
        assert _datas(events)[6:] == [TurnStartData(), _user_line("")]

    def test_call_outputs_of_every_shape(self, tmp_path: Path) -> None:
        """Outputs as text, parts, ``{content, success}``, a number, nothing and nested JSON."""
        outputs: list[Any] = [
            {"content": {"note": "é"}, "success": True},
            {"content": None},
            42,
            None,
            [{"type": "input_text", "text": "one"}, {"type": "input_text", "text": "two"}],
            '{"output": "x", "metadata": {"exit_code": 0}}',
            {"content": "Exit code: 1\nno", "success": None},
        ]
        calls = [
            _item({"type": "function_call", "name": "f", "arguments": "{}", "call_id": f"c{i}"})
            for i in range(len(outputs))
        ]
        results = [
            _item({"type": "function_call_output", "call_id": f"c{i}", "output": o})
            for i, o in enumerate(outputs)
        ]
        events, _ = _import_format(_rollout(tmp_path, *calls, *results), "codex")
        assert _datas(events)[1:] == [
            _tool("c0", '{"note": "é"}'),
            _tool("c1", ""),
            _tool("c2", "42"),
            _tool("c3", ""),
            _tool("c4", "one\ntwo"),
            _tool("c5", '{"output": "x", "metadata": {"exit_code": 0}}', exit_code=0, failed=False),
            _tool("c6", "Exit code: 1\nno", exit_code=1, failed=True),
        ]

    @pytest.mark.parametrize(
        ("output", "exit_code"),
        [
            ("Exit code: 1\nsome output\nExit code: 0", 1),
            ('  {"output": "x", "metadata": {"exit_code": 3}}', 3),
            ('{"output": "x", "metadata": {"exit_code": "2"}}', None),
            ('{"output": "x", "metadata": {"exit_code": true}}', None),
            ("{not json\nExit code: 4", 4),
        ],
    )
    def test_the_exit_status_of_an_output(
        self, tmp_path: Path, output: str, exit_code: int | None
    ) -> None:
        """The first status line of the header, or the integer of the older JSON metadata."""
        path = _rollout(
            tmp_path,
            _item({"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c1"}),
            _item({"type": "function_call_output", "call_id": "c1", "output": output}),
        )
        events, _ = _import_format(path, "codex")
        failed = None if exit_code is None else exit_code != 0
        assert _datas(events)[1:] == [_tool("c1", output, exit_code=exit_code, failed=failed)]

    def test_a_local_shell_call_takes_its_call_id_first(self, tmp_path: Path) -> None:
        """``call_id`` names a local shell call; ``id`` only when there is no call_id."""
        path = _rollout(
            tmp_path,
            _item({"type": "local_shell_call", "call_id": "c9", "id": "i9", "action": None}),
            _item({"type": "function_call_output", "call_id": "c9", "output": "ok"}),
        )
        events, _ = _import_format(path, "codex")
        assert _datas(events) == [
            Message(role="assistant", tool_calls=(_call("c9", "local_shell", "{}"),)),
            _tool("c9", "ok"),
        ]

    def test_token_counts(self, tmp_path: Path) -> None:
        """A count without a total is no repeat; a repeated total is skipped, a new one kept."""
        path = _rollout(
            tmp_path,
            _count(None, 5, 1, 2),
            _count(None, 6, 1, 2),
            _count({"t": 1}, 7, 1, 2),
            _count({"t": 1}, 8, 1, 2),
            _count({"t": 2}, 9, -1, True),
            {"type": "event_msg", "payload": {"type": "token_count", "info": {"x": 1}}},
            {"type": "event_msg", "payload": {"type": "token_count"}},
            {"type": "event_msg", "payload": "token_count"},
        )
        events, report = _import_format(path, "codex")
        got = [
            (e.data.prompt_tokens, e.data.cached_tokens, e.data.completion_tokens)
            for e in events
            if isinstance(e.data, UsageReportData)
        ]
        assert got == [(5, 1, 2), (6, 1, 2), (7, 1, 2), (9, 0, 0)]
        assert report.handled["event_msg/token_count"] == 4
        assert dict(report.skipped) == {
            "event_msg/token_count repeating the previous count": 1,
            "event_msg/token_count without counts": 2,
            "event_msg/None (UI event)": 1,
        }

    def test_the_latest_count_of_one_answer_is_written_before_it(self, tmp_path: Path) -> None:
        """Counts while an answer is open: the latest wins, written just before the message."""
        path = _rollout(
            tmp_path,
            _said("assistant", "Thinking"),
            _count({"t": 1}, 10, 0, 1),
            _count({"t": 2}, 20, 0, 1),
            _said("assistant", "more"),
            _item({"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c1"}),
        )
        events, _ = _import_format(path, "codex")
        types = [
            (e.type, e.data.prompt_tokens if isinstance(e.data, UsageReportData) else None)
            for e in events
        ]
        assert types == [("usage/report", 20), ("message", None), ("message", None)]
        assert _datas(events)[1] == Message(
            role="assistant", content="Thinking\n\nmore", tool_calls=(_call("c1", "f", "{}"),)
        )

    def test_update_plan_writes_the_list(self, tmp_path: Path) -> None:
        """update_plan's steps become the list; a failed or unreadable plan writes none."""

        def plan(call_id: str, arguments: str) -> dict[str, Any]:
            return _item(
                {
                    "type": "function_call",
                    "name": "update_plan",
                    "arguments": arguments,
                    "call_id": call_id,
                }
            )

        def out(call_id: str, output: object) -> dict[str, Any]:
            return _item({"type": "function_call_output", "call_id": call_id, "output": output})

        steps = json.dumps({"plan": [{"step": "A", "status": "pending"}]})
        path = _rollout(
            tmp_path,
            plan("p1", steps),
            out("p1", "Plan updated"),
            plan("p2", steps),
            out("p2", {"content": "bad plan", "success": False}),
            plan("p3", "not json"),
            out("p3", "Plan updated"),
            plan("p4", steps),
        )
        events, report = _import_format(path, "codex")
        lists = [e.data.todos for e in events if isinstance(e.data, TodoWriteData)]
        assert lists == [(TodoItem(content="A", status="pending"),)]
        assert report.skipped["update_plan call with an unreadable list (the list is not an array)"]
        assert report.unanswered_calls == 1
        assert _datas(events)[-1] == _tool("p4", no_result_text())

    def test_a_compaction_with_no_message_and_one_not_an_object(self, tmp_path: Path) -> None:
        """``compacted`` without a message is an empty summary; a non-object payload is unknown."""
        path = _rollout(
            tmp_path,
            _said("user", "Go"),
            {"type": "compacted", "payload": {}},
            {"type": "compacted", "payload": "x"},
            {"type": "response_item", "payload": "x"},
            {"type": "turn_context", "payload": "x"},
            {"type": "session_meta", "payload": "x"},
        )
        events, report = _import_format(path, "codex")
        assert _datas(events) == [TurnStartData(), _user_line("Go"), _checkpoint("", 1, 2, "codex")]
        assert dict(report.skipped) == {
            "unknown record type 'compacted'": 1,
            "unknown record type 'response_item'": 1,
            "turn_context (model and sandbox settings)": 1,
            "session_meta (session metadata)": 1,
        }

    @pytest.mark.parametrize(
        ("record", "reason"),
        [
            ({"type": "mystery", "payload": {}}, "unknown record type 'mystery'"),
            (_item({"type": "oddity"}), "unknown response item 'oddity'"),
        ],
    )
    def test_strict_refuses_an_unknown_record_by_line(
        self, tmp_path: Path, record: dict[str, Any], reason: str
    ) -> None:
        """With strict, an unknown record or item raises naming its line; without, it is counted."""
        path = _rollout(tmp_path, _said("user", "Go"), record)
        with pytest.raises(TranscriptError) as caught:
            _import_format(path, "codex", strict=True)
        assert (
            str(caught.value) == f"{path}:2: {reason}. Import without --strict to count and skip it"
        )
        _, report = _import_format(path, "codex")
        assert dict(report.skipped) == {reason: 1}

    def test_a_record_that_is_not_an_object(self, tmp_path: Path) -> None:
        """A JSON array line is reported as such, and refused with strict."""
        path = tmp_path / "rollout.jsonl"
        path.write_text(json.dumps(_said("user", "Go")) + "\n[1, 2]\n", encoding="utf-8")
        _, report = _import_format(path, "codex")
        reason = "a JSON list where a record (object) was expected"
        assert dict(report.skipped) == {reason: 1}
        with pytest.raises(TranscriptError, match=r":2: a JSON list where a record"):
            _import_format(path, "codex", strict=True)

    @pytest.mark.parametrize(
        "between",
        [
            ["result", "skipped message"],
            ["skipped message", "result"],
            ["skipped message"],
        ],
    )
    def test_answers_split_by_other_items_stay_apart(
        self, tmp_path: Path, between: list[str]
    ) -> None:
        """Assistant text after a result or another item (even one skipped) is a new message."""
        filler = {
            "result": _item({"type": "function_call_output", "call_id": "gone", "output": "x"}),
            "skipped message": _said("critic", "?"),
        }
        records = [_said("critic", "?"), _said("assistant", "A")]
        records += [filler[b] for b in between] + [_said("assistant", "B")]
        events, _ = _import_format(_rollout(tmp_path, *records), "codex")
        assert _datas(events) == [
            Message(role="assistant", content="A"),
            Message(role="assistant", content="B"),
        ]

    def test_an_output_with_an_image(self, tmp_path: Path) -> None:
        """A call's output of text and an image keeps both parts and states no exit code."""
        output = [
            {"type": "input_text", "text": "Exit code: 3"},
            {"type": "input_image", "image_url": "data:image/png;base64,AA"},
        ]
        path = _rollout(
            tmp_path,
            _item({"type": "function_call", "name": "view", "arguments": "{}", "call_id": "c1"}),
            _item({"type": "function_call_output", "call_id": "c1", "output": output}),
        )
        events, _ = _import_format(path, "codex")
        parts = (
            TextPart(text="Exit code: 3"),
            ImagePart(image_url=ImageURL(url="data:image/png;base64,AA")),
        )
        assert _datas(events)[1:] == [_tool("c1", parts)]

    @pytest.mark.parametrize("content", [None, 7])
    def test_a_message_without_parts(self, tmp_path: Path, content: object) -> None:
        """A message with no content, or a number for content, is an empty request."""
        path = _rollout(tmp_path, _item({"type": "message", "role": "user", "content": content}))
        events, _ = _import_format(path, "codex")
        assert _datas(events) == [TurnStartData(), _user_line("")]

    def test_strict_refuses_a_broken_line(self, tmp_path: Path) -> None:
        """With strict, a line that is not JSON raises naming it; without, it is listed."""
        path = tmp_path / "rollout.jsonl"
        path.write_text(json.dumps(_said("user", "Go")) + "\n{not json\n", encoding="utf-8")
        with pytest.raises(TranscriptError, match=r"rollout\.jsonl:2: "):
            _import_format(path, "codex", strict=True)
        _, report = _import_format(path, "codex")
        assert [b.line for b in report.broken_lines] == [2]

    def test_events_stream_before_the_file_is_read_whole(self, tmp_path: Path) -> None:
        """The first request is yielded once its line is read, not after the whole file."""
        path = _rollout(tmp_path, *(_said("user", f"request {i}") for i in range(50)))
        report = ImportReport(path=str(path))
        stream = load(path, "codex", report=report)
        first = next(iter(stream))
        assert first.type == "turn/start"
        assert report.records == 1


# --- Gemini CLI ------------------------------------------------------------------------------


def _session(tmp_path: Path, *messages: object, **meta: object) -> Path:
    path = tmp_path / "session.json"
    doc = {"sessionId": "s", "startTime": "t", **meta, "messages": list(messages)}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _response(output: object) -> list[dict[str, Any]]:
    return [{"functionResponse": {"id": "x", "name": "f", "response": output}}]


class TestGeminiSession:
    def test_a_session_imports_event_by_event(self, tmp_path: Path) -> None:
        """Requests, answers with calls and results, usage, thoughts and notices, in order."""
        calls = [
            {
                "id": "c1",
                "name": "run_shell_command",
                "args": {"command": "make"},
                "status": "error",
                "result": _response({"output": "boom\nExit Code: 1\nExit Code: 2"}),
            },
            "not a call",
            {"id": "c2", "name": "read_file", "args": {"path": "é"}, "result": "text"},
            {"id": "c3", "name": "glob", "args": None},
        ]
        path = _session(
            tmp_path,
            {"type": "user", "content": [{"text": "Fix"}, {"image": 1}, {"text": "it"}]},
            {"type": "info", "content": "update available"},
            {
                "id": "g1",
                "type": "gemini",
                "content": "On it.",
                "thoughts": [{"subject": "s"}],
                "toolCalls": calls,
                "tokens": {"input": 100, "output": 7, "cached": 60, "thoughts": 5},
                "model": "gemini-2.5-pro",
            },
            {"type": "warning", "content": "quota"},
            {"id": "g2", "type": "gemini", "content": "Done.", "thoughts": [], "tokens": {}},
            {"type": "user", "content": "Thanks"},
            {"type": "error", "content": "e"},
            {"type": "mystery"},
            7,
            projectHash="h",
        )
        events, report = _import_format(path, "gemini")
        assert _datas(events) == [
            TurnStartData(),
            _user_line("Fix\nit"),
            UsageReportData(
                purpose="turn",
                model="gemini-2.5-pro",
                prompt_tokens=100,
                completion_tokens=12,
                cached_tokens=60,
            ),
            Message(
                role="assistant",
                content="On it.",
                tool_calls=(
                    _call("c1", "run_shell_command", '{"command": "make"}'),
                    _call("c2", "read_file", '{"path": "é"}'),
                    _call("c3", "glob", "{}"),
                ),
            ),
            _tool("c1", "boom\nExit Code: 1\nExit Code: 2", exit_code=2, failed=True),
            _tool("c2", "text"),
            _tool("c3", no_result_text()),
            UsageReportData(
                purpose="turn",
                model="unknown",
                prompt_tokens=0,
                completion_tokens=0,
                cached_tokens=0,
            ),
            Message(role="assistant", content="Done."),
            TurnEndData(),
            TurnStartData(),
            _user_line("Thanks"),
        ]
        assert dict(report.skipped) == {
            "projectHash (session metadata)": 1,
            "sessionId (session metadata)": 1,
            "startTime (session metadata)": 1,
            "info message (a CLI notice, not sent to the model)": 1,
            "warning message (a CLI notice, not sent to the model)": 1,
            "error message (a CLI notice, not sent to the model)": 1,
            "tool call that is not an object": 1,
            "gemini thoughts (not kept)": 1,
            "messages[7] has unknown type 'mystery'": 1,
            "messages[8] is not an object": 1,
        }
        assert dict(report.handled) == {
            "user request": 2,
            "assistant message": 2,
            "tool result": 2,
        }
        assert (report.lines, report.records, report.unanswered_calls) == (1, 9, 1)

    def test_results_of_every_shape(self, tmp_path: Path) -> None:
        """Each part's output or error, a bare string, other JSON (keys sorted), joined by lines."""
        results: list[Any] = [
            _response({"output": "out"}) + _response({"error": "err"}),
            [{"functionResponse": {"response": {"z": 1, "a": "é"}}}, "plain", None],
            {"output": 5, "error": "the error"},
            [{"functionResponse": "not a mapping"}],
        ]
        calls = [
            {"id": f"c{i}", "name": "f", "args": {}, "status": "success", "result": r}
            for i, r in enumerate(results)
        ]
        path = _session(tmp_path, {"id": "g", "type": "gemini", "content": "", "toolCalls": calls})
        events, _ = _import_format(path, "gemini")
        assert _datas(events)[1:] == [
            _tool("c0", "out\nerr", failed=False),
            _tool("c1", '{"a": "é", "z": 1}\nplain', failed=False),
            _tool("c2", "the error", failed=False),
            _tool("c3", '{"functionResponse": "not a mapping"}', failed=False),
        ]
        assert _datas(events)[0] == Message(
            role="assistant", tool_calls=tuple(_call(f"c{i}", "f", "{}") for i in range(4))
        )

    def test_a_status_decides_failure(self, tmp_path: Path) -> None:
        """No status: failure only from an exit code; ``success`` passes; any other fails."""
        cases = [(None, "Exit Code: 0"), (None, "no code"), ("success", "ok"), ("cancelled", "x")]
        calls = [
            {"id": f"c{i}", "name": "f", "args": {}, "result": text, **({"status": s} if s else {})}
            for i, (s, text) in enumerate(cases)
        ]
        path = _session(tmp_path, {"id": "g", "type": "gemini", "content": "", "toolCalls": calls})
        events, _ = _import_format(path, "gemini")
        assert _datas(events)[1:] == [
            _tool("c0", "Exit Code: 0", exit_code=0, failed=False),
            _tool("c1", "no code"),
            _tool("c2", "ok", failed=False),
            _tool("c3", "x", failed=True),
        ]

    def test_records_of_one_id_merge(self, tmp_path: Path) -> None:
        """Two gemini records with the same id are one answer; without an id they stay two."""
        path = _session(
            tmp_path,
            {"id": "g", "type": "gemini", "content": "one"},
            {"id": "g", "type": "gemini", "content": "two"},
            {"id": 5, "type": "gemini", "content": "three"},
            {"id": 5, "type": "gemini", "content": "four"},
        )
        events, _ = _import_format(path, "gemini")
        assert _datas(events) == [
            Message(role="assistant", content="one\n\ntwo"),
            Message(role="assistant", content="three"),
            Message(role="assistant", content="four"),
        ]

    def test_write_todos_writes_the_list(self, tmp_path: Path) -> None:
        """A description is the content; cancelled items are left out; a failed call writes none."""
        todos = [
            {"description": "A", "status": "completed"},
            {"description": "B", "status": "cancelled"},
            {"description": "C", "status": "cancelled"},
            {"description": "D", "status": "in_progress"},
        ]

        def call(call_id: str, args: object, status: str = "success") -> dict[str, Any]:
            return {
                "id": call_id,
                "name": "write_todos",
                "args": args,
                "status": status,
                "result": "ok",
            }

        path = _session(
            tmp_path,
            {
                "id": "g",
                "type": "gemini",
                "content": "",
                "toolCalls": [
                    call("c1", {"todos": todos}),
                    call("c2", {"todos": todos}, status="error"),
                    call("c3", {"todos": "all"}),
                    call("c4", "not an object"),
                ],
            },
        )
        events, report = _import_format(path, "gemini")
        lists = [e.data.todos for e in events if isinstance(e.data, TodoWriteData)]
        assert lists == [
            (TodoItem(content="A", status="completed"), TodoItem(content="D", status="in_progress"))
        ]
        assert report.skipped["cancelled todo (left out of the list)"] == 2
        reason = "write_todos call with an unreadable list (the list is not an array)"
        assert report.skipped[reason] == 2

    def test_a_list_with_nothing_cancelled_skips_nothing(self, tmp_path: Path) -> None:
        """A write_todos list without cancelled items is written whole and the report skips none."""
        call = {
            "id": "c1",
            "name": "write_todos",
            "args": {"todos": [{"description": "A", "status": "pending"}]},
            "status": "success",
            "result": "ok",
        }
        path = tmp_path / "s.json"
        doc = {"messages": [{"id": "g", "type": "gemini", "content": "", "toolCalls": [call]}]}
        path.write_text(json.dumps(doc), encoding="utf-8")
        events, report = _import_format(path, "gemini")
        lists = [e.data.todos for e in events if isinstance(e.data, TodoWriteData)]
        assert lists == [(TodoItem(content="A", status="pending"),)]
        assert report.as_dict()["skipped"] == {}

    @pytest.mark.parametrize("doc", [[], {"messages": {}}, {"sessionId": "s"}, "x"])
    def test_a_document_without_messages_is_refused(self, tmp_path: Path, doc: object) -> None:
        """A document that is not an object holding a messages array is not a Gemini session."""
        path = tmp_path / "s.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(TranscriptError) as caught:
            _import_format(path, "gemini")
        assert str(caught.value) == (
            f"{path}:1: not a Gemini CLI session (no messages array). Name another format"
        )

    @pytest.mark.parametrize(
        ("message", "reason"),
        [(3, "messages[1] is not an object"), ({"type": "x"}, "messages[1] has unknown type 'x'")],
    )
    def test_strict_refuses_an_unknown_message(
        self, tmp_path: Path, message: object, reason: str
    ) -> None:
        """With strict, an unknown message raises with its index."""
        path = _session(tmp_path, {"type": "user", "content": "Go"}, message)
        with pytest.raises(TranscriptError) as caught:
            _import_format(path, "gemini", strict=True)
        assert (
            str(caught.value) == f"{path}:1: {reason}. Import without --strict to count and skip it"
        )


# --- SWE-agent -------------------------------------------------------------------------------


def _trajectory(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "run.traj"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


class TestSweAgentTrajectory:
    def test_a_history_imports_event_by_event(self, tmp_path: Path) -> None:
        """System, demo, request, actions and their observations, 1.x tool calls, in order."""
        history: list[Any] = [
            {"role": "system", "content": "You are an agent"},
            {"role": "user", "content": "demo task", "is_demo": True},
            {"role": "user", "content": [{"type": "text", "text": "Fix #1"}]},
            {"role": "assistant", "content": "raw", "thought": "Look first", "action": "ls -a"},
            {"role": "user", "content": "a.py b.py"},
            {"role": "assistant", "content": "no action", "action": "  "},
            {"role": "user", "content": "go on"},
            {
                "role": "assistant",
                "content": "two calls",
                "action": "ignored",
                "tool_calls": [
                    {"id": "t1", "function": {"name": "edit", "arguments": '{"a": 1}'}},
                    {"id": "t2", "function": {"name": "view", "arguments": "{}"}},
                    {"id": "t3"},
                    "x",
                ],
            },
            {"role": "tool", "content": "edited", "tool_call_ids": ["t1"]},
            {"role": "tool", "content": None},
            {"role": "assistant", "thought": 5, "content": "fallback", "action": "submit"},
            {"role": "user", "content": "demo 2", "is_demo": "TRUE"},
            {"role": "tool", "content": "late"},
            {"role": "critic", "content": "?"},
            [],
        ]
        path = _trajectory(tmp_path, {"environment": "e", "info": {}, "history": history})
        events, report = _import_format(path, "swe-agent")
        assert _datas(events) == [
            Message(role="system", content="You are an agent"),
            Message(role="user", content="demo task", origin="injected"),
            TurnStartData(),
            _user_line("Fix #1"),
            Message(
                role="assistant",
                content="Look first",
                tool_calls=(_call("swe-agent-3", "bash", '{"command": "ls -a"}'),),
            ),
            _tool("swe-agent-3", "a.py b.py"),
            Message(role="assistant", content="no action"),
            TurnEndData(),
            TurnStartData(),
            _user_line("go on"),
            Message(
                role="assistant",
                content="two calls",
                tool_calls=(_call("t1", "edit", '{"a": 1}'), _call("t2", "view", "{}")),
            ),
            _tool("t1", "edited"),
            _tool("t2", ""),
            Message(
                role="assistant",
                content="fallback",
                tool_calls=(_call("swe-agent-10", "bash", '{"command": "submit"}'),),
            ),
            _tool("swe-agent-10", no_result_text()),
            Message(role="user", content="demo 2", origin="injected"),
        ]
        assert dict(report.skipped) == {
            "environment (trajectory metadata)": 1,
            "info (trajectory metadata)": 1,
            "tool result without its call": 1,
            "history[13] has role 'critic'": 1,
            "history[14] is a JSON list, not a message": 1,
        }
        assert dict(report.handled) == {
            "system message": 1,
            "demonstration": 2,
            "user request": 2,
            "assistant message": 4,
            "tool result": 3,
        }
        assert (report.lines, report.records, report.orphan_results) == (1, 15, 1)

    def test_a_result_for_several_calls_by_id(self, tmp_path: Path) -> None:
        """A tool message naming several calls answers each; a user message answers the first."""
        history = [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "a", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "b", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "c", "function": {"name": "f", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "content": "both", "tool_call_ids": ["a", "b"]},
            {"role": "user", "content": "third", "is_demo": False},
        ]
        events, _ = _import_format(_trajectory(tmp_path, {"history": history}), "swe-agent")
        assert _datas(events)[1:] == [_tool("a", "both"), _tool("b", "both"), _tool("c", "third")]

    def test_an_empty_request_and_a_demo_while_calls_wait(self, tmp_path: Path) -> None:
        """A demo is never a result; a request without content is an empty request."""
        history = [
            {"role": "assistant", "action": "ls"},
            {"role": "user", "content": "demo", "is_demo": "true"},
            {"role": "user"},
        ]
        events, _ = _import_format(_trajectory(tmp_path, {"history": history}), "swe-agent")
        assert _datas(events) == [
            Message(
                role="assistant", tool_calls=(_call("swe-agent-0", "bash", '{"command": "ls"}'),)
            ),
            _tool("swe-agent-0", no_result_text()),
            Message(role="user", content="demo", origin="injected"),
            TurnStartData(),
            _user_line(""),
        ]

    def test_an_answer_with_an_image_keeps_its_text(self, tmp_path: Path) -> None:
        """An assistant message of text and image parts is written with its text."""
        content = [
            {"type": "text", "text": "Look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
            {"type": "text", "text": "here"},
        ]
        history = [{"role": "assistant", "content": content}]
        events, _ = _import_format(_trajectory(tmp_path, {"history": history}), "swe-agent")
        assert _datas(events) == [Message(role="assistant", content="Look\nhere")]

    def test_observations_answer_waiting_calls_one_at_a_time(self, tmp_path: Path) -> None:
        """Without ids, each observation answers the first waiting call, then a request follows."""
        history = [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "a", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "b", "function": {"name": "f", "arguments": "{}"}},
                ],
            },
            {"role": "user", "content": "first"},
            {"role": "tool", "content": "second", "tool_call_ids": "a"},
            {"role": "user", "content": "next request"},
        ]
        events, report = _import_format(_trajectory(tmp_path, {"history": history}), "swe-agent")
        assert _datas(events)[1:] == [
            _tool("a", "first"),
            _tool("b", "second"),
            TurnStartData(),
            _user_line("next request"),
        ]
        assert report.orphan_results == 0

    def test_a_step_whose_thought_is_not_text(self, tmp_path: Path) -> None:
        """A non-string thought is no text: a step without an action writes nothing."""
        steps = [{"thought": 5}, {"thought": ["x"], "action": "ls", "observation": "a"}]
        events, _ = _import_format(_trajectory(tmp_path, {"trajectory": steps}), "swe-agent")
        assert _datas(events) == [
            Message(
                role="assistant", tool_calls=(_call("swe-agent-1", "bash", '{"command": "ls"}'),)
            ),
            _tool("swe-agent-1", "a"),
        ]

    def test_trajectory_steps_without_a_history(self, tmp_path: Path) -> None:
        """Each step is a thought, one bash call and its observation; no request is made up."""
        steps: list[Any] = [
            {"thought": "Look", "action": "ls", "observation": "a.py"},
            {"thought": "Think only", "action": ""},
            "x",
            {"action": "cat a.py"},
        ]
        path = _trajectory(tmp_path, {"trajectory": steps, "info": {}})
        events, report = _import_format(path, "swe-agent")
        assert _datas(events) == [
            Message(
                role="assistant",
                content="Look",
                tool_calls=(_call("swe-agent-0", "bash", '{"command": "ls"}'),),
            ),
            _tool("swe-agent-0", "a.py"),
            Message(role="assistant", content="Think only"),
            Message(
                role="assistant",
                tool_calls=(_call("swe-agent-3", "bash", '{"command": "cat a.py"}'),),
            ),
            _tool("swe-agent-3", ""),
        ]
        assert dict(report.skipped) == {
            "info (trajectory metadata)": 1,
            "trajectory[2] is not a step": 1,
        }
        assert report.records == 4

    def test_steps_beside_a_history_are_counted_not_read(self, tmp_path: Path) -> None:
        """With a history, the trajectory steps repeat it: skipped and counted by number."""
        doc = {
            "history": [{"role": "user", "content": "Go"}],
            "trajectory": [{"action": "ls"}, {"action": "pwd"}],
        }
        events, report = _import_format(_trajectory(tmp_path, doc), "swe-agent")
        assert _datas(events) == [TurnStartData(), _user_line("Go")]
        assert dict(report.skipped) == {"trajectory steps (the history holds the same turns)": 2}
        doc["trajectory"] = []
        _, report = _import_format(_trajectory(tmp_path, doc), "swe-agent")
        assert dict(report.skipped) == {}

    @pytest.mark.parametrize(
        ("doc", "reason"),
        [
            ([1], "a SWE-agent trajectory is a JSON object"),
            (
                {"history": {}, "trajectory": "x"},
                "no 'history' or 'trajectory' list in this trajectory",
            ),
        ],
    )
    def test_a_document_that_is_no_trajectory(
        self, tmp_path: Path, doc: object, reason: str
    ) -> None:
        """Not an object, or neither list: refused with the file and line 1."""
        path = _trajectory(tmp_path, doc)
        with pytest.raises(TranscriptError) as caught:
            _import_format(path, "swe-agent")
        assert str(caught.value) == f"{path}:1: {reason}"

    @pytest.mark.parametrize(
        ("doc", "reason"),
        [
            (
                {"history": [{"role": "user", "content": "Go"}, 3]},
                "history[1] is a JSON int, not a message",
            ),
            ({"history": [{"role": "x"}]}, "history[0] has role 'x'"),
            ({"trajectory": [{"action": "ls"}, None]}, "trajectory[1] is not a step"),
        ],
    )
    def test_strict_refuses_an_unknown_entry(
        self, tmp_path: Path, doc: object, reason: str
    ) -> None:
        """With strict, an entry that is not a message or step raises with its index."""
        path = _trajectory(tmp_path, doc)
        with pytest.raises(TranscriptError) as caught:
            _import_format(path, "swe-agent", strict=True)
        assert (
            str(caught.value) == f"{path}:1: {reason}. Import without --strict to count and skip it"
        )


# --- OpenAI chat messages --------------------------------------------------------------------


def _chat(tmp_path: Path, text: str, name: str = "chat.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _fn(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


CHAT: list[Any] = [
    {"role": "system", "content": "Be brief"},
    {"role": "developer", "content": [{"type": "text", "text": "Rules"}]},
    {"role": "user", "content": "Fix it"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "On"},
            {"type": "refusal"},
            {"type": "text", "text": "it"},
        ],
        "tool_calls": [_fn("c1", "shell", '{"cmd": "make"}'), {"id": "c2"}, "x"],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "built"},
    {"role": "assistant", "content": None, "function_call": {"name": "grep", "arguments": "{}"}},
    {"role": "assistant", "content": "", "function_call": {"name": "grep", "arguments": "[]"}},
    {"role": "function", "name": "grep", "content": "second"},
    {"role": "function", "name": "find", "content": "no such call"},
    {"role": "tool", "tool_call_id": "c9", "content": None},
    {"role": "user", "content": None},
    {"role": "critic", "content": "?"},
    "not a message",
]


class TestOpenaiMessages:
    def expected(self) -> list[EventData]:
        return [
            Message(role="system", content="Be brief"),
            Message(role="system", content="Rules"),
            TurnStartData(),
            _user_line("Fix it"),
            Message(
                role="assistant",
                content="On\nit",
                tool_calls=(_call("c1", "shell", '{"cmd": "make"}'),),
            ),
            _tool("c1", "built"),
            Message(role="assistant", tool_calls=(_call("function_call_1", "grep", "{}"),)),
            _tool("function_call_1", no_result_text()),
            Message(role="assistant", tool_calls=(_call("function_call_2", "grep", "[]"),)),
            _tool("function_call_2", "second"),
            TurnEndData(),
            TurnStartData(),
            _user_line(""),
        ]

    @pytest.mark.parametrize(
        "shape", ["array", "object", "jsonl", "indented array", "array on line one of jsonl"]
    )
    def test_a_chat_imports_event_by_event(self, tmp_path: Path, shape: str) -> None:
        """Each role becomes its event, in each of the file's shapes."""
        if shape == "array":
            text = json.dumps(CHAT)
        elif shape == "object":
            text = json.dumps({"model": "m", "messages": CHAT})
        elif shape == "indented array":
            text = "\n  " + json.dumps(CHAT, indent=2)
        elif shape == "jsonl":
            text = "".join(json.dumps(m) + "\n" for m in CHAT)
        else:
            text = json.dumps([CHAT[0]]) + "\n" + "".join(json.dumps(m) + "\n" for m in CHAT[1:])
        events, report = _import_format(_chat(tmp_path, text), "openai")
        expected = self.expected()
        assert _datas(events) == (
            expected[1:] if shape == "array on line one of jsonl" else expected
        )
        line_one = shape == "array on line one of jsonl"
        skipped = {
            "tool call without a function": 2,
            "tool result without its call": 2,
            "message with role 'critic'": 1,
            "a JSON str where a message (object) was expected": 1,
        }
        handled = {
            "system message": 1,
            "developer message": 1,
            "user request": 2,
            "assistant message": 3,
            "tool result": 2,
        }
        if line_one:
            skipped["a JSON list where a message (object) was expected"] = 1
            del handled["system message"]
        assert dict(report.skipped) == skipped
        assert dict(report.handled) == handled
        assert report.records == len(CHAT)

    def test_a_truncated_array_is_read_as_one(self, tmp_path: Path) -> None:
        """An array cut off mid-way is still one array: its complete messages are read."""
        text = json.dumps(CHAT[:3])[:-1] + ', {"role": "user", "con'
        events, report = _import_format(_chat(tmp_path, text), "openai")
        assert _datas(events) == self.expected()[:4]
        assert report.torn_line == 1

    def test_content_parts_and_images(self, tmp_path: Path) -> None:
        """Text parts and image URLs (bare or in an object) are kept; other parts dropped."""
        content = [
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": "https://x.invalid/a.png"}},
            {"type": "image_url", "image_url": "data:image/png;base64,AA"},
            {"type": "image_url", "image_url": {"uri": "y"}},
            {"type": "input_audio"},
            3,
        ]
        chat = [
            {"role": "user", "content": content},
            {"role": "user", "content": {"text": "d"}},
            {"role": "assistant", "content": [*content, {"type": "text", "text": "more"}]},
        ]
        events, _ = _import_format(_chat(tmp_path, json.dumps(chat)), "openai")
        assert _datas(events) == [
            TurnStartData(),
            Message(
                role="user",
                content=(
                    TextPart(text="see"),
                    ImagePart(image_url=ImageURL(url="https://x.invalid/a.png")),
                    ImagePart(image_url=ImageURL(url="data:image/png;base64,AA")),
                ),
                origin="user",
            ),
            TurnEndData(),
            TurnStartData(),
            _user_line(""),
            Message(role="assistant", content="see\n\nmore"),
        ]

    def test_todo_calls_write_lists(self, tmp_path: Path) -> None:
        """Each todo tool's list is written; a plan's steps too; a rejected call writes none."""
        todos = json.dumps({"todos": [{"content": "A", "status": "pending", "activeForm": "a"}]})
        plan = json.dumps({"plan": [{"step": "B", "status": "in_progress"}]})
        calls = [
            _fn("t1", "todo_write", todos),
            _fn("t2", "TodoWrite", todos),
            _fn("t3", "write_todos", plan),
            _fn("t4", "update_plan", plan),
            _fn("t5", "todo_write", todos),
            _fn("t6", "todowrite", todos),
            _fn("t7", "todo_write", "[1]"),
        ]
        chat: list[Any] = [{"role": "assistant", "content": None, "tool_calls": calls}]
        for call in calls:
            result = "ok"
            if call["id"] == "t5":
                result = 'todo_write: rejected: duplicate content "A"'
            chat.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        events, report = _import_format(_chat(tmp_path, json.dumps(chat)), "openai")
        lists = [e.data.todos for e in events if isinstance(e.data, TodoWriteData)]
        a = (TodoItem(content="A", status="pending"),)
        b = (TodoItem(content="B", status="in_progress"),)
        assert lists == [a, a, b, b]
        assert (
            report.skipped["todo_write call with an unreadable list (the list is not an array)"]
            == 1
        )

    def test_a_function_result_answers_the_last_open_call_of_its_name(self, tmp_path: Path) -> None:
        """Legacy function messages pair with the latest unanswered call of that name."""
        chat = [
            {
                "role": "assistant",
                "content": "x",
                "tool_calls": [
                    _fn("a", "grep", "{}"),
                    _fn("b", "grep", "{}"),
                    _fn("c", "ls", "{}"),
                ],
            },
            {"role": "function", "name": "grep", "content": "to b"},
            {"role": "function", "name": "grep", "content": [{"type": "text", "text": "to a"}]},
            {"role": "function", "name": "grep"},
        ]
        events, report = _import_format(_chat(tmp_path, json.dumps(chat)), "openai")
        assert _datas(events)[1:] == [
            _tool("a", "to a"),
            _tool("b", "to b"),
            _tool("c", no_result_text()),
        ]
        assert report.orphan_results == 1

    def test_a_jsonl_file_starting_with_an_object_but_not_a_document(self, tmp_path: Path) -> None:
        """An object without a messages array on the first line: the file is read as JSONL."""
        text = json.dumps({"role": "user", "content": "one"}) + "\n"
        text += json.dumps({"role": "user", "content": "two"}) + "\n"
        events, _ = _import_format(_chat(tmp_path, text, "chat.jsonl"), "openai")
        assert [e.data for e in events if isinstance(e.data, Message)] == [
            _user_line("one"),
            _user_line("two"),
        ]
        text = json.dumps({"messages": "no", "role": "user", "content": "three"}) + "\n"
        events, _ = _import_format(_chat(tmp_path, text, "chat.jsonl"), "openai")
        assert _datas(events) == [TurnStartData(), _user_line("three")]

    def test_a_document_with_a_lone_surrogate_is_repaired(self, tmp_path: Path) -> None:
        """A ``messages`` object holding an escaped lone surrogate imports it as U+FFFD."""
        text = '{"messages": [{"role": "user", "content": "a\\ud800b"}]}'
        events, _ = _import_format(_chat(tmp_path, text), "openai")
        assert _datas(events) == [TurnStartData(), _user_line("a\ufffdb")]

    def test_a_document_nested_too_deep_is_read_line_by_line(self, tmp_path: Path) -> None:
        """A ``messages`` object nested past the depth limit is not read whole: nothing imported."""
        deep = "[" * 200 + "]" * 200
        text = '{"messages": [{"role": "user", "content": "x", "deep": ' + deep + "}]}"
        _, report = _import_format(_chat(tmp_path, text), "openai")
        assert report.turns == 0
        assert report.records == 0

    def test_a_number_for_content_is_no_text(self, tmp_path: Path) -> None:
        """Content that is neither text nor a list of parts is an empty request."""
        events, _ = _import_format(
            _chat(tmp_path, json.dumps([{"role": "user", "content": 7}])), "openai"
        )
        assert _datas(events) == [TurnStartData(), _user_line("")]

    def test_results_without_content_are_empty(self, tmp_path: Path) -> None:
        """A tool or function message without content answers its call with empty text."""
        chat = [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_fn("a", "grep", "{}"), _fn("b", "ls", "{}")],
            },
            {"role": "tool", "tool_call_id": "a"},
            {"role": "function", "name": "ls", "content": None},
        ]
        events, _ = _import_format(_chat(tmp_path, json.dumps(chat)), "openai")
        assert _datas(events)[1:] == [_tool("a", ""), _tool("b", "")]

    @pytest.mark.parametrize(
        ("name", "text", "where", "reason"),
        [
            (
                "chat.jsonl",
                '{"role": "user", "content": "Go"}\n{"role": "critic"}\n',
                2,
                "message with role 'critic'",
            ),
            (
                "chat.jsonl",
                '{"role": "user", "content": "Go"}\n\n"text"\n',
                3,
                "a JSON str where a message (object) was expected",
            ),
            (
                "chat.json",
                '{"messages": [{"role": "user", "content": "Go"}, 5]}',
                1,
                "a JSON int where a message (object) was expected",
            ),
            (
                "chat.json",
                '[\n  {"role": "user", "content": "Go"},\n  {"role": "critic"}\n]',
                3,
                "message with role 'critic'",
            ),
        ],
    )
    def test_strict_refuses_an_unknown_message_by_line(
        self, tmp_path: Path, name: str, text: str, where: int, reason: str
    ) -> None:
        """With strict, the first unknown message raises naming the file and its line."""
        path = _chat(tmp_path, text, name)
        with pytest.raises(TranscriptError) as caught:
            _import_format(path, "openai", strict=True)
        assert str(caught.value) == (
            f"{path}:{where}: {reason}. Import without --strict to count and skip it"
        )

    @pytest.mark.parametrize(
        ("name", "text", "reason"),
        [
            ("chat.jsonl", '{"role": "user", "content": "Go"}\n{"role": \n', ":2: "),
            (
                "chat.json",
                '[{"role": "user", "content": "Go"}, {"role": ',
                ": truncated JSON array",
            ),
        ],
    )
    def test_strict_refuses_a_broken_file(
        self, tmp_path: Path, name: str, text: str, reason: str
    ) -> None:
        """With strict, a broken JSONL line or a truncated array raises; without, it is read on."""
        path = _chat(tmp_path, text, name)
        with pytest.raises(TranscriptError, match=reason):
            _import_format(path, "openai", strict=True)
        events, _ = _import_format(path, "openai")
        assert _datas(events) == [TurnStartData(), _user_line("Go")]

    def test_an_array_after_a_long_run_of_blanks(self, tmp_path: Path) -> None:
        """Leading whitespace of any length does not hide that the file is one array."""
        text = " \n" * 5000 + json.dumps([{"role": "user", "content": "Go"}])
        events, report = _import_format(_chat(tmp_path, text), "openai")
        assert _datas(events) == [TurnStartData(), _user_line("Go")]
        assert dict(report.skipped) == {}
        text = "\n" * 5000 + json.dumps({"messages": [{"role": "user", "content": "Go"}]})
        events, _ = _import_format(_chat(tmp_path, text), "openai")
        assert _datas(events) == [TurnStartData(), _user_line("Go")]

    def test_an_array_holding_bytes_that_are_not_utf8(self, tmp_path: Path) -> None:
        """One array with an invalid UTF-8 byte is still read as one, the byte replaced."""
        path = tmp_path / "chat.json"
        path.write_bytes(b'[{"role": "user",\n "content": "h\xffi"}]')
        events, report = _import_format(path, "openai")
        assert _datas(events) == [TurnStartData(), _user_line("h\ufffdi")]
        assert report.lines == 2

    def test_a_document_of_exactly_the_largest_size_is_read_whole(self, tmp_path: Path) -> None:
        """A ``messages`` object of exactly `MAX_DOCUMENT_BYTES` is one document, not JSONL."""
        head = '{"messages": [{"role": "user", "content": "Go"}], "pad": "'
        text = head + "a" * (MAX_DOCUMENT_BYTES - len(head) - 2) + '"}'
        path = _chat(tmp_path, text)
        assert path.stat().st_size == MAX_DOCUMENT_BYTES
        events, _ = _import_format(path, "openai")
        assert _datas(events) == [TurnStartData(), _user_line("Go")]
