"""The append-only session log: seqs, torn and bad lines, versions, fsync policy."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from fsync_calls import count_fsyncs

from compaction import (
    ConfigError,
    EventData,
    LogError,
    LogFormatError,
    LogIntegrityError,
    Message,
    SessionLog,
    TodoItem,
    TodoWriteData,
    TurnEndData,
    TurnStartData,
    read_events,
)
from compaction.stores import ReadReport

USER = Message(role="user", content="hello")


def line(seq: int, type_: str = "turn/start", data: object = None) -> bytes:
    """Return one valid log line."""
    return json.dumps({"v": 1, "seq": seq, "type": type_, "data": data or {}}).encode() + b"\n"


def read_all(path: Path, **kwargs: Any) -> tuple[list[int], ReadReport]:
    """Read a log; return its seqs and the report."""
    report = ReadReport(path=str(path))
    seqs = [e.seq for e in read_events(path, report=report, **kwargs)]
    return seqs, report


class TestAppend:
    def test_seq_runs_from_one(self, log_path: Path) -> None:
        """Appends get seq 1, 2, 3... in file order, one line each."""
        with SessionLog(log_path) as log:
            events = [log.append(TurnStartData()), log.append(USER), log.append(TurnEndData())]
        assert [e.seq for e in events] == [1, 2, 3]
        assert [json.loads(x)["seq"] for x in log_path.read_bytes().splitlines()] == [1, 2, 3]

    def test_append_many_is_one_write(self, log_path: Path) -> None:
        """append_many returns consecutive events and reports the bytes it wrote."""
        with SessionLog(log_path) as log:
            events = log.append_many([TurnStartData(), USER])
            assert [e.type for e in events] == ["turn/start", "message"]
            assert log.last_append_bytes == log_path.stat().st_size

    def test_reopen_continues_seq(self, log_path: Path) -> None:
        """A new SessionLog on an existing file continues after its last seq."""
        with SessionLog(log_path) as log:
            log.append(TurnStartData())
        with SessionLog(log_path) as log:
            assert log.append(USER).seq == 2

    def test_two_handles_interleave_without_repeating_seq(self, log_path: Path) -> None:
        """Two logs on one file see each other's appends (the tail is re-read under the lock)."""
        a, b = SessionLog(log_path), SessionLog(log_path)
        seqs = [a.append(USER).seq, b.append(USER).seq, a.append(USER).seq]
        with b.batch():
            seqs.append(b.append(USER).seq)
        a.close()
        b.close()
        assert seqs == [1, 2, 3, 4]
        assert read_all(log_path)[0] == [1, 2, 3, 4]

    def test_bytes_are_canonical(self, log_path: Path) -> None:
        """The same history always gives the same bytes."""
        data: list[EventData] = [
            TurnStartData(mode="plan"),
            USER,
            TodoWriteData(todos=(TodoItem(content="é", status="pending"),)),
        ]
        with SessionLog(log_path) as log:
            log.append_many(data)
        assert log_path.read_bytes() == (
            b'{"v":1,"seq":1,"type":"turn/start","data":{"mode":"plan"}}\n'
            b'{"v":1,"seq":2,"type":"message","data":{"role":"user","content":"hello"}}\n'
            b'{"v":1,"seq":3,"type":"todo/write","data":{"todos":[{"content":"\xc3\xa9",'
            b'"status":"pending"}]}}\n'
        )

    def test_bad_sync_policy(self, log_path: Path) -> None:
        """An unknown sync policy is a ConfigError naming the value."""
        with pytest.raises(ConfigError, match="sync must be 'always' or 'batch', not 'never'"):
            # A value of the wrong type on purpose: the runtime check is under test.
            SessionLog(log_path, sync="never")  # type: ignore[arg-type]

    def test_malformed_last_line_blocks_append(self, log_path: Path) -> None:
        """When the last complete line is not an event, the next seq is unknown: say where."""
        log_path.write_bytes(line(1) + b"garbage\n")
        with (
            SessionLog(log_path) as log,
            pytest.raises(LogFormatError, match=r"session\.jsonl:2: last line"),
        ):
            log.append(USER)

    def test_events_of_missing_file_is_empty(self, tmp_path: Path) -> None:
        """SessionLog.events() on a log not yet written yields nothing."""
        assert list(SessionLog(tmp_path / "none.jsonl").events()) == []


