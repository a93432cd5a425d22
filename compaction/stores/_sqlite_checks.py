"""SQLite store's checks: a file's header before it is opened, and `sqlite3.Error` as a `LogError`.

Invariants: a file without SQLite's header is refused before SQLite reads it; so is a file
shorter than the pages its header declares when no write-ahead log (``-wal``) is beside it (never
read as an empty store). With a ``-wal`` the size proves nothing: a checkpoint that a full disk
stopped leaves the main file short while the WAL still holds every page, so SQLite opens it and
its ``quick_check`` decides (no message advises deleting the WAL or restoring a backup unless
SQLite reports damage). An I/O failure (locked,
read-only, cannot open, disk full, I/O error) is chained to an `OSError`, so the CLI exits 3 for
it, and 2 for a damaged file.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path
from typing import Final, NoReturn

from compaction.errors import LogError

__all__ = ["check_header", "fail", "has_wal", "io_cause", "store_error"]

_IO_ERRORS: Final = frozenset(
    {
        "SQLITE_BUSY",
        "SQLITE_LOCKED",
        "SQLITE_READONLY",
        "SQLITE_IOERR",
        "SQLITE_CANTOPEN",
        "SQLITE_FULL",
        "SQLITE_PERM",
        "SQLITE_PROTOCOL",
    }
)
"""SQLite result codes (primary, by name) that are I/O failures rather than a damaged file."""

_HEADER: Final = b"SQLite format 3\x00"


def store_error(path: Path | str, what: str, exc: sqlite3.Error) -> LogError:
    """Return the `LogError` for a failed SQLite call: the file, what failed, SQLite's reason.

    Raise it ``from io_cause(exc)``: an I/O failure is chained to an `OSError` (the CLI's exit
    3); anything else is chained to nothing (exit 2).
    """
    return LogError(f"{path}: {what}: {exc}")


def fail(where: Path | str, what: str, exc: sqlite3.Error) -> NoReturn:
    """Raise `store_error` chained to `io_cause` (called inside the ``except`` that caught it)."""
    raise store_error(where, what, exc) from io_cause(exc)


def io_cause(exc: sqlite3.Error) -> OSError | None:
    """Return an `OSError` standing for `exc` when it is an I/O failure, else None."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if "_".join(name.split("_")[:2]) in _IO_ERRORS:
        return OSError(errno.EIO, str(exc))
    return None


def has_wal(path: Path) -> bool:
    """Tell whether a non-empty write-ahead log (``PATH-wal``) lies beside the database."""
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


def check_header(path: Path) -> None:
    """Refuse a file that is not an SQLite database, or is shorter than the pages it declares.

    The size is checked only without a WAL beside the file (`has_wal`): pages a checkpoint did
    not finish copying are still in the WAL, and SQLite reads them from there.

    Raises:
        LogError: the file is not an SQLite database, or was truncated (names both sizes).
    """
    try:
        size = path.stat().st_size
        if size == 0:
            return
        with path.open("rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise LogError(f"{path}: cannot read the SQLite store: {exc.strerror}") from exc
    if not head.startswith(_HEADER) or len(head) < 100:
        raise LogError(f"{path}: not an SQLite database (its first bytes are not an SQLite header)")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96]  # the page count is trusted only when current
    if valid and pages and size < pages * page_size and not has_wal(path):
        raise LogError(
            f"{path}: the SQLite store is truncated: {size} bytes, but its header declares "
            f"{pages} pages of {page_size} bytes ({pages * page_size}); restore it from a backup"
        )
