"""What the SQL stores write and read: one row per event, its canonical line, one transaction.

Each row's body is byte-for-byte the line the JSONL log holds for the same event (stored as
text, whatever bytes it holds); a batch is one transaction (a failure on its fifth row keeps
nothing); each line is serialized once; a damaged row is refused naming the store, the session
and the row's seq; a file made by an earlier version (``WITHOUT ROWID``, 4 KiB pages) or in
UTF-16 reads and appends the same. The PostgreSQL half needs a server (`postgres_url`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction import LogError, Message, Session
from compaction.errors import LogFormatError
from compaction.events import Event, dump_event, dump_event_bytes, make_event
from compaction.stores import SqliteStore
from compaction.stores import _postgres as postgres
from compaction.stores import _sqlite as sqlite
from compaction.stores._postgres import TABLE, PostgresStore

TEXTS = (
    "plain",
    'quotes " and a backslash \\ and \\n written out',
    "a line break\nand a tab\tand a return\r",
    "accents é, 漢字, an emoji 🙂, a line separator \u2028, a NUL \x00",
    "\\.",  # the end-of-data marker of PostgreSQL's COPY, alone
    "x" * 40_000,  # longer than a page
)

OLD_SCHEMA = """
CREATE TABLE events (
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (session, seq)
) WITHOUT ROWID
"""
"""The table an earlier version created."""


def _msgs(*texts: str) -> list[Message]:
    return [Message(role="user", content=t) for t in texts]


def _jsonl_lines(tmp_path: Path, texts: tuple[str, ...]) -> list[bytes]:
    """The lines a JSONL log holds for the same messages, read from its file."""
    with Session(tmp_path / "same.jsonl") as session:
        session.append_many(_msgs(*texts))
    return (tmp_path / "same.jsonl").read_bytes().splitlines()


def _sqlite_rows(path: Path, session: str) -> list[tuple[int, str, bytes]]:
    """Each row's seq, the type of its body as SQLite stores it, and the body's bytes."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT seq, typeof(body), CAST(body AS BLOB) FROM events WHERE session = ? "
            "ORDER BY seq",
            (session,),
        ).fetchall()
    db.close()
    return [(int(s), str(t), bytes(b)) for s, t, b in rows]


def _count_dumps(monkeypatch: pytest.MonkeyPatch, module: object) -> list[int]:
    """Count the calls of `dump_event_bytes` made through `module`."""
    calls: list[int] = []

    def counting(event: Event) -> bytes:
        calls.append(event.seq)
        return dump_event_bytes(event)

    monkeypatch.setattr(module, "dump_event_bytes", counting)
    return calls


