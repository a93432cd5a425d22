"""Writing a whole session at once (an import, a copy), atomically on every backend.

The one writer of new sessions: `harness import` and `harness copy` both end here. A write never
leaves a destination that looks complete but is not:

- a file-backed session (a JSONL file, or a session of a JSONL folder) is written beside its
  file, to a hidden temporary file (``.<name>.jsonl.part``) that is fsynced, then moved into
  place in one step: linked when the session must be new (which fails if it appeared
  meanwhile), renamed over the old file when it replaces one;
- a new SQL session goes to a staging session (``<session>.copy-staging``) that one transaction
  renames to the destination; ``resume=True`` continues a staging session a failed copy left,
  and a rerun starts it over. A replaced SQL session is deleted and written inside one
  `transaction`, which rolls back on any failure.

Invariants:
- a write lands in an empty destination session only, unless told to replace it (an existing
  one is refused, never merged);
- all or nothing: a failed write leaves the destination as it was (no session, or the old one);
- the destination holds the same events, byte for byte, seqs included;
- the source's seqs must run 1..n: a damaged source is refused, never renumbered; a missing
  source session is refused, not copied as zero events;
- a JSONL destination is a regular file (a symlink, dangling or not, is refused), and a session
  of a JSONL folder stays inside its folder.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Final, Protocol, runtime_checkable

from compaction.errors import LogError, SeqConflictError
from compaction.events import Event, EventData
from compaction.stores._opening import session_file, where_of
from compaction.stores.file import FileStore
from compaction.stores.jsonl import JsonlStore
from compaction.stores.log_writer import SessionLog
from compaction.stores.protocol import EventStore

CHUNK: Final = 1000
"""Events appended per write."""

STAGING: Final = ".copy-staging"
"""Suffix of the staging session an SQL copy writes before its rename."""

BeforeCommit = Callable[[int], None]
"""Called with the count once every event is written, before the write becomes visible."""


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
    resume: bool = False,
    before_commit: BeforeCommit | None = None,
) -> int:
    """Write `events` (seqs 1..n) as the whole of a session, atomically; return how many.

    Args:
        store: the destination store.
        session: the session id there.
        events: the events, streamed.
        replace: replace a session that already holds events (else it is refused).
        resume: continue the staging session a failed copy into an SQL store left.
        before_commit: called with the count once every event is written, before the write
            becomes visible; raising there (say, because nothing was written) undoes it.

    Raises:
        LogError: the session already holds events and `replace` is false (nothing is
            written), the source is damaged, or a write failed (the destination is left as it
            was; the message says what is left and how to finish).
    """
    where = where_of(store, session)
    checked = checked_seqs(events, where)
    file = session_file(store, session)
    if file is not None:
        return _write_file(store, session, file, checked, replace, before_commit)
    if replace:
        return _write_replacing(store, session, checked, before_commit)
    if last := store.last_seq(session):
        raise _refuse(where, f"{last} events")
    if isinstance(store, RenamingStore):
        return _write_staged(store, session, checked, resume=resume, before_commit=before_commit)
    return _write_replacing(store, session, checked, before_commit)


def _checked_destination(store: EventStore, file: Path) -> None:
    """Refuse a symlink in the destination's place, and a folder session outside its folder."""
    if file.is_symlink():
        raise LogError(f"{file}: the destination is a symlink; refusing to write through it")
    if isinstance(store, JsonlStore):
        root = store.root.resolve()  # a folder not made yet, under a symlink, is inside too
        if file.absolute().parent.resolve() != root:
            raise LogError(f"{file}: the destination is outside the folder {root}")


def _write_file(
    store: EventStore,
    session: str,
    file: Path,
    events: Iterable[Event],
    replace: bool,
    before_commit: BeforeCommit | None,
) -> int:
    """Write a file-backed session beside its file, fsync it, then move it into place."""
    _checked_destination(store, file)
    held = file.stat().st_size if file.exists() else 0
    if not replace and held:
        raise _refuse(where_of(store, session), f"{held} bytes")
    file.parent.mkdir(parents=True, exist_ok=True)
    part = file.with_name(f".{file.name}.part")
    part.unlink(missing_ok=True)
    outcome = "not changed" if held else "not created"
    written = 0
    try:
        with SessionLog(part, sync="batch") as log, log.batch():
            for chunk in _chunks(events):
                written += len(log.append_many(chunk))
        if before_commit is not None:
            before_commit(written)
        if isinstance(store, FileStore | JsonlStore):
            store.release(session)
        if replace or file.exists():
            os.replace(part, file)  # over an empty file, or the session being replaced
        else:
            os.link(part, file)  # fails if the session appeared meanwhile: never clobbers
    except FileExistsError:
        raise LogError(
            f"{file}: another writer created the session during the write; nothing was written"
        ) from None
    except OSError as exc:
        raise LogError(
            f"{file}: the write failed after {written} events ({exc.strerror or exc}); the "
            f"destination was {outcome}"
        ) from exc
    except LogError as exc:
        if type(exc) is not LogError:
            raise  # the caller's own refusal (an empty import), or a damaged source's line
        io = exc.__cause__ if isinstance(exc.__cause__, OSError) else None  # stays an I/O error
        raise LogError(
            f"{file}: the write stopped after {written} events ({exc}); the destination was "
            f"{outcome}"
        ) from io
    finally:
        part.unlink(missing_ok=True)
    return written


def _write_replacing(
    store: EventStore, session: str, events: Iterable[Event], before_commit: BeforeCommit | None
) -> int:
    """Delete the session (if any) and write it anew inside one transaction."""
    with store.transaction(session):
        if store.last_seq(session):
            store.delete(session)
        written = 0
        for chunk in _chunks(events):
            written += len(store.append(session, chunk, expected_seq=written))
        if before_commit is not None:
            before_commit(written)
    return written


def _write_staged(
    store: RenamingStore,
    session: str,
    events: Iterable[Event],
    *,
    resume: bool,
    before_commit: BeforeCommit | None,
) -> int:
    """Append to the staging session in chunks, then rename it in one transaction."""
    assert isinstance(store, EventStore)
    staging = f"{session}{STAGING}"
    start = store.last_seq(staging) if resume else 0
    if not resume:
        store.delete(staging)
    where = where_of(store, session)
    written = start
    try:
        chunk: list[EventData] = []
        for event in events:
            if event.seq <= start:
                continue
            chunk.append(event.data)
            if len(chunk) >= CHUNK:
                written += len(store.append(staging, chunk, expected_seq=written))
                chunk.clear()
        if chunk:
            written += len(store.append(staging, chunk, expected_seq=written))
        if before_commit is not None:
            before_commit(written)
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
    except BaseException:
        with contextlib.suppress(LogError, OSError):
            store.delete(staging)  # refused by the caller (an empty import): nothing is kept
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
        raise LogError(f"{where_of(src, session)}: no such session (it holds no events)")
    return write_new_session(dst, target or session, src.read(session), resume=resume)
