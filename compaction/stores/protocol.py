"""The `EventStore` protocol: where sessions' events are kept, behind one seam.

A store holds many sessions, each an append-only list of events with seqs 1..n. `Session`, the
CLI and the compactor work on any store; JSONL files (the default), SQLite and PostgreSQL
implement it, and one contract suite (`tests/contracts/store_contract.py`) runs against each.

Invariants (every backend):
- A session's seqs run 1..n with no gaps or repeats; an append gets the next seqs, atomically:
  all of its events are stored or none.
- Optimistic concurrency: an append that names `expected_seq` is stored only if the session's
  last seq is still that; otherwise nothing is stored and `SeqConflictError` gives the current
  seq. Conflicting appends are rejected, never merged.
- `transaction(session)` holds the session for its block: no other writer (thread, process or
  host) appends to it until the block ends, so a read-then-append (compaction) sees the session
  as it writes.
- Reading streams: memory does not grow with the session.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from compaction.errors import ConfigError, LogError
from compaction.events import Event, EventData

SESSION_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""What a session id may be: it names a file in the JSONL store, so no separators or dot-dot."""


def no_such_store(where: str, detail: str) -> LogError:
    """Return the error for a store a reader named that is not there (raise it ``from`` it).

    Chained to a `FileNotFoundError` (`missing`), so the CLI exits 3, as for a missing file.
    """
    return LogError(f"{where}: no such store ({detail}); a read never creates one")


def missing(where: str) -> FileNotFoundError:
    """Return the `FileNotFoundError` a missing store or session is chained to."""
    return FileNotFoundError(errno.ENOENT, "not found", where)


def check_session_id(session: str) -> str:
    """Return `session` if it is a valid session id.

    Raises:
        ConfigError: it is empty, too long, or holds characters other than letters, digits,
            ``.``, ``_`` and ``-`` (or starts with one of the last three).
    """
    if not isinstance(session, str) or not SESSION_ID.fullmatch(session):
        raise ConfigError(
            f"invalid session id {session!r}: use 1-200 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return session


@dataclass(frozen=True)
class SessionInfo:
    """One session of a store, as `EventStore.sessions` lists it."""

    session: str
    """The session id."""
    events: int
    """How many events it holds (its last seq)."""
    last_activity: float | None
    """When its last event was stored (seconds since the epoch), where the store knows."""


@runtime_checkable
class EventStore(Protocol):
    """Where the events of many sessions are kept (see the module's invariants)."""

    @property
    def url(self) -> str:
        """The URL that opens this store again (`compaction.stores.open_store`)."""
        ...

    def append(
        self, session: str, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        """Append events to a session atomically, with the next seqs; return them.

        Raises:
            SeqConflictError: `expected_seq` is given and is not the session's last seq.
            LogError: the store could not be written; nothing was stored.
        """
        ...

    # Not mutated: mutmut's trampoline would add members to this runtime-checkable Protocol,
    # and no store would pass `isinstance(store, EventStore)` (the default is never run).
    def read(self, session: str, *, after: int = 0) -> Iterator[Event]:  # pragma: no mutate
        """Stream a session's events with seq above `after`, in seq order (none if it is new)."""
        ...

    def last_seq(self, session: str) -> int:
        """Return the session's last seq (0 when it holds no event)."""
        ...

    def transaction(self, session: str) -> AbstractContextManager[None]:
        """Hold the session for a read-then-append: no other writer appends until it ends."""
        ...

    def sessions(self) -> list[SessionInfo]:
        """List every session that holds at least one event, by id."""
        ...

    def delete(self, session: str) -> bool:
        """Delete a session and its events; return whether it existed."""
        ...

    def close(self) -> None:
        """Release the store's files or connections."""
        ...
