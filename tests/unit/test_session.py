"""A live Session: replay on open, torn tails, other writers, bad lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import (
    LogFormatError,
    LogIntegrityError,
    Message,
    Session,
    SessionLog,
    TodoItem,
)

WRITE = '{"todos": [{"content": "Run tests", "status": "in_progress"}]}'


def line(seq: int, type_: str = "turn/start") -> bytes:
    """Return one valid log line."""
    return json.dumps({"v": 1, "seq": seq, "type": type_, "data": {}}).encode() + b"\n"


class TestSession:
    def test_replays_existing_log(self, log_path: Path) -> None:
        """Opening a session on a log rebuilds its views."""
        with Session(log_path) as s:
            s.start_turn("go")
            s.todo_write(WRITE)
        with Session(log_path) as s:
            assert s.applied_seq == 3
            assert s.todos.todos == (TodoItem(content="Run tests", status="in_progress"),)
            assert s.report.by_type == {"turn/start": 1, "message": 1, "todo/write": 1}

    def test_torn_tail_reported_then_cut_by_append(self, log_path: Path) -> None:
        """A torn tail shows in the report; the next append cuts it and the views follow."""
        log_path.write_bytes(line(1) + b'{"v":1,"seq":2,"type":"todo/wri')
        with Session(log_path) as s:
            assert (s.applied_seq, s.report.torn_line) == (1, 2)
            assert s.todo_write(WRITE).content.startswith("Todo list updated")
            assert s.applied_seq == 2
            assert s.report.torn_line is None
            assert s.todos.seq == 2
        assert log_path.read_bytes().count(b"\n") == 2
        with Session(log_path) as s:
            assert s.todos.seq == 2

    def test_sees_another_writer_on_next_append(self, log_path: Path) -> None:
        """Events another handle appended are applied before the session's own."""
        with Session(log_path) as s:
            s.start_turn("go")
            with SessionLog(log_path) as other:
                other.append(Message(role="assistant", content="from elsewhere"))
            event = s.add_message({"role": "user", "content": "mine"})
            assert event.seq == 4
            assert [m.text() for m in s.context.messages] == ["go", "from elsewhere", "mine"]

    def test_refresh_returns_new_events(self, log_path: Path) -> None:
        """refresh() applies and returns what other writers appended, once."""
        with Session(log_path) as s:
            assert s.refresh() == []
            with SessionLog(log_path) as other:
                other.append(Message(role="user", content="hi"))
            assert [e.seq for e in s.refresh()] == [1]
            assert s.refresh() == []

    def test_bad_line_raises_unless_skipped(self, log_path: Path) -> None:
        """A malformed line stops the session with path:line, or is counted when skipping."""
        log_path.write_bytes(line(1) + b"oops\n" + line(3))
        with pytest.raises(LogFormatError, match=r"session\.jsonl:2: not JSON"):
            Session(log_path)
        with Session(log_path, skip_bad_lines=True) as s:
            assert s.applied_seq == 3
            assert [b.line for b in s.report.bad_lines] == [2]

    def test_seq_gap_raises(self, log_path: Path) -> None:
        """A log whose seqs skip a number is an integrity error, not silently accepted."""
        log_path.write_bytes(line(1) + line(3))
        with pytest.raises(LogIntegrityError, match="line 2 has seq 3, expected 2"):
            Session(log_path)

    def test_rejected_call_touches_nothing(self, log_path: Path) -> None:
        """A rejected todo_write leaves views, seq and file as they were."""
        with Session(log_path) as s:
            s.todo_write(WRITE)
            before = (log_path.read_bytes(), s.applied_seq, s.todos, s.usage)
            assert s.todo_write('{"todos": [{"content": " "}]}').is_error
            assert (log_path.read_bytes(), s.applied_seq, s.todos, s.usage) == before
