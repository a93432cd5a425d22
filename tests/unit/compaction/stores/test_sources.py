"""Contracts of a session's source (`SessionSource`), pinned by mutation testing.

Each test states behaviour `scripts/mutate --group stores-core` found untested: on a store other
than a JSONL file the source checks every seq and counts what it read in its report; on a file
the file's reader counts, once; an append is taken as read only when nothing came between; a
source closes the store it opened and never the caller's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest
from open_files import needs_proc, open_fds

from compaction import ConfigError, LogIntegrityError, Message, SeqConflictError, Session
from compaction.events import Event, EventData, TurnStartData, make_event
from compaction.stores import FileStore, SessionLog
from compaction.stores.log_reader import ReadReport
from compaction.stores.protocol import SessionInfo
from compaction.stores.sources import SessionSource


def msgs(*texts: str) -> list[EventData]:
    return [Message(role="user", content=t) for t in texts]


class MemoryStore:
    """An `EventStore` in a dict: not a file, so the source checks and counts on its own."""

    url = "memory://test"

    def __init__(self) -> None:
        self.events: dict[str, list[Event]] = {}
        self.closed = False

    def append(
        self, session: str, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        held = self.events.setdefault(session, [])
        last = held[-1].seq if held else 0
        if expected_seq is not None and expected_seq != last:
            raise SeqConflictError(f"{self.url}#{session}", expected_seq, last)
        new = [make_event(last + 1 + i, d) for i, d in enumerate(items)]
        held.extend(new)
        return new

    def read(self, session: str, *, after: int = 0) -> Iterator[Event]:
        return iter([e for e in self.events.get(session, []) if e.seq > after])

    def last_seq(self, session: str) -> int:
        held = self.events.get(session, [])
        return held[-1].seq if held else 0

    def transaction(self, session: str) -> AbstractContextManager[None]:
        return nullcontext()

    def sessions(self) -> list[SessionInfo]:
        return [SessionInfo(s, e[-1].seq, None) for s, e in sorted(self.events.items()) if e]

    def delete(self, session: str) -> bool:
        return self.events.pop(session, None) is not None

    def close(self) -> None:
        self.closed = True


def store_with(n: int, session: str = "a") -> MemoryStore:
    """A memory store whose session holds a turn start and n - 1 messages."""
    store = MemoryStore()
    store.append(session, [TurnStartData(), *msgs(*(f"m{i}" for i in range(1, n)))])
    return store


class TestOnAStore:
    def test_each_event_is_counted_once_in_the_report(self) -> None:
        """Lines, events and types are counted as read; a second read reads only what is new."""
        store = store_with(3)
        source = SessionSource(store, "a", owns_store=False)
        assert source.where == "memory://test#a"
        assert source.report.path == "memory://test#a"
        assert [e.seq for e in source.read_new()] == [1, 2, 3]
        assert [e.seq for e in source.read_new()] == []
        store.append("a", msgs("other writer"))
        assert [e.seq for e in source.read_new()] == [4]
        report = source.report
        assert (report.lines, report.events, source.last_seq) == (4, 4, 4)
        assert report.by_type == Counter({"message": 3, "turn/start": 1})

    def test_the_report_given_is_the_one_filled(self) -> None:
        """A report passed in is the source's; without one, a new one names the session."""
        report = ReadReport(path="mine")
        source = SessionSource(store_with(2), "a", owns_store=False, report=report)
        assert source.report is report
        list(source.read_new())
        assert (report.path, report.lines, report.events) == ("mine", 2, 2)

    def test_a_seq_that_does_not_follow_names_the_event_and_the_session(self) -> None:
        """A store that skips a seq makes the read fail on that event, naming where it is."""
        store = store_with(3)
        store.events["a"][2] = make_event(4, Message(role="user", content="skipped one"))
        source = SessionSource(store, "a", owns_store=False)
        with pytest.raises(LogIntegrityError) as caught:
            list(source.read_new())
        assert str(caught.value) == (
            "memory://test#a: seq_contiguous at seq 4: event 4 has seq 4, expected 3"
        )
        assert caught.value.path == "memory://test#a"
        assert (source.last_seq, source.report.events) == (2, 2)


