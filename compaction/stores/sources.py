"""Where a `Session` reads and appends its events: a JSONL file, or a session in an `EventStore`.

Each source reads only what was appended since its last read, checks every seq with the one
rule (`check_next_seq`), counts what it read in the session's `ReadReport`, and takes the
events its own append wrote as read when nothing came between.

Reads pause the cyclic garbage collector while they yield (`collector_paused`): a fold of
10^5 events would otherwise have the collector walk every live message again and again, and
its cost per event would grow with the log.

Invariants: a source yields each event once, in seq order; an event it yields is stored; the
collector is enabled again when a read ends, however it ends (unless it was off before).
"""

from __future__ import annotations

import gc
from collections.abc import Generator, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, TypeVar

from compaction.events import Event, EventData
from compaction.invariants import check_next_seq
from compaction.stores.log_reader import LogReader, ReadReport, read_events
from compaction.stores.log_writer import SessionLog, SyncPolicy
from compaction.stores.protocol import EventStore, check_session_id

T = TypeVar("T")


def collector_paused(events: Iterator[T]) -> Generator[T, None, None]:
    """Yield `events` with the cyclic garbage collector paused until they end or are dropped.

    Reference counting still frees what a fold drops (events hold no reference cycles); the
    collector is left as it was when it was already disabled.
    """
    if not gc.isenabled():
        yield from events
        return
    gc.disable()
    try:
        yield from events
    finally:
        gc.enable()


class EventSource(Protocol):
    """What a `Session` needs from where its events live."""

    where: str
    """The file, or the store URL and session id, for messages."""

    def read_new(self) -> Iterator[Event]:
        """Yield the events stored since the last read."""
        ...

    def append(
        self, items: Sequence[EventData], expected_seq: int | None, applied_seq: int
    ) -> tuple[list[Event], bool]:
        """Append; return the events and whether they were taken as read (nothing between)."""
        ...

    def transaction(self) -> AbstractContextManager[object]:
        """Hold the session for a read-then-append."""
        ...

    def events(self) -> Iterator[Event]:
        """Stream every event from the start."""
        ...

    def close(self) -> None:
        """Release files or connections."""
        ...


class FileSource:
    """A JSONL log file, read through one `LogReader` and appended through a `SessionLog`."""

    def __init__(
        self, path: Path | str, *, sync: SyncPolicy, skip_bad_lines: bool, report: ReadReport
    ) -> None:
        self.log = SessionLog(path, sync=sync)
        self.where = str(path)
        self.skip_bad_lines = skip_bad_lines
        self._reader = LogReader(path, skip_bad_lines=skip_bad_lines, report=report)

    def read_new(self) -> Iterator[Event]:
        """Read the bytes appended since the last read (nothing while the file is missing)."""
        if not self.log.path.exists():
            return iter(())
        return collector_paused(self._reader.read())

    def append(
        self, items: Sequence[EventData], expected_seq: int | None, applied_seq: int
    ) -> tuple[list[Event], bool]:
        """Append in one locked write; take our lines as read when the reader stood there."""
        events = self.log.append_many(list(items), expected_seq=expected_seq)
        start, size = self.log.last_append_start, self.log.last_append_bytes
        fresh = bool(events) and events[0].seq == applied_seq + 1
        return events, fresh and self._reader.skip_appended(events, start, start + size)

    def transaction(self) -> AbstractContextManager[object]:
        """Hold the file's lock (`SessionLog.batch`)."""
        return self.log.batch()

    def events(self) -> Iterator[Event]:
        """Stream the file from the start."""
        return read_events(self.log.path, skip_bad_lines=self.skip_bad_lines)

    def close(self) -> None:
        """Fsync and close the file."""
        self.log.close()


class StoreSource:
    """One session of an `EventStore`.

    Args:
        store: the store.
        session: the session id.
        report: where reads are counted (a line is an event here).
        owns_store: close the store with the source.
    """

    def __init__(
        self, store: EventStore, session: str, *, report: ReadReport, owns_store: bool
    ) -> None:
        self.store = store
        self.session = check_session_id(session)
        self.where = f"{store.url}#{session}"
        self.report = report
        self.owns_store = owns_store
        self.last_seq = 0

    def _accept(self, event: Event) -> None:
        check_next_seq(self.last_seq, event.seq, where=f"event {event.seq}", path=self.where)
        self.last_seq = event.seq
        self.report.lines += 1
        self.report.events += 1
        self.report.by_type[event.type] += 1

    def read_new(self) -> Iterator[Event]:
        """Stream the session's events above the last one read."""
        return collector_paused(self._read_new())

    def _read_new(self) -> Iterator[Event]:
        for event in self.store.read(self.session, after=self.last_seq):
            self._accept(event)
            yield event

    def append(
        self, items: Sequence[EventData], expected_seq: int | None, applied_seq: int
    ) -> tuple[list[Event], bool]:
        """Append atomically; take the events as read when they follow the last one read."""
        events = self.store.append(self.session, items, expected_seq=expected_seq)
        if not events or events[0].seq != self.last_seq + 1 or applied_seq != self.last_seq:
            return events, False
        for e in events:
            self._accept(e)
        return events, True

    def transaction(self) -> AbstractContextManager[object]:
        """The store's transaction on this session."""
        return self.store.transaction(self.session)

    def events(self) -> Iterator[Event]:
        """Stream the session from its first event."""
        return self.store.read(self.session)

    def close(self) -> None:
        """Close the store if this source opened it."""
        if self.owns_store:
            self.store.close()
