"""Session stores behind one seam: the `EventStore` protocol, its backends, and the JSONL log.

Rule of this room: everything that reads or writes bytes of a session lives here (the log's
reader and writer, locking, the sources a `Session` reads from, the SQL stores); nothing here
knows about views, tools or compaction.

Pick one with a URL or a path (`open_store`):

- a plain path ``s.jsonl``: one JSONL file, a store of one session (`FileStore`), the default;
- ``jsonl:///path/to/folder``: one JSONL file per session in a folder;
- ``sqlite:///sessions.db`` (relative) or ``sqlite:////abs/sessions.db``: many sessions in one
  SQLite file; ``?timeout=5`` sets how many seconds a writer waits for the file's lock
  (default 60; the CLI's ``--lock-timeout``);
- ``postgresql://user@host:5432/db``: a PostgreSQL server (the ``postgres`` extra).
"""

from __future__ import annotations

from compaction.stores._copy import STAGING, copy_session, is_staging, write_new_session
from compaction.stores._locking import lock_exclusive, unlock
from compaction.stores._log_tail import TailRepair
from compaction.stores._opening import (
    SCHEMES,
    is_store_url,
    log_file,
    open_session_store,
    open_store,
    session_file,
    session_of,
    where_of,
)
from compaction.stores._postgres import PostgresStore
from compaction.stores._sqlite import SqliteStore
from compaction.stores.file import FileStore
from compaction.stores.jsonl import JsonlStore
from compaction.stores.log_reader import (
    MAX_EVENT_BYTES,
    BadLine,
    LogReader,
    ReadReport,
    read_events,
)
from compaction.stores.log_writer import SessionLog, SyncPolicy
from compaction.stores.protocol import EventStore, SessionInfo, check_session_id
from compaction.stores.sources import SessionSource

__all__ = [
    "MAX_EVENT_BYTES",
    "SCHEMES",
    "STAGING",
    "BadLine",
    "EventStore",
    "FileStore",
    "JsonlStore",
    "LogReader",
    "PostgresStore",
    "ReadReport",
    "SessionInfo",
    "SessionLog",
    "SessionSource",
    "SqliteStore",
    "SyncPolicy",
    "TailRepair",
    "check_session_id",
    "copy_session",
    "is_staging",
    "is_store_url",
    "lock_exclusive",
    "log_file",
    "open_session_store",
    "open_store",
    "read_events",
    "session_file",
    "session_of",
    "unlock",
    "where_of",
    "write_new_session",
]
