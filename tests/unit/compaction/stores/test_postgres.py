"""Contracts of the PostgreSQL store, pinned by mutation (`scripts/mutate --group postgres`).

Each test states behaviour of `compaction.stores._postgres` the store contract left untested:
the seqs an append gives and the rows it writes, a conflict's two seqs, a failed transaction
or read (its message, the URL without its password, nothing kept), a rename onto a session
holding events, what `delete` and `sessions` return, the lines' bytes under a client asking
for another encoding, reads in binary results. They need a server (the `postgres_url`
fixture); with HARNESS_REQUIRE_POSTGRES=1 they fail rather than skip without one.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from compaction import LogError, Message
from compaction.errors import ConfigError, LogFormatError, SeqConflictError
from compaction.events import dump_event
from compaction.stores._postgres import TABLE, PostgresStore

psycopg = pytest.importorskip("psycopg")

PASSWORD = "pg-Secret-4711"


def _msgs(*texts: str) -> list[Message]:
    return [Message(role="user", content=t) for t in texts]


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    """A store on an empty events table, dropped again after the test.

    A damaged row left on the shared server would be refused by the next test that lists every
    session.
    """
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute(f"DROP TABLE IF EXISTS {TABLE}")
    s = PostgresStore(postgres_url)
    try:
        yield s
    finally:
        s.close()
        with psycopg.connect(postgres_url, autocommit=True) as db:
            db.execute(f"DROP TABLE IF EXISTS {TABLE}")


def _rows(url: str, session: str) -> list[tuple[int, str, str]]:
    with psycopg.connect(url, autocommit=True) as db:
        rows = db.execute(
            f"SELECT seq, type, body FROM {TABLE} WHERE session = %s ORDER BY seq", (session,)
        ).fetchall()
    return [(int(seq), str(t), str(body)) for seq, t, body in rows]


def test_appends_number_on_from_the_last_seq_and_store_each_events_line(
    store: PostgresStore, postgres_url: str
) -> None:
    """Seqs run 1..n across appends; each row holds the event's type and canonical line."""
    first = store.append("a", _msgs("one", "two"))
    second = store.append("a", _msgs("three"), expected_seq=2)
    events = [*first, *second]
    assert [e.seq for e in events] == [1, 2, 3]
    assert _rows(postgres_url, "a") == [(e.seq, e.type, dump_event(e)) for e in events]
    assert [e.seq for e in store.read("a")] == [1, 2, 3]
    assert [e.seq for e in store.read("a", after=1)] == [2, 3]
    assert (store.last_seq("a"), store.last_seq("other")) == (3, 0)


def test_a_stale_expected_seq_names_both_seqs_and_writes_nothing(
    store: PostgresStore, postgres_url: str
) -> None:
    """The conflict says which seq the caller expected and which is last; no row is added."""
    store.append("a", _msgs("one", "two"))
    with pytest.raises(SeqConflictError) as info:
        store.append("a", _msgs("late"), expected_seq=1)
    assert (info.value.expected, info.value.current) == (1, 2)
    assert info.value.where.endswith("#a")
    assert len(_rows(postgres_url, "a")) == 2
    assert store.append("a", _msgs("new"), expected_seq=2)[0].seq == 3


def test_a_failed_transaction_keeps_nothing_and_says_so(
    store: PostgresStore, postgres_url: str
) -> None:
    """A statement failing inside a transaction rolls back its appends; the message names it."""
    store.append("a", _msgs("kept"))

    def fail_inside() -> None:
        with store.transaction("a"):
            store.append("a", _msgs("undone"))
            store._db.execute("SELECT 1 / 0")

    with pytest.raises(LogError) as info:
        fail_inside()
    text = str(info.value)
    assert text.startswith(f"{store.url}#a: transaction failed, nothing stored: ")
    assert "division by zero" in text
    assert [seq for seq, _, _ in _rows(postgres_url, "a")] == [1]
    assert store.append("a", _msgs("after"))[0].seq == 2


def test_nested_transactions_join_one(store: PostgresStore, postgres_url: str) -> None:
    """Appends in nested blocks commit together when the outermost block ends."""
    with store.transaction("a"):
        store.append("a", _msgs("one"))
        with store.transaction("a"):
            store.append("a", _msgs("two"))
        assert _rows(postgres_url, "a") == []  # another connection sees nothing yet
    assert [seq for seq, _, _ in _rows(postgres_url, "a")] == [1, 2]


