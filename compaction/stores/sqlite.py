"""SQLite store: many sessions in one database file, standard library `sqlite3`, WAL mode.

One table, ``events``, keyed by (session, seq); each row keeps the event's canonical JSON line
(`dump_event`), so what a session holds is byte-for-byte what its JSONL file would.

Invariants: an append runs in one ``BEGIN IMMEDIATE`` transaction that reads the session's last
seq, checks `expected_seq` and inserts every event, so appends from several processes are
serialized by SQLite's write lock and the primary key forbids a repeated seq; a process killed
mid-transaction leaves nothing (the transaction never committed).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from compaction.errors import LogError, SeqConflictError
from compaction.events import Event, EventData, dump_event, make_event
from compaction.stores.log_writer import SyncPolicy
from compaction.stores.paging import PAGE, paged_events
from compaction.stores.protocol import SessionInfo, check_session_id

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS events (
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (session, seq)
) WITHOUT ROWID
"""


class SqliteStore:
    """Sessions in one SQLite database file (created with its table on first use).

    Args:
        path: the database file.
        sync: ``"always"``: every commit is durable (``synchronous=FULL``); ``"batch"``:
            ``synchronous=NORMAL``, which in WAL mode may lose the last commits on power loss
            but never corrupts the file.
        timeout: seconds to wait for another writer's lock before failing.
    """

    def __init__(
        self, path: Path | str, *, sync: SyncPolicy = "always", timeout: float = 60.0
    ) -> None:
        self.path = Path(path)
        self._depth = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if sync == 'always' else 'NORMAL'}")
            self._db.execute(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise LogError(f"{self.path}: cannot open the SQLite store: {exc}") from None

    @property
    def url(self) -> str:
        """``sqlite:///`` and the database's absolute path."""
        return f"sqlite:///{self.path.resolve()}"

    def _where(self, session: str) -> str:
        return f"{self.path}#{session}"

    @contextmanager
    def transaction(self, session: str) -> Iterator[None]:
        """Hold SQLite's write lock (for the whole file) until the block ends; commit then."""
        check_session_id(session)
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise LogError(f"{self._where(session)}: cannot lock the store: {exc}") from None
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._db.rollback()
            raise
        self._depth = 0
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._db.rollback()
            raise LogError(
                f"{self._where(session)}: commit failed, nothing stored: {exc}"
            ) from None

    def _last(self, session: str) -> int:
        row = self._db.execute(
            "SELECT max(seq) FROM events WHERE session = ?", (session,)
        ).fetchone()
        return int(row[0] or 0)

    def append(
        self, session: str, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        """Append events in one transaction, after checking the last seq."""
        with self.transaction(session):
            last = self._last(session)
            if expected_seq is not None and expected_seq != last:
                raise SeqConflictError(self._where(session), expected_seq, last)
            events = [make_event(last + 1 + i, d) for i, d in enumerate(items)]
            now = time.time()
            try:
                self._db.executemany(
                    "INSERT INTO events (session, seq, type, body, at) VALUES (?, ?, ?, ?, ?)",
                    [(session, e.seq, e.type, dump_event(e), now) for e in events],
                )
            except sqlite3.Error as exc:
                raise LogError(f"{self._where(session)}: append failed: {exc}") from None
        return events

    def read(self, session: str, *, after: int = 0) -> Iterator[Event]:
        """Stream the session's events above seq `after`, a page of rows at a time."""
        check_session_id(session)

        def fetch(last: int) -> list[tuple[int, str]]:
            return self._db.execute(
                "SELECT seq, body FROM events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?",
                (session, last, PAGE),
            ).fetchall()

        return paged_events(fetch, self._where(session), after=after)

    def last_seq(self, session: str) -> int:
        """Return the session's last seq (0 when it holds none)."""
        return self._last(check_session_id(session))

    def sessions(self) -> list[SessionInfo]:
        """List every session with its event count and the time of its last append."""
        rows = self._db.execute(
            "SELECT session, max(seq), max(at) FROM events GROUP BY session ORDER BY session"
        ).fetchall()
        return [SessionInfo(s, int(n), float(at)) for s, n, at in rows]

    def delete(self, session: str) -> bool:
        """Delete a session's events; return whether it had any."""
        with self.transaction(session):
            cur = self._db.execute("DELETE FROM events WHERE session = ?", (session,))
        return cur.rowcount > 0

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
