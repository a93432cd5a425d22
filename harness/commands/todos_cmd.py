"""`harness todos LOG`: the task panel, once, as JSON, or live as the log grows."""

from __future__ import annotations

import argparse
import time

from rich.live import Live

from compaction import Session
from harness.commands.stores import LOG_HELP, add_session_option, open_session
from harness.output import HelpFormatter, console, examples, panel_text, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `todos` command."""
    p = sub.add_parser(
        "todos",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness todos s.jsonl",
            "harness todos s.jsonl --follow",
        ),
        help="show the task panel of a log",
        description=(
            "Print the task panel: the counts line, then one line per item with its status mark "
            "(✓ completed, ◉ in progress, ○ pending). A new turn empties the panel."
        ),
    )
    p.add_argument("log", metavar="LOG", help=LOG_HELP)
    add_session_option(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the todos view as JSON: counts by status, the source seq, the items",
    )
    p.add_argument("--follow", action="store_true", help="redraw the panel as the log grows")
    p.add_argument(
        "--interval", type=float, default=0.5, help="seconds between checks with --follow"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the panel, or follow the log until interrupted."""
    with open_session(args, sync="batch") as session:
        return _show(args, session)


def _show(args: argparse.Namespace, session: Session) -> int:
    """Print the panel of an open session, or follow it."""
    if args.json:
        print_json({"counts": session.todos.counts(), **session.todos.model_dump(mode="json")})
        return 0
    out = console()
    if not args.follow:
        out.print(panel_text(session.todos))
        return 0
    if not out.is_terminal:
        return _follow_plain(session, args.interval)
    with Live(panel_text(session.todos), console=out, auto_refresh=False) as live:
        while True:
            if session.refresh():
                live.update(panel_text(session.todos), refresh=True)
            time.sleep(args.interval)


def _follow_plain(session: Session, interval: float) -> int:
    """Print the panel again, after a blank line, whenever it changes (for pipes and logs)."""
    out = console()
    shown = session.todos
    out.print(panel_text(shown))
    out.file.flush()
    while True:
        if session.refresh() and session.todos != shown:
            shown = session.todos
            out.print()
            out.print(panel_text(shown))
            out.file.flush()
        time.sleep(interval)
