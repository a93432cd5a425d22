"""`harness copy SRC DST`: copy sessions between stores (JSONL files, SQLite, PostgreSQL)."""

from __future__ import annotations

import argparse

from compaction import ConfigError, copy_session
from compaction.stores import FileStore, open_store, session_of
from harness.commands.stores import opened
from harness.files import check_file
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
            "refused, never merged."
        ),
    )
    p.add_argument("src", metavar="SRC", help="source store URL or .jsonl file")
    p.add_argument("dst", metavar="DST", help="destination store URL or .jsonl file")
    p.add_argument("--session", metavar="ID", help="copy only this session of SRC")
    p.add_argument("--as", dest="target", metavar="ID", help="its id in DST (one session only)")
    p.add_argument("--json", action="store_true", help="print the sessions copied as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Copy and print one line per session copied."""
    names = _sessions_to_copy(args)
    if args.target is not None and len(names) != 1:
        raise ConfigError(f"--as names one session, but {args.src} holds {len(names)}")
    copied: list[dict[str, object]] = []
    dst = open_store(args.dst)
    try:
        one_file = isinstance(dst, FileStore)
        if isinstance(dst, FileStore):
            check_file(dst.path, must_exist=False, what="session log")
        if one_file and len(names) != 1:
            raise ConfigError(
                f"{args.dst} is one JSONL file, but {args.src} holds {len(names)} sessions"
            )
        for name in names:
            with opened(args.src, name) as (src, session):
                dst_session = session_of(dst, None if one_file else args.target or session)
                n = copy_session(src, session, dst, dst_session)
                frm, to = f"{src.url}#{session}", f"{dst.url}#{dst_session}"
            copied.append({"from": frm, "to": to, "events": n})
            if not args.json:
                print(f"{frm} -> {to}: {n} events")
    finally:
        dst.close()
    if args.json:
        print_json({"copied": copied})
    return 0


def _sessions_to_copy(args: argparse.Namespace) -> list[str | None]:
    """The sessions of SRC to copy: --session's, or every session SRC holds."""
    if args.session is not None:
        return [args.session]
    src = open_store(args.src)
    try:
        if isinstance(src, FileStore):
            return [None]
        return [i.session for i in src.sessions()]
    finally:
        src.close()
