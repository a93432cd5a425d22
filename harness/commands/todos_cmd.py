"""`harness todos LOG`: the task panel, once, as JSON, or live as the log grows.

A new turn empties the panel, but an unfinished list from an earlier turn is still the agent's
latest list (a Checkpoint carries it): then the panel shows that list under a ``carried from
turn N`` line instead of looking empty.

When the panel is all that is asked (a JSONL file, no ``--session``, ``--json`` or
``--follow``), the log is folded by the JSONL store's standard-library fold
(`compaction.stores.fold_plain`) and the panel drawn here without rich or pydantic: as plain
lines into a pipe, with the ANSI styles rich would write on a plain terminal (`plain_panel`).

Invariants: `plain_panel`'s text is byte for byte what the full path prints, into a pipe and on
a terminal (`tests/e2e/test_todos_plain.py` compares them); anything it does not take (a store,
a log the fold refuses, content rich would change, a terminal rich styles otherwise) returns
None and the full path answers.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.commands.stores import add_log_argument, add_session_option
from harness.plain import (
    DONE_STYLE,
    PANEL_STYLES,
    STYLED_ENV,
    HelpFormatter,
    examples,
    plain_terminal,
    styled,
)

if TYPE_CHECKING:  # imported where used: the plain path into a pipe needs none of them
    from rich.text import Text

    from compaction import Session, TodoPanel
    from compaction.stores import PlainTodos


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


def carried_line(turn: int, seq: int) -> str:
    """Return the line above a list carried from `turn`, written at `seq` (this turn's is empty)."""
    return (
        f"carried from turn {turn}: no list written in this turn; the latest list "
        f"(seq {seq}) still has unfinished items"
    )


def latest_line(turn: int, seq: int, done: int) -> str:
    """Return the line above an empty panel whose latest list, all `done`, is an earlier turn's."""
    return f"no list in this turn; the latest, seq {seq} in turn {turn}: all {done} completed"


def todos_text(session: Session) -> Text:
    """Return the panel, or the carried list under its `carried_line` when the panel is empty.

    An empty panel whose latest list (an earlier turn's) is all done says where that list is.
    """
    from rich.text import Text

    from harness.output import panel_text, with_carried

    latest = latest_list(session)  # one read of the log, whichever line it leads to
    if latest is None:
        return with_carried(panel_text(session.todos), session)
    seq = latest.panel.seq or 0
    if all(t.status == "completed" for t in latest.panel.todos):
        text = Text(latest_line(latest.turn, seq, len(latest.panel.todos)) + "\n", style="italic")
        text.append_text(panel_text(session.todos))
    else:
        text = Text(carried_line(latest.turn, seq) + "\n", style="italic")
        text.append_text(panel_text(latest.panel))
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
    add_log_argument(p)
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

    When the panel is all that is asked, a JSONL log is drawn without pydantic or rich
    (`plain_panel`).
    """
    text = plain_panel(args, terminal=sys.stdout.isatty())
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


def plain_panel(args: argparse.Namespace, *, terminal: bool) -> str | None:
    """Return what `harness todos LOG` prints, drawn without rich or pydantic; None: not taken."""
    if args.session is not None or args.json or args.follow or "://" in args.log:
        return None
    if any(name in os.environ for name in STYLED_ENV) or (terminal and not plain_terminal()):
        return None
    from compaction.stores import fold_plain, read_plain

    data = read_plain(args.log)
    state = None if data is None else fold_plain(data, exact=False)
    if state is None or state.carries:
        return None
    carried = not state.panel and any(status != "completed" for _, status in state.latest)
    items = state.latest if carried else state.panel
    if not all(text.isprintable() and text == text.rstrip() for text, _ in items):
        return None  # rich would change the text: control characters, trailing spaces
    turn = max(state.latest_turn, 1)
    if carried:
        line: str | None = carried_line(turn, state.latest_seq)
    elif not state.panel and state.latest:
        line = latest_line(turn, state.latest_seq, len(state.latest))
    else:
        line = None
    lines = _panel_lines(items, terminal, italic=line is not None)
    if line is not None:
        lines.insert(0, styled(line, "italic") if terminal else line)
    return "\n".join(lines) + "\n"


def _panel_lines(items: PlainTodos, terminal: bool, *, italic: bool) -> list[str]:
    """Return the panel's lines: plain, or styled as `harness.output.panel_text` styles them."""
    from compaction.views import STATUS_MARKS, counts_line

    head = counts_line(status for _, status in items)
    if not terminal:
        return [head] + [f"{STATUS_MARKS[status]} {text}" for text, status in items]
    base = ("bold", "italic") if italic else ("bold",)
    lines = [styled(head, *base)]
    for text, status in items:
        look = DONE_STYLE if status == "completed" else ""
        lines.append(
            styled(f"{STATUS_MARKS[status]} ", *base, PANEL_STYLES[status])
            + styled(text, *base, look)
        )
    return lines
