"""Session stores behind one seam: the `EventStore` protocol, its backends, and the JSONL log.

Rule of this room: everything that reads or writes bytes of a session lives here (the log's
reader and writer, locking, the sources a `Session` reads from, the SQL stores); nothing here
knows about views, tools or compaction.

The JSONL log is also read and appended with the standard library alone (`plain_log`:
`fold_plain`, `append_plain`), for the CLI's fast path; the root loads each name on first use.

Pick one with a URL or a path (`open_store`):

- a plain path ``s.jsonl``: one JSONL file, a store of one session (`FileStore`), the default;
- ``jsonl:///path/to/folder``: one JSONL file per session in a folder;
- ``sqlite:///sessions.db`` (relative) or ``sqlite:////abs/sessions.db``: many sessions in one
  SQLite file; ``?timeout=5`` sets how many seconds a writer waits for the file's lock
  (default 60; the CLI's ``--lock-timeout``);
- ``postgresql://user@host:5432/db``: a PostgreSQL server (the ``postgres`` extra).
"""

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.stores._copy import copy_session, is_staging, write_new_session
    from compaction.stores._opening import (
        log_file,
        open_session_store,
        open_store,
        session_file,
        where_of,
    )
    from compaction.stores._sqlite import SqliteStore
    from compaction.stores.file import FileStore
    from compaction.stores.log_reader import ReadReport, read_events
    from compaction.stores.log_writer import SessionLog, SyncPolicy
    from compaction.stores.plain_log import (
        PlainLog,
        PlainTodos,
        append_plain,
        event_line,
        fold_plain,
        read_plain,
    )
    from compaction.stores.protocol import EventStore, SessionInfo
    from compaction.stores.sources import SessionSource

_EXPORTS: dict[str, str] = {
    "EventStore": "compaction.stores.protocol",
    "FileStore": "compaction.stores.file",
    "PlainLog": "compaction.stores.plain_log",
    "PlainTodos": "compaction.stores.plain_log",
    "ReadReport": "compaction.stores.log_reader",
    "SessionInfo": "compaction.stores.protocol",
    "SessionLog": "compaction.stores.log_writer",
    "SessionSource": "compaction.stores.sources",
    "SqliteStore": "compaction.stores._sqlite",
    "SyncPolicy": "compaction.stores.log_writer",
    "append_plain": "compaction.stores.plain_log",
    "copy_session": "compaction.stores._copy",
    "event_line": "compaction.stores.plain_log",
    "fold_plain": "compaction.stores.plain_log",
    "is_staging": "compaction.stores._copy",
    "log_file": "compaction.stores._opening",
    "open_session_store": "compaction.stores._opening",
    "open_store": "compaction.stores._opening",
    "read_events": "compaction.stores.log_reader",
    "read_plain": "compaction.stores.plain_log",
    "session_file": "compaction.stores._opening",
    "where_of": "compaction.stores._opening",
    "write_new_session": "compaction.stores._copy",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "EventStore",
    "FileStore",
    "PlainLog",
    "PlainTodos",
    "ReadReport",
    "SessionInfo",
    "SessionLog",
    "SessionSource",
    "SqliteStore",
    "SyncPolicy",
    "append_plain",
    "copy_session",
    "event_line",
    "fold_plain",
    "is_staging",
    "log_file",
    "open_session_store",
    "open_store",
    "read_events",
    "read_plain",
    "session_file",
    "where_of",
    "write_new_session",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
