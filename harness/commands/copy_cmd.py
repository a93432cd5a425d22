"""`harness copy SRC DST`: copy sessions between stores (JSONL files, SQLite, PostgreSQL)."""

from __future__ import annotations

import argparse

from compaction import ConfigError, copy_session, is_store_url, open_store, redact_url
from harness.commands.stores import store_and_session
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
    if is_store_url(args.src) and args.session is None:
        src = open_store(args.src)
        try:
            names = [i.session for i in src.sessions()]
        finally:
            src.close()
    else:
        names = [args.session]
    if args.target is not None and len(names) != 1:
        raise ConfigError(f"--as names one session, but {redact_url(args.src)} holds {len(names)}")
    if not is_store_url(args.dst) and len(names) != 1:
        raise ConfigError(
            f"{redact_url(args.dst)} is one JSONL file, but {redact_url(args.src)} holds "
            f"{len(names)} sessions"
        )
    copied: list[dict[str, object]] = []
    for name in names:
        with store_and_session(args.src, name) as (src, session):
            target = args.target
            if is_store_url(args.dst):
                with store_and_session(args.dst, target or session) as (dst, dst_session):
                    n = copy_session(src, session, dst, dst_session)
            else:
                with store_and_session(args.dst, None) as (dst, dst_session):
                    n = copy_session(src, session, dst, dst_session)
            copied.append({"from": f"{src.url}#{session}", "to": f"{dst.url}#{dst_session}"})
            copied[-1]["events"] = n
            if not args.json:
                print(f"{src.url}#{session} -> {dst.url}#{dst_session}: {n} events")
    if args.json:
        print_json({"copied": copied})
    return 0
