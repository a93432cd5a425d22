"""Edges of the log's tail repair and reading that mutation testing found unchecked.

Each test pins one behaviour a surviving mutant of the log's reader or writer or of the views
changed without any test noticing: the line a refusal names, the path the repair warning names, the
torn-tail size limit at exactly its boundary, a tail torn inside a UTF-8 character, the options
`SessionLog.events` passes on, the provider totals of the usage view, the messages of a failed
append or save, the limit of a thousand saved copies at one offset, blank lines at the end of a
log, and the reader's state across a late newline or a line still being written.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

import compaction.stores._log_tail
import compaction.stores.log_reader
import compaction.stores.log_writer
from compaction import (
    LogError,
    LogFormatError,
    LogIntegrityError,
    Message,
    SeqConflictError,
    Session,
    SessionLog,
    UsageReportData,
    read_events,
)
from compaction.events import dump_event, make_event
from compaction.stores import FileStore, ReadReport
from compaction.stores.log_reader import LogReader, error_reason, parse_line


def write_log(path: Path, n: int) -> bytes:
    """Write `n` events with the toolkit and return the file's bytes."""
    with SessionLog(path) as log:
        for i in range(n):
            log.append(Message(role="user", content=f"event {i}"))
    return path.read_bytes()


class TestRefusalNamesTheLine:
    @pytest.mark.parametrize("events", [1, 3, 7])
    def test_a_non_log_tail_is_refused_at_its_own_line(self, log_path: Path, events: int) -> None:
        """The error names the line the bad tail is on: one past the log's events."""
        before = write_log(log_path, events) + b"not a log line"
        log_path.write_bytes(before)
        with pytest.raises(LogFormatError) as caught, SessionLog(log_path) as log:
            log.append(Message(role="user", content="after"))
        assert caught.value.line == events + 1
        assert f":{events + 1}:" in str(caught.value)
        assert log_path.read_bytes() == before


