"""The JSONL store's standard-library fold and append (`compaction.stores.plain_log`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compaction import Session, TodoItem, TodoWriteData, TurnStartData, dump_event, make_event
from compaction.contract import MAX_INT
from compaction.stores import PlainLog, append_plain, event_line, fold_plain
from compaction.stores import plain_log as plain_module

TURN = b'{"v":1,"seq":1,"type":"turn/start","data":{"mode":"plan"}}\n'
TODO = (
    b'{"v":1,"seq":2,"type":"todo/write","data":{"todos":[{"content":"a","status":"pending"}]}}\n'
)


class TestFold:
    def test_an_empty_log(self) -> None:
        """No bytes: seq 1 comes next, no mode, nothing written."""
        assert fold_plain(b"", exact=True) == PlainLog()

    def test_the_panel_the_latest_list_and_the_mode(self) -> None:
        """A list, then a new turn: the panel empties, the latest list and its turn stay."""
        third = b'{"v":1,"seq":3,"type":"turn/start","data":{}}\n'
        state = fold_plain(TURN + TODO + third, exact=True)
        assert state is not None
        assert (state.next_seq, state.turns, state.mode) == (4, 2, None)
        assert (state.panel, state.latest) == ([], [("a", "pending")])
        assert (state.latest_seq, state.latest_turn) == (2, 1)

    @pytest.mark.parametrize(
        ("line", "loose"),
        [
            (b'{"v":1,"seq":2,"type":"usage/report","data":{}}\n', True),  # not an exact kind
            (b'{"v":1,"seq":3,"type":"turn/start","data":{}}\n', False),  # a gap
            (b'{"v":1,"seq":1,"type":"turn/start","data":{}}\n', False),  # a repeat
            (b'{"v":2,"seq":2,"type":"turn/start","data":{}}\n', False),  # a newer version
            (b'{"v":1, "seq":2,"type":"turn/start","data":{}}\n', True),  # not as written
            (b'{"v":1,"seq":2,"type":"turn/start","data":{}}', False),  # torn: no newline
            (b'{"v":1,"seq":2,"type":"no/such","data":{}}\n', False),
        ],
    )
    def test_what_each_mode_takes(self, line: bytes, loose: bool) -> None:
        """The exact fold takes only dump_event's bytes; the loose one any known envelope."""
        assert fold_plain(TURN + line, exact=True) is None
        assert (fold_plain(TURN + line, exact=False) is not None) is loose

    def test_counts_are_bounded_by_the_contract(self) -> None:
        """An exit code past the contract's MAX_INT is left to the models."""
        line = (
            b'{"v":1,"seq":1,"type":"message","data":{"role":"tool","content":"x",'
            b'"tool_call_id":"c","exit_code":%d}}\n'
        )
        assert fold_plain(line % MAX_INT, exact=True) is not None
        assert fold_plain(line % (MAX_INT + 1), exact=True) is None

    def test_event_line_is_dump_event(self) -> None:
        """The line the fast path writes is the line the models write."""
        data = TodoWriteData(todos=(TodoItem(content="a", status="pending"),))
        expected = dump_event(make_event(7, data)).encode() + b"\n"
        assert event_line(7, "todo/write", data.model_dump()) == expected


class TestAppend:
    def test_appends_what_build_returns_for_the_state(self, tmp_path: Path) -> None:
        """`build` sees the folded state; its line is appended and readable by a Session."""
        log = tmp_path / "s.jsonl"
        log.write_bytes(TURN)
        seen: list[PlainLog] = []

        def build(state: PlainLog) -> bytes:
            seen.append(state)
            return event_line(state.next_seq, "todo/write", {"todos": []})

        assert append_plain(str(log), build)
        assert [s.mode for s in seen] == ["plan"]
        with Session(log) as session:
            assert session.applied_seq == 2

    def test_a_refused_call_creates_no_file(self, tmp_path: Path) -> None:
        """A missing log is created only when `build` accepts the empty log."""
        log = tmp_path / "a" / "s.jsonl"
        assert not append_plain(str(log), lambda state: None)
        assert not (tmp_path / "a").exists()
        assert append_plain(str(log), lambda state: event_line(1, "turn/start", {}))
        assert log.read_bytes() == b'{"v":1,"seq":1,"type":"turn/start","data":{}}\n'

    def test_a_log_it_does_not_take_is_left_alone(self, tmp_path: Path) -> None:
        """A line of another shape: nothing is asked of `build`, nothing written."""
        log = tmp_path / "s.jsonl"
        log.write_bytes(b'{"v":1,"seq":1,"type":"turn/start","data":{"mode":null}}\n')
        before = log.read_bytes()
        assert not append_plain(str(log), lambda state: pytest.fail("asked"))
        assert log.read_bytes() == before

    def test_a_line_over_the_limit_is_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A line longer than MAX_EVENT_BYTES is not written."""
        log = tmp_path / "s.jsonl"
        log.write_bytes(TURN)
        line = event_line(2, "turn/start", {})
        monkeypatch.setattr(plain_module, "MAX_EVENT_BYTES", len(line) - 1)
        assert not append_plain(str(log), lambda state: line)
        assert log.read_bytes() == TURN

    def test_a_failed_write_is_cut_back(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A write that fails half way leaves the file as it was."""
        log = tmp_path / "s.jsonl"
        log.write_bytes(TURN)
        real_write = os.write

        def half(fd: int, data: bytes) -> int:
            real_write(fd, data[:5])
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "write", half)
        assert not append_plain(str(log), lambda state: event_line(2, "turn/start", {}))
        assert log.read_bytes() == TURN

    def test_not_a_regular_file(self, tmp_path: Path) -> None:
        """A folder given as the log: nothing is written, the full path words it."""
        assert not append_plain(str(tmp_path), lambda state: b"x\n")

    def test_turn_start_data_is_the_models(self) -> None:
        """The fold reads a turn's mode as the models write it."""
        line = dump_event(make_event(1, TurnStartData(mode="agent"))).encode() + b"\n"
        state = fold_plain(line, exact=True)
        assert state is not None
        assert state.mode == "agent"
