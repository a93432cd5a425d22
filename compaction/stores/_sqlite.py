"""SQLite store: many sessions in one database file, standard library `sqlite3`, WAL mode.

One table, ``events``, keyed by (session, seq); each row keeps the event's canonical JSON line
(`dump_event_bytes`, bound as bytes and stored as TEXT), so what a session holds is byte-for-byte
what its JSONL file would. Rows are read back as those bytes (``CAST(body AS BLOB)``) and parsed
once, straight from them. A new file gets `PAGE_SIZE` pages and a rowid table (an event's line is
often longer than a 4 KiB page, and a ``WITHOUT ROWID`` table moves whole rows as its B-tree
splits); a file made by an earlier version keeps its own layout and reads the same.

Invariants: an append runs in one ``BEGIN IMMEDIATE`` transaction that reads the session's last
seq, checks `expected_seq` and inserts every event, so appends from several processes are
serialized by SQLite's write lock and the primary key forbids a repeated seq; a process killed
mid-transaction leaves nothing (the transaction never committed).

A damaged store is refused, never read as empty: on open the file's header is checked (an
SQLite file, not shorter than the pages it declares unless a ``-wal`` beside it may hold them),
then ``PRAGMA quick_check`` runs, bounded to `QUICK_CHECK_STEPS` virtual-machine steps (a larger
file is checked that far), and an ``events`` table must have this store's columns (another
application's is refused). Every `sqlite3.Error` becomes a `LogError` naming the file; I/O
failures (locked, read-only, cannot open, disk full, I/O error) are chained to an `OSError`, so
the CLI exits 3 for them, and 2 for a damaged file. A file whose folder or file is read-only
opens read-only: it can be read, and a write fails with one clear line.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Final

from compaction.errors import LogError, SeqConflictError
from compaction.events import Event, EventData, dump_event_bytes, make_event
from compaction.stores._paging import PAGE, paged_events
from compaction.stores._sqlite_checks import check_header, fail, has_wal, io_cause
from compaction.stores.log_writer import SyncPolicy
from compaction.stores.protocol import SessionInfo, check_session_id, missing, no_such_store

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS events (
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (session, seq)
)
"""

PAGE_SIZE: Final = 16384
"""Page size of a new database file, in bytes: long lines overflow fewer pages than at 4 KiB,
and a one-event commit still writes little (64 KiB pages cost it more than they save)."""


INSERT: Final = "INSERT INTO events (session, seq, type, body, at) VALUES (?, ?, ?, {body}, ?)"
"""An append's statement; `body` is where the line's parameter goes."""

COLUMNS: Final = ("session", "seq", "type", "body", "at")
"""The ``events`` table's columns, in order: any other table of that name is not this store's."""

OPEN_RETRY: Final = 0.05
"""Seconds between two tries of a store's set-up that SQLite found busy (`SqliteStore._connect`)."""

QUICK_CHECK_STEPS: Final = 20_000_000
"""Virtual-machine steps ``PRAGMA quick_check`` may take on open (about a second, a few hundred
megabytes of file); past them the check stops and the store opens (the header was checked)."""