class TestSqliteRows:
    def test_each_row_is_the_jsonl_line_stored_as_text(self, tmp_path: Path) -> None:
        """A row's body is the JSONL file's line for the event, byte for byte, typed text."""
        store = SqliteStore(tmp_path / "s.db")
        store.append("a", _msgs(*TEXTS[:3]))
        store.append("a", _msgs(*TEXTS[3:]))
        store.close()
        rows = _sqlite_rows(tmp_path / "s.db", "a")
        assert [seq for seq, _, _ in rows] == list(range(1, len(TEXTS) + 1))
        assert {kind for _, kind, _ in rows} == {"text"}
        assert [body for _, _, body in rows] == _jsonl_lines(tmp_path, TEXTS)

    def test_reads_give_back_the_events_appended(self, tmp_path: Path) -> None:
        """Every event reads back equal to the one appended, odd characters and all."""
        store = SqliteStore(tmp_path / "s.db")
        appended = store.append("a", _msgs(*TEXTS))
        assert list(store.read("a")) == appended
        assert list(store.read("a", after=4)) == appended[4:]
        store.close()

    def test_each_line_is_serialized_once(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An append serializes each event once (its bytes are what the row stores)."""
        calls = _count_dumps(monkeypatch, sqlite)
        store = SqliteStore(tmp_path / "s.db")
        store.append("a", _msgs("one", "two", "three"))
        store.close()
        assert calls == [1, 2, 3]

    def test_a_batch_failing_on_its_fifth_row_keeps_nothing(self, tmp_path: Path) -> None:
        """A row refused mid-batch (a trigger here) stores none of the batch's events."""
        store = SqliteStore(tmp_path / "s.db")
        store.append("a", _msgs("kept"))
        with sqlite3.connect(tmp_path / "s.db") as db:
            db.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.seq = 5 "
                "BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        db.close()
        with pytest.raises(LogError, match=r"#a: append failed: refused"):
            store.append("a", _msgs(*"abcdefgh"))
        assert store.last_seq("a") == 1
        assert [e.seq for e in store.read("a")] == [1]
        store.close()

    def test_a_new_file_has_large_pages_and_a_rowid_table(self, tmp_path: Path) -> None:
        """A new store's file gets `PAGE_SIZE` pages and an events table with rowids."""
        SqliteStore(tmp_path / "s.db").close()
        with sqlite3.connect(tmp_path / "s.db") as db:
            size = db.execute("PRAGMA page_size").fetchone()[0]
            sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
        db.close()
        assert size == sqlite.PAGE_SIZE == 16384
        assert "WITHOUT ROWID" not in sql.upper()


def _old_file(path: Path, *, encoding: str = "UTF-8") -> None:
    """Make a store file as an earlier version did: 4 KiB pages, WITHOUT ROWID, str rows."""
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA encoding = '{encoding}'")
    db.execute("PRAGMA page_size = 4096")
    db.execute(OLD_SCHEMA)
    line = dump_event(make_event(1, Message(role="user", content="written before é")))
    db.execute("INSERT INTO events VALUES ('a', 1, 'message', ?, 1.0)", (line,))
    db.commit()
    db.close()


class TestSqliteOlderFiles:
    @pytest.mark.parametrize("encoding", ["UTF-8", "UTF-16le"])
    def test_an_earlier_files_layout_and_encoding_read_and_append_the_same(
        self, tmp_path: Path, encoding: str
    ) -> None:
        """Its rows read, appends go on from its last seq, each stored as the JSONL line."""
        path = tmp_path / "old.db"
        _old_file(path, encoding=encoding)
        store = SqliteStore(path)
        [first] = store.read("a")
        assert first.data == Message(role="user", content="written before é")
        added = store.append("a", _msgs(*TEXTS), expected_seq=1)
        assert list(store.read("a")) == [first, *added]
        store.close()
        rows = _sqlite_rows(path, "a")[1:]
        assert {kind for _, kind, _ in rows} == {"text"}
        if encoding == "UTF-8":  # a UTF-16 file holds UTF-16 text: its lines read back above
            assert [b for _, _, b in rows] == [dump_event_bytes(e) for e in added]
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA page_size").fetchone()[0] == 4096
        db.close()


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"nope", "not JSON"),
        (b'{"v":1,"seq":2,"type":"message","data":{"role":"user","content":"\xff"}}', "not JSON"),
        (b'{"v":1,"seq":2,"type":"message","data":{"role":"nobody"}}', "invalid event"),
        (b"", "not JSON"),
    ],
    ids=["not-json", "not-utf8", "not-an-event", "empty"],
)
def test_a_damaged_sqlite_row_is_refused_naming_store_session_and_seq(
    tmp_path: Path, body: bytes, reason: str
) -> None:
    """A row that is not an event is refused, never skipped: the store, session and seq."""
    store = SqliteStore(tmp_path / "s.db")
    store.append("a", _msgs("fine"))
    with sqlite3.connect(tmp_path / "s.db") as db:
        db.execute("INSERT INTO events VALUES ('a', 2, 'message', CAST(? AS TEXT), 1.0)", (body,))
    db.close()
    with pytest.raises(LogFormatError) as info:
        list(store.read("a"))
    assert str(info.value).startswith(f"{tmp_path / 's.db'}#a:2: {reason}")
    store.close()


