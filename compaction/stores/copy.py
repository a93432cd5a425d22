"""Writing a whole session at once (an import, a copy), atomically on every backend.

The one writer of new sessions: `harness import` and `harness copy` both end here.

Invariants:
- a write lands in an empty destination session only, unless told to replace it (an existing
  one is refused, never merged);
- all or nothing, on every backend: a file-backed session (a JSONL file, or a session of a
  JSONL folder) is written beside its file under a temporary name and renamed into place only
  once complete; a SQL session is deleted (when replaced) and written inside one
  `transaction`, which rolls back on any failure. A failed write leaves the session as it was;
- the destination holds the same events, byte for byte, seqs included.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Final

from compaction.errors import LogError
from compaction.events import Event, EventData
from compaction.stores.file import FileStore
from compaction.stores.jsonl import JsonlStore
from compaction.stores.log_writer import SessionLog
from compaction.stores.opening import session_file, where_of
from compaction.stores.protocol import EventStore

CHUNK: Final = 1000
"""Events appended per write."""


def _chunks(events: Iterable[Event]) -> Iterator[list[EventData]]:
    it = iter(events)
    while chunk := [e.data for e in islice(it, CHUNK)]:
        yield chunk


def _refuse(where: str, held: str) -> LogError:
    return LogError(
        f"{where}: the session already holds {held}; choose another session id, or delete "
        "that session first"
    )


def write_new_session(
    store: EventStore,
    session: str,
    events: Iterable[Event],
    *,
    replace: bool = False,
    before_commit: Callable[[int], None] | None = None,
) -> int:
    """Write `events` (seqs 1..n) as the whole of a session; return how many.

    Args:
        store: the destination store.
        session: the session id there.
        events: the events, streamed.
        replace: replace a session that already holds events (else it is refused).
        before_commit: called with the count once every event is written, before the write
            becomes visible; raising there (say, because nothing was written) undoes it.

    Raises:
        LogError: the session already holds events and `replace` is false (nothing is
            written), or a write failed (the session is left as it was).
    """
    file = session_file(store, session)
    if file is not None:
        return _write_file(store, session, file, events, replace, before_commit)
    with store.transaction(session):
        if last := store.last_seq(session):
            if not replace:
                raise _refuse(where_of(store, session), f"{last} events")
            store.delete(session)
        written = 0
        for chunk in _chunks(events):
            written += len(store.append(session, chunk, expected_seq=written))
        if before_commit is not None:
            before_commit(written)
    return written


def _write_file(
    store: EventStore,
    session: str,
    file: Path,
    events: Iterable[Event],
    replace: bool,
    before_commit: Callable[[int], None] | None,
) -> int:
    """Write a file-backed session beside its file, then rename it into place."""
    if not replace and file.exists() and file.stat().st_size > 0:
        raise _refuse(where_of(store, session), f"{file.stat().st_size} bytes")
    partial = file.with_name(f".{file.name}.importing")
    partial.unlink(missing_ok=True)
    try:
        written = 0
        with SessionLog(partial, sync="batch") as log, log.batch():
            for chunk in _chunks(events):
                written += len(log.append_many(chunk))
        if before_commit is not None:
            before_commit(written)
        if isinstance(store, FileStore | JsonlStore):
            store.release(session)
        os.replace(partial, file)
    finally:
        partial.unlink(missing_ok=True)
    return written


def copy_session(src: EventStore, session: str, dst: EventStore, target: str | None = None) -> int:
    """Copy one session from `src` into a new session of `dst` (same id unless `target`).

    Returns:
        How many events were copied.

    Raises:
        LogError: the destination session exists, or a read or write failed.
    """
    return write_new_session(dst, target or session, src.read(session))
