"""Shared output helpers of the command line: a rich console and stable JSON."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.text import Text

from compaction import STATUS_MARKS, TodoPanel

_STYLES = {"completed": "green", "in_progress": "bold yellow", "pending": "dim"}


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