class TestTornLines:
    def test_torn_last_line_reported_and_skipped(self, log_path: Path) -> None:
        """A last line without newline is reported with its number; every line before it is read."""
        log_path.write_bytes(line(1) + line(2) + b'{"v":1,"seq":3,"ty')
        seqs, report = read_all(log_path)
        assert seqs == [1, 2]
        assert report.torn_line == 3
        assert report.bad_lines == []

    def test_valid_event_without_newline_is_complete(self, log_path: Path) -> None:
        """A valid last event whose newline never landed is read as an event, not as torn."""
        log_path.write_bytes(line(1) + line(2).rstrip(b"\n"))
        seqs, report = read_all(log_path)
        assert (seqs, report.torn_line, report.lines) == ([1, 2], None, 2)

    def test_append_after_torn_tail_truncates_it(self, log_path: Path) -> None:
        """The next append cuts the torn tail off and continues the seq from the last whole line."""
        log_path.write_bytes(line(1) + line(2) + b'{"v":1,"seq":3,"type":"mess')
        with SessionLog(log_path) as log:
            assert log.append(USER).seq == 3
        seqs, report = read_all(log_path)
        assert seqs == [1, 2, 3]
        assert report.torn_line is None
        assert log_path.read_bytes().startswith(
            line(1) + line(2) + b'{"v":1,"seq":3,"type":"message"'
        )
        saved = log_path.with_name(f"{log_path.name}.torn-{len(line(1) + line(2))}")
        assert saved.read_bytes() == b'{"v":1,"seq":3,"type":"mess'

    def test_torn_first_line(self, log_path: Path) -> None:
        """A file holding only a torn line reads as empty; an append starts at seq 1."""
        log_path.write_bytes(b'{"v":1,"se')
        assert read_all(log_path)[1].torn_line == 1
        with SessionLog(log_path) as log:
            assert log.append(USER).seq == 1


class TestBadLines:
    @pytest.mark.parametrize(
        ("bad", "reason"),
        [
            pytest.param(
                b"garbage\n", "not JSON: expected value at line 1 column 1", id="not-json"
            ),
            pytest.param(b"[1, 2]\n", "invalid event: line:", id="array"),
            pytest.param(
                b'{"v":1,"seq":2,"type":"nope","data":{}}\n',
                "invalid event: line: Input tag 'nope'",
                id="unknown-type",
            ),
            pytest.param(
                b'{"v":1,"seq":2,"type":"message","data":{"role":"robot"}}\n',
                "invalid event: message.data.role",
                id="bad-role",
            ),
            pytest.param(
                b'{"v":1,"seq":0,"type":"turn/end","data":{}}\n',
                "invalid event: turn/end.seq",
                id="seq-zero",
            ),
            pytest.param(
                b'{"v":1,"seq":2,"type":"turn/end","data":{},"x":1}\n',
                "invalid event: turn/end.x: Extra inputs",
                id="extra",
            ),
        ],
    )
    def test_malformed_middle_line_raises_naming_file_and_line(
        self, log_path: Path, bad: bytes, reason: str
    ) -> None:
        """A malformed line that is not the torn tail raises LogFormatError with path:line."""
        log_path.write_bytes(line(1) + bad + line(2))
        with pytest.raises(LogFormatError, match=rf"^{log_path}:2: {reason}") as info:
            read_all(log_path)
        assert (info.value.path, info.value.line) == (str(log_path), 2)
        assert "skip_bad_lines=True" in str(info.value)

    def test_malformed_last_line_with_newline_is_bad_not_torn(self, log_path: Path) -> None:
        """A complete (newline-ended) malformed last line is an error, not a torn line."""
        log_path.write_bytes(line(1) + b"{}\n")
        with pytest.raises(LogFormatError, match=":2: "):
            read_all(log_path)

    def test_skip_bad_lines_counts_and_reports(self, log_path: Path) -> None:
        """With skip_bad_lines each bad line is recorded with its number and reason."""
        log_path.write_bytes(line(1) + b"garbage\n" + line(3) + b"{}\n" + line(4) + b'{"v":1')
        seqs, report = read_all(log_path, skip_bad_lines=True)
        assert seqs == [1, 3, 4]
        assert [b.line for b in report.bad_lines] == [2, 4]
        assert report.bad_lines[0].reason.startswith("not JSON")
        assert report.bad_lines[1].reason.startswith("invalid event")
        assert (report.torn_line, report.lines, report.events) == (6, 6, 3)
        assert report.by_type == {"turn/start": 3}

    def test_blank_lines_are_ignored(self, log_path: Path) -> None:
        """Empty lines carry nothing and are not errors."""
        log_path.write_bytes(line(1) + b"\n" + line(2))
        assert read_all(log_path)[0] == [1, 2]

    def test_newer_schema_version_says_upgrade(self, log_path: Path) -> None:
        """A line from a newer toolkit names its version and asks for an upgrade."""
        log_path.write_bytes(line(1) + b'{"v":2,"seq":2,"type":"turn/start","data":{},"new":1}\n')
        with pytest.raises(
            LogFormatError,
            match=r":2: schema version 2 is newer than this toolkit reads \(1\); upgrade context-",
        ):
            read_all(log_path)

    @pytest.mark.parametrize(
        ("seqs", "message"),
        [
            pytest.param([2], "line 1 has seq 2, expected 1", id="not-from-one"),
            pytest.param([1, 3], "line 2 has seq 3, expected 2", id="gap"),
            pytest.param([1, 2, 2], "line 3 has seq 2, expected 3", id="repeat"),
        ],
    )
    def test_seq_must_run_from_one(self, log_path: Path, seqs: list[int], message: str) -> None:
        """Seqs that do not run 1, 2, 3... break the seq_contiguous rule."""
        log_path.write_bytes(b"".join(line(s) for s in seqs))
        with pytest.raises(LogIntegrityError, match=message) as info:
            read_all(log_path)
        assert info.value.rule == "seq_contiguous"

    def test_missing_file_is_a_log_error(self, tmp_path: Path) -> None:
        """Reading a log that does not exist raises LogError naming it."""
        with pytest.raises(LogError, match=r"none\.jsonl: cannot read the log"):
            read_all(tmp_path / "none.jsonl")


