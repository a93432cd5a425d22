"""The log's reader and tail: behaviours that surviving mutants changed without a test noticing.

Each test pins one contract of `compaction.stores.log_reader` or `compaction.stores.log_tail`
(issue 25, part F of `docs/mutation.md`), through what a store or a reader reports: whether
`LogReader.skip_appended` took an append as read, and the torn line a store's report names
after its own append cut that line.
"""

from __future__ import annotations

from pathlib import Path

from compaction import Message, SessionLog
from compaction.events import make_event
from compaction.stores import FileStore, LogReader

TORN = b'{"v":1,"seq":3,"type":"message","data":{"role":"us'
"""The start of a third event, cut mid-line by a crash."""


def write_log(path: Path, n: int) -> bytes:
    """Write `n` events with the toolkit and return the file's bytes."""
    with SessionLog(path) as log:
        for i in range(n):
            log.append(Message(role="user", content=f"event {i}"))
    return path.read_bytes()


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
