"""PostgreSQL store: the same events table on a server, for a fleet of hosts (psycopg 3).

Install with the ``postgres`` extra (``pip install 'context-harness[postgres]'``). One table,
``harness_events``, keyed by (session, seq), each row holding the event's canonical JSON line.

Invariants: an append runs in one transaction that takes a transaction-scoped advisory lock on
the session, reads its last seq, checks `expected_seq` and inserts every event, so writers on
any number of hosts are serialized per session (sessions do not block each other) and the
primary key forbids a repeated seq; a client killed mid-transaction leaves nothing, since the
server rolls back a transaction whose connection dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from compaction.errors import ConfigError, LogError, SeqConflictError
from compaction.events import Event, EventData, dump_event_bytes, make_event
from compaction.secrets import passwords_in, redact, redact_url
from compaction.stores._paging import PAGE, paged_events
from compaction.stores.protocol import SessionInfo, check_session_id

if TYPE_CHECKING:
    import psycopg

TABLE: Final = "harness_events"

SCHEMA: Final = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    session text NOT NULL,
    seq bigint NOT NULL,
    type text NOT NULL,
    body text NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (session, seq)
)
"""

SCHEMA_LOCK: Final = 0x48415245
"""Advisory lock key held while the table is created, so two first users never race."""

SESSION_LOCK: Final = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
"""Serializes the writers of one session until their transaction ends."""


READ_PAGE: Final = (
    f"SELECT seq, convert_to(body, 'UTF8') FROM {TABLE} WHERE session = %s AND seq > %s "
    "ORDER BY seq LIMIT %s"
)
"""One page of a read, each line as its UTF-8 bytes (in binary results: no text decoded)."""

_COPY_ESCAPES: Final = ((b"\\", b"\\\\"), (b"\n", b"\\n"), (b"\r", b"\\r"), (b"\t", b"\\t"))
"""What COPY's text format escapes in a field (a backslash first): a JSON line holds no raw
line break or tab, but the rule is kept whole."""


def copy_row(session: str, event: Event) -> bytes:
    """Return the event's row in COPY's text format: its line serialized once, as UTF-8 bytes.

    `session` is a checked id and the type a slash name: neither holds a byte COPY escapes.
    """
    body = dump_event_bytes(event)
    for raw, escaped in _COPY_ESCAPES:
        if raw in body:
            body = body.replace(raw, escaped)
    return b"%s\t%d\t%s\t%s\n" % (session.encode(), event.seq, event.type.encode(), body)


def _psycopg() -> ModuleType:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(
            "the PostgreSQL store needs psycopg 3: pip install 'context-harness[postgres]'"
        ) from None
    return psycopg


class PostgresStore:
    """Sessions in a PostgreSQL database.

    Args:
        url: a libpq connection URL, e.g. ``postgresql://user@localhost:5432/db``.
        connect_timeout: seconds to wait for the server.

    Raises:
        ConfigError: psycopg is not installed.
        LogError: the server cannot be reached or the table cannot be created.
    """

    def __init__(self, url: str, *, connect_timeout: int = 10) -> None:
        pg = _psycopg()
        self._url = url
        self._error: type[Exception] = pg.Error
        try:
            self._db: psycopg.Connection[Any] = pg.connect(
                url, autocommit=True, connect_timeout=connect_timeout, client_encoding="UTF8"
            )
            with self._db.transaction():
                self._db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                self._db.execute(SCHEMA)
        except pg.Error as exc:
            raise LogError(
                f"{redact_url(url)}: cannot open the PostgreSQL store: {self._say(exc)}"
            ) from None

    @property
    def url(self) -> str:
        """The connection URL, password removed."""
        return redact_url(self._url)

    def _say(self, exc: BaseException) -> str:
        """Return a driver error's text with the URL's passwords removed (libpq quotes it)."""
        return redact(redact_url(str(exc)), passwords_in(self._url))

    def _where(self, session: str) -> str:
        return f"{self.url}#{session}"

    @contextmanager
    def transaction(self, session: str) -> Iterator[None]:
        """Lock the session (an advisory lock) in one transaction, committed when the block ends.

        Other sessions stay free; nested calls (and appends inside) join the same transaction.
        """
        check_session_id(session)
        try:
            with self._db.transaction():
                self._db.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (session,)
                )
                yield
        except self._error as exc:
            raise LogError(
                f"{self._where(session)}: transaction failed, nothing stored: {self._say(exc)}"
            ) from None

    def _last(self, session: str) -> int:
        row = self._db.execute(
            f"SELECT coalesce(max(seq), 0) FROM {TABLE} WHERE session = %s", (session,)
        ).fetchone()
        return int(row[0]) if row else 0

    def append(
        self, session: str, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        """Append events in one transaction under the session's lock, after checking the seq."""
        with self.transaction(session):
            last = self._last(session)
            if expected_seq is not None and expected_seq != last:
                raise SeqConflictError(self._where(session), expected_seq, last)
            events = [make_event(last + 1 + i, d) for i, d in enumerate(items)]
            with (
                self._db.cursor() as cur,
                cur.copy(f"COPY {TABLE} (session, seq, type, body) FROM STDIN") as copy,
            ):
                copy.write(b"".join(copy_row(session, e) for e in events))
        return events

    def read(self, session: str, *, after: int = 0) -> Iterator[Event]:
        """Stream the session's events above seq `after`, a page of rows at a time."""
        check_session_id(session)

        def fetch(last: int) -> list[tuple[int, bytes]]:
            try:
                rows: list[tuple[int, bytes]] = self._db.execute(
                    READ_PAGE, (session, last, PAGE), binary=True
                ).fetchall()
            except self._error as exc:
                raise LogError(f"{self._where(session)}: read failed: {self._say(exc)}") from None
            return rows

        return paged_events(fetch, self._where(session), after=after)

    def last_seq(self, session: str) -> int:
        """Return the session's last seq (0 when it holds none)."""
        return self._last(check_session_id(session))

    def sessions(self) -> list[SessionInfo]:
        """List every session with its event count and the time of its last append."""
        rows = self._db.execute(
            f"SELECT session, max(seq), extract(epoch FROM max(at)) FROM {TABLE} "
            "GROUP BY session ORDER BY session"
        ).fetchall()
        return [SessionInfo(s, int(n), float(at)) for s, n, at in rows]

    def delete(self, session: str) -> bool:
        """Delete a session's events; return whether it had any."""
        with self.transaction(session):
            cur = self._db.execute(f"DELETE FROM {TABLE} WHERE session = %s", (session,))
        return cur.rowcount > 0

    def rename_session(self, old: str, new: str) -> None:
        """Give every event of `old` the id `new` in one transaction (`new` must hold none).

        Raises:
            LogError: `new` already holds events (nothing changes), or the update failed.
        """
        check_session_id(old)
        with self.transaction(new):
            self._db.execute(SESSION_LOCK, (old,))
            if self._last(new):
                raise LogError(f"{self._where(new)}: the session already holds events")
            self._db.execute(f"UPDATE {TABLE} SET session = %s WHERE session = %s", (new, old))

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


def _redact(url: str) -> str:
    """Return the URL with any password replaced by ``***`` (`redact_url`)."""
    return redact_url(url)
