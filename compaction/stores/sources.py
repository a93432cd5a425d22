"""Where a `Session` reads and appends its events: one session of an `EventStore`.

There is one source for every backend (a JSONL file is a `FileStore` of one session). It reads
only what was appended since its last read, checks every seq with the one rule
(`check_next_seq`), counts what it read in the session's `ReadReport`, and takes the events its
own append wrote as read when nothing came between.

Invariants: a source yields each event once, in seq order; an event it yields is stored.

Reads pause the cyclic garbage collector while they yield (`collector_paused`): a fold of
10^5 events would otherwise have the collector walk every live message again and again, and
its cost per event would grow with the log. The collector is enabled again when a read ends,
however it ends (unless it was off before), and what the read left alive is first moved to the
collector's oldest generation when the read was long (`promote_survivors`): else the first
young collection after it walks every object the fold kept (0.3 to 0.4 CPU seconds at 10^5
events, 3 to 4 µs an event), and a later one walks them again on their way there.
"""

from __future__ import annotations

import gc
from collections.abc import Generator, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TypeVar

from compaction.errors import ConfigError
from compaction.events import Event, EventData
from compaction.invariants import check_next_seq
from compaction.stores._opening import open_session_store, session_of, where_of
from compaction.stores.file import FileStore
from compaction.stores.log_reader import ReadReport
from compaction.stores.log_writer import SyncPolicy
from compaction.stores.protocol import EventStore

T = TypeVar("T")


PROMOTE_AT = 1_000
"""Events a read must yield before what it left alive is moved to the oldest generation."""


def promote_survivors() -> None:
    """Move every object the collector tracks to its oldest generation, walking none of them.

    ``gc.freeze()`` then ``gc.unfreeze()``: two list splices. What a long read keeps is the
    session's state, alive as long as the session; a young collection would walk each of its
    objects once or twice only to promote it. A full collection still walks them when the
    collector's own rule calls one, and garbage cycles that were young at the promotion wait
    for it (at most the young generations of one moment, once per long read). Skipped when the
    process froze objects itself (``gc.get_freeze_count()``): unfreezing would release them.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def collector_paused(
    events: Iterator[T], *, promote_at: int | None = None
) -> Generator[T, None, None]:
    """Yield `events` with the cyclic garbage collector paused until they end or are dropped.

    Reference counting still frees what a fold drops (events hold no reference cycles); the
    collector is left as it was when it was already disabled. After at least `promote_at`
    events, what the fold left alive is moved to the oldest generation before the collector
    resumes (`promote_survivors`); None never moves it (a count batch, run during appends).
    """
    if not gc.isenabled():
        yield from events
        return
    gc.disable()
    yielded = 0
    try:
        for item in events:
            yielded += 1
            yield item
    finally:
        if promote_at is not None and yielded >= promote_at:
            promote_survivors()
        gc.enable()


class SessionSource:
    """One session of a store, followed from its last read.

    A `FileStore` reads through its own `LogReader`, which checks seqs (gaps allowed when bad
    lines are skipped) and counts lines, bad lines and a torn tail in the store's report; that
    report is the source's. On any other store the source checks and counts each event itself
    (a line is an event there).

    Args:
        store: the store.
        session: the session id within it.
        owns_store: close the store with the source.
        report: where reads are counted on a store other than a `FileStore` (new by default).
    """

    def __init__(
        self,
        store: EventStore,
        session: str,
        *,
        owns_store: bool,
        report: ReadReport | None = None,
    ) -> None:
        self.store = store
        self.session = session
        self.where = where_of(store, session)
        """The file, or the store URL and ``#session``, for messages."""
        self.owns_store = owns_store
        self._file = store if isinstance(store, FileStore) else None
        if self._file is not None:
            self.report = self._file.report
        else:
            self.report = report if report is not None else ReadReport(path=self.where)
        self.last_seq = 0
        """Seq of the last event this source read or took as read."""

    @classmethod
    def open(
        cls,
        path: Path | str | None,
        store: EventStore | None,
        session: str | None,
        *,
        sync: SyncPolicy,
        skip_bad_lines: bool,
    ) -> SessionSource:
        """Open a `Session`'s source: on the given store (the caller closes it), or by target.

        Raises:
            ConfigError: neither a target nor a store, or a session the store cannot name.
        """
        if store is not None:
            return cls(store, session_of(store, session), owns_store=False)
        if path is None:
            raise ConfigError("Session needs a log path, a store URL or a store")
        opened, sid = open_session_store(path, session, sync=sync, skip_bad_lines=skip_bad_lines)
        return cls(opened, sid, owns_store=True)

    def _accept(self, event: Event) -> None:
        if self._file is None:
            check_next_seq(self.last_seq, event.seq, where=f"event {event.seq}", path=self.where)
            self.report.lines += 1
            self.report.events += 1
            self.report.by_type[event.type] += 1
        self.last_seq = event.seq

    def read_new(self) -> Generator[Event, None, None]:
        """Stream the session's events above the last one read, the collector paused."""
        return collector_paused(self._read_new(), promote_at=PROMOTE_AT)

    def _read_new(self) -> Iterator[Event]:
        for event in self.store.read(self.session, after=self.last_seq):
            self._accept(event)
            yield event

    def append(
        self, items: Sequence[EventData], expected_seq: int | None, applied_seq: int
    ) -> tuple[list[Event], bool]:
        """Append atomically; return the events and whether they were taken as read.

        They are taken as read when they follow the last event read and the caller had applied
        every event read so far (`applied_seq`): nobody else appended in between. On a
        `FileStore`, also only when its reader took them (no other writer's line, even a blank
        one, lies unread before them).
        """
        events = self.store.append(self.session, items, expected_seq=expected_seq)
        if not events or events[0].seq != self.last_seq + 1 or applied_seq != self.last_seq:
            return events, False
        if self._file is not None and self._file.read_seq != events[-1].seq:
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

    def checkpoint_horizon(self) -> int:
        """Return the largest ``last_seq`` of the session's checkpoints, found without a fold.

        A JSONL file is scanned line by line for checkpoint records (only those lines are
        parsed); another store answers 0 (no horizon: every message is folded).
        """
        return self._file.checkpoint_horizon() if self._file is not None else 0

    def close(self) -> None:
        """Close the store if this source opened it."""
        if self.owns_store:
            self.store.close()