class TestAppend:
    def read_source(self, n: int) -> tuple[MemoryStore, SessionSource]:
        store = store_with(n)
        source = SessionSource(store, "a", owns_store=False)
        list(source.read_new())
        return store, source

    def test_an_append_after_the_last_read_is_taken_as_read_and_counted(self) -> None:
        _, source = self.read_source(2)
        events, taken = source.append(msgs("x", "y"), None, 2)
        assert ([e.seq for e in events], taken) == ([3, 4], True)
        assert (source.last_seq, source.report.events, source.report.lines) == (4, 4, 4)
        assert list(source.read_new()) == []

    def test_an_append_the_caller_has_not_caught_up_to_is_read_back(self) -> None:
        """The caller had not applied every event read (`applied_seq`): not taken as read."""
        _, source = self.read_source(2)
        events, taken = source.append(msgs("x"), None, 1)
        assert ([e.seq for e in events], taken) == ([3], False)
        assert (source.last_seq, source.report.events) == (2, 2)
        assert [e.seq for e in source.read_new()] == [3]

    def test_an_append_after_another_writers_is_read_back_with_it(self) -> None:
        store, source = self.read_source(2)
        store.append("a", msgs("theirs"))
        events, taken = source.append(msgs("mine"), None, 2)
        assert ([e.seq for e in events], taken) == ([4], False)
        assert source.last_seq == 2
        assert [(e.seq, e.data) for e in source.read_new()] == [
            (3, Message(role="user", content="theirs")),
            (4, Message(role="user", content="mine")),
        ]

    def test_an_empty_append_takes_nothing(self) -> None:
        _, source = self.read_source(2)
        assert source.append([], None, 2) == ([], False)
        assert (source.last_seq, source.report.events) == (2, 2)

    def test_the_expected_seq_reaches_the_store(self) -> None:
        store, source = self.read_source(2)
        with pytest.raises(SeqConflictError, match="expected the last seq to be 1, but it is 2"):
            source.append(msgs("x"), 1, 2)
        assert store.last_seq("a") == 2
        assert source.append(msgs("x"), 2, 2)[1] is True


class TestOnAFile:
    def test_the_file_reader_counts_each_event_once(self, tmp_path: Path) -> None:
        """On a file the report is the file store's, and every event is counted once."""
        path = tmp_path / "s.jsonl"
        with SessionLog(path) as log:
            log.append_many([TurnStartData(), *msgs("1", "2")])
        store = FileStore(path)
        source = SessionSource(store, "s", owns_store=False)
        assert source.report is store.report
        assert source.where == str(path)
        assert [e.seq for e in source.read_new()] == [1, 2, 3]
        events, taken = source.append(msgs("3"), None, 3)
        assert ([e.seq for e in events], taken) == ([4], True)
        assert (store.report.events, store.report.lines, store.read_seq) == (4, 4, 4)
        assert store.report.by_type == Counter({"message": 3, "turn/start": 1})

    def test_a_line_left_unread_before_an_append_makes_it_read_back(self, tmp_path: Path) -> None:
        """Another writer's blank line lies unread before the append: not taken as read.

        The next read yields the appended event once.
        """
        path = tmp_path / "s.jsonl"
        with SessionLog(path) as log:
            log.append_many(msgs("1", "2"))
        store = FileStore(path)
        source = SessionSource(store, "s", owns_store=False)
        list(source.read_new())
        with path.open("ab") as f:
            f.write(b"\n")
        events, taken = source.append(msgs("3"), None, 2)
        assert ([e.seq for e in events], taken) == ([3], False)
        assert (source.last_seq, store.read_seq) == (2, 2)
        assert [e.seq for e in source.read_new()] == [3]
        assert (store.report.events, store.report.lines) == (3, 4)

    def test_a_refresh_reads_only_the_new_events(self, tmp_path: Path) -> None:
        """`Session.refresh` returns another writer's events only, not the log again."""
        path = tmp_path / "s.jsonl"
        with Session(path) as s:
            s.start_turn("hi")
            with SessionLog(path) as other:
                other.append(Message(role="user", content="theirs"))
            assert [(e.seq, e.type) for e in s.refresh()] == [(3, "message")]
            assert s.refresh() == []
            assert (s.report.events, s.report.lines) == (3, 3)


class TestOpen:
    def test_neither_a_target_nor_a_store_is_refused(self) -> None:
        with pytest.raises(ConfigError) as caught:
            Session()
        assert str(caught.value) == "Session needs a log path, a store URL or a store"

    def test_the_callers_store_is_left_open(self) -> None:
        store = store_with(1)
        with Session(store=store, session="a") as s:
            assert s.where == "memory://test#a"
        assert store.closed is False

    def test_a_file_store_names_its_own_session(self, tmp_path: Path) -> None:
        """A `FileStore` given without a session is read as its file's one session."""
        path = tmp_path / "s.jsonl"
        with SessionLog(path) as log:
            log.append_many(msgs("1"))
        store = FileStore(path)
        source = SessionSource.open(None, store, None, sync="always", skip_bad_lines=False)
        assert (source.session, source.owns_store) == ("s", False)
        assert [e.seq for e in source.read_new()] == [1]

    def test_a_target_is_opened_with_the_sync_policy_and_skipping(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        with SessionLog(path) as log:
            log.append_many(msgs("1"))
        with path.open("ab") as f:
            f.write(b"not an event\n")
        source = SessionSource.open(path, None, None, sync="batch", skip_bad_lines=True)
        assert isinstance(source.store, FileStore)
        assert (source.store.log.sync, source.store.skip_bad_lines) == ("batch", True)
        assert [e.seq for e in source.read_new()] == [1]
        assert [b.line for b in source.report.bad_lines] == [2]
        source.close()
        strict = SessionSource.open(path, None, None, sync="always", skip_bad_lines=False)
        assert isinstance(strict.store, FileStore)
        assert (strict.store.log.sync, strict.store.skip_bad_lines) == ("always", False)
        strict.close()

    @needs_proc
    def test_a_store_it_opened_is_closed_with_it(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        with Session(path) as s:
            s.start_turn("hi")
            assert open_fds(path) == 1
        assert open_fds(path) == 0
