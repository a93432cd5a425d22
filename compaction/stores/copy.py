"""Copying sessions between stores (any backend to any backend), streaming.

Invariants: a copy lands in an empty destination session only (an existing one is refused,
never merged); the destination holds the same events, byte for byte, seqs included; a copy that
fails part-way deletes what it wrote (unless another writer appended to the same session
meanwhile, which stops the copy with a `LogError`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from compaction.errors import LogError, SeqConflictError
from compaction.events import Event, EventData
from compaction.stores.protocol import EventStore

CHUNK: Final = 1000
"""Events appended per write while copying."""


def write_new_session(store: EventStore, session: str, events: Iterable[Event]) -> int:
    """Append `events` (seqs 1..n) to a session that must be empty; return how many.

    Raises:
        LogError: the destination session already holds events (nothing is written), or a
            write failed (what was written of this session is deleted again).
    """
    if store.last_seq(session):
        raise LogError(
            f"{store.url}#{session}: the session already holds {store.last_seq(session)} events; "
            "choose another session id, or delete that session first"
        )
    written = 0
    chunk: list[EventData] = []
    try:
        for event in events:
            chunk.append(event.data)
            if len(chunk) >= CHUNK:
                written += len(store.append(session, chunk, expected_seq=written))
                chunk.clear()
        if chunk:
            written += len(store.append(session, chunk, expected_seq=written))
    except SeqConflictError as exc:
        raise LogError(
            f"{store.url}#{session}: another writer appended during the copy ({exc}); the "
            f"copy stopped after {written} events"
        ) from None
    except BaseException:
        if written:
            store.delete(session)
        raise
    return written


def copy_session(src: EventStore, session: str, dst: EventStore, target: str | None = None) -> int:
    """Copy one session from `src` into a new session of `dst` (same id unless `target`).

    Returns:
        How many events were copied.

    Raises:
        LogError: the destination session exists, or a read or write failed.
    """
    return write_new_session(dst, target or session, src.read(session))
