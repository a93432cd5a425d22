"""Issue 25, cases 6 and 11: a damaged SQLite store is refused, never read as empty.

A truncated file, a corrupt page, a file that is not SQLite and another application's
``events`` table each fail on open with one line naming the file (exit 2); a locked, read-only
or vanished database is an I/O error (exit 3); a store in a read-only folder can still be read.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from compaction import LogError, Message, Session
from compaction.stores import SqliteStore


def _store(path: Path, tasks: int = 1) -> Path:
    store = SqliteStore(path)
    with Session(store=store, session="s1") as session:
        session.start_turn("Fix it", mode="agent")
        for i in range(tasks):
            session.task_create({"subject": f"task {i} " + "x" * 200})
    store.close()
    return path


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _truncate(path: Path, size: int) -> None:
    with path.open("r+b") as f:
        f.truncate(size)


def _corrupt_page(path: Path) -> None:
    """Overwrite the events table's root page (page 2) with garbage."""
    page = int.from_bytes(path.read_bytes()[16:18], "big")
    with path.open("r+b") as f:
        f.seek(page)
        f.write(b"\x0d" + b"\xa5" * (page - 1))


def _foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO events (name) VALUES ('launch')")
    db.commit()
    db.close()


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 5000)


DAMAGE = {
    "truncated": (lambda p: _truncate(p, 5000), "truncated: 5000 bytes"),
    "truncated-to-a-page": (lambda p: _truncate(p, 4096), "truncated: 4096 bytes"),
    "corrupt-page": (_corrupt_page, "damaged"),
    "foreign-table": (_foreign, "not a Context Harness store"),
    "not-sqlite": (_not_sqlite, "not an SQLite database"),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_store_is_refused_on_open(kind: str, tmp_path: Path) -> None:
    """Opening a damaged file raises LogError naming it; nothing reads it as empty."""
    damage, problem = DAMAGE[kind]
    path = tmp_path / "s.db"
    if kind in ("foreign-table", "not-sqlite"):
        damage(path)
    else:
        _store(path, tasks=30)
        damage(path)
    before = path.read_bytes()
    with pytest.raises(LogError, match=problem) as info:
        SqliteStore(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == before  # refused, not repaired or overwritten


@pytest.mark.parametrize("kind", sorted(DAMAGE))
@pytest.mark.parametrize("command", ["sessions", "log", "tool"])
def test_the_cli_refuses_a_damaged_store_with_exit_2(
    kind: str, command: str, tmp_path: Path
) -> None:
    """`sessions`, `log` and `tool` on a damaged file: one line, exit 2, nothing written."""
    damage, problem = DAMAGE[kind]
    path = tmp_path / "s.db"
    if kind not in ("foreign-table", "not-sqlite"):
        _store(path, tasks=30)
    damage(path)
    before = path.read_bytes()
    argv = {
        "sessions": ["sessions", _url(path)],
        "log": ["log", _url(path), "--session", "s1"],
        "tool": [
            "tool",
            _url(path),
            "task_create",
            "--session",
            "s1",
            "--args",
            '{"subject": "x"}',
        ],
    }[command]
    done = run_cli(*argv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert problem in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "0 events" not in done.stdout
    assert path.read_bytes() == before


def test_an_intact_store_still_opens(tmp_path: Path) -> None:
    """The checks pass a healthy store: its events read back."""
    path = _store(tmp_path / "s.db", tasks=30)
    store = SqliteStore(path)
    assert store.last_seq("s1") == 32
    store.close()


def _denied() -> sqlite3.OperationalError:
    """Return the error SQLite gives a user who cannot write the store's folder.

    Measured as uid 65534 on a 0555 folder holding a 0444 WAL database: a plain and a
    ``mode=ro`` open both fail this way; ``immutable=1`` opens.
    """
    exc = sqlite3.OperationalError("attempt to write a readonly database")
    exc.sqlite_errorname = "SQLITE_READONLY_DIRECTORY"
    exc.sqlite_errorcode = 1288
    return exc


@pytest.fixture(params=["file", "folder"])
def read_only_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Path]:
    """A store whose folder and file are read-only, also when the tests run as root.

    Root ignores file permissions, so SQLite itself is made to refuse writes: ``"file"`` opens
    every plain connection to the store through a ``file:...?mode=ro`` URI (a read-only
    connection, whoever runs it); ``"folder"`` refuses the plain and ``mode=ro`` opens as a
    read-only folder does (`_denied`), so only ``immutable=1`` opens. The permissions are set
    too: without root they alone refuse the writes.
    """
    folder = tmp_path / "ro"
    folder.mkdir()
    _store(folder / "s.db", tasks=3)
    for extra in folder.iterdir():
        if extra.name != "s.db":
            extra.unlink()
    real = sqlite3.connect
    prefix = (folder / "s.db").resolve().as_uri()

    def connect(database: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Any:
        name = os.fspath(database)
        if not kwargs.get("uri") and Path(name).resolve() == (folder / "s.db").resolve():
            if request.param == "folder":
                raise _denied()
            return real(prefix + "?mode=ro", *args, **{**kwargs, "uri": True})
        if name.startswith(prefix) and request.param == "folder" and "immutable=1" not in name:
            raise _denied()
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    (folder / "s.db").chmod(stat.S_IRUSR)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    yield folder
    folder.chmod(stat.S_IRWXU)
    (folder / "s.db").chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_a_read_only_store_is_opened_read_only(read_only_folder: Path) -> None:
    """The store opens on a connection SQLite keeps read-only: a write through it is refused."""
    store = SqliteStore(read_only_folder / "s.db")
    assert store.last_seq("s1") == 5
    assert [e.seq for e in store.read("s1")] == [1, 2, 3, 4, 5]
    before = (read_only_folder / "s.db").read_bytes()
    with pytest.raises(LogError, match=r"s\.db#s1: append failed: attempt to write") as e:
        store.append("s1", [Message(role="user", content="x")])
    assert isinstance(e.value.__cause__, OSError)
    assert store.last_seq("s1") == 5
    store.close()
    assert (read_only_folder / "s.db").read_bytes() == before


def test_a_read_only_folder_can_be_read(read_only_folder: Path) -> None:
    """A store in a read-only folder opens read-only: sessions and log read it."""
    url = _url(read_only_folder / "s.db")
    listed = run_cli("sessions", url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert '"events": 5' in listed.stdout
    assert run_cli("log", url, "--session", "s1").returncode == 0


def test_writing_a_read_only_store_is_an_io_error(read_only_folder: Path) -> None:
    """A write to a read-only store is one line, exit 3 (I/O), and changes nothing."""
    url = _url(read_only_folder / "s.db")
    before = (read_only_folder / "s.db").read_bytes()
    done = run_cli("tool", url, "task_create", "--session", "s1", "--args", '{"subject": "x"}')
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "s.db" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert (read_only_folder / "s.db").read_bytes() == before


def test_a_held_write_lock_is_an_io_error(tmp_path: Path) -> None:
    """Another connection holding the write lock: the writer fails with exit 3, not 2 or 4."""
    path = _store(tmp_path / "s.db")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        store = SqliteStore(path, timeout=0.05)
        with pytest.raises(LogError, match="cannot lock the store") as info:
            store.append("s1", [])
        assert isinstance(info.value.__cause__, OSError)
        store.close()
    finally:
        holder.rollback()
        holder.close()


def test_lock_timeout_bounds_the_wait_for_a_held_lock(tmp_path: Path) -> None:
    """`--lock-timeout 0.2` with the write lock held: exit 3 naming the file, nothing written."""
    path = _store(tmp_path / "s.db")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        done = run_cli(
            "tool", _url(path), "task_create", "--session", "s1",
            "--args", '{"subject": "x"}', "--lock-timeout", "0.2",
        )  # fmt: skip
    finally:
        holder.rollback()
        holder.close()
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "database is locked" in done.stderr
    assert "s.db" in done.stderr
    store = SqliteStore(path)
    assert store.last_seq("s1") == 3
    store.close()


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("?timeout=0", "must be seconds"),
        ("?timeout=-1", "must be seconds"),
        ("?timeout=abc", "must be seconds"),
        ("?timeout=1e9", "must be seconds"),
        ("?mode=rwc", "unknown parameter 'mode'"),
    ],
)
def test_bad_timeout_parameters_are_refused(query: str, problem: str, tmp_path: Path) -> None:
    """A sqlite URL's timeout must be positive seconds; other parameters are refused."""
    done = run_cli("sessions", _url(tmp_path / "s.db") + query)
    assert done.returncode == 2
    assert problem in done.stderr


def test_a_timeout_parameter_opens_the_store(tmp_path: Path) -> None:
    """`?timeout=5` is accepted and the store reads as without it."""
    path = _store(tmp_path / "s.db")
    done = run_cli("sessions", _url(path) + "?timeout=5", "--json")
    assert done.returncode == 0, done.stderr
    assert '"session": "s1"' in done.stdout
