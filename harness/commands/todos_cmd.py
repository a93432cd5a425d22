"""`harness todos LOG`: the task panel, once, as JSON, or live as the log grows."""

from __future__ import annotations

import argparse

from compaction import Session
from harness.commands.stores import LOG_HELP, add_session_option, open_session
from harness.output import HelpFormatter, examples, panel_text, print_json, show_panel


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
    return show_panel(
        session, lambda s: panel_text(s.todos), follow=args.follow, interval=args.interval
    )
