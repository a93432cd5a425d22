"""`harness todo-write` without pydantic: the plain path appends and answers as the tool does.

The plain path is the JSONL store's standard-library fold and append
(`compaction.stores.fold_plain`, `append_plain`) with the todo tool's own rules
(`compaction.tools.plain_todo_call`). The oracle is the full path (`Session.todo_write`, the
models): for every generated log and call, the plain path either writes nothing and hands over
(None), or leaves the log byte for byte as the full path leaves a copy of it, with the same
result; and a log the fold reads is one the models read to the same bytes and state.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from strategies import (
    near_miss_todo_arguments,
    padded_todo_arguments,
    plain_log_payloads,
    todo_write_calls,
)

from compaction import (
    OpenWork,
    Session,
    TodoItem,
    TodoWriteData,
    ToolInputError,
    TurnStartData,
    builtin_policies,
    dump_event,
    parse_event,
)
from compaction.contract import MAX_ARGUMENT_BYTES, MAX_ITEM_CHARS
from compaction.events import ClipData, Message
from compaction.stores import _plain_shapes, fold_plain
from compaction.tools import _plain_call, _todo_rules, parse_todo_write, plain_todo_call
from compaction.tools.todos import calls_in_one_response
from harness.cli import main
from harness.commands.todo_write_cmd import plain_call, session_call

HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def write_log(path: Path, payloads: list[object]) -> None:
    """Write `payloads` to a new log through the session (the models' bytes)."""
    path.touch()
    with Session(path) as s:
        for data in payloads:
            s.append(data)  # type: ignore[arg-type]


def full_args(log: Path, *, mode: str | None = None, parallel: bool = False) -> argparse.Namespace:
    return argparse.Namespace(
        log=str(log),
        session=None,
        lock_timeout=None,
        modes_file=None,
        mode=mode,
        allow_parallel=parallel,
    )


Result = tuple[str, bool, list[object]]


def plain(
    log: Path | str,
    raw: str | bytes,
    *,
    mode: str | None = None,
    parallel: bool = False,
    session: str | None = None,
    modes_file: str | None = None,
) -> Result | None:
    args = full_args(Path(log), mode=mode, parallel=parallel)
    args.log, args.session, args.modes_file = str(log), session, modes_file
    return plain_call(args, raw)


def valid_todos(raw: str | bytes, *, allow_parallel: bool) -> list[dict[str, str]] | None:
    """The list the plain path records for `raw` on an empty log, or None."""
    accepted = plain_todo_call(
        raw, mode=None, log_mode=None, messages=[], allow_parallel=allow_parallel
    )
    if accepted is None:
        return None
    return [{"content": content, "status": status} for content, status in accepted.todos]


class TestShapesAreTheModels:
    def test_field_orders_are_the_models(self) -> None:
        """Each exact shape lists the models' fields in their order (the order a dump writes)."""
        assert [*_plain_shapes.MESSAGE_FIELDS, "provider_fields"] == list(Message.model_fields)
        assert [*_plain_shapes.OPEN_FIELDS, "task_ids"] == list(OpenWork.model_fields)
        assert list(ClipData.model_fields) == _plain_shapes.CLIP_FIELDS
        assert list(TurnStartData.model_fields) == ["mode", "cwd", "at"]

    def test_policy_table_is_the_shipped_one(self) -> None:
        """The plain read of the shipped table equals `builtin_policies()`."""
        table = _plain_call._plain_table()
        assert table == {name: p.model_dump() for name, p in builtin_policies().items()}


class TestArguments:
    @settings(max_examples=300, deadline=None)
    @given(todo_write_calls)
    def test_accepted_only_as_the_tool_accepts(self, call: tuple[str, bool]) -> None:
        """A list the plain check takes is the list the tool records; a rejected call: None."""
        raw, parallel = call
        ours = valid_todos(raw, allow_parallel=parallel)
        try:
            items = parse_todo_write(raw, allow_parallel=parallel)
        except ToolInputError:
            assert ours is None
            return
        assert ours == [t.model_dump() for t in items]

    @settings(max_examples=100, deadline=None)
    @given(padded_todo_arguments(), st.booleans())
    def test_padded_valid_lists_are_taken(self, raw: str, as_bytes: bool) -> None:
        """Valid lists (content to trim included) are taken, so the plain path is used."""
        assert valid_todos(raw.encode() if as_bytes else raw, allow_parallel=True) is not None

    @settings(max_examples=100, deadline=None)
    @given(near_miss_todo_arguments())
    def test_near_misses_are_left_to_the_tool(self, raw: str) -> None:
        """A list broken the ways models break it is never taken: the tool words the error."""
        assert valid_todos(raw, allow_parallel=False) is None

    @pytest.mark.parametrize(
        "raw",
        [
            '{"todos": [], "todos": []}',
            '{"todos": [{"content": "a", "status": "pending", "content": "b"}]}',
            '{"todos": [{"content": "\\ud800", "status": "pending"}]}',
            '{"todos": [{"content": "' + "x" * (MAX_ITEM_CHARS + 1) + '", "status": "pending"}]}',
            '{"todos": [{"content": "\\u200b\\u2800", "status": "pending"}]}',
            '{"todos": [{"content": "a", "status": "pending"}, '
            '{"content": " a", "status": "completed"}]}',
            b'{"todos": []}' + b" " * MAX_ARGUMENT_BYTES,
            "[" * 100_000,
        ],
    )
    def test_each_rule_leaves_the_call_to_the_tool(self, raw: str | bytes) -> None:
        """Repeated keys, a lone surrogate, a long, blank or repeated text, a huge or deep call."""
        assert valid_todos(raw, allow_parallel=True) is None
        with pytest.raises(ToolInputError):
            parse_todo_write(raw, allow_parallel=True)

    def test_exactly_at_the_caps_is_taken(self) -> None:
        """A content of exactly MAX_ITEM_CHARS and arguments of exactly the byte cap pass."""
        item = json.dumps({"todos": [{"content": "x" * MAX_ITEM_CHARS, "status": "pending"}]})
        raw = item.encode() + b" " * (MAX_ARGUMENT_BYTES - len(item))
        assert len(raw) == MAX_ARGUMENT_BYTES
        assert valid_todos(raw, allow_parallel=False) == [
            t.model_dump() for t in parse_todo_write(raw)
        ]


def check_fold(data: bytes, log: Path) -> None:
    """When the plain fold reads a log, the models read every line to the same bytes and state."""
    state = fold_plain(data, exact=True)
    if state is None:
        return
    lines = data.split(b"\n")[:-1] if data else []
    for line in lines:
        assert dump_event(parse_event(line)).encode() == line
    with Session(log) as s:
        assert state.next_seq == s.applied_seq + 1
        assert state.mode == s.mode
        assert calls_in_one_response(s.context.messages) == _todo_rules.calls_in_one_response(
            state.messages
        )


class TestAgainstTheFullPath:
    @settings(max_examples=120, deadline=None, suppress_health_check=HEALTH)
    @given(
        plain_log_payloads(),
        st.one_of(padded_todo_arguments(), todo_write_calls.map(lambda c: c[0])),
        st.sampled_from([None, "agent", "parallel", "plan"]),
        st.booleans(),
    )
    def test_same_bytes_and_result_or_nothing(
        self,
        tmp_path_factory: pytest.TempPathFactory,
        payloads: list[object],
        raw: str,
        mode: str | None,
        parallel: bool,
    ) -> None:
        """The plain path appends the full path's line and returns its result, or writes nothing."""
        folder = tmp_path_factory.mktemp("plain")
        ours, theirs = folder / "plain.jsonl", folder / "full.jsonl"
        write_log(ours, payloads)
        shutil.copyfile(ours, theirs)
        before = ours.read_bytes()
        check_fold(before, ours)
        written = plain(ours, raw, mode=mode, parallel=parallel)
        if written is None:
            assert ours.read_bytes() == before
            return
        content, is_error, todos = session_call(
            full_args(theirs, mode=mode, parallel=parallel), raw
        )
        assert written == (content, is_error, todos)
        assert ours.read_bytes() == theirs.read_bytes()

    @settings(max_examples=80, deadline=None, suppress_health_check=HEALTH)
    @given(plain_log_payloads(), st.data())
    def test_a_damaged_line_is_never_taken_unless_the_models_take_it(
        self, tmp_path_factory: pytest.TempPathFactory, payloads: list[object], data: st.DataObject
    ) -> None:
        """One byte of a log changed, dropped or added: the plain fold reads it only if valid."""
        log = tmp_path_factory.mktemp("damaged") / "s.jsonl"
        write_log(log, payloads)
        raw = bytearray(log.read_bytes())
        if not raw:
            return
        at = data.draw(st.integers(0, len(raw) - 1))
        byte = data.draw(st.sampled_from(b'"\\{}[],:0123456789 nlutrx\n\x00\xff'))
        match data.draw(st.sampled_from(["replace", "drop", "insert"])):
            case "replace":
                raw[at] = byte
            case "drop":
                del raw[at]
            case "insert":
                raw.insert(at, byte)
            case other:
                raise AssertionError(other)
        log.write_bytes(bytes(raw))
        check_fold(bytes(raw), log)

    def test_a_common_log_takes_the_plain_path(self, tmp_path: Path) -> None:
        """Turns, messages with calls and results, lists and turn ends: the plain path writes."""
        log = tmp_path / "s.jsonl"
        write_log(
            log,
            [
                TurnStartData(mode="agent"),
                Message(role="system", content="You are terse."),
                Message(role="user", content="Fix it", origin="user"),
                TodoWriteData(todos=(TodoItem(content="Fix", status="in_progress"),)),
            ],
        )
        written = plain(log, '{"todos": [{"content": " Fix ", "status": "completed"}]}')
        assert written is not None
        assert written[0] == "Todo list updated: 0 pending, 0 in progress, 1 completed."
        assert log.read_bytes().endswith(
            b'{"v":1,"seq":5,"type":"todo/write","data":{"todos":[{"content":"Fix",'
            b'"status":"completed"}]}}\n'
        )


EMPTY = '{"todos": []}'


class TestMissingLog:
    @settings(max_examples=40, deadline=None, suppress_health_check=HEALTH)
    @given(
        st.one_of(padded_todo_arguments(), near_miss_todo_arguments()),
        st.sampled_from([None, "agent", "plan"]),
    )
    def test_created_as_the_full_path_creates_it(
        self, tmp_path_factory: pytest.TempPathFactory, raw: str, mode: str | None
    ) -> None:
        """A log not there yet (nor its folder): the same file, or none, the same result."""
        folder = tmp_path_factory.mktemp("missing")
        ours, theirs = folder / "a" / "b" / "s.jsonl", folder / "c" / "d" / "s.jsonl"
        written = plain(ours, raw, mode=mode)
        content, is_error, todos = session_call(full_args(theirs, mode=mode), raw)
        if written is None:
            assert is_error  # only a call the tool rejects or the mode refuses is handed over
            assert not ours.parent.exists()
            assert not theirs.exists()
            return
        assert written == (content, is_error, todos)
        assert ours.read_bytes() == theirs.read_bytes()
        assert ours.stat().st_mode == theirs.stat().st_mode

    def test_a_dangling_symlink_is_left_to_the_full_path(self, tmp_path: Path) -> None:
        """A link to nothing is not created through: the full path names it."""
        link = tmp_path / "s.jsonl"
        link.symlink_to(tmp_path / "nowhere.jsonl")
        assert plain(link, EMPTY) is None
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


INVALID_DATA = [
    ("message", {"role": "user", "content": "x", "exit_code": 1}),
    ("message", {"role": "assistant", "failed": False}),
    ("message", {"role": "user", "clip": {"head_chars": 0, "tail_chars": 0, "omitted_tokens": 0}}),
    (
        "message",
        {
            "role": "tool",
            "content": "ab",
            "tool_call_id": "c",
            "clip": {"head_chars": 2, "tail_chars": 1, "omitted_tokens": 0},
        },
    ),
    ("message", {"role": "tool", "content": "x", "tool_call_id": ""}),
    ("message", {"role": "tool", "content": "x"}),
    ("message", {"role": "user", "tool_call_id": "c"}),
    (
        "message",
        {
            "role": "user",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ),
    (
        "message",
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c", "type": "other", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ),
    ("message", {"role": "user", "content": [{"type": "image_url", "image_url": {}}]}),
    ("message", {"role": "user", "content": [{"type": "text"}]}),
    ("message", {"role": "user", "origin": "robot"}),
    ("message", {"role": "bot"}),
    ("message", {"content": "x"}),
    ("message", {"role": "user", "extra": 1}),
    ("turn/start", {"mode": 3}),
    ("turn/start", {"surprise": "x"}),
    (
        "turn/end",
        {
            "open": {
                "todos_pending": -1,
                "todos_in_progress": 0,
                "tasks_pending": 0,
                "tasks_in_progress": 0,
                "task_ids": [],
            }
        },
    ),
    (
        "turn/end",
        {
            "open": {
                "todos_pending": 0,
                "todos_in_progress": 0,
                "tasks_pending": 0,
                "tasks_in_progress": 0,
                "task_ids": [1],
            }
        },
    ),
    ("turn/end", {"reason": 3}),
    ("todo/write", {"todos": [{"content": "a", "status": "done"}]}),
    ("todo/write", {"todos": [{"content": 1, "status": "pending"}]}),
    ("todo/write", {}),
]
"""Payloads the models refuse, one rule each (role rules, the clip's bound, types, fields)."""


class TestHandsOver:
    @pytest.mark.parametrize(("kind", "data"), INVALID_DATA)
    def test_data_the_models_refuse_is_never_read(
        self, tmp_path: Path, kind: str, data: dict[str, object]
    ) -> None:
        """Each line the models refuse (written in the canonical form) is not folded either."""
        line = json.dumps(
            {"v": 1, "seq": 1, "type": kind, "data": data}, separators=(",", ":")
        ).encode()
        with pytest.raises(ValidationError):
            parse_event(line)
        assert fold_plain(line + b"\n", exact=True) is None

    @pytest.mark.parametrize(
        "tail",
        [
            b'{"v":1,"seq":2,"type":"turn/start","data":{}}',  # no newline: a torn or open tail
            b"\n",  # a blank line
            b'{"v":1,"seq":3,"type":"turn/start","data":{}}\n',  # a gap
            b'{"v":1, "seq":2,"type":"turn/start","data":{}}\n',  # valid, not as written
            b'{"v":1,"seq":2,"type":"turn/start","data":{"mode":null}}\n',
        ],
    )
    def test_an_unusual_log_is_left_to_the_full_path(self, tmp_path: Path, tail: bytes) -> None:
        """A tail, a blank line, a gap, a line in another form: None, and the log is untouched."""
        log = tmp_path / "s.jsonl"
        log.write_bytes(b'{"v":1,"seq":1,"type":"turn/start","data":{}}\n' + tail)
        before = log.read_bytes()
        assert plain(log, '{"todos": []}') is None
        assert log.read_bytes() == before

    def test_a_store_and_options_are_left_to_the_full_path(self, tmp_path: Path) -> None:
        """A store URL, --session, --modes-file, an unknown --mode: None, nothing written."""
        log = tmp_path / "s.jsonl"
        log.touch()
        assert plain(log, EMPTY, session="x") is None
        assert plain(log, EMPTY, modes_file="m.toml") is None
        assert plain(log, EMPTY, mode="no-such-mode") is None
        assert plain(f"sqlite:///{tmp_path}/s.db", EMPTY) is None
        assert log.read_bytes() == b""
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]

    def test_a_malformed_middle_line_is_refused_with_the_usual_message(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A bad line before a good tail: exit 2 and the reader's message, nothing appended."""
        log = tmp_path / "s.jsonl"
        log.write_bytes(
            b'{"v":1,"seq":1,"type":"turn/start","data":{"mode":7}}\n'
            b'{"v":1,"seq":2,"type":"turn/start","data":{}}\n'
        )
        before = log.read_bytes()
        assert main(["todo-write", str(log), "--args", '{"todos": []}']) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"harness todo-write: {log}:1: ")
        assert log.read_bytes() == before