@pytest.fixture
def pg(postgres_url: str) -> Iterator[PostgresStore]:
    """A PostgreSQL store on an empty events table, dropped again after the test.

    The server is shared by the session's tests: a damaged row left behind would be refused by
    the next test that lists every session.
    """
    _sql(postgres_url, f"DROP TABLE IF EXISTS {TABLE}")
    store = PostgresStore(postgres_url)
    try:
        yield store
    finally:
        store.close()
        _sql(postgres_url, f"DROP TABLE IF EXISTS {TABLE}")


def _sql(url: str, sql: str, params: tuple[str, ...] = ()) -> list[tuple[object, ...]]:
    """Run one statement on its own connection; return its rows (none for a command)."""
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(url, autocommit=True) as db:
        cur = db.execute(sql, params)
        return list(cur.fetchall()) if cur.description else []


class TestPostgresRows:
    def test_each_row_is_the_jsonl_line(
        self, pg: PostgresStore, postgres_url: str, tmp_path: Path
    ) -> None:
        """A row's body is the JSONL file's line for the event, byte for byte."""
        pg.append("a", _msgs(*TEXTS[:3]))
        pg.append("a", _msgs(*TEXTS[3:]))
        rows = _sql(postgres_url, f"SELECT body FROM {TABLE} WHERE session = 'a' ORDER BY seq")
        assert [str(body).encode() for (body,) in rows] == _jsonl_lines(tmp_path, TEXTS)

    def test_reads_give_back_the_events_appended(self, pg: PostgresStore) -> None:
        """Every event reads back equal to the one appended, odd characters and all."""
        appended = pg.append("a", _msgs(*TEXTS))
        assert list(pg.read("a")) == appended
        assert list(pg.read("a", after=4)) == appended[4:]

    def test_each_line_is_serialized_once(
        self, pg: PostgresStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An append serializes each event once (its bytes are what the row stores)."""
        calls = _count_dumps(monkeypatch, postgres)
        pg.append("a", _msgs("one", "two", "three"))
        assert calls == [1, 2, 3]

    def test_a_batch_failing_on_its_fifth_row_keeps_nothing(
        self, pg: PostgresStore, postgres_url: str
    ) -> None:
        """A row refused mid-batch (a trigger here) stores none of the batch's events."""
        pg.append("a", _msgs("kept"))
        _sql(
            postgres_url,
            "CREATE OR REPLACE FUNCTION harness_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN IF NEW.seq = 5 THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$",
        )
        _sql(
            postgres_url,
            f"CREATE TRIGGER refuse BEFORE INSERT ON {TABLE} "
            "FOR EACH ROW EXECUTE FUNCTION harness_refuse()",
        )
        try:
            with pytest.raises(LogError, match=r"#a: transaction failed, nothing stored: refused"):
                pg.append("a", _msgs(*"abcdefgh"))
            assert pg.last_seq("a") == 1
            assert [e.seq for e in pg.read("a")] == [1]
        finally:
            _sql(postgres_url, f"DROP TRIGGER refuse ON {TABLE}")

    @pytest.mark.parametrize(
        ("body", "reason"),
        [("nope", "not JSON"), ('{"v":1,"seq":2,"type":"message","data":{}}', "invalid event")],
        ids=["not-json", "not-an-event"],
    )
    def test_a_damaged_row_is_refused_naming_store_session_and_seq(
        self, pg: PostgresStore, postgres_url: str, body: str, reason: str
    ) -> None:
        """A row that is not an event is refused, never skipped: the store, session and seq."""
        pg.append("a", _msgs("fine"))
        _sql(
            postgres_url,
            f"INSERT INTO {TABLE} (session, seq, type, body) VALUES ('a', 2, 'message', %s)",
            (body,),
        )
        with pytest.raises(LogFormatError) as info:
            list(pg.read("a"))
        assert str(info.value).startswith(f"{pg.url}#a:2: {reason}")
