"""SQLite store behaviour the rerun of mutation testing found untested (issue 25, part H).

`scripts/mutate --group sqlite` runs these with the store's other tests. Each test pins what a
caller or a user gets: an error's exact text and exit class (an `OSError` cause is exit 3, none
is exit 2), the read-only fallback, a retry's last chance at the lock timeout's edge.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from compaction import LogError, Message
from compaction.stores import SqliteStore
from compaction.stores import _sqlite as sqlite_module
from compaction.stores._sqlite_checks import check_header, fail
from compaction.stores.log_writer import SyncPolicy


def _error(name: str, message: str) -> sqlite3.OperationalError:
    """An `OperationalError` carrying SQLite's result-code name, as SQLite raises them."""
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorname = name
    return exc


def _two_events(path: Path) -> None:
    store = SqliteStore(path)
    store.append("a", [Message(role="user", content="one"), Message(role="user", content="two")])
    store.close()


class FailingConnection:
    """A real connection whose `statement` raises `error` (a failure SQLite could give)."""

    def __init__(self, real: sqlite3.Connection, statement: str, error: sqlite3.Error) -> None:
        self.real, self.statement, self.error = real, statement, error
        self.closed = False

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql.upper() == self.statement.upper():  # SQL is read whatever its case
            raise self.error
        return self.real.execute(sql, *args)

    def close(self) -> None:
        self.closed = True
        self.real.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class Opens:
    """The plain (not URI) opens of a test: each fails on `statement` with `error`."""

    def __init__(self) -> None:
        self.statement = ""
        self.error: sqlite3.Error = sqlite3.Error()
        self.made: list[FailingConnection] = []

    def arm(self, statement: str, error: sqlite3.Error) -> None:
        self.statement, self.error = statement, error


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> Opens:
    """Once armed, make every plain open a `FailingConnection` (URIs stay real).

    The read-only fallback opens through URIs, so it reaches the real file.
    """
    opens = Opens()
    real = sqlite3.connect

    def connect(database: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Any:
        db = real(database, *args, **kwargs)
        if kwargs.get("uri") or not opens.statement:
            return db
        conn = FailingConnection(db, opens.statement, opens.error)
        opens.made.append(conn)
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)
    return opens


def test_a_failed_encoding_read_closes_the_file_and_names_it(
    tmp_path: Path, failing: Opens
) -> None:
    """The encoding read failing: one error naming the file and what failed, I/O (exit 3)."""
    path = tmp_path / "s.db"
    failing.arm("PRAGMA encoding", _error("SQLITE_IOERR_READ", "disk I/O error"))
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == f"{path}: cannot read the SQLite store's encoding: disk I/O error"
    assert isinstance(e.value.__cause__, OSError)
    assert [c.closed for c in failing.made] == [True]


@pytest.mark.parametrize(("name", "io"), [("SQLITE_IOERR_READ", True), ("SQLITE_ERROR", False)])
def test_a_failed_schema_read_names_the_file_and_keeps_the_exit_class(
    tmp_path: Path, failing: Opens, name: str, io: bool
) -> None:
    """The events table's columns unreadable: the file, what failed, SQLite's reason."""
    path = tmp_path / "s.db"
    _two_events(path)
    failing.arm("PRAGMA table_info(events)", _error(name, "no luck"))
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == f"{path}: cannot read the SQLite store's schema: no luck"
    assert isinstance(e.value.__cause__, OSError) is io
    assert [c.closed for c in failing.made] == [True]


def test_a_check_refused_as_read_only_opens_the_file_read_only(
    tmp_path: Path, failing: Opens
) -> None:
    """quick_check refused read-only (no ``-shm`` can be made): the store opens read-only."""
    path = tmp_path / "s.db"
    _two_events(path)
    refusal = _error("SQLITE_READONLY_CANTINIT", "attempt to write a readonly database")
    failing.arm("PRAGMA quick_check(5)", refusal)
    store = SqliteStore(path)
    try:
        assert store.read_only is True
        assert [e.seq for e in store.read("a")] == [1, 2]
        with pytest.raises(LogError, match=r"#a: append failed: attempt to write a readonly"):
            store.append("a", [Message(role="user", content="x")])
    finally:
        store.close()
    assert [c.closed for c in failing.made] == [True]


def test_an_unsupported_file_format_is_damage_not_io(tmp_path: Path) -> None:
    """A schema format SQLite does not know (a plain SQLite error): damaged, exit 2."""
    path = tmp_path / "s.db"
    _two_events(path)
    data = bytearray(path.read_bytes())
    data[44:48] = (5).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == f"{path}: the SQLite store is damaged: unsupported file format"
    assert e.value.__cause__ is None


