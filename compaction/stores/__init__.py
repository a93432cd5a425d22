"""Session stores behind one seam: the `EventStore` protocol, its backends, and the JSONL log.

Rule of this room: everything that reads or writes bytes of a session lives here (the log's
reader and writer, locking, the sources a `Session` reads from, the SQL stores); nothing here
knows about views, tools or compaction.

Pick one with a URL (`open_store`):

- ``jsonl:///path/to/folder`` (or a plain path): one JSONL file per session, the default;
- ``sqlite:///sessions.db`` (relative) or ``sqlite:////abs/sessions.db``: many sessions in one
  SQLite file; ``?timeout=5`` sets how many seconds a writer waits for the file's lock
  (default 60; the CLI's ``--lock-timeout``);
- ``postgresql://user@host:5432/db``: a PostgreSQL server (the ``postgres`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final
from urllib.parse import parse_qs

from compaction.errors import ConfigError
from compaction.stores.copy import STAGING, copy_session, is_staging, write_new_session
from compaction.stores.jsonl import JsonlStore
from compaction.stores.locking import lock_exclusive, unlock
from compaction.stores.log_reader import (
    MAX_EVENT_BYTES,
    BadLine,
    LogReader,
    ReadReport,
    read_events,
)
from compaction.stores.log_writer import SessionLog, SyncPolicy, TailRepair
from compaction.stores.postgres import PostgresStore
from compaction.stores.protocol import EventStore, SessionInfo, check_session_id
from compaction.stores.sources import EventSource, FileSource, StoreSource
from compaction.stores.sqlite import SqliteStore

SCHEMES: Final = ("jsonl", "sqlite", "postgresql", "postgres")
"""URL schemes `open_store` understands."""


def is_store_url(target: str | Path) -> bool:
    """Tell whether `target` is a store URL (``scheme://...`` with a known scheme)."""
    if not isinstance(target, str):
        return False
    scheme, sep, _ = target.partition("://")
    return bool(sep) and scheme in SCHEMES


def _path_of(url: str) -> Path:
    """``x:///rel`` is relative, ``x:////abs`` absolute (SQLAlchemy's rule)."""
    rest = url.partition("://")[2]
    if not rest.startswith("/") or rest == "/":
        raise ConfigError(f"{url}: write a path after three slashes, e.g. sqlite:///sessions.db")
    return Path(rest[1:])


def _lock_timeout(url: str, query: str) -> float:
    """Read ``?timeout=SECONDS`` (how long a writer waits for SQLite's lock; default 60)."""
    params = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(params) - {"timeout"})
    if unknown:
        raise ConfigError(f"{url}: unknown parameter {unknown[0]!r}; sqlite URLs take ?timeout=")
    if "timeout" not in params:
        return 60.0
    raw = params["timeout"][-1]
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 86_400:
        raise ConfigError(f"{url}: timeout={raw!r} must be seconds, above 0 and at most 86400")
    return value


def open_store(url: str, *, sync: SyncPolicy = "always") -> EventStore:
    """Open the store a URL names.

    Args:
        url: ``jsonl:///folder``, ``sqlite:///file.db`` or ``postgresql://...``.
        sync: the JSONL and SQLite durability policy (see each store).

    Raises:
        ConfigError: an unknown scheme or a URL without a path.
        LogError: the store cannot be opened.
    """
    scheme = url.partition("://")[0]
    if not is_store_url(url):
        raise ConfigError(
            f"{url!r} is not a store URL: use jsonl:///folder, sqlite:///file.db or "
            "postgresql://user@host/db"
        )
    if scheme == "jsonl":
        return JsonlStore(_path_of(url), sync=sync)
    if scheme == "sqlite":
        base, _, query = url.partition("?")
        return SqliteStore(_path_of(base), sync=sync, timeout=_lock_timeout(url, query))
    return PostgresStore(url)


__all__ = [
    "MAX_EVENT_BYTES",
    "SCHEMES",
    "STAGING",
    "BadLine",
    "EventSource",
    "EventStore",
    "FileSource",
    "JsonlStore",
    "LogReader",
    "PostgresStore",
    "ReadReport",
    "SessionInfo",
    "SessionLog",
    "SqliteStore",
    "StoreSource",
    "SyncPolicy",
    "TailRepair",
    "check_session_id",
    "copy_session",
    "is_staging",
    "is_store_url",
    "lock_exclusive",
    "open_store",
    "read_events",
    "unlock",
    "write_new_session",
]
