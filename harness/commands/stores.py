"""What every command that takes a LOG shares: a JSONL path, or a store URL with ``--session``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from compaction import (
    ConfigError,
    Event,
    EventStore,
    JsonlStore,
    PolicyTable,
    ReadReport,
    Session,
    SyncPolicy,
    Tokenizer,
    is_store_url,
    open_store,
    read_events,
    redact_url,
)
from harness.files import check_file

LOG_HELP = (
    "session log (JSONL file), or a store URL (jsonl:///folder, sqlite:///file.db, "
    "postgresql://user@host/db) with --session"
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


def open_session(
    args: argparse.Namespace,
    *,
    tokenizer: Tokenizer | None = None,
    sync: SyncPolicy = "always",
    skip_bad_lines: bool = False,
    must_exist: bool = True,
    agent: str = "main",
    policies: PolicyTable | None = None,
) -> Session:
    """Open the session LOG names (`Session.open`).

    A LOG that is a file path is checked first (`check_file`): a directory, a FIFO, a dangling
    symlink or (with `must_exist`) a missing file fails with one clear line.
    """
    if not is_store_url(args.log):
        if args.session is not None:
            raise ConfigError(f"{redact_url(args.log)}: --session needs a store URL")
        check_file(args.log, must_exist=must_exist, what="session log")
    return Session.open(
        with_lock_timeout(args.log, getattr(args, "lock_timeout", None)),
        session=args.session,
        tokenizer=tokenizer,
        sync=sync,
        skip_bad_lines=skip_bad_lines,
        agent=agent,
        policies=policies,
    )


@contextmanager
def store_and_session(target: str, session: str | None) -> Iterator[tuple[EventStore, str]]:
    """Open a store and name one session: a URL with `session`, or a ``.jsonl`` file.

    A JSONL file ``dir/name.jsonl`` is session ``name`` of the folder ``dir``.
    """
    if is_store_url(target):
        if session is None:
            raise ConfigError(f"{redact_url(target)}: name the session with --session")
        store = open_store(target)
    else:
        path = Path(target)
        if session is not None:
            raise ConfigError(
                f"{redact_url(target)}: --session needs a store URL; a JSONL file is one session"
            )
        if path.suffix != ".jsonl":
            raise ConfigError(f"{redact_url(target)}: not a store URL, and not a .jsonl file")
        store, session = JsonlStore(path.parent), path.stem
    try:
        yield store, session
    finally:
        store.close()


def read_log(args: argparse.Namespace, report: ReadReport) -> Iterator[Event]:
    """Stream the events of LOG (a file, read with --skip-bad; or a store session)."""
    if not is_store_url(args.log):
        if args.session is not None:
            raise ConfigError(f"{redact_url(args.log)}: --session needs a store URL")
        check_file(args.log, what="session log")
        yield from read_events(args.log, skip_bad_lines=args.skip_bad, report=report)
        return
    log = with_lock_timeout(args.log, getattr(args, "lock_timeout", None))
    with store_and_session(log, args.session) as (store, session):
        for event in store.read(session):
            report.lines += 1
            report.events += 1
            report.by_type[event.type] += 1
            yield event
