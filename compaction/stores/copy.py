"""Copying sessions between stores (any backend to any backend), streaming and atomic.

A copy never leaves a destination that looks complete but is not. Into a JSONL folder the
events go to a hidden temporary file (``.<session>.jsonl.part``) that is fsynced, then linked
into place in one step that fails if the session appeared meanwhile; into an SQL store they go
to a staging session (``<session>.copy-staging``) that one transaction renames to the
destination. A failure leaves no destination session; a rerun starts over (a stale staging
session or temporary file is replaced) and ``resume=True`` continues a staging session where it
stopped.

Invariants: a copy lands in an empty destination session only (an existing one is refused,
never merged); the destination holds the same events, byte for byte, seqs included, or nothing;
the source's seqs must run 1..n (a damaged source is refused, never renumbered); a missing
source session is refused, not copied as zero events; a JSONL destination is a regular file
inside its folder (a symlink, dangling or not, is refused).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Final, Protocol, runtime_checkable

from compaction.errors import LogError, SeqConflictError
from compaction.events import Event, EventData, dump_event
from compaction.secrets import redact_url
from compaction.stores.jsonl import JsonlStore
from compaction.stores.protocol import EventStore

CHUNK: Final = 1000
"""Events appended per write while copying."""

STAGING: Final = ".copy-staging"
"""Suffix of the staging session an SQL copy writes before its rename."""


@runtime_checkable
class RenamingStore(Protocol):
    """A store that can rename a session in one transaction (the SQL stores)."""

    def rename_session(self, old: str, new: str) -> None:
        """Give every event of `old` the id `new`, which must hold none (one transaction)."""
        ...


def is_staging(session: str) -> bool:
    """Tell whether a session id is a copy's staging session (never listed as a session)."""
    return session.endswith(STAGING)


def checked_seqs(events: Iterable[Event], where: str, start: int = 1) -> Iterator[Event]:
    """Yield `events`, checking their seqs run `start`, `start`+1, ...; refuse a gap or repeat.

    Raises:
        LogError: an event holds another seq than its place (a damaged source).
    """
    expected = start
    for event in events:
        if event.seq != expected:
            raise LogError(
                f"{where}: the source is damaged: event {expected} holds seq {event.seq}; "
                "nothing was copied from it (repair it, or copy its readable part with "
                "harness log --json)"
            )
        expected += 1
        yield event


def _where(store: EventStore, session: str) -> str:
    return f"{redact_url(store.url)}#{session}"


def write_new_session(
    store: EventStore, session: str, events: Iterable[Event], *, resume: bool = False
) -> int:
    """Write `events` (seqs 1..n) as a new session of `store`, atomically; return how many.

    Raises:
        LogError: the destination session already holds events (nothing is written), the
            source is damaged, or a write failed (no destination session exists then; the
            message says what is left and how to finish).
    """
    where = _where(store, session)
    if store.last_seq(session):
        raise LogError(
            f"{where}: the session already holds {store.last_seq(session)} events; "
            "choose another session id, or delete that session first"
        )
    if isinstance(store, JsonlStore):
        return _write_file(store, session, events)
    if isinstance(store, RenamingStore):
        return _write_staged(store, session, events, resume=resume)
    return _write_direct(store, session, events)


def _write_file(store: JsonlStore, session: str, events: Iterable[Event]) -> int:
    """Write a hidden temporary file, fsync it, and link it into place (never over a file)."""
    final = store.path_of(session)
    root = store.root.resolve() if store.root.exists() else store.root.absolute()
    if final.is_symlink():
        raise LogError(f"{final}: the destination is a symlink; refusing to write through it")
    if final.absolute().parent.resolve() != root:
        raise LogError(f"{final}: the destination is outside the folder {root}")
    store.root.mkdir(parents=True, exist_ok=True)
    part = store.root / f".{session}.jsonl.part"
    written = 0
    try:
        part.unlink(missing_ok=True)
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            for event in checked_seqs(events, f"{final}"):
                f.write(dump_event(event) + "\n")
                written += 1
            f.flush()
            os.fsync(f.fileno())
        os.link(part, final)  # fails if the session appeared meanwhile: never clobbers
    except FileExistsError:
        raise LogError(
            f"{final}: another writer created the session during the copy; nothing was copied"
        ) from None
    except OSError as exc:
        raise LogError(
            f"{final}: the copy failed after {written} events ({exc.strerror}); the "
            "destination was not created"
        ) from exc
    except LogError as exc:
        raise LogError(
            f"{final}: the copy stopped after {written} events ({exc}); the destination was "
            "not created"
        ) from None
    finally:
        part.unlink(missing_ok=True)
    return written


def _write_staged(
    store: RenamingStore, session: str, events: Iterable[Event], *, resume: bool
) -> int:
    """Append to the staging session in chunks, then rename it in one transaction."""
    assert isinstance(store, EventStore)
    staging = f"{session}{STAGING}"
    start = store.last_seq(staging) if resume else 0
    if not resume:
        store.delete(staging)
    where = _where(store, session)
    written = start
    try:
        chunk: list[EventData] = []
        for event in checked_seqs(events, where):
            if event.seq <= start:
                continue
            chunk.append(event.data)
            if len(chunk) >= CHUNK:
                written += len(store.append(staging, chunk, expected_seq=written))
                chunk.clear()
        if chunk:
            written += len(store.append(staging, chunk, expected_seq=written))
        store.rename_session(staging, session)
    except SeqConflictError as exc:
        raise LogError(
            f"{where}: another writer appended to the staging session {staging} during the "
            f"copy ({exc}); the destination was not created"
        ) from None
    except LogError as exc:
        raise LogError(
            f"{where}: the copy stopped after {written} events and the destination was not "
            f"created ({exc}); {written} events wait in the staging session {staging}: rerun "
            "the copy to start over, or pass --resume to continue"
        ) from exc
    return written


def _write_direct(store: EventStore, session: str, events: Iterable[Event]) -> int:
    """A store that cannot rename: append in chunks, deleting what was written on failure."""
    written = 0
    chunk: list[EventData] = []
    try:
        for event in checked_seqs(events, _where(store, session)):
            chunk.append(event.data)
            if len(chunk) >= CHUNK:
                written += len(store.append(session, chunk, expected_seq=written))
                chunk.clear()
        if chunk:
            written += len(store.append(session, chunk, expected_seq=written))
    except BaseException:
        if written:
            store.delete(session)
        raise
    return written


def copy_session(
    src: EventStore,
    session: str,
    dst: EventStore,
    target: str | None = None,
    *,
    resume: bool = False,
) -> int:
    """Copy one session from `src` into a new session of `dst` (same id unless `target`).

    Returns:
        How many events were copied.

    Raises:
        LogError: the source session does not exist or is damaged, the destination session
            exists, or a read or write failed (no destination session is left).
    """
    if not src.last_seq(session):
        raise LogError(f"{_where(src, session)}: no such session (it holds no events)")
    return write_new_session(dst, target or session, src.read(session), resume=resume)
