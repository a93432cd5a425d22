"""`harness todos LOG`: the task panel, once, as JSON, or live as the log grows.

A new turn empties the panel, but an unfinished list from an earlier turn is still the agent's
latest list (a Checkpoint carries it): then the panel shows that list under a ``carried from
turn N`` line instead of looking empty.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.commands.stores import LOG_HELP, add_session_option
from harness.commands.todos_plain import plain_todos
from harness.plain import HelpFormatter, examples

if TYPE_CHECKING:  # imported where used: the plain path into a pipe needs none of them
    from rich.text import Text

    from compaction import Session, TodoPanel


@dataclass(frozen=True)
class Carried:
    """An unfinished list written in an earlier turn and not rewritten since."""

    turn: int
    """The turn (1-based, counting ``turn/start`` events) the list was written in."""
    panel: TodoPanel
    """The list, with the seq of the ``todo/write`` that wrote it."""


def carried_list(session: Session) -> Carried | None:
    """Return the latest list when the panel is empty but that list is unfinished, else None."""
    if all(t.status == "completed" for t in session.latest_todos):
        return None
    return latest_list(session)


def latest_list(session: Session) -> Carried | None:
    """Return the latest list, and its turn, when this turn's panel is empty; else None."""
    from compaction import TodoPanel, TodoWritten, TurnStarted

    if session.todos.todos or not session.latest_todos:
        return None
    turn, written, panel = 0, 0, None
    for event in session.events():
        if isinstance(event, TurnStarted):
            turn += 1
        elif isinstance(event, TodoWritten):
            written, panel = turn, TodoPanel(todos=event.data.todos, seq=event.seq)
    return None if panel is None else Carried(turn=max(written, 1), panel=panel)


def carried_line(carried: Carried) -> str:
    """Return the line above a carried list (the panel of this turn is empty)."""
    return (
        f"carried from turn {carried.turn}: no list written in this turn; the latest list "
        f"(seq {carried.panel.seq}) still has unfinished items"
    )


def latest_line(latest: Carried) -> str:
    """Return the line above an empty panel whose latest list, all done, is an earlier turn's."""
    done = sum(1 for t in latest.panel.todos if t.status == "completed")
    return (
        f"no list in this turn; the latest, seq {latest.panel.seq} in turn {latest.turn}: "
        f"all {done} completed"
    )


def todos_text(session: Session) -> Text:
    """Return the panel, or the carried list under its `carried_line` when the panel is empty.

    An empty panel whose latest list (an earlier turn's) is all done says where that list is.
    """
    from rich.text import Text

    from harness.output import panel_text, with_carried

    carried = carried_list(session)
    if carried is None:
        latest = latest_list(session)
        if latest is None:
            return with_carried(panel_text(session.todos), session)
        text = Text(latest_line(latest) + "\n", style="italic")
        text.append_text(panel_text(session.todos))
        return with_carried(text, session)
    text = Text(carried_line(carried) + "\n", style="italic")
    text.append_text(panel_text(carried.panel))
    return with_carried(text, session)


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
            "(✓ completed, ◉ in progress, ○ pending). A new turn empties the panel; an "
            "unfinished list from an earlier turn is shown under 'carried from turn N'."
        ),
    )
    p.add_argument("log", metavar="LOG", help=LOG_HELP)
    add_session_option(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the todos view as JSON: counts by status, the source seq, the items, "
        "the list carried from an earlier turn (or null), the running jobs and the approved plan",
    )
    p.add_argument("--follow", action="store_true", help="redraw the panel as the log grows")
    p.add_argument(
        "--interval", type=float, default=0.5, help="seconds between checks with --follow"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the panel, or follow the log until interrupted.

    Into a pipe, a plain JSONL log is folded without pydantic or rich (`todos_plain`).
    """
    if not sys.stdout.isatty():
        text = plain_todos(args.log, session=args.session, json_out=args.json, follow=args.follow)
        if text is not None:
            sys.stdout.write(text)
            return 0
    from harness.commands.stores import open_session

    with open_session(args, sync="batch") as session:
        return _show(args, session)


def _show(args: argparse.Namespace, session: Session) -> int:
    """Print the panel of an open session, or follow it."""
    from harness.output import print_json, show_panel

    if args.json:
        carried = carried_list(session)
        print_json(
            {"counts": session.todos.counts(), **session.todos.model_dump(mode="json")}
            | {"carried": None if carried is None else _carried_json(carried)}
            | session.carried.to_json()
        )
        return 0
    return show_panel(session, todos_text, follow=args.follow, interval=args.interval)


def _carried_json(carried: Carried) -> dict[str, object]:
    return {"turn": carried.turn, **carried.panel.model_dump(mode="json")}