def test_a_failed_read_names_the_session_and_hides_the_password(postgres_url: str) -> None:
    """A read that the server refuses is one LogError naming the session, without the password."""
    url = postgres_url.replace("postgres@", f"postgres:{PASSWORD}@", 1)
    s = PostgresStore(url)
    try:
        s.append("r", _msgs("one"))
        with psycopg.connect(postgres_url, autocommit=True) as db:
            db.execute(f"DROP TABLE {TABLE}")
        with pytest.raises(LogError) as info:
            list(s.read("r"))
        text = str(info.value)
        assert text.startswith(f"{s.url}#r: read failed: ")
        assert TABLE in text
        assert PASSWORD not in text
        assert PASSWORD not in s.url
        assert s.url == url.replace(PASSWORD, "***")
    finally:
        s.close()


def test_a_rename_onto_a_session_holding_events_changes_nothing(
    store: PostgresStore, postgres_url: str
) -> None:
    """The rename is refused, naming the destination; both sessions keep their events."""
    store.append("old", _msgs("o1", "o2"))
    store.append("new", _msgs("n1"))
    with pytest.raises(LogError, match=r"#new: the session already holds events"):
        store.rename_session("old", "new")
    assert (len(_rows(postgres_url, "old")), len(_rows(postgres_url, "new"))) == (2, 1)
    store.delete("new")
    store.rename_session("old", "new")
    assert (len(_rows(postgres_url, "old")), len(_rows(postgres_url, "new"))) == (0, 2)
    assert [e.seq for e in store.read("new")] == [1, 2]


def test_a_rename_checks_both_ids(store: PostgresStore) -> None:
    """An invalid id on either side is refused before anything runs."""
    with pytest.raises(ConfigError, match="invalid session id"):
        store.rename_session("../x", "y")
    with pytest.raises(ConfigError, match="invalid session id"):
        store.rename_session("x", "../y")


def test_delete_says_whether_the_session_held_events(store: PostgresStore) -> None:
    """True once for a session with events, then False; other sessions stay."""
    store.append("a", _msgs("x"))
    store.append("b", _msgs("y"))
    assert store.delete("a") is True
    assert store.delete("a") is False
    assert store.last_seq("b") == 1


def test_sessions_list_each_session_its_count_and_last_append_time(store: PostgresStore) -> None:
    """Sorted by id, with the last seq and the (float) time of the last append."""
    before = time.time()
    store.append("b", _msgs("1", "2", "3"))
    store.append("a", _msgs("1"))
    after = time.time()
    infos = store.sessions()
    assert [(i.session, i.events) for i in infos] == [("a", 1), ("b", 3)]
    for info in infos:
        assert isinstance(info.last_activity, float)
        assert before - 5 <= info.last_activity <= after + 5


def test_ids_are_checked_on_every_entry(store: PostgresStore) -> None:
    """read, last_seq, append, delete and transaction refuse an invalid id."""
    for call in (
        lambda: list(store.read("a b")),
        lambda: store.last_seq("a b"),
        lambda: store.append("a b", _msgs("x")),
        lambda: store.delete("a b"),
    ):
        with pytest.raises(ConfigError, match="invalid session id 'a b'"):
            call()


def test_a_driver_error_quoting_the_password_is_redacted(postgres_url: str) -> None:
    """The server's message quotes a value holding the password: the store's error hides it."""
    url = postgres_url.replace("postgres@", f"postgres:{PASSWORD}@", 1)
    s = PostgresStore(url)

    def quote_it() -> None:
        with s.transaction("a"):
            s._db.execute(f"SELECT '{PASSWORD}'::int")

    try:
        with pytest.raises(LogError) as info:
            quote_it()
        text = str(info.value)
        assert "invalid input syntax for type integer" in text
        assert PASSWORD not in text
        assert "***" in text
    finally:
        s.close()


def test_a_row_that_is_not_an_event_names_the_session_and_seq(
    store: PostgresStore, postgres_url: str
) -> None:
    """A damaged body is refused naming the store, the session and the row's seq."""
    store.append("a", _msgs("fine"))
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute(
            f"INSERT INTO {TABLE} (session, seq, type, body) VALUES ('a', 2, 'message', 'nope')"
        )
    with pytest.raises(LogFormatError) as info:
        list(store.read("a"))
    assert str(info.value).startswith(f"{store.url}#a:2: not JSON")


