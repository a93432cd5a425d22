"""Reopening a log folds it streaming: with a tokenizer given, counted in batches as it is read."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from compaction import CompactionPolicy, LogError, Message, Session, compact
from compaction.session.live_views import COUNT_BATCH, WAIT_LIMIT
from compaction.stores import FileStore
from compaction.tokens import TiktokenTokenizer


class CountingTokenizer(TiktokenTokenizer):
    """The default tokenizer, recording each text it is asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return super().count(text)


def write(log: Path, n: int) -> int:
    with Session(log, sync="batch") as s, s.batch():
        s.append_many(Message(role="user", content=f"request {i}") for i in range(n))
        return s.context_tokens


def test_a_given_tokenizer_counts_while_the_log_is_read(tmp_path: Path) -> None:
    """Messages are counted during the open a batch at a time (the rest on first read), once."""
    log = tmp_path / "s.jsonl"
    tokens = write(log, COUNT_BATCH + 50)
    tok = CountingTokenizer()
    with Session(log, tokenizer=tok) as again:
        assert len(tok.counted) == COUNT_BATCH  # before any view was read: 50 wait
        assert again.context_tokens == tokens
        assert len(tok.counted) == COUNT_BATCH + 50
        assert again.context_tokens == tokens
        assert len(tok.counted) == COUNT_BATCH + 50


def test_without_a_tokenizer_the_counts_are_the_same(tmp_path: Path) -> None:
    """The default stays lazy (counted on first use) and counts the same."""
    log = tmp_path / "s.jsonl"
    tokens = write(log, 20)
    with Session(log) as again:
        assert again.todos.todos == ()
        assert again.context_tokens == tokens


def test_the_collector_runs_again_after_the_open(tmp_path: Path) -> None:
    """The fold pauses the cyclic collector and leaves it enabled."""
    log = tmp_path / "s.jsonl"
    write(log, 10)
    gc.enable()  # whatever an earlier test in this worker left
    with Session(log, tokenizer=TiktokenTokenizer()):
        assert gc.isenabled()


def test_a_refused_log_leaves_the_collector_enabled(tmp_path: Path) -> None:
    """A fold that stops on a malformed line leaves the collector running.

    The collector runs again at once, even while the error and its traceback are still held.
    """
    log = tmp_path / "s.jsonl"
    write(log, 5)
    with log.open("a", encoding="utf-8") as f:
        f.write('{"not": "an event"}\n')
    gc.enable()
    held: list[BaseException] = []
    try:
        Session(log)
    except LogError as exc:
        held.append(exc)
    assert held, "the malformed line was not refused"
    assert gc.isenabled()


def test_a_refresh_that_fails_leaves_the_collector_enabled(tmp_path: Path) -> None:
    """The same holds for `refresh`, reading what another writer appended."""
    log = tmp_path / "s.jsonl"
    write(log, 3)
    with Session(log) as session:
        with log.open("a", encoding="utf-8") as f:
            f.write('{"not": "an event"}\n')
        gc.enable()
        held: list[BaseException] = []
        try:
            session.refresh()
        except LogError as exc:
            held.append(exc)
        assert held
        assert gc.isenabled()


def compacted_log(log: Path, n: int) -> Session:
    """Write `n` messages and a forced compaction at the end; return the (open) writer."""
    s = Session(log, sync="batch")
    with s.batch():
        for i in range(n):
            s.append(Message(role="user", content=f"request {i}: " + "word " * 20))
            s.append(Message(role="assistant", content=f"answer {i}"))
    compact(s, CompactionPolicy(window_tokens=8_000, retain=0.05), force=True)
    return s


class TestStreamingFold:
    def test_the_horizon_is_the_newest_checkpoint_span(self, tmp_path: Path) -> None:
        """The store finds the checkpoint's last_seq by scanning lines: no fold needed."""
        log = tmp_path / "s.jsonl"
        with compacted_log(log, 50) as s:
            last = s.context.checkpoint.last_seq if s.context.checkpoint else 0
        assert last > 0
        assert FileStore(log).checkpoint_horizon() == last
        assert FileStore(tmp_path / "absent.jsonl").checkpoint_horizon() == 0

    def test_reopen_equals_the_live_views(self, tmp_path: Path) -> None:
        """Skipping folded messages and counting later give the views the writer had."""
        log = tmp_path / "s.jsonl"
        with compacted_log(log, WAIT_LIMIT) as s:
            live = (s.context, s.context_tokens, s.usage.per_event, s.latest_todos)
        with Session(log) as again:
            assert len(again._uncounted) <= WAIT_LIMIT  # the waiting list stays bounded
            assert (again.context, again.context_tokens) == live[:2]
            assert (again.usage.per_event, again.latest_todos) == live[2:]

    def test_a_skipped_checkpoint_line_refolds_the_context(self, tmp_path: Path) -> None:
        """A horizon from a checkpoint the fold never applies (a bad line) is caught: refolded."""
        log = tmp_path / "s.jsonl"
        with compacted_log(log, 30) as s:
            assert s.context.checkpoint is not None
        lines = log.read_bytes().splitlines(keepends=True)
        mark = b'"type":"compaction/checkpoint"'
        at = next(i for i, line in enumerate(lines) if mark in line[:64])
        record = json.loads(lines[at])
        del record["data"]["text"]  # still names its span, no longer a valid event
        lines[at] = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        log.write_bytes(b"".join(lines))
        assert FileStore(log).checkpoint_horizon() > 0
        with Session(log, skip_bad_lines=True) as again:
            assert again.report.bad_lines
            assert again.context.checkpoint is None
            assert len(again.context.messages) == 60  # every message, none skipped