def _busy(exc: LogError) -> bool:
    """Whether `exc` was raised for SQLite's ``SQLITE_BUSY`` or ``SQLITE_LOCKED`` (its context)."""
    name = str(getattr(exc.__context__, "sqlite_errorname", "") or "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


class SqliteStore:
    """Sessions in one SQLite database file (created with its table on first use).

    Args:
        path: the database file.
        sync: ``"always"``: every commit is durable (``synchronous=FULL``); ``"batch"``:
            ``synchronous=NORMAL``, which in WAL mode may lose the last commits on power loss
            but never corrupts the file.
        timeout: seconds to wait for another writer's lock before failing.

    Raises:
        LogError: the file cannot be opened, is not an SQLite database, is damaged or
            truncated, or holds another application's ``events`` table.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        sync: SyncPolicy = "always",
        timeout: float = 60.0,
        create: bool = True,
    ) -> None:
        self.path = Path(path)
        self._depth = 0
        self._create = create
        self.read_only = False
        """Whether the store was opened read-only (its file or folder cannot be written)."""
        if not create and not self.path.is_file():
            raise no_such_store(str(self.path), "no file there") from missing(str(self.path))
        check_header(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LogError(f"{self.path}: cannot create its folder: {exc.strerror}") from exc
        self._db = self._connect(timeout, sync)
        self._utf8 = self._text_encoding() == "UTF-8"
        """Lines go in and out as their UTF-8 bytes (a file made in UTF-16 takes them as str)."""

    def _text_encoding(self) -> str:
        try:
            row = self._db.execute("PRAGMA encoding").fetchone()
        except sqlite3.Error as exc:
            self._db.close()
            fail(self.path, "cannot read the SQLite store's encoding", exc)
        return str(row[0])

    def _connect(self, timeout: float, sync: SyncPolicy) -> sqlite3.Connection:
        """Open read-write, retrying a busy set-up until `timeout` has passed (`OPEN_RETRY`).

        SQLite answers some lock waits of a store being created by several processes at once
        (the switch to WAL) with ``SQLITE_BUSY`` at once, without its busy handler; the set-up
        is tried again, every `OPEN_RETRY` seconds, until the lock timeout is spent.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._connect_once(timeout, sync)
            except LogError as exc:
                if not _busy(exc) or time.monotonic() + OPEN_RETRY > deadline:
                    raise
            time.sleep(OPEN_RETRY)

    def _connect_once(self, timeout: float, sync: SyncPolicy) -> sqlite3.Connection:
        """Open read-write (WAL, table created); where that is refused, open read-only."""
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._check(db)  # before anything is written to the file
            if not self._create:  # a reader's open: the file as it is, or no store at all
                self._check_table(db)
                return db
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new, empty file only; else ignored
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if sync == 'always' else 'NORMAL'}")
            db.execute(SCHEMA)
            return db
        except BaseException as exc:
            if db is not None:
                db.close()
            if not isinstance(exc, sqlite3.Error):
                raise
            name = str(getattr(exc, "sqlite_errorname", ""))
            if not self.path.is_file() or not name.startswith(
                ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_IOERR")
            ):
                fail(self.path, "cannot open the SQLite store", exc)
        return self._connect_read_only(timeout)

    def _connect_read_only(self, timeout: float) -> sqlite3.Connection:
        uri = self.path.resolve().as_uri()
        last: sqlite3.Error | None = None
        # ``immutable=1`` ignores a WAL: with one beside the file it would read the main file
        # alone, without the WAL's commits (a checkpoint a full disk stopped reads as damage).
        wal = has_wal(self.path)
        for query in ("?mode=ro",) if wal else ("?mode=ro", "?immutable=1"):
            db: sqlite3.Connection | None = None
            try:
                db = sqlite3.connect(
                    uri + query, uri=True, timeout=timeout, isolation_level=None,
                    check_same_thread=False,
                )  # fmt: skip
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                self._check(db)
            except BaseException as exc:
                if db is not None:
                    db.close()
                if not isinstance(exc, sqlite3.Error):
                    raise
                last = exc
                continue
            self.read_only = True
            return db
        assert last is not None
        what = "cannot open the SQLite store, even read-only"
        if wal:
            what += f" (its WAL, {self.path.name}-wal, needs a folder this user can write)"
        fail(self.path, what, last)

    def _check(self, db: sqlite3.Connection) -> None:
        """Refuse a damaged file (bounded quick_check) and another application's table.

        A read-only refusal (``SQLITE_READONLY...``) is raised as the `sqlite3.Error` it is, so
        that `_connect` opens the file read-only instead.
        """
        steps = [0]

        def progress() -> int:
            steps[0] += 1000
            return 1 if steps[0] >= QUICK_CHECK_STEPS else 0

        db.set_progress_handler(progress, 1000)
        try:
            found = [r[0] for r in db.execute("PRAGMA quick_check(5)").fetchall()]
        except sqlite3.OperationalError as exc:
            if str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_READONLY"):
                # A WAL file in a folder this user cannot write (no ``-shm`` can be made): the
                # caller opens it read-only instead.
                raise
            if steps[0] < QUICK_CHECK_STEPS:
                # Locked by another connection, or unreadable: an I/O failure, not damage.
                what = (
                    "cannot check the SQLite store"
                    if io_cause(exc)
                    else "the SQLite store is damaged"
                )
                fail(self.path, what, exc)
            found = ["ok"]  # stopped at the bound: the header was checked, the rest is trusted
        except sqlite3.Error as exc:
            fail(self.path, "the SQLite store is damaged", exc)
        finally:
            db.set_progress_handler(None, 0)
        if found != ["ok"]:
            detail = "; ".join(" ".join(str(f).split()) for f in found)[:300]
            raise LogError(
                f"{self.path}: the SQLite store is damaged (quick_check: {detail}); restore it "
                "from a backup"
            )
        try:
            columns = tuple(r[1] for r in db.execute("PRAGMA table_info(events)"))
        except sqlite3.Error as exc:
            fail(self.path, "cannot read the SQLite store's schema", exc)
        if columns and columns != COLUMNS:
            raise LogError(
                f"{self.path}: its events table is not a Context Harness store's (columns "
                f"{', '.join(columns)}; expected {', '.join(COLUMNS)}); use another file"
            )

    def _check_table(self, db: sqlite3.Connection) -> None:
        """Refuse a file without an ``events`` table when the store may not create one."""
        found = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'events'").fetchone()
        if found is None:
            where = str(self.path)
            raise no_such_store(where, "an SQLite file without an events table") from missing(where)

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
            fail(self._where(session), "cannot lock the store", exc)
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._rollback()
            raise
        self._depth = 0
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            fail(self._where(session), "commit failed, nothing stored", exc)

    def _rollback(self) -> None:
        # A lost connection cannot roll back; SQLite rolls the transaction back itself then.
        with suppress(sqlite3.Error):
            self._db.rollback()

    def _last(self, session: str) -> int:
        try:
            row = self._db.execute(
                "SELECT max(seq) FROM events WHERE session = ?", (session,)
            ).fetchone()
        except sqlite3.Error as exc:
            fail(self._where(session), "read failed", exc)
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
            self._insert(session, events)
        return events

    def _insert(self, session: str, events: list[Event]) -> None:
        """Insert the events' lines in one statement, each line serialized once, as bytes."""
        now = time.time()
        lines = [dump_event_bytes(e) for e in events]
        bodies: Sequence[bytes | str] = lines
        sql = INSERT.format(body="CAST(? AS TEXT)")  # the bytes taken as the TEXT they are
        if not self._utf8:
            sql, bodies = INSERT.format(body="?"), [line.decode() for line in lines]
        rows = [(session, e.seq, e.type, b, now) for e, b in zip(events, bodies, strict=True)]
        try:
            self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            fail(self._where(session), "append failed", exc)

    def read(self, session: str, *, after: int = 0) -> Iterator[Event]:
        """Stream the session's events above seq `after`, a page of rows at a time."""
        check_session_id(session)

        body = "CAST(body AS BLOB)" if self._utf8 else "body"  # the line's bytes, as stored

        def fetch(last: int) -> list[tuple[int, bytes | str]]:
            try:
                return self._db.execute(
                    f"SELECT seq, {body} FROM events WHERE session = ? AND seq > ? "
                    "ORDER BY seq LIMIT ?",
                    (session, last, PAGE),
                ).fetchall()
            except sqlite3.Error as exc:
                fail(self._where(session), "read failed", exc)

        return paged_events(fetch, self._where(session), after=after)

    def last_seq(self, session: str) -> int:
        """Return the session's last seq (0 when it holds none)."""
        return self._last(check_session_id(session))

    def sessions(self) -> list[SessionInfo]:
        """List every session with its event count and the time of its last append."""
        try:
            rows = self._db.execute(
                "SELECT session, max(seq), max(at) FROM events GROUP BY session ORDER BY session"
            ).fetchall()
        except sqlite3.Error as exc:
            fail(self.path, "cannot list the sessions", exc)
        return [SessionInfo(s, int(n), float(at)) for s, n, at in rows]

    def delete(self, session: str) -> bool:
        """Delete a session's events; return whether it had any."""
        with self.transaction(session):
            try:
                cur = self._db.execute("DELETE FROM events WHERE session = ?", (session,))
            except sqlite3.Error as exc:
                fail(self._where(session), "delete failed", exc)
        return cur.rowcount > 0

    def rename_session(self, old: str, new: str) -> None:
        """Give every event of `old` the id `new` in one transaction (`new` must hold none).

        Raises:
            LogError: `new` already holds events (nothing changes), or the update failed.
        """
        check_session_id(old)
        with self.transaction(new):
            if self._last(new):
                raise LogError(f"{self._where(new)}: the session already holds events")
            try:
                self._db.execute("UPDATE events SET session = ? WHERE session = ?", (new, old))
            except sqlite3.Error as exc:
                fail(self._where(new), "rename failed, nothing changed", exc)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
