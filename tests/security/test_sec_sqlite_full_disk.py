"""Issue 39, item 3: a SQLite store after a full disk is healthy, and nothing calls it damaged.

A checkpoint that a full disk stopped (`full_disk_store`: a file-size limit in a child process)
leaves the main file shorter than its header declares while the ``-wal`` still holds every page.
SQLite reads it whole, so the store opens and every event reads back; only SQLite's own check
may call a store damaged, and no message advises deleting the WAL or restoring a backup then.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from benchmarks.attacks.full_disk import FullDisk, full_disk_store
from compaction import LogError, Message, Session
from compaction.stores import SqliteStore
from compaction.stores._sqlite_checks import check_header

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")

ADVICE = ("truncated", "damaged", "backup", "delete")


@pytest.fixture
def full_disk(tmp_path: Path) -> FullDisk:
    """A store whose checkpoint a full disk stopped: the file short, the WAL holding the pages."""
    return full_disk_store(tmp_path / "s.db", early=6, late=30, size=20_000)


def test_the_state_is_a_stopped_checkpoint(full_disk: FullDisk) -> None:
    """The file is shorter than its header declares, a WAL is beside it, and SQLite reads it."""
    assert full_disk.size < full_disk.declared
    assert full_disk.path.with_name("s.db-wal").stat().st_size > 0
    db = sqlite3.connect(f"{full_disk.path.as_uri()}?mode=ro", uri=True)
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    db.close()


def test_the_header_check_passes_it_while_the_wal_is_there(full_disk: FullDisk) -> None:
    """`check_header` leaves the decision to SQLite with a WAL; without one it refuses the file."""
    check_header(full_disk.path)
    backup = full_disk.path.with_name("s.db-wal").rename(full_disk.path.with_name("kept"))
    with pytest.raises(LogError, match="truncated"):
        check_header(full_disk.path)
    backup.rename(full_disk.path.with_name("s.db-wal"))


def test_the_store_opens_and_reads_every_event(full_disk: FullDisk) -> None:
    """Every session and every event reads back, in order."""
    store = SqliteStore(full_disk.path)
    assert {i.session: i.events for i in store.sessions()} == full_disk.counts
    assert [e.seq for e in store.read("late")] == list(range(1, full_disk.counts["late"] + 1))
    store.close()


@pytest.mark.parametrize("command", ["sessions", "log", "todos"])
def test_the_cli_reads_it_without_advice(full_disk: FullDisk, command: str) -> None:
    """`sessions`, `log` and `todos` exit 0, and nothing says truncated, damaged or backup."""
    url = f"sqlite:///{full_disk.path}"
    argv = [command, url] if command == "sessions" else [command, url, "--session", "late"]
    done = run_cli(*argv)
    assert done.returncode == 0, done.stderr
    assert not [word for word in ADVICE if word in (done.stdout + done.stderr).lower()]


def test_a_write_after_the_space_returns_is_kept(full_disk: FullDisk) -> None:
    """Once space is back the store takes a write, and the checkpoint completes on close."""
    store = SqliteStore(full_disk.path)
    store.append("late", [Message(role="user", content="go on")])
    store.close()
    store = SqliteStore(full_disk.path)
    assert store.last_seq("late") == full_disk.counts["late"] + 1
    store.close()
    assert not full_disk.path.with_name("s.db-wal").exists()
    assert full_disk.path.stat().st_size >= full_disk.declared


def test_damage_the_wal_cannot_explain_is_sqlites_to_report(tmp_path: Path) -> None:
    """A short file beside a WAL that does not hold its pages: refused on SQLite's own word."""
    path = tmp_path / "s.db"
    store = SqliteStore(path)
    with Session(store=store, session="s1") as session:
        for i in range(30):
            session.task_create({"subject": f"task {i} " + "x" * 200})
    store.close()
    with path.open("r+b") as f:
        f.truncate(5000)
    path.with_name("s.db-wal").write_bytes(b"not a WAL frame " * 64)
    with pytest.raises(LogError, match="damaged: database disk image is malformed"):
        SqliteStore(path)


def _denied() -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError("attempt to write a readonly database")
    exc.sqlite_errorname = "SQLITE_READONLY_DIRECTORY"
    exc.sqlite_errorcode = 1288
    return exc


def test_a_wal_in_a_read_only_folder_is_never_skipped(
    full_disk: FullDisk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where only ``immutable=1`` would open (it ignores the WAL), the open fails as I/O instead."""
    real = sqlite3.connect
    tried: list[str] = []

    def connect(database: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Any:
        name = os.fspath(database)
        tried.append(name)
        if "immutable=1" in name:
            return real(database, *args, **kwargs)
        raise _denied()

    monkeypatch.setattr(sqlite3, "connect", connect)
    with pytest.raises(LogError) as info:
        SqliteStore(full_disk.path)
    assert "its WAL, s.db-wal, needs a folder this user can write" in str(info.value)
    assert isinstance(info.value.__cause__, OSError)  # exit 3, not "damaged"
    assert not [name for name in tried if "immutable" in name]
