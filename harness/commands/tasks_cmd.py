"""`harness tasks LOG`: the shared task panel, once, as JSON, or live as the log grows."""

from __future__ import annotations

import argparse

from compaction import Session, TaskBoard
from harness.commands.stores import add_log_argument, add_session_option, open_session
from harness.output import (
    HelpFormatter,
    board_text,
    examples,
    print_json,
    show_panel,
    with_carried,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `tasks` command."""
    p = sub.add_parser(
        "tasks",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness tasks team.jsonl",
            "harness tasks team.jsonl --json",
            "harness tasks team.jsonl --follow",
        ),
        help="show the shared task list of a log",
        description=(
            "Print the shared task panel (task_create / task_update): the counts line, then one "
            "line per task with its status mark (✓ completed, ◉ in progress, ○ pending), id, "
            "subject, owner and blockers. Unlike the todo panel, a new turn does not empty it. "
            "Below it: the jobs still running (sub-agents, background commands) by id, and the "
            "approved plan's first line."
        ),
    )
    add_log_argument(p)
    add_session_option(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the tasks view as JSON: counts by status, the next id, every live task, "
        "the running jobs and the approved plan",
    )
    p.add_argument("--follow", action="store_true", help="redraw the panel as the log grows")
    p.add_argument(
        "--interval", type=float, default=0.5, help="seconds between checks with --follow"
    )
    p.set_defaults(func=run)


def board_json(board: TaskBoard) -> dict[str, object]:
    """Return the tasks view as plain JSON data."""
    return {
        "counts": board.counts(),
        "next_id": board.next_id,
        "tasks": [t.model_dump(mode="json") for t in board.live()],
    }


def run(args: argparse.Namespace) -> int:
    """Print the panel, or follow the log until interrupted."""
    with open_session(args, sync="batch") as session:
        return _show(args, session)


def _show(args: argparse.Namespace, session: Session) -> int:
    """Print the panel of an open session, or follow it."""
    if args.json:
        print_json(board_json(session.tasks) | session.carried.to_json())
        return 0
    return show_panel(
        session,
        lambda s: with_carried(board_text(s.tasks), s),
        follow=args.follow,
        interval=args.interval,
    )
