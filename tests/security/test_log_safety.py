"""Attacks on the session log: no byte it holds is destroyed or written twice (issue 10, part 2).

Each class is one promise of the README's security section, kept as a regression test: a file
that is not a log is refused untouched; a valid last event without its newline is kept; a torn
tail is cut only after its bytes are saved; a failed append leaves the file as it was; a
checkpoint never carries an out-of-date list; every reader applies one seq rule; token counts
are found by seq.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

import compaction.stores.log_writer as log_module
from compaction import (
    CheckpointRecorded,
    CompactionError,
    LogError,
    LogFormatError,
    LogIntegrityError,
    Message,
    MessageAdded,
    Session,
    SessionLog,
    SummaryInput,
    TodoItem,
    TodoWriteData,
    TodoWritten,
    check_log,
    compact,
    count_message,
    read_events,
)

USER = Message(role="user", content="hello")


def line(seq: int, type_: str = "turn/start", data: object = None) -> bytes:
    """Return one valid log line, as the toolkit writes it."""
    obj = {"v": 1, "seq": seq, "type": type_, "data": data or {}}
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def msg(seq: int, role: str, content: str) -> bytes:
    return line(seq, "message", {"role": role, "content": content})


def seqs(path: Path) -> list[int]:
    return [e.seq for e in read_events(path)]


def torn_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.torn-*"))


BINARY = bytes((i * 7919 + 13) % 256 for i in range(50_000)).replace(b"\n", b"\x00")


class TestNotALog:
    @pytest.mark.parametrize(
        ("content", "why"),
        [
            pytest.param(BINARY, "does not begin like a log line", id="50KB-binary"),
            pytest.param(b"hello world, no newline", "does not begin like a log line", id="text"),
            pytest.param(line(1) + BINARY, "does not begin like a log line", id="log+binary"),
            pytest.param(
                b'{"v":1,\xff\xfe binary after a log-like start',
                "not UTF-8",
                id="log-like-start-then-binary",
            ),
            pytest.param(
                b"garbage\n" + b'{"v":1,"seq":2,"ty',
                "the file before it is not a valid log",
                id="torn-after-garbage",
            ),
            pytest.param(
                line(1) + line(3) + b'{"v":1,"seq":4,"ty',
                "the file before it is not a valid log",
                id="torn-after-seq-gap",
            ),
        ],
    )
    def test_append_refuses_and_leaves_file_identical(
        self, log_path: Path, content: bytes, why: str
    ) -> None:
        """An append to a file that is not a log refuses with why, and changes no byte."""
        log_path.write_bytes(content)
        with SessionLog(log_path) as log, pytest.raises(LogFormatError, match=why) as info:
            log.append(USER)
        assert "file is unchanged" in str(info.value)
        assert str(log_path) in str(info.value)
        assert log_path.read_bytes() == content
        assert torn_files(log_path) == []

    def test_session_todo_write_refuses_on_binary(self, log_path: Path) -> None:
        """A Session opened on a binary file reads nothing and refuses to write into it."""
        log_path.write_bytes(BINARY)
        with Session(log_path) as s:
            assert (s.applied_seq, s.report.torn_line) == (0, 1)
            with pytest.raises(LogFormatError, match="cannot be a torn append"):
                s.start_turn("go")
        assert log_path.read_bytes() == BINARY

    def test_tail_as_long_as_the_longest_event_is_not_torn(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A tail not shorter than one maximal event is refused, not cut."""
        monkeypatch.setattr(log_module, "MAX_EVENT_BYTES", 64)
        content = line(1) + b'{"v":1,"seq":2,"type":"message","data":{"role":"user","content":"x'
        assert len(content) - len(line(1)) >= 64
        log_path.write_bytes(content)
        with SessionLog(log_path) as log, pytest.raises(LogFormatError, match="longest event"):
            log.append(USER)
        assert log_path.read_bytes() == content

    def test_event_above_the_limit_is_refused(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An append whose line exceeds MAX_EVENT_BYTES writes nothing."""
        monkeypatch.setattr(log_module, "MAX_EVENT_BYTES", 200)
        log_path.write_bytes(line(1))
        with SessionLog(log_path) as log, pytest.raises(LogError, match="200-byte limit"):
            log.append(Message(role="user", content="x" * 300))
        assert log_path.read_bytes() == line(1)

    def test_cli_todo_write_leaves_binary_untouched(self, log_path: Path) -> None:
        """`harness todo-write` on a binary file fails and leaves it byte-identical."""
        log_path.write_bytes(BINARY)
        out = subprocess.run(
            [sys.executable, "-m", "harness", "todo-write", str(log_path)],
            input='{"todos": [{"content": "a", "status": "pending"}]}',
            capture_output=True,
            text=True,
            check=False,
        )
        assert out.returncode != 0
        assert "Traceback" not in out.stderr
        assert log_path.read_bytes() == BINARY


class TestUnterminatedLastEvent:
    def test_append_finishes_its_line_and_follows_it(self, log_path: Path) -> None:
        """A valid last event without newline is kept; the append gets the next seq after it."""
        log_path.write_bytes(line(1) + line(2).rstrip(b"\n"))
        with SessionLog(log_path) as log:
            assert log.append(USER).seq == 3
        assert log_path.read_bytes().startswith(line(1) + line(2) + b'{"v":1,"seq":3,')
        assert seqs(log_path) == [1, 2, 3]
        assert torn_files(log_path) == []

    def test_session_applies_it_and_appends_after(self, log_path: Path) -> None:
        """A Session counts the unterminated event, appends after it, and a reopen agrees."""
        log_path.write_bytes(line(1) + msg(2, "user", "kept").rstrip(b"\n"))
        with Session(log_path) as s:
            assert (s.applied_seq, s.report.torn_line) == (2, None)
            event = s.add_message({"role": "assistant", "content": "after"})
            assert event.seq == 3
            assert [m.text() for m in s.context.messages] == ["kept", "after"]
            assert s.report.lines == 3
        with Session(log_path) as again:
            assert [m.text() for m in again.context.messages] == ["kept", "after"]

    def test_reader_sees_newline_land_later(self, log_path: Path) -> None:
        """A session that read the event before its newline landed reads on correctly."""
        log_path.write_bytes(line(1).rstrip(b"\n"))
        with Session(log_path) as s:
            assert s.applied_seq == 1
            with SessionLog(log_path) as other:
                other.append(USER)
            assert [e.seq for e in s.refresh()] == [2]
            assert s.report.lines == 2


class TestTornTail:
    def test_tail_saved_then_cut_and_reported(
        self, log_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A torn tail's bytes are saved beside the log before the cut, and the cut is reported."""
        head = line(1) + line(2)
        tail = b'{"v":1,"seq":3,"type":"message","data":{"role":"us'
        log_path.write_bytes(head + tail)
        with caplog.at_level(logging.WARNING, logger="compaction.log"), SessionLog(log_path) as log:
            assert log.append(USER).seq == 3
            (repair,) = log.repairs
        saved = log_path.with_name(f"{log_path.name}.torn-{len(head)}")
        assert (repair.offset, repair.length, repair.saved_to) == (len(head), len(tail), saved)
        assert saved.read_bytes() == tail
        assert log_path.read_bytes().startswith(head)
        assert seqs(log_path) == [1, 2, 3]
        assert f"cut a torn last line of {len(tail)} bytes at offset {len(head)}" in caplog.text
        assert str(saved) in caplog.text

    def test_second_tear_at_same_offset_never_overwrites(self, log_path: Path) -> None:
        """Two different torn tails at one offset are both kept."""
        head = line(1)
        for tail in (b'{"v":1,"seq":2,"a', b'{"v":1,"seq":2,"b'):
            log_path.write_bytes(head + tail)
            with SessionLog(log_path) as log:
                log.append(USER)
        kept = sorted(p.read_bytes() for p in torn_files(log_path))
        assert kept == [b'{"v":1,"seq":2,"a', b'{"v":1,"seq":2,"b']

    def test_torn_first_line_of_a_new_log(self, log_path: Path) -> None:
        """A crash during the first append leaves a torn line that is saved and cut."""
        log_path.write_bytes(b'{"v":1,"se')
        with SessionLog(log_path) as log:
            assert log.append(USER).seq == 1
        assert [p.read_bytes() for p in torn_files(log_path)] == [b'{"v":1,"se']


def failing_write(fail_after: int, err: int) -> object:
    """Return an os.write stand-in that writes `fail_after` bytes of the first call, then fails."""
    real = os.write
    calls = {"n": 0}

    def write(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            real(fd, bytes(data[:fail_after]))
            return fail_after
        raise OSError(err, os.strerror(err))

    return write


class TestFailedAppend:
    @pytest.mark.parametrize("err", [errno.ENOSPC, errno.EFBIG, errno.EIO])
    def test_partial_write_is_rolled_back_and_retry_appends_once(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch, err: int
    ) -> None:
        """A write that fails half-way leaves the file as before; a retry writes the event once."""
        with SessionLog(log_path) as log:
            log.append(TodoWriteData(todos=(TodoItem(content="a", status="pending"),)))
            before = log_path.read_bytes()
            monkeypatch.setattr(os, "write", failing_write(7, err))
            with pytest.raises(LogError, match=os.strerror(err)) as info:
                log.append(Message(role="user", content="only once"))
            assert "log is unchanged" in str(info.value)
            assert log_path.read_bytes() == before
            monkeypatch.undo()
            assert log.append(Message(role="user", content="only once")).seq == 2
            log.append(USER)
        texts = [e.data.content for e in read_events(log_path) if e.type == "message"]
        assert texts == ["only once", "hello"]
        assert seqs(log_path) == [1, 2, 3]

    def test_failed_fsync_is_rolled_back(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An fsync that reports EIO cuts the append back out before raising."""
        with SessionLog(log_path) as log:
            log.append(USER)
            before = log_path.read_bytes()

            def bad_fsync(fd: int) -> None:
                raise OSError(errno.EIO, "Input/output error")

            monkeypatch.setattr(os, "fsync", bad_fsync)
            with pytest.raises(LogError, match="Input/output error"):
                log.append(USER)
            monkeypatch.undo()
            assert log_path.read_bytes() == before
            assert log.append(USER).seq == 2

    def test_session_views_untouched_by_failed_append(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A failed append changes no view; the retry is applied once."""
        with Session(log_path) as s:
            s.start_turn("go")
            monkeypatch.setattr(os, "write", failing_write(3, errno.ENOSPC))
            with pytest.raises(LogError):
                s.todo_write('{"todos": [{"content": "a", "status": "pending"}]}')
            assert (s.applied_seq, s.todos.seq) == (2, None)
            monkeypatch.undo()
            s.todo_write('{"todos": [{"content": "a", "status": "pending"}]}')
            assert (s.applied_seq, s.todos.seq) == (3, 3)
        assert seqs(log_path) == [1, 2, 3]

    def test_file_size_limit_in_a_real_process(self, log_path: Path) -> None:
        """Under RLIMIT_FSIZE the kernel cuts a write short (EFBIG): the file stays as it was."""
        script = textwrap.dedent(
            """
            import json, os, resource, signal, sys
            from compaction import LogError, Message, SessionLog
            path = sys.argv[1]
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            log = SessionLog(path)
            log.append(Message(role="user", content="first"))
            size = os.path.getsize(path)
            soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
            resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, hard))
            try:
                log.append(Message(role="user", content="big " + "x" * 10_000))
                failed = None
            except LogError as exc:
                failed = str(exc)
            after_fail = os.path.getsize(path)
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            seq = log.append(Message(role="user", content="big " + "x" * 10_000)).seq
            log.close()
            print(json.dumps({"size": size, "after_fail": after_fail, "failed": failed,
                              "retry_seq": seq}))
            """
        )
        out = subprocess.run(
            [sys.executable, "-c", script, str(log_path)],
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(out.stdout)
        assert result["failed"] is not None
        assert "File too large" in result["failed"]
        assert result["after_fail"] == result["size"]
        assert result["retry_seq"] == 2
        events = list(read_events(log_path))
        assert [e.seq for e in events] == [1, 2]
        big = [e for e in events if isinstance(e, MessageAdded) and "big" in e.data.text()]
        assert len(big) == 1


def todo_list(*items: tuple[str, str]) -> str:
    return json.dumps({"todos": [{"content": c, "status": s} for c, s in items]})


class InterferingSummarizer:
    """A summarizer during whose work another writer appends a new todo list."""

    name = "interfering"

    def __init__(self, path: Path, times: int) -> None:
        self.path = path
        self.times = times
        self.calls = 0

    def summarize(self, span: SummaryInput) -> Mapping[str, str]:
        self.calls += 1
        if self.calls <= self.times:
            with Session(self.path) as other:
                other.todo_write(todo_list((f"new task {self.calls}", "pending")))
        return {"Primary Request and Intent": "work"}


def busy_session(path: Path) -> Session:
    s = Session(path)
    s.start_turn("start the work")
    s.todo_write(todo_list(("old task", "pending")))
    s.add_message({"role": "assistant", "content": "working on it"})
    s.start_turn("go on")
    return s


def reference_unfinished(events: Sequence[object], before: int) -> tuple[list[str], list[str]]:
    """The unfinished items of the latest todo/write before seq `before`, folded by hand."""
    latest: list[dict[str, str]] = []
    for e in events:
        if isinstance(e, TodoWritten) and e.seq < before:
            latest = [t.model_dump() for t in e.data.todos]
    return (
        [t["content"] for t in latest if t["status"] == "pending"],
        [t["content"] for t in latest if t["status"] == "in_progress"],
    )


class TestCompactionConsistentView:
    def test_writer_during_summary_makes_compaction_recompute(self, log_path: Path) -> None:
        """A list appended while the summary is written is the one the checkpoint carries."""
        with busy_session(log_path) as s:
            summarizer = InterferingSummarizer(log_path, times=1)
            result = compact(s, force=True, summarizer=summarizer)
            assert summarizer.calls == 2
            assert result.event is not None
            assert result.data.pending == ("new task 1",)
            assert result.event.seq == s.applied_seq
        events = list(read_events(log_path))
        assert isinstance(events[-1], CheckpointRecorded)
        assert reference_unfinished(events, events[-1].seq) == (["new task 1"], [])

    def test_stale_compaction_is_refused_as_retryable(self, log_path: Path) -> None:
        """When writers keep appending, compaction writes nothing and says to retry."""
        with busy_session(log_path) as s:
            with pytest.raises(CompactionError, match=r"conflict: .*retry") as info:
                compact(s, force=True, summarizer=InterferingSummarizer(log_path, times=99))
            assert info.value.retryable
            assert info.value.code == "conflict"
        assert not any(isinstance(e, CheckpointRecorded) for e in read_events(log_path))

    def test_sees_events_appended_before_it_started(self, log_path: Path) -> None:
        """Compaction reads what other processes appended since the session last looked."""
        with busy_session(log_path) as s:
            with Session(log_path) as other:
                other.todo_write(todo_list(("from elsewhere", "in_progress")))
            result = compact(s, force=True)
            assert result.data.current == ("from elsewhere",)

    @pytest.mark.slow
    def test_several_writer_processes(self, log_path: Path) -> None:
        """With three processes rewriting the list, every checkpoint carries the list before it."""
        busy_session(log_path).close()
        writer = textwrap.dedent(
            """
            import json, sys
            from compaction import Session
            path, w = sys.argv[1], sys.argv[2]
            with Session(path) as s:
                for i in range(40):
                    s.add_message({"role": "user", "content": f"w{w} step {i}"})
                    items = [{"content": f"w{w} task {i}", "status": "in_progress"},
                             {"content": f"w{w} next {i}", "status": "pending"}]
                    s.todo_write(json.dumps({"todos": items}), allow_parallel_in_progress=True)
            """
        )
        procs = [
            subprocess.Popen([sys.executable, "-c", writer, str(log_path), str(w)])
            for w in range(3)
        ]
        written, refused = 0, []
        with Session(log_path) as s:
            while any(p.poll() is None for p in procs) or written == 0:
                try:
                    compact(s, force=True)
                    written += 1
                except CompactionError as exc:
                    refused.append(exc.code)
        assert set(refused) <= {"conflict", "nothing_to_compact"}
        assert [p.wait() for p in procs] == [0, 0, 0]
        events = list(read_events(log_path))
        check_log(events)
        checkpoints = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert len(checkpoints) == written >= 1
        for c in checkpoints:
            pending, current = reference_unfinished(events, c.seq)
            assert (list(c.data.pending), list(c.data.current)) == (pending, current)
            assert c.data.last_seq < c.seq


class TestOneReader:
    @pytest.mark.parametrize(
        ("content", "message"),
        [
            pytest.param(line(1) + line(3), "has seq 3, expected 2", id="gap"),
            pytest.param(line(1) + line(1), "has seq 1, expected 2", id="repeat"),
            pytest.param(line(2), "has seq 2, expected 1", id="not-from-one"),
        ],
    )
    def test_every_reader_applies_the_same_seq_rule(
        self, log_path: Path, content: bytes, message: str
    ) -> None:
        """read_events, Session and check_log reject the same logs with the same rule."""
        log_path.write_bytes(content)
        with pytest.raises(LogIntegrityError, match=message) as by_reader:
            list(read_events(log_path))
        with pytest.raises(LogIntegrityError, match=message) as by_session:
            Session(log_path)
        with pytest.raises(LogIntegrityError, match=message) as by_checker:
            check_log(read_events(log_path, check_seq=False))
        assert by_reader.value.rule == by_session.value.rule == by_checker.value.rule

    def test_skipped_bad_lines_allow_gaps_but_never_a_step_back(self, log_path: Path) -> None:
        """With bad lines skipped, seqs may jump but never go back, in every reader alike."""
        log_path.write_bytes(line(1) + b"garbage\n" + line(3) + line(2))
        with pytest.raises(LogIntegrityError, match="line 4 has seq 2, expected 4"):
            list(read_events(log_path, skip_bad_lines=True))
        with pytest.raises(LogIntegrityError, match="line 4 has seq 2, expected 4"):
            Session(log_path, skip_bad_lines=True)


class TestTokensBySeq:
    def test_compact_with_skipped_bad_line(self, log_path: Path) -> None:
        """Compaction over a log read with a bad line skipped counts each message's own tokens."""
        texts = ["first request " * 40, "long answer " * 60, "second request", "short answer"]
        roles = ["user", "assistant", "user", "assistant"]
        log_path.write_bytes(
            line(1)
            + b"garbage\n"
            + b"".join(msg(3 + i, r, t) for i, (r, t) in enumerate(zip(roles, texts, strict=True)))
        )
        with Session(log_path, skip_bad_lines=True) as s:
            assert [s.event_tokens(q) for q in (2, 3)] == [
                0,
                count_message(s.tokenizer, Message(role="user", content=texts[0])),
            ]
            result = compact(s, force=True)
            expected = sum(
                count_message(s.tokenizer, Message(role=r, content=t))
                for r, t in zip(roles[: result.replaced_messages], texts, strict=False)
            )
            assert result.replaced_messages >= 1
            assert result.replaced_tokens == expected


class TestCutIsReportedByTheCli:
    def test_todo_write_prints_where_the_torn_bytes_went(
        self, log_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`harness todo-write` on a log with a torn tail names the saved file on stderr."""
        from harness.cli import main

        head = line(1)
        log_path.write_bytes(head + b'{"v":1,"seq":2,"type":"todo/wr')
        status = main(["todo-write", str(log_path), "--args", todo_list(("a", "pending"))])
        err = capsys.readouterr().err
        assert status == 0
        assert f"{log_path}.torn-{len(head)}" in err
        assert "cut a torn last line" in err
        assert seqs(log_path) == [1, 2]
