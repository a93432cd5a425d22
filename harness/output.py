"""Shared output helpers of the command line: a rich console, stable JSON, help and progress.

Invariants: progress is drawn on stderr, and only when stderr is a terminal: piped or captured
output never holds a progress line; JSON on stdout is the same bytes with or without it.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from compaction import Session, TaskBoard, TodoPanel
from compaction.views import STATUS_MARKS, panel_line

_STYLES = {
    "completed": "green",
    "in_progress": "bold yellow",
    "pending": "dim",
    "deleted": "dim",
}


def console(*, wrap: bool = False) -> Console:
    """Return a console on stdout; plain text when stdout is not a terminal.

    Long lines are left whole (copyable) unless `wrap` is set, for panels and tables.
    """
    return Console(file=sys.stdout, highlight=False, soft_wrap=not wrap)


def print_json(obj: object) -> None:
    """Print `obj` as indented JSON with sorted keys (same input, same bytes)."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def panel_text(panel: TodoPanel) -> Text:
    """Return the task panel as styled text: counts line, then one marked line per item."""
    text = Text(panel.counts_line(), style="bold")
    for item in panel.todos:
        text.append("\n")
        text.append(f"{STATUS_MARKS[item.status]} ", style=_STYLES[item.status])
        text.append(item.content, style="strike dim" if item.status == "completed" else "")
    return text


def board_text(board: TaskBoard) -> Text:
    """Return the shared task panel as styled text: counts line, then one line per live task."""
    text = Text(board.counts_line(), style="bold")
    for task in board.live():
        text.append("\n")
        text.append(panel_line(task), style=_STYLES[task.status])
    return text


API_PHRASES: dict[str, str] = {
    "read with skip_bad_lines=True (CLI: --skip-bad)": "run again with --skip-bad",
    "force it with force=True, CLI --force": "force it with --force",
}
"""Phrases of the Python API's error messages, and how the command line says them."""


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


def cli_text(text: str, options: Mapping[str, str] | None = None) -> str:
    """Return an error message in the command line's words.

    Args:
        text: the message (of a `HarnessError`).
        options: Python names of the values the command's options set (``window_tokens`` for
            ``--window``); each whole-word name in `text` becomes its option.
    """
    for api, cli in API_PHRASES.items():
        text = text.replace(api, cli)
    for name, option in (options or {}).items():
        text = re.sub(rf"(?<![\w-]){re.escape(name)}\b", option, text)
    return text


def positive_int(text: str) -> int:
    """Parse an option's value as an integer of at least 1 (an argparse ``type``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


EXAMPLES_HEADING = "examples:"
LARGE_BYTES = 1_000_000
"""Files at least this large get a progress bar (reading one takes a second or more)."""


def examples(*lines: str) -> str:
    """Return the epilog of a command's --help: one example command a line."""
    return "\n".join([EXAMPLES_HEADING, *(f"  {line}" for line in lines)])


class HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions as usual, but keeps the examples epilog one command a line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(EXAMPLES_HEADING):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


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


@contextmanager
def notes_on_stderr(command: str) -> Iterator[None]:
    """Print the toolkit's warnings (e.g. a torn log tail cut and saved) as one stderr line each."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(f"harness {command}: note: %(message)s"))
    logger = logging.getLogger("compaction")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