class TestRepairWarning:
    def test_the_warning_names_the_log_and_the_saved_bytes(
        self, log_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        torn = b'{"v":1,"seq":3,"type":"message","data":{"role":"us'
        log_path.write_bytes(write_log(log_path, 2) + torn)
        with caplog.at_level(logging.WARNING, logger="compaction.log"), SessionLog(log_path) as log:
            event = log.append(Message(role="user", content="after"))
        assert event.seq == 3
        [record] = [r for r in caplog.records if r.name == "compaction.log"]
        assert record.getMessage().startswith(f"{log_path}: cut a torn last line of {len(torn)}")
        assert log.repairs[0].saved_to.read_bytes() == torn


class TestTornTailSizeLimit:
    @pytest.mark.parametrize(("size", "cut"), [(999, True), (1000, False), (1001, False)])
    def test_a_tail_as_long_as_the_longest_event_is_not_torn(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, cut: bool
    ) -> None:
        """Shorter than the limit: a torn append, cut. At the limit or over: refused."""
        monkeypatch.setattr(compaction.stores.log_writer, "MAX_EVENT_BYTES", 1000)
        start = b'{"v":1,"seq":2,"type":"message","data":{"role":"user","content":"'
        tail = start + b"x" * (size - len(start))
        before = write_log(log_path, 1) + tail
        log_path.write_bytes(before)
        with SessionLog(log_path) as log:
            if cut:
                assert log.append(Message(role="user", content="after")).seq == 2
                assert [r.length for r in log.repairs] == [size]
            else:
                with pytest.raises(LogFormatError, match="longest event"):
                    log.append(Message(role="user", content="after"))
                assert log_path.read_bytes() == before


class TestTornInsideACharacter:
    def test_a_tail_cut_inside_a_utf8_character_is_a_torn_append(self, log_path: Path) -> None:
        """A crash can cut a multi-byte character in half: still a torn append, cut and saved."""
        whole = '{"v":1,"seq":2,"type":"message","data":{"role":"user","content":"café'
        torn = whole.encode()[:-1]  # the last byte of "é" never reached the disk
        log_path.write_bytes(write_log(log_path, 1) + torn)
        with SessionLog(log_path) as log:
            assert log.append(Message(role="user", content="after")).seq == 2
            assert log.repairs[0].saved_to.read_bytes() == torn

    def test_bytes_that_are_not_utf8_are_refused(self, log_path: Path) -> None:
        tail = b'{"v":1,"seq":2,"data":"\xff\xfe"'
        before = write_log(log_path, 1) + tail
        log_path.write_bytes(before)
        with pytest.raises(LogFormatError, match="not UTF-8"), SessionLog(log_path) as log:
            log.append(Message(role="user", content="after"))
        assert log_path.read_bytes() == before


class TestEventsPassesItsOptions:
    def test_skip_bad_lines_and_the_report_reach_the_reader(self, log_path: Path) -> None:
        lines = write_log(log_path, 3).split(b"\n")
        lines[1] = b'{"v":1,"seq":2,"type":"nonsense"}'
        log_path.write_bytes(b"\n".join(lines))
        with SessionLog(log_path) as log:
            with pytest.raises(LogFormatError):
                list(log.events())
            report = ReadReport(path=str(log_path))
            seqs = [e.seq for e in log.events(skip_bad_lines=True, report=report)]
        assert seqs == [1, 3]
        assert [b.line for b in report.bad_lines] == [2]


class TestProviderTotals:
    def test_usage_sums_provider_figures_overall_and_by_purpose(self, log_path: Path) -> None:
        reports = [
            UsageReportData(
                purpose="turn",
                model="m",
                prompt_tokens=1000,
                completion_tokens=10,
                cached_tokens=900,
            ),
            UsageReportData(
                purpose="turn",
                model="m",
                prompt_tokens=500,
                completion_tokens=5,
                cache_write_tokens=200,
            ),
            UsageReportData(
                purpose="summary",
                model="m",
                prompt_tokens=300,
                completion_tokens=30,
                cached_tokens=0,
            ),
        ]
        with Session(log_path) as session:
            session.append_many(reports)
            usage = session.usage
        assert usage.provider.requests == 3
        assert usage.provider.prompt_tokens == 1800
        assert usage.provider.completion_tokens == 45
        assert usage.provider.cached_tokens == 900
        assert usage.provider.cache_write_tokens == 200
        assert usage.provider.requests_without_cache_figure == 1
        assert usage.provider.cache_hit_share == pytest.approx(0.5)
        turn, summary = usage.provider_by_purpose["turn"], usage.provider_by_purpose["summary"]
        assert (turn.requests, turn.prompt_tokens, turn.cached_tokens) == (2, 1500, 900)
        assert (summary.requests, summary.prompt_tokens, summary.cached_tokens) == (1, 300, 0)
        assert json.loads(usage.model_dump_json())["provider"]["requests"] == 3


class TestWriteLoop:
    def test_short_writes_put_every_byte_once(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A kernel that writes a few bytes per call: each byte lands once, in order."""
        expected = write_log(log_path.with_name("whole.jsonl"), 5)
        real_write = os.write

        def short(fd: int, data: bytes | memoryview) -> int:
            return real_write(fd, bytes(data[:7]))

        monkeypatch.setattr(os, "write", short)
        assert write_log(log_path, 5) == expected


class TestAppendOptions:
    def test_one_append_checks_the_expected_seq(self, log_path: Path) -> None:
        """`SessionLog.append` passes expected_seq on: a stale one writes nothing and raises."""
        before = write_log(log_path, 2)
        with SessionLog(log_path) as log, pytest.raises(SeqConflictError) as caught:
            log.append(Message(role="user", content="late"), expected_seq=1)
        assert log_path.read_bytes() == before
        error = caught.value
        assert (error.where, error.expected, error.current) == (str(log_path), 1, 2)

    def test_a_new_log_in_new_folders_is_private_to_write(self, tmp_path: Path) -> None:
        """Missing parent folders are made; the file is rw-r--r-- under the usual umask."""
        path = tmp_path / "a" / "b" / "s.jsonl"
        old = os.umask(0o022)
        try:
            write_log(path, 1)
        finally:
            os.umask(old)
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


class TestReadOptions:
    def test_read_events_can_leave_seqs_unchecked(self, log_path: Path) -> None:
        """check_seq=False reads a log whose seqs skip; the default refuses it."""
        lines = write_log(log_path, 3).splitlines(keepends=True)
        log_path.write_bytes(lines[0] + lines[2])
        assert [e.seq for e in read_events(log_path, check_seq=False)] == [1, 3]
        with pytest.raises(LogIntegrityError):
            list(read_events(log_path))

    def test_an_event_with_several_faults_says_how_many_more(self) -> None:
        """The reason names the first fault and counts the others."""
        several = json.dumps({"v": 1, "seq": "x", "type": "message", "data": {"role": 5}})
        one = json.dumps({"v": 1, "seq": 1, "type": "message", "data": {"role": 5}})
        reasons, counts = [], []
        for line in (several, one):
            with pytest.raises(ValidationError) as caught:
                parse_line(line)
            reasons.append(error_reason(caught.value))
            counts.append(caught.value.error_count())
        assert all(r.startswith("invalid event: ") for r in reasons), reasons
        more = re.search(r"\(\+(\d+) more\)$", reasons[0])
        assert more is not None, reasons[0]
        assert counts[0] > 1
        assert int(more.group(1)) == counts[0] - 1  # the first is named, the rest counted
        assert counts[1] == 1
        assert reasons[1] == (
            "invalid event: message.data.role: Input should be 'system', 'user', 'assistant' "
            "or 'tool'"
        )

    def test_blank_and_bad_lines_keep_the_line_count(self, log_path: Path) -> None:
        """Blank lines after an event, a blank line or a bad line each count as a line."""
        first, second = write_log(log_path, 2).splitlines(keepends=True)
        log_path.write_bytes(first + b"\n\njunk\n\njunk 2\n" + second + b"\njunk 3\n")
        report = ReadReport(path=str(log_path))
        events = list(read_events(log_path, skip_bad_lines=True, report=report))
        assert [e.seq for e in events] == [1, 2]
        assert [b.line for b in report.bad_lines] == [4, 6, 9]
        assert report.lines == 9


class TestLocking:
    def test_every_append_writes_under_the_lock_and_a_batch_holds_it_between(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The log's bytes are written under the lock, which a batch holds between appends.

        While they are written another open file cannot take the lock; after an append or a
        batch it is free.
        """
        fcntl = pytest.importorskip("fcntl")
        write_log(log_path, 1)
        inode = log_path.stat().st_ino

        def locked() -> bool:
            with log_path.open("rb") as other:
                try:
                    fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return True
                fcntl.flock(other.fileno(), fcntl.LOCK_UN)
                return False

        seen: list[bool] = []
        real_write = os.write

        def spy(fd: int, data: bytes | memoryview) -> int:
            if os.fstat(fd).st_ino == inode:
                seen.append(locked())
            return real_write(fd, data)

        monkeypatch.setattr(os, "write", spy)
        with SessionLog(log_path) as log:
            log.append(Message(role="user", content="one"))
            assert not locked()
            with log.batch():
                log.append(Message(role="user", content="two"))
                assert locked()
                log.append(Message(role="user", content="three"))
            assert not locked()
        assert seen == [True, True, True]


class TestOpenErrors:
    def test_a_folder_where_the_log_should_be_is_named(self, tmp_path: Path) -> None:
        """Opening fails with one line naming the path and the system's reason."""
        folder = tmp_path / "s.jsonl"
        folder.mkdir()
        with pytest.raises(LogError) as caught, SessionLog(folder) as log:
            log.append(Message(role="user", content="x"))
        assert str(caught.value) == f"{folder}: cannot open the log: Is a directory"


class TestEventSizeLimit:
    @pytest.mark.parametrize(("slack", "written"), [(0, True), (1, True), (-1, False)])
    def test_a_line_exactly_at_the_limit_is_written(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch, slack: int, written: bool
    ) -> None:
        """An event whose line (newline included) is exactly MAX_EVENT_BYTES is written."""
        data = Message(role="user", content="x" * 500)
        size = len(dump_event(make_event(1, data)).encode()) + 1
        monkeypatch.setattr(compaction.stores.log_writer, "MAX_EVENT_BYTES", size + slack)
        with SessionLog(log_path) as log:
            if written:
                assert log.append(data).seq == 1
            else:
                with pytest.raises(LogError, match="byte limit of one log line"):
                    log.append(data)
        assert (log_path.stat().st_size if log_path.exists() else 0) == (size if written else 0)


class TestLastSeq:
    def test_last_seq_counts_what_is_in_the_file(self, log_path: Path) -> None:
        """0 when empty, then the last event's seq: after appends, in a batch, after another.

        Another writer's append counts too.
        """
        with SessionLog(log_path) as log:
            assert log.last_seq() == 0
            log.append(Message(role="user", content="one"))
            assert log.last_seq() == 1
            with log.batch():
                log.append(Message(role="user", content="two"))
                assert log.last_seq() == 2
            with SessionLog(log_path) as other:
                other.append(Message(role="user", content="three"))
            assert log.last_seq() == 3
            assert log.append(Message(role="user", content="four")).seq == 4


class TestTornTailAtAChunkEdge:
    def test_a_torn_line_starting_on_a_4096_byte_boundary_is_cut_alone(
        self, log_path: Path
    ) -> None:
        """The last line is found when the newline before it is the first byte of a chunk."""
        first = write_log(log_path, 1)
        pad = 4096 - len(first)  # make the first line exactly 4,096 bytes, newline included
        whole = first[:-3] + b" " * pad + first[-3:]
        assert whole.endswith(b"}\n")
        torn = (b'{"v":1,"seq":2,"type":"message","data":{"role":"us' + b"x" * 4096)[:4095]
        log_path.write_bytes(whole + torn)
        with SessionLog(log_path) as log:
            assert log.append(Message(role="user", content="after")).seq == 2
            assert [r.length for r in log.repairs] == [4095]
        assert log_path.read_bytes().startswith(whole)


class TestNewlineLandingLater:
    def test_an_event_read_before_its_newline_is_not_read_twice(self, log_path: Path) -> None:
        """A reader that took a last event with no newline yet reads on from after it.

        The late newline is no new line; the next events and line numbers follow on.
        """
        lines = write_log(log_path, 3).splitlines(keepends=True)
        log_path.write_bytes(lines[0] + lines[1].rstrip(b"\n"))
        reader = LogReader(log_path)
        assert [e.seq for e in reader.read()] == [1, 2]
        with log_path.open("ab") as fh:
            fh.write(b"\n" + lines[2] + b"junk\n")
        reader.skip_bad_lines = True
        assert [e.seq for e in reader.read()] == [3]
        assert (reader.line, reader.offset) == (4, log_path.stat().st_size)
        assert [b.line for b in reader.report.bad_lines] == [4]


class TestBlankLinesAtTheEnd:
    """Readers skip blank lines; so does an append, instead of refusing the log."""

    def test_an_append_follows_blank_lines_after_the_last_event(self, log_path: Path) -> None:
        before = write_log(log_path, 2) + b"\n \t\n\n"
        log_path.write_bytes(before)
        with SessionLog(log_path) as log:
            event = log.append(Message(role="user", content="after"))
            assert log.repairs == []
        assert event.seq == 3
        assert log_path.read_bytes() == before + dump_event(event).encode() + b"\n"
        assert [e.seq for e in read_events(log_path)] == [1, 2, 3]

    def test_a_blank_last_line_without_its_newline_gets_one(self, log_path: Path) -> None:
        before = write_log(log_path, 1) + b"  "
        log_path.write_bytes(before)
        with SessionLog(log_path) as log:
            event = log.append(Message(role="user", content="after"))
        assert log_path.read_bytes() == before + b"\n" + dump_event(event).encode() + b"\n"
        assert [e.seq for e in read_events(log_path)] == [1, 2]

    @pytest.mark.parametrize("blank", [b"\n", b" ", b"\n\n \n"])
    def test_a_file_of_blank_lines_starts_at_seq_1(self, log_path: Path, blank: bytes) -> None:
        """One byte is enough to be read: a new handle never takes a file for known."""
        log_path.write_bytes(blank)
        with SessionLog(log_path) as log:
            event = log.append(Message(role="user", content="first"))
        newline = b"" if blank.endswith(b"\n") else b"\n"
        assert log_path.read_bytes() == blank + newline + dump_event(event).encode() + b"\n"
        assert [e.seq for e in read_events(log_path)] == [1]

    def test_a_one_byte_file_that_is_not_a_log_is_refused(self, log_path: Path) -> None:
        log_path.write_bytes(b"x")
        with pytest.raises(LogFormatError) as caught, SessionLog(log_path) as log:
            log.append(Message(role="user", content="first"))
        assert caught.value.line == 1
        assert log_path.read_bytes() == b"x"

    def test_a_bad_line_before_the_blank_lines_is_refused_at_its_own_line(
        self, log_path: Path
    ) -> None:
        before = b"\n" + write_log(log_path, 2) + b"junk\n\n\n  \n"
        log_path.write_bytes(before)
        with pytest.raises(LogFormatError) as caught, SessionLog(log_path) as log:
            log.append(Message(role="user", content="after"))
        assert caught.value.line == 4
        assert str(caught.value).startswith(f"{log_path}:4: last line: not JSON: ")
        assert log_path.read_bytes() == before

    def test_a_torn_tail_after_blank_lines_is_cut_alone(self, log_path: Path) -> None:
        kept = write_log(log_path, 1) + b"\n\n"
        log_path.write_bytes(kept + b'{"v":1,"se')
        with SessionLog(log_path) as log:
            event = log.append(Message(role="user", content="after"))
            assert [(r.offset, r.length) for r in log.repairs] == [(len(kept), 10)]
        assert log_path.read_bytes() == kept + dump_event(event).encode() + b"\n"


class TestLineNumbersInRefusals:
    @pytest.mark.parametrize("tail", [b"not a log", b"not a log\n\n\n"])
    def test_a_refusal_counts_the_lines_of_a_log_above_one_mebibyte(
        self, log_path: Path, tail: bytes
    ) -> None:
        """The lines are counted 1 MiB at a time, up to the bad line.

        Every chunk counts, the first byte too, and no byte from the bad line's start on.
        """
        lines = [b"\n"] + [
            dump_event(make_event(i, Message(role="user", content="x" * 300))).encode() + b"\n"
            for i in range(1, 8001)
        ]
        before = b"".join(lines) + tail
        assert len(before) > 2 * (1 << 20)
        log_path.write_bytes(before)
        with pytest.raises(LogFormatError) as caught, SessionLog(log_path) as log:
            log.append(Message(role="user", content="after"))
        assert caught.value.line == 8002
        assert log_path.read_bytes() == before

    @pytest.mark.parametrize("content", [b"junk\n", b"junk\n\n  \n"])
    def test_a_bad_first_line_is_line_1(self, log_path: Path, content: bytes) -> None:
        log_path.write_bytes(content)
        with pytest.raises(LogFormatError) as caught, SessionLog(log_path) as log:
            log.append(Message(role="user", content="after"))
        assert caught.value.line == 1
        assert log_path.read_bytes() == content

    def test_the_refusal_of_a_torn_looking_tail_gives_the_reason(self, log_path: Path) -> None:
        before = b"junk\n" + b'{"v":1,"se'
        log_path.write_bytes(before)
        with pytest.raises(LogFormatError) as caught, SessionLog(log_path) as log:
            log.append(Message(role="user", content="after"))
        message = str(caught.value)
        assert message.startswith(
            f"{log_path}:2: last line (10 bytes, no newline) is not an event (not JSON: "
        ), message
        assert "cannot be a torn append: the file before it is not a valid log" in message
        assert log_path.read_bytes() == before

    def test_a_tail_that_is_not_utf8_is_refused_with_that_reason(self, log_path: Path) -> None:
        log_path.write_bytes(write_log(log_path, 1) + b'{"v":1,"\xff')
        with pytest.raises(LogFormatError) as caught, SessionLog(log_path) as log:
            log.append(Message(role="user", content="after"))
        assert "cannot be a torn append: it is not UTF-8 text. Nothing was" in str(caught.value)


class TestReaderState:
    def test_the_report_names_the_file(self, log_path: Path) -> None:
        assert LogReader(log_path).report.path == str(log_path)

    def test_a_missing_file_is_named_with_the_system_reason(self, log_path: Path) -> None:
        with pytest.raises(LogError) as caught:
            list(LogReader(log_path).read())
        assert str(caught.value) == f"{log_path}: cannot read the log: No such file or directory"

    def test_a_first_blank_line_counts(self, log_path: Path) -> None:
        """A new reader expects no late newline: a blank first line is a line of its own."""
        log_path.write_bytes(b"\njunk\n")
        with pytest.raises(LogFormatError) as caught:
            list(LogReader(log_path).read())
        assert caught.value.line == 2

    def test_a_blank_line_after_a_late_newline_counts(self, log_path: Path) -> None:
        lines = write_log(log_path, 2).splitlines(keepends=True)
        log_path.write_bytes(lines[0].rstrip(b"\n"))
        reader = LogReader(log_path, skip_bad_lines=True)
        assert [e.seq for e in reader.read()] == [1]
        with log_path.open("ab") as fh:
            fh.write(b"\n\njunk\n" + lines[1])
        assert [e.seq for e in reader.read()] == [2]
        assert [b.line for b in reader.report.bad_lines] == [3]
        assert reader.line == 4

    def test_a_line_still_being_written_is_not_split_in_two(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The rest of a line may land between two reads of the file.

        The reader stops at the part it saw, and reads the whole line next time.
        """
        first, second = write_log(log_path, 2).splitlines(keepends=True)
        pieces = [first, second[:9], second[9:]]  # as the file's iterator would see them

        class Growing:
            def __init__(self, *args: object) -> None: ...
            def __enter__(self) -> Growing:
                return self

            def __exit__(self, *exc: object) -> None: ...
            def seek(self, offset: int) -> None:
                assert offset == 0

            def __iter__(self) -> Iterator[bytes]:
                return iter(pieces)

        monkeypatch.setattr(compaction.stores.log_reader, "open", Growing, raising=False)
        reader = LogReader(log_path)
        assert [e.seq for e in reader.read()] == [1]
        assert (reader.report.torn_line, reader.offset) == (2, len(first))
        monkeypatch.undo()
        assert [e.seq for e in reader.read()] == [2]

    def test_a_blank_line_in_the_middle_is_read_past(self, log_path: Path) -> None:
        first, second = write_log(log_path, 2).splitlines(keepends=True)
        log_path.write_bytes(first + b"\n" + second)
        assert [e.seq for e in LogReader(log_path).read()] == [1, 2]


class TestAppendedEventsTakenAsRead:
    def test_a_line_another_writer_added_is_still_read(self, log_path: Path) -> None:
        """A session takes its own append as read only when its reader stood where it began.

        Here another writer added a blank line first: the session reads it and its own event
        from the file, and applies the event once.
        """
        with Session(log_path) as session:
            session.start_turn("go")
            with log_path.open("ab") as fh:
                fh.write(b"\n")
            session.add_message(Message(role="user", content="mine"))
            assert session.report.lines == 4  # the turn's two events, the blank line, ours
            assert session.refresh() == []
            assert session.context.seqs == (2, 3)
        assert [e.seq for e in read_events(log_path)] == [1, 2, 3]

    def test_lines_after_a_skipped_append_keep_their_numbers(self, log_path: Path) -> None:
        with Session(log_path, skip_bad_lines=True) as session:
            session.start_turn("go")
            with log_path.open("ab") as fh:
                fh.write(b"\njunk\n")
            session.refresh()
            assert [b.line for b in session.report.bad_lines] == [4]  # after the turn's two

    def test_appends_to_a_known_log_do_not_read_its_tail_again(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Only the first append of a handle (or one after another writer) reads the tail."""
        write_log(log_path, 1)
        reads: list[int] = []
        real = compaction.stores._log_tail.last_line

        def counting(fd: int, size: int) -> tuple[int, bytes] | None:
            reads.append(size)
            return real(fd, size)

        monkeypatch.setattr(compaction.stores.log_writer, "last_line", counting)
        with SessionLog(log_path) as log:
            for i in range(3):
                log.append(Message(role="user", content=f"more {i}"))
            with log.batch():
                log.append(Message(role="user", content="in a batch"))
            assert len(reads) == 1
            with log_path.open("ab") as fh:
                fh.write(b"\n")
            log.append(Message(role="user", content="after another writer"))
            assert len(reads) == 2

    def test_a_new_handle_has_appended_nothing(self, log_path: Path) -> None:
        log = SessionLog(log_path)
        assert (log.last_append_start, log.last_append_bytes) == (0, 0)


def no_space(fd: int, data: bytes | memoryview) -> int:
    raise OSError(errno.ENOSPC, "No space left on device")


class TestFailedAppendMessages:
    def test_the_message_gives_the_system_reason_and_the_size_kept(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        size = len(write_log(log_path, 1))
        with SessionLog(log_path) as log:
            monkeypatch.setattr(os, "write", no_space)
            with pytest.raises(LogError) as caught:
                log.append(Message(role="user", content="lost"))
        assert str(caught.value) == (
            f"{log_path}: append failed: No space left on device; the log is unchanged "
            f"({size} bytes), so the append can be retried once the cause is fixed"
        )

    def test_an_error_without_a_system_reason_is_named_by_its_text(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def odd(fd: int, data: bytes | memoryview) -> int:
            raise OSError("the device went away")

        with SessionLog(log_path) as log:
            monkeypatch.setattr(os, "write", odd)
            with pytest.raises(LogError, match=r"append failed: the device went away; "):
                log.append(Message(role="user", content="lost"))

    def test_a_file_that_cannot_be_cut_back_is_repaired_by_the_next_append(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """One byte of a new log's first line landed and could not be cut back.

        The next append takes it for a torn tail, saves it and writes seq 1.
        """
        real_write = os.write

        def one_byte_then_no_space(fd: int, data: bytes | memoryview) -> int:
            if not log_path.stat().st_size:
                return real_write(fd, bytes(data[:1]))
            return no_space(fd, data)

        def no_truncate(fd: int, length: int) -> None:
            raise OSError(errno.EIO, "Input/output error")

        with SessionLog(log_path) as log:
            monkeypatch.setattr(os, "write", one_byte_then_no_space)
            monkeypatch.setattr(os, "ftruncate", no_truncate)
            with pytest.raises(LogError) as caught:
                log.append(Message(role="user", content="first"))
            assert str(caught.value) == (
                f"{log_path}: append failed (No space left on device) and the file could not be "
                "cut back to 0 bytes (Input/output error); the next append will treat the "
                "partial line as a torn tail"
            )
            assert log_path.read_bytes() == b"{"
            monkeypatch.undo()
            event = log.append(Message(role="user", content="first"))
            assert (event.seq, [r.length for r in log.repairs]) == (1, [1])
        assert log_path.read_bytes() == dump_event(event).encode() + b"\n"


class TestSavingATornTail:
    TORN = b'{"v":1,"seq":2,"type":"mess'

    def torn_log(self, log_path: Path) -> tuple[bytes, int]:
        kept = write_log(log_path, 1)
        log_path.write_bytes(kept + self.TORN)
        return kept + self.TORN, len(kept)

    def test_the_copy_is_written_whole_through_short_writes_with_the_log_s_mode(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.torn_log(log_path)
        real_write = os.write

        def short(fd: int, data: bytes | memoryview) -> int:
            return real_write(fd, bytes(data[:5]))

        monkeypatch.setattr(os, "write", short)
        old = os.umask(0o022)
        try:
            with SessionLog(log_path) as log:
                log.append(Message(role="user", content="after"))
                saved = log.repairs[0].saved_to
        finally:
            os.umask(old)
        assert saved.read_bytes() == self.TORN
        assert stat.S_IMODE(saved.stat().st_mode) == 0o644

    def test_a_copy_that_cannot_be_written_leaves_no_file_and_the_log_as_it_was(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        before, offset = self.torn_log(log_path)
        monkeypatch.setattr(os, "write", no_space)
        with pytest.raises(LogError) as caught, SessionLog(log_path) as log:
            log.append(Message(role="user", content="after"))
        target = log_path.with_name(f"{log_path.name}.torn-{offset}")
        assert str(caught.value) == (
            f"{log_path}: cannot save the torn tail to {target} (No space left on device); "
            "nothing was cut or written"
        )
        assert log_path.read_bytes() == before
        assert not target.exists()

    @pytest.mark.parametrize("taken", [999, 1000])
    def test_a_thousand_copies_at_one_offset_at_most(self, log_path: Path, taken: int) -> None:
        """Names .torn-N, .torn-N.1 ... .torn-N.999 are tried; other bytes are never overwritten."""
        before, offset = self.torn_log(log_path)
        names = [f"{log_path.name}.torn-{offset}" + (f".{n}" if n else "") for n in range(taken)]
        for name in names:
            log_path.with_name(name).write_bytes(b"other bytes")
        if taken == 1000:
            with pytest.raises(LogError) as caught, SessionLog(log_path) as log:
                log.append(Message(role="user", content="after"))
            assert str(caught.value) == (
                f"{log_path}: too many saved torn tails at offset {offset}; nothing was written"
            )
            assert log_path.read_bytes() == before
        else:
            with SessionLog(log_path) as log:
                log.append(Message(role="user", content="after"))
                saved = log.repairs[0].saved_to
            assert saved.name == f"{log_path.name}.torn-{offset}.999"
            assert saved.read_bytes() == self.TORN
        assert all(log_path.with_name(n).read_bytes() == b"other bytes" for n in names)


class TestSeqErrorsNameTheirPlace:
    def test_a_seq_out_of_order_names_the_file_and_line(self, log_path: Path) -> None:
        lines = write_log(log_path, 3).splitlines(keepends=True)
        log_path.write_bytes(lines[0] + lines[2])
        with pytest.raises(LogIntegrityError) as caught:
            list(read_events(log_path))
        assert str(caught.value) == (
            f"{log_path}: seq_contiguous at seq 3: line 2 has seq 3, expected 2"
        )

    def test_events_taken_as_read_are_checked_at_their_lines(self, log_path: Path) -> None:
        """`skip_appended` applies the seq rule to the events it takes, at the lines they hold."""
        write_log(log_path, 1)
        reader = LogReader(log_path)
        assert [e.seq for e in reader.read()] == [1]
        late = make_event(3, Message(role="user", content="not next"))
        with pytest.raises(LogIntegrityError) as caught:
            reader.skip_appended([late], reader.offset, reader.offset + 100)
        assert str(caught.value).endswith(": line 2 has seq 3, expected 2")


# Pinned by mutation testing (folded in from tests/unit/compaction/stores/test_log_edges.py):
# The log's reader and tail: behaviours that surviving mutants changed without a test noticing.
#
# Each test pins one contract of `compaction.stores.log_reader` or `compaction.stores._log_tail`
# (issue 25, part F of `docs/mutation.md`), through what a store or a reader reports: whether
# `LogReader.skip_appended` took an append as read, and the torn line a store's report names
# after its own append cut that line.


TORN = b'{"v":1,"seq":3,"type":"message","data":{"role":"us'
"""The start of a third event, cut mid-line by a crash."""


class TestSkipAppended:
    def test_an_append_right_after_the_last_read_is_taken_as_read(self, log_path: Path) -> None:
        """Caught up: it says so, and takes the events (seq, line, offset) without reading."""
        write_log(log_path, 2)
        reader = LogReader(log_path)
        assert [e.seq for e in reader.read()] == [1, 2]
        start = reader.offset
        event = make_event(3, Message(role="user", content="mine"))
        assert reader.skip_appended([event], start, start + 50) is True
        assert (reader.last_seq, reader.line, reader.offset) == (3, 3, start + 50)
        assert (reader.report.events, reader.report.lines) == (3, 3)

    def test_an_append_after_unread_bytes_is_left_to_the_next_read(self, log_path: Path) -> None:
        """Behind: it says so, takes nothing, and the next read yields every event once."""
        write_log(log_path, 1)
        reader = LogReader(log_path)
        assert [e.seq for e in reader.read()] == [1]
        first_end = reader.offset
        with SessionLog(log_path) as log:  # another writer, then this process's own append
            log.append(Message(role="user", content="theirs"))
            mine = log.append(Message(role="user", content="mine"))
            start, length = log.last_append_start, log.last_append_bytes
        assert start > first_end
        assert reader.skip_appended([mine], start, start + length) is False
        assert (reader.last_seq, reader.line, reader.offset) == (1, 1, first_end)
        assert [e.seq for e in reader.read()] == [2, 3]
        assert reader.report.events == 3


class TestTornLineAfterOwnAppend:
    def test_a_torn_line_cut_by_this_store_is_no_longer_reported(self, log_path: Path) -> None:
        """A torn tail read, then cut by the store's own append: the report names no torn line."""
        log_path.write_bytes(write_log(log_path, 2) + TORN)
        store = FileStore(log_path)
        assert [e.seq for e in store.read(store.session)] == [1, 2]
        assert store.report.torn_line == 3
        [event] = store.append(store.session, [Message(role="user", content="after")])
        assert event.seq == 3
        assert store.report.torn_line is None
        assert (store.report.events, store.report.lines) == (3, 3)
        assert list(store.read(store.session, after=3)) == []
        store.close()
