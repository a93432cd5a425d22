"""`harness copy SRC DST`: copy sessions between stores (JSONL files, SQLite, PostgreSQL)."""

from __future__ import annotations

import argparse
import sys

from compaction import ConfigError, LogError, open_store
from compaction.secrets import redact_url
from compaction.stores import FileStore, copy_session, is_staging
from harness.commands.stores import add_lock_timeout_option, opened, with_lock_timeout
from harness.output import HelpFormatter, examples, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `copy` command."""
    p = sub.add_parser(
        "copy",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness copy s.jsonl sqlite:///sessions.db --as s1",
            "harness copy sqlite:///sessions.db backup.jsonl --session s1",
        ),
        help="copy sessions from one store to another",
        description=(
            "Copy sessions, event for event and seq for seq, between stores. SRC and DST are "
            "store URLs (jsonl:///folder, sqlite:///file.db, postgresql://...) or .jsonl files "
            "(one session each, named by the file's stem). From a URL, every session is copied "
            "unless --session names one. A destination session that already holds events is "
            "refused, never merged. Each session is copied atomically (a temporary file renamed "
            "into a JSONL folder, a staging session renamed in one transaction in SQL): a "
            "failed copy leaves no destination session. A missing or damaged source session is "
            "refused."
        ),
    )
    p.add_argument("src", metavar="SRC", help="source store URL or .jsonl file")
    p.add_argument("dst", metavar="DST", help="destination store URL or .jsonl file")
    p.add_argument("--session", metavar="ID", help="copy only this session of SRC")
    p.add_argument("--as", dest="target", metavar="ID", help="its id in DST (one session only)")
    p.add_argument("--json", action="store_true", help="print the sessions copied as JSON")
    add_lock_timeout_option(p)
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue a failed copy into an SQL store from its staging session",
    )
    p.add_argument(
        "--skip-bad",
        action="store_true",
        help="copy the other sessions when some entries of SRC are damaged (each reported)",
    )
    p.set_defaults(func=run)


def _listed(args: argparse.Namespace) -> tuple[list[str | None], list[str]]:
    """Return the sessions of SRC to copy (staging sessions left out) and its bad entries."""
    if args.session is not None:
        return [args.session], []
    src = open_store(args.src, create=False)
    try:
        if isinstance(src, FileStore):
            return [None], []
        names: list[str | None] = [i.session for i in src.sessions() if not is_staging(i.session)]
        return names, list(getattr(src, "bad_entries", []))
    finally:
        src.close()


def _one_file(url: str) -> bool:
    """Tell whether DST is one JSONL file (one session) rather than a store of many."""
    dst = open_store(url)
    try:
        return isinstance(dst, FileStore)
    finally:
        dst.close()


def _copy_one(args: argparse.Namespace, name: str | None, one_file: bool) -> dict[str, object]:
    with opened(args.src, name) as (src, session):
        target = None if one_file else (args.target or session)
        with opened(args.dst, target, must_exist=False) as (dst, dst_session):
            n = copy_session(src, session, dst, dst_session, resume=args.resume)
            return {
                "from": f"{redact_url(src.url)}#{session}",
                "to": f"{redact_url(dst.url)}#{dst_session}",
                "events": n,
            }


def run(args: argparse.Namespace) -> int:
    """Copy and print one line per session copied."""
    args.src = with_lock_timeout(args.src, args.lock_timeout)
    args.dst = with_lock_timeout(args.dst, args.lock_timeout)
    names, bad = _listed(args)
    if bad and not args.skip_bad:
        raise LogError(
            f"{redact_url(args.src)}: {len(bad)} entries are not sessions (first: {bad[0]}); "
            "nothing was copied: fix or move them, or pass --skip-bad to copy the rest"
        )
    if args.target is not None and len(names) != 1:
        raise ConfigError(f"--as names one session, but {redact_url(args.src)} holds {len(names)}")
    one_file = _one_file(args.dst)
    if one_file and len(names) != 1:
        raise ConfigError(
            f"{redact_url(args.dst)} is one JSONL file, but {redact_url(args.src)} holds "
            f"{len(names)} sessions"
        )
    copied: list[dict[str, object]] = []
    skipped: list[str] = list(bad)
    for name in names:
        try:
            row = _copy_one(args, name, one_file)
        except LogError as exc:
            if len(names) == 1:
                raise
            if not args.skip_bad:
                done = ", ".join(str(c["from"]) for c in copied) or "none"
                raise LogError(
                    f"{exc} (copied before it, each whole: {done}; pass --skip-bad to copy "
                    "the rest)"
                ) from exc
            skipped.append(" ".join(str(exc).split())[:300])
            continue
        copied.append(row)
        if not args.json:
            print(f"{row['from']} -> {row['to']}: {row['events']} events")
    for line in skipped:
        print(f"harness copy: skipped: {line}", file=sys.stderr)
    if args.json:
        print_json({"copied": copied, "skipped": skipped})
    return 0