def test_without_psycopg_the_store_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """No driver installed: one ConfigError saying which extra to install."""
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(ConfigError) as info:
        PostgresStore("postgresql://u@127.0.0.1:9/x")
    assert str(info.value) == (
        "the PostgreSQL store needs psycopg 3: pip install 'context-harness[postgres]'"
    )


@pytest.mark.parametrize(("given", "used"), [(None, "10"), (3, "3")])
def test_the_connect_timeout_reaches_libpq(postgres_url: str, given: int | None, used: str) -> None:
    """The store waits 10 s for the server by default, or what the caller says."""
    if given is None:
        s = PostgresStore(postgres_url)
    else:
        s = PostgresStore(postgres_url, connect_timeout=given)
    try:
        assert s._db.info.get_parameters()["connect_timeout"] == used
    finally:
        s.close()


def test_an_append_after_a_read_is_committed_for_other_hosts(
    store: PostgresStore, postgres_url: str
) -> None:
    """Reads leave no transaction open: an append that follows is seen by another connection."""
    store.append("a", _msgs("one"))
    assert store.last_seq("a") == 1
    assert [e.seq for e in store.read("a")] == [1]
    assert [i.session for i in store.sessions()] == ["a"]
    store.append("a", _msgs("two"))
    assert [seq for seq, _, _ in _rows(postgres_url, "a")] == [1, 2]
    assert store.delete("a") is True
    assert _rows(postgres_url, "a") == []


def test_an_unreachable_server_is_refused_with_libpqs_reason() -> None:
    """The refusal names the URL without its password, then what libpq said."""
    with pytest.raises(LogError) as info:
        PostgresStore(f"postgresql://u:{PASSWORD}@127.0.0.1:9/x", connect_timeout=2)
    text = str(info.value)
    assert text.startswith(
        "postgresql://u:***@127.0.0.1:9/x: cannot open the PostgreSQL store: connection failed: "
        'connection to server at "127.0.0.1", port 9 failed: Connection refused'
    )
    assert PASSWORD not in text


TEXT = "café, €5, 日本語, 🙂"
"""Characters whose UTF-8 bytes a LATIN1 client would take for other characters."""


def test_lines_are_utf8_whatever_the_clients_encoding(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client environment asking for LATIN1 changes no stored byte and no event read back.

    The store writes COPY rows and reads lines as UTF-8 bytes, so it sets the connection's
    encoding itself; libpq would otherwise take PGCLIENTENCODING (or the server's default).
    """
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute(f"DROP TABLE IF EXISTS {TABLE}")
    monkeypatch.setenv("PGCLIENTENCODING", "LATIN1")
    s = PostgresStore(postgres_url)
    try:
        events = s.append("u", _msgs(TEXT))
        assert [e.data for e in s.read("u")] == [e.data for e in events]
        monkeypatch.delenv("PGCLIENTENCODING")
        assert _rows(postgres_url, "u") == [(1, "message", dump_event(events[0]))]
    finally:
        s.close()
        monkeypatch.delenv("PGCLIENTENCODING", raising=False)
        with psycopg.connect(postgres_url, autocommit=True) as db:
            db.execute(f"DROP TABLE IF EXISTS {TABLE}")


class _ResultFormats:
    """Stands in for the store's connection, noting each result's column formats (1: binary)."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.formats: list[list[int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        cur = self.db.execute(*args, **kwargs)
        result = cur.pgresult
        self.formats.append([result.fformat(i) for i in range(result.nfields)])
        return cur


def test_reads_come_back_in_binary_results(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page's lines arrive as their bytes (binary format), not as bytea's hex text.

    Text results would give the same events, at twice the bytes on the wire and a hex decoding
    of every line in the client: the cost the binary read was written to save.
    """
    events = store.append("a", _msgs(TEXT, "two"))
    spy = _ResultFormats(store._db)
    monkeypatch.setattr(store, "_db", spy)
    assert [e.data for e in store.read("a")] == [e.data for e in events]
    assert spy.formats == [[1, 1]]
