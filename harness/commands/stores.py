"""What every command that takes a LOG shares: a JSONL path, or a store URL with ``--session``.

The one way in is `opened`: it opens any target through `compaction.stores.open_session_store`
(the seam's one door) and, for a JSONL file, checks the file first (`check_file`), so a
directory, a FIFO or a dangling symlink fails with one clear line.
"""

from __future__ import annotations

import argparse
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from harness.files import check_file

if TYPE_CHECKING:  # imported where used: a command's parser is built without them
    from compaction import Event, EventStore, LogError, PolicyTable, Session, Tokenizer
    from compaction.stores import ReadReport, SyncPolicy

LOG_HELP = (
    "session log (JSONL file), or a store URL (jsonl:///folder, sqlite:///file.db, "
    "postgresql://user@host/db) with --session"
)


def add_log_argument(
    p: argparse.ArgumentParser, help_text: str = LOG_HELP, *, optional: bool = False
) -> None:
    """Add the LOG positional; with ``HARNESS_STORE`` set it may be left out (the default)."""
    from harness.commands.env_options import store_default, with_env

    store = store_default()
    p.add_argument(
        "log",
        metavar="LOG",
        nargs="?" if store or optional else None,
        default=store,
        help=with_env(help_text, "HARNESS_STORE"),
    )


def not_a_log(log: str | Path, why: str) -> LogError:
    """Return the error for a LOG that holds no event: what it is instead, and what a log is.

    `harness compact` and `harness log` raise it for a binary, text or foreign file.
    """
    from compaction import LogError

    return LogError(
        f"{log} is not a session log: {why} (a session log holds one JSON event a line; "
        "see harness log --schema)"
    )


def transcript_hint(args: argparse.Namespace) -> str | None:
    """Return the message for a transcript given where a session log is expected, else None.

    LOG (a file, not a store URL) whose first line is not one of this toolkit's events and
    whose format an importer recognises: the message names the import command instead of the
    line the reader refused.
    """
    from compaction.importers import detect_format
    from compaction.stores import log_file

    log = getattr(args, "log", None)
    path = log_file(log) if isinstance(log, str) else None
    if path is None or not path.is_file():
        return None
    try:
        with open(path, "rb") as fh:
            if fh.read(5) == b'{"v":':  # a session log (perhaps damaged): the reader's message
                return None
        found = detect_format(path)
    except Exception:  # no format recognised, or unreadable: the reader's own message stands
        return None
    return (
        f"{log} is a transcript ({found} format), not a session log: import it first, "
        f"harness import auto {log} -o LOG"
    )


def add_session_option(p: argparse.ArgumentParser) -> None:
    """Add ``--session ID``, the session within a store URL, and ``--lock-timeout``."""
    p.add_argument(
        "--session", metavar="ID", help="the session, when LOG is a store URL (required then)"
    )
    add_lock_timeout_option(p)


def add_lock_timeout_option(p: argparse.ArgumentParser) -> None:
    """Add ``--lock-timeout SECONDS``: how long to wait for an SQLite store's write lock."""
    p.add_argument(
        "--lock-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds to wait for a sqlite:/// store's write lock before failing (default 60)",
    )


def with_lock_timeout(target: str, seconds: float | None) -> str:
    """Return a ``sqlite:///`` URL with ``?timeout=`` set from ``--lock-timeout`` (others as is)."""
    if seconds is None or not target.startswith("sqlite://") or "?" in target:
        return target
    return f"{target}?timeout={seconds:g}"


@contextmanager
def opened(
    target: str | Path,
    session: str | None,
    *,
    must_exist: bool = True,
    sync: SyncPolicy = "always",
    skip_bad_lines: bool = False,
    report: ReadReport | None = None,
) -> Iterator[tuple[EventStore, str]]:
    """Open a store and name one session: a URL with `session`, or a JSONL file (one session).

    With `must_exist` (every reader) nothing is created: a store that is not there is "no such
    store" and a session without events "no session ID", both exit 3.

    Raises:
        ConfigError: a URL without `session`, a file with another session's id, a bad URL.
        LogError: (with `must_exist`) no such store, or no such session in it.
        OSError: a JSONL path that is not a usable regular file (`check_file`).
    """
    from compaction.stores import FileStore, open_session_store

    store, name = open_session_store(
        target,
        session,
        sync=sync,
        skip_bad_lines=skip_bad_lines,
        report=report,
        create=not must_exist,
    )
    try:
        if isinstance(store, FileStore):
            check_file(store.path, must_exist=must_exist, what="session log")
        elif must_exist and not store.last_seq(name):
            raise _no_session(store, name)
        yield store, name
    finally:
        store.close()


def _no_session(store: EventStore, session: str) -> LogError:
    """Return "no session ID" for a store that holds none by that id (exit 3)."""
    from compaction import LogError
    from compaction.secrets import redact_url

    where = redact_url(store.url)
    error = LogError(f"{where}: no session {session!r} (harness sessions {where} lists them)")
    error.__cause__ = FileNotFoundError(2, "no such session", f"{where}#{session}")
    return error


@contextmanager
def open_session(
    args: argparse.Namespace,
    *,
    tokenizer: Tokenizer | None = None,
    sync: SyncPolicy = "always",
    skip_bad_lines: bool = False,
    must_exist: bool = True,
    agent: str = "main",
    policies: PolicyTable | None = None,
) -> Iterator[Session]:
    """Open the session LOG (and ``--session``) names, through `opened`."""
    from compaction import Session

    with (
        opened(
            with_lock_timeout(args.log, getattr(args, "lock_timeout", None)),
            args.session,
            must_exist=must_exist,
            sync=sync,
            skip_bad_lines=skip_bad_lines,
        ) as (store, name),
        Session(
            store=store, session=name, tokenizer=tokenizer, agent=agent, policies=policies
        ) as session,
    ):
        yield session


def read_log(args: argparse.Namespace, report: ReadReport) -> Generator[Event, None, None]:
    """Stream the events of LOG (a file, read with --skip-bad; or a store session)."""
    from compaction.stores import SessionSource

    with opened(args.log, args.session, skip_bad_lines=args.skip_bad, report=report) as (
        store,
        name,
    ):
        yield from SessionSource(store, name, owns_store=False, report=report).read_new()
