"""Opening a store from what a user typed: a store URL, or the path of one JSONL file.

This is the seam's one door: `Session`, the importers and the CLI all open through
`open_store` / `open_session_store`, and only this module asks whether a target is a URL.

Invariants:
- a target with ``://`` is a store URL; an unknown scheme is refused (`ConfigError`), never
  taken for a file name;
- anything else is one JSONL file (`FileStore`), which holds one session: naming another
  session there is refused, as is a store URL without a session;
- a target with a password in libpq's keyword form (``host=... password=...``) is refused,
  never taken for a file name (the file, and the session named after it, would hold the
  password);
- a store this module opened is closed again when naming its session fails;
- a reader's open (``create=False``) never makes a store: a folder or SQLite file that is not
  there is "no such store" (chained to `FileNotFoundError`, exit 3 at the CLI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final
from urllib.parse import parse_qs

from compaction.errors import ConfigError
from compaction.secrets import passwords_in, redact_url
from compaction.stores._postgres import PostgresStore
from compaction.stores._sqlite import SqliteStore
from compaction.stores.file import FileStore
from compaction.stores.jsonl import JsonlStore
from compaction.stores.log_reader import ReadReport
from compaction.stores.log_writer import SyncPolicy
from compaction.stores.protocol import EventStore, check_session_id, missing, no_such_store

SCHEMES: Final = ("jsonl", "sqlite", "postgresql", "postgres")
"""URL schemes `open_store` understands."""

URL_FORMS: Final = "jsonl:///folder, sqlite:///file.db or postgresql://user@host/db"
"""The URL forms, for messages."""


def is_store_url(target: str | Path) -> bool:
    """Tell whether `target` is a store URL (``scheme://...`` with a known scheme)."""
    if not isinstance(target, str):
        return False
    scheme, sep, _ = target.partition("://")
    return bool(sep) and scheme in SCHEMES


def log_file(target: str | Path) -> Path | None:
    """Return the one-session file `target` names, or None for a store URL."""
    return None if is_store_url(target) else Path(target)


def _path_of(url: str) -> Path:
    """``x:///rel`` is relative, ``x:////abs`` absolute (SQLAlchemy's rule)."""
    rest = url.partition("://")[2]
    if not rest.startswith("/") or rest == "/":
        raise ConfigError(
            f"{redact_url(url)}: write a path after three slashes, e.g. sqlite:///sessions.db"
        )
    return Path(rest[1:])


def _lock_timeout(url: str, query: str) -> float:
    """Read ``?timeout=SECONDS`` (how long a writer waits for SQLite's lock; default 60)."""
    params = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(params) - {"timeout"})
    if unknown:
        raise ConfigError(
            f"{redact_url(url)}: unknown parameter {unknown[0]!r}; sqlite URLs take ?timeout="
        )
    if "timeout" not in params:
        return 60.0
    raw = params["timeout"][-1]
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 86_400:
        raise ConfigError(
            f"{redact_url(url)}: timeout={raw!r} must be seconds, above 0 and at most 86400"
        )
    return value


def open_store(
    target: str | Path,
    *,
    sync: SyncPolicy = "always",
    skip_bad_lines: bool = False,
    report: ReadReport | None = None,
    create: bool = True,
) -> EventStore:
    """Open the store a URL names, or a JSONL file as a store of one session.

    Args:
        target: ``jsonl:///folder``, ``sqlite:///file.db``, ``postgresql://...``, or the path
            of a JSONL log (a `Path` is always a path).
        sync: the JSONL and SQLite durability policy (see each store).
        skip_bad_lines: a JSONL file only: skip and count malformed lines.
        report: a JSONL file only: where its reads are counted.
        create: False for a reader: a ``jsonl:///`` folder or ``sqlite:///`` file that is not
            there (or an SQLite file without the store's table) is refused as no such store
            (`no_such_store`, exit 3 at the CLI) instead of being made, and nothing is written.

    Raises:
        ConfigError: an unknown scheme, a URL without a path, or a libpq keyword string
            holding a password (refused rather than taken for a file name).
        LogError: the store cannot be opened, or (without `create`) is not there.
    """
    if isinstance(target, str) and "://" not in target and passwords_in(target):
        raise ConfigError(
            f"{redact_url(target)!r} looks like a libpq keyword string, not a store: write it "
            "as a URL, postgresql://user:password@host/db"
        )
    if isinstance(target, Path) or "://" not in target:
        return FileStore(target, sync=sync, skip_bad_lines=skip_bad_lines, report=report)
    if not is_store_url(target):
        raise ConfigError(f"{redact_url(str(target))!r} is not a store URL: use {URL_FORMS}")
    scheme = target.partition("://")[0]
    if scheme == "jsonl":
        folder = _path_of(target)
        if not create and not folder.is_dir():
            where = redact_url(target)
            raise no_such_store(where, f"no folder {folder}") from missing(where)
        return JsonlStore(folder, sync=sync)
    if scheme == "sqlite":
        base, _, query = target.partition("?")
        timeout = _lock_timeout(target, query)
        return SqliteStore(_path_of(base), sync=sync, timeout=timeout, create=create)
    return PostgresStore(target)


def session_of(store: EventStore, session: str | None) -> str:
    """Return the session id to use in `store`: the one a JSONL file holds, or `session`.

    Raises:
        ConfigError: a store of many sessions without `session`, or a JSONL file given
            another session's id.
    """
    if isinstance(store, FileStore):
        if session is not None and session != store.session:
            raise ConfigError(
                f"{redact_url(store.url)}: --session needs a store URL ({URL_FORMS}); a JSONL "
                "path is one session already"
            )
        return store.session
    if session is None:
        raise ConfigError(f"{redact_url(store.url)}: name the session (session=..., CLI --session)")
    return check_session_id(session)


def open_session_store(
    target: str | Path,
    session: str | None = None,
    *,
    sync: SyncPolicy = "always",
    skip_bad_lines: bool = False,
    report: ReadReport | None = None,
    create: bool = True,
) -> tuple[EventStore, str]:
    """Open `target` (`open_store`) and name its session (`session_of`); the caller closes it.

    Raises:
        ConfigError: as `open_store` and `session_of` (the store is closed first).
        LogError: the store cannot be opened, or (without `create`) is not there.
    """
    if session is None and is_store_url(target):  # a usage error before any store is opened
        raise ConfigError(
            f"{redact_url(str(target))}: name the session (session=..., CLI --session)"
        )
    store = open_store(
        target, sync=sync, skip_bad_lines=skip_bad_lines, report=report, create=create
    )
    try:
        return store, session_of(store, session)
    except BaseException:
        store.close()
        raise


def where_of(store: EventStore, session: str) -> str:
    """Name a session for messages: a JSONL file's path, or the store URL and ``#session``."""
    if isinstance(store, FileStore):
        return store.url
    return f"{redact_url(store.url)}#{session}"  # for messages: never a password


def session_file(store: EventStore, session: str) -> Path | None:
    """Return the file that holds a session on a file-backed store (None on a SQL one)."""
    if isinstance(store, FileStore | JsonlStore):
        return store.path_of(session)
    return None
