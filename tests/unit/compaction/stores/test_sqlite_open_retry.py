"""A store's set-up that SQLite finds busy is tried again until the lock timeout is spent.

Several processes creating one store at once can get ``SQLITE_BUSY`` from the switch to WAL
without SQLite's busy handler waiting (seen once in the four-writer contract test under load).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from compaction.errors import LogError
from compaction.stores import _sqlite as sqlite_store
from compaction.stores._sqlite import SqliteStore
from compaction.stores._sqlite_checks import fail
from compaction.stores.log_writer import SyncPolicy


def refusal(name: str, message: str) -> LogError:
    """Return the LogError `fail` raises for an SQLite error of result code `name`."""
    try:
        try:
            error = sqlite3.OperationalError(message)
            error.sqlite_errorname = name
            raise error
        except sqlite3.Error as exc:
            fail("s.db", "cannot open the SQLite store", exc)
    except LogError as made:
        return made
    raise AssertionError("fail did not raise")


def failing_first(monkeypatch: pytest.MonkeyPatch, errors: list[LogError]) -> list[int]:
    """Make `_connect_once` raise `errors` in turn, then open for real; return the call count."""
    calls = [0]
    real = SqliteStore._connect_once

    def once(self: SqliteStore, timeout: float, sync: SyncPolicy) -> sqlite3.Connection:
        calls[0] += 1
        if errors:
            raise errors.pop(0)
        return real(self, timeout, sync)

    monkeypatch.setattr(SqliteStore, "_connect_once", once)
    monkeypatch.setattr(sqlite_store, "OPEN_RETRY", 0.001)
    return calls


def test_a_busy_set_up_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    busy = [refusal("SQLITE_BUSY", "database is locked") for _ in range(2)]
    calls = failing_first(monkeypatch, busy)
    store = SqliteStore(tmp_path / "s.db", timeout=5)
    try:
        assert calls[0] == 3
        assert store.last_seq("a") == 0
    finally:
        store.close()


def test_a_locked_table_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = failing_first(monkeypatch, [refusal("SQLITE_LOCKED_SHAREDCACHE", "table is locked")])
    SqliteStore(tmp_path / "s.db", timeout=5).close()
    assert calls[0] == 2


def test_other_failures_are_raised_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = failing_first(monkeypatch, [refusal("SQLITE_CORRUPT", "malformed")])
    with pytest.raises(LogError, match="malformed"):
        SqliteStore(tmp_path / "s.db", timeout=5)
    assert calls[0] == 1


def test_no_retry_past_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = failing_first(monkeypatch, [refusal("SQLITE_BUSY", "database is locked")])
    with pytest.raises(LogError, match="database is locked"):
        SqliteStore(tmp_path / "s.db", timeout=0)
    assert calls[0] == 1
