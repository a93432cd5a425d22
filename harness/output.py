"""Shared output helpers of the command line: a rich console, stable JSON, help and progress.

Invariants: progress is drawn on stderr, and only when stderr is a terminal: piped or captured
output never holds a progress line; JSON on stdout is the same bytes with or without it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from compaction import Session, TaskBoard, TodoPanel
from compaction.views import STATUS_MARKS, panel_line
from harness.plain import (
    API_PHRASES,
    DONE_STYLE,
    EXAMPLES_HEADING,
    PANEL_STYLES,
    HelpFormatter,
    cli_text,
    examples,
    notes_on_stderr,
    positive_int,
    print_json,
)

_STYLES = PANEL_STYLES


def console(*, wrap: bool = False) -> Console:
    """Return a console on stdout; plain text when stdout is not a terminal.

    Long lines are left whole (copyable) unless `wrap` is set, for panels and tables.
    """
    return Console(file=sys.stdout, highlight=False, soft_wrap=not wrap)


def panel_text(panel: TodoPanel) -> Text:
    """Return the task panel as styled text: counts line, then one marked line per item."""
    text = Text(panel.counts_line(), style="bold")
    for item in panel.todos:
        text.append("\n")
        text.append(f"{STATUS_MARKS[item.status]} ", style=_STYLES[item.status])
        text.append(item.content, style=DONE_STYLE if item.status == "completed" else "")
    return text


def board_text(board: TaskBoard) -> Text:
    """Return the shared task panel as styled text: counts line, then one line per live task."""
    text = Text(board.counts_line(), style="bold")
    for task in board.live():
        text.append("\n")
        text.append(panel_line(task), style=_STYLES[task.status])
    return text


def with_carried(text: Text, session: Session) -> Text:
    """Return a panel followed by the running jobs and the approved plan, when there are any."""
    lines = session.carried.lines()
    if lines:
        text.append("\n" + "\n".join(lines), style="cyan")
    return text


def show_panel(
    session: Session, render: Callable[[Session], Text], *, follow: bool, interval: float
) -> int:
    """Print a panel of the session once, or redraw it whenever it changes (`--follow`).

    On a terminal the panel is redrawn in place; through a pipe it is printed again, after a
    blank line, each time it changes.
    """
    out = console()
    shown = render(session)
    if not follow or not out.is_terminal:
        out.print(shown)
        out.file.flush()
        if not follow:
            return 0
        for now in _changes(session, render, shown, interval):
            out.print()
            out.print(now)
            out.file.flush()
    with Live(shown, console=out, auto_refresh=False) as live:
        for now in _changes(session, render, shown, interval):
            live.update(now, refresh=True)
    return 0


def _changes(
    session: Session, render: Callable[[Session], Text], shown: Text, interval: float
) -> Iterator[Text]:
    """Yield the panel each time the log grows and the panel differs from the last one shown."""
    while True:
        if session.refresh():
            now = render(session)
            if now != shown:
                shown = now
                yield now
        time.sleep(interval)


LARGE_BYTES = 1_000_000
"""Files at least this large get a progress bar (reading one takes a second or more)."""


def is_large(path: str | Path) -> bool:
    """Return True when `path` is a file big enough to deserve a progress bar."""
    p = Path(path)
    return p.is_file() and p.stat().st_size >= LARGE_BYTES


def count_lines(path: str | Path) -> int:
    """Count the newlines of a file, reading it in 1 MiB chunks (memory bounded)."""
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
    return n


Update = Callable[..., None]
"""``update(completed=None, *, total=None, description=None)`` of one progress bar."""


@contextmanager
def progress(
    description: str,
    total: float | None = None,
    *,
    show: bool = True,
    stream: Console | None = None,
) -> Iterator[Update]:
    """Draw one transient progress bar on stderr while the block runs; yield its updater.

    Nothing is drawn when `show` is false or stderr is not a terminal (the updater is then a
    no-op), so scripts and pipes see no progress output.

    Args:
        description: what is being done.
        total: the amount of work (None: unknown, the bar pulses).
        show: False for work too small to need a bar.
        stream: the console to draw on (default: stderr).
    """
    out = stream or Console(file=sys.stderr)
    if not show or not out.is_terminal:
        yield _nothing
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=out, transient=True) as bar:
        task = bar.add_task(description, total=total)

        def update(
            completed: float | None = None,
            *,
            total: float | None = None,
            description: str | None = None,
        ) -> None:
            bar.update(task, completed=completed, total=total, description=description)

        yield update


def _nothing(*args: object, **kwargs: object) -> None:
    """Ignore a progress update (no terminal to draw on)."""


__all__ = [
    "API_PHRASES",
    "EXAMPLES_HEADING",
    "LARGE_BYTES",
    "HelpFormatter",
    "Update",
    "board_text",
    "cli_text",
    "console",
    "count_lines",
    "examples",
    "is_large",
    "notes_on_stderr",
    "panel_text",
    "positive_int",
    "print_json",
    "progress",
    "show_panel",
]