def test_a_malformed_schema_is_damaged_with_sqlites_reason(tmp_path: Path) -> None:
    """A table's SQL broken in the file: damaged (exit 2), with the reason SQLite gives."""
    path = tmp_path / "s.db"
    _two_events(path)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"CREATE TABLE events", b"CREATE TABLX events", 1))
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError) as raised:
        db.execute("PRAGMA quick_check(5)")
    db.close()
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == f"{path}: the SQLite store is damaged: {raised.value}"
    assert "malformed database schema" in str(e.value)
    assert e.value.__cause__ is None


def _null_columns(path: Path, column: str) -> None:
    """An ``events`` table declared NOT NULL whose rows hold NULLs (quick_check finds each)."""
    db = sqlite3.connect(path)
    db.execute(f"CREATE TABLE events ({column} TEXT, other TEXT)")
    db.executemany("INSERT INTO events VALUES (NULL, NULL)", [() for _ in range(6)])
    db.commit()
    db.execute("PRAGMA writable_schema=ON")
    db.execute(
        "UPDATE sqlite_master SET sql = ? WHERE name = 'events'",
        (f"CREATE TABLE events ({column} TEXT NOT NULL, other TEXT NOT NULL)",),
    )
    db.commit()
    db.close()


def _findings(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    rows = [str(r[0]) for r in db.execute("PRAGMA quick_check(5)")]
    db.close()
    return rows


def test_quick_checks_findings_are_joined_by_semicolons(tmp_path: Path) -> None:
    """Several findings, one per row, are quoted in order, each after a ``; ``."""
    path = tmp_path / "s.db"
    _null_columns(path, "body")
    found = _findings(path)
    assert len(found) == 5
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == (
        f"{path}: the SQLite store is damaged (quick_check: {'; '.join(found)}); restore it "
        "from a backup"
    )


def test_quick_checks_findings_are_cut_at_300_characters(tmp_path: Path) -> None:
    """Findings longer than 300 characters in all are cut there (one line, bounded)."""
    path = tmp_path / "s.db"
    _null_columns(path, "c" * 120)
    joined = "; ".join(_findings(path))
    assert len(joined) > 300
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    detail = str(e.value).partition("(quick_check: ")[2].rpartition("); restore")[0]
    assert detail == joined[:300]


def test_a_page_count_past_three_bytes_is_read_whole(tmp_path: Path) -> None:
    """A header declaring 2^24 + 1 pages (its four bytes all count): truncated, both sizes."""
    path = tmp_path / "s.db"
    _two_events(path)
    data = bytearray(path.read_bytes())
    data[28:32] = (2**24 + 1).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    size = int.from_bytes(data[16:18], "big")
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == (
        f"{path}: the SQLite store is truncated: {len(data)} bytes, but its header declares "
        f"{2**24 + 1} pages of {size} bytes ({(2**24 + 1) * size}); restore it from a backup"
    )


def test_the_header_check_reads_the_header_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check before the open reads 100 bytes, not the file: a store can be gigabytes."""
    path = tmp_path / "s.db"
    _two_events(path)
    asked: list[int | None] = []
    real_open = Path.open

    def spying_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        f = real_open(self, *args, **kwargs)
        if self == path:
            real_read = f.read

            def read(n: int | None = -1) -> Any:
                asked.append(n)
                return real_read(n)

            f.read = read
        return f

    monkeypatch.setattr(Path, "open", spying_open)
    check_header(path)
    assert asked == [100]


def test_a_folder_that_cannot_be_made_is_named_with_the_reason(tmp_path: Path) -> None:
    """The store's folder is a dangling link: it cannot be made; the message says why."""
    (tmp_path / "link").symlink_to(tmp_path / "nowhere" / "x")
    path = tmp_path / "link" / "s.db"
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == f"{path}: cannot create its folder: File exists"
    assert isinstance(e.value.__cause__, FileExistsError)


class Clock:
    """A monotonic clock that moves only when slept on (the store's `time` in these tests)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def time(self) -> float:
        return time.time()


def _busy() -> LogError:
    try:
        try:
            raise _error("SQLITE_BUSY", "database is locked")
        except sqlite3.Error as exc:
            fail("s.db", "cannot open the SQLite store", exc)
    except LogError as made:
        return made
    raise AssertionError("fail did not raise")


def test_a_retry_whose_wait_ends_at_the_deadline_is_still_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy set-up is tried again when the wait ends at the deadline, not after it."""
    clock = Clock()
    calls = [0]

    def once(self: SqliteStore, timeout: float, sync: SyncPolicy) -> sqlite3.Connection:
        calls[0] += 1
        raise _busy()

    monkeypatch.setattr(sqlite_module, "time", clock)
    monkeypatch.setattr(sqlite_module, "OPEN_RETRY", 0.25)
    monkeypatch.setattr(SqliteStore, "_connect_once", once)
    with pytest.raises(LogError, match="database is locked"):
        SqliteStore(tmp_path / "s.db", timeout=0.25)
    assert calls[0] == 2
    assert clock.slept == [0.25]