class TestStreaming:
    def test_read_memory_does_not_grow_with_the_file(self, tmp_path: Path) -> None:
        """Peak memory while reading 20,000 events is about that of reading 1,000."""

        def peak_reading(n: int) -> int:
            path = tmp_path / f"{n}.jsonl"
            with SessionLog(path, sync="batch") as log, log.batch():
                for i in range(n):
                    log.append(Message(role="user", content=f"message {i} " + "x" * 200))
            tracemalloc.start()
            try:
                count = sum(1 for _ in read_events(path))
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
                assert count == n

        small, large = peak_reading(1_000), peak_reading(20_000)
        assert (tmp_path / "20000.jsonl").stat().st_size > 4_000_000
        assert large < small * 1.5 + 64_000
        assert large < 1_000_000


class TestFsync:
    @pytest.fixture
    def fsyncs(self, monkeypatch: pytest.MonkeyPatch) -> list[int]:
        """Count os.fsync calls (they still happen)."""
        return count_fsyncs(monkeypatch)

    def test_always_fsyncs_every_append(self, log_path: Path, fsyncs: list[int]) -> None:
        """sync='always' fsyncs once per append, before it returns."""
        log = SessionLog(log_path, sync="always")
        for i in range(5):
            log.append(USER)
            assert len(fsyncs) == i + 1
        log.append_many([USER, USER])
        assert len(fsyncs) == 6
        log.close()

    def test_batch_fsyncs_once_per_block(self, log_path: Path, fsyncs: list[int]) -> None:
        """sync='batch' fsyncs when the batch block closes, not per append."""
        log = SessionLog(log_path, sync="batch")
        with log.batch():
            for _ in range(50):
                log.append(USER)
            with log.batch():
                log.append(USER)
            assert fsyncs == []
        assert len(fsyncs) == 1
        assert read_all(log_path)[0] == list(range(1, 52))
        log.close()

    def test_batch_policy_fsyncs_on_close(self, log_path: Path, fsyncs: list[int]) -> None:
        """Outside a batch block, sync='batch' appends are flushed and fsynced on close."""
        log = SessionLog(log_path, sync="batch")
        log.append(USER)
        log.append(USER)
        assert fsyncs == []
        assert read_all(log_path)[0] == [1, 2]
        log.close()
        assert len(fsyncs) == 1
