"""The command line's light output helpers: stable JSON, help text, error wording, notes.

Nothing here imports more than the standard library, so the parser of any command, the error
handling of every run and a command's plain path (`harness todos LOG`, into a pipe or drawn for
a terminal) start without rich, pydantic or jinja2; `harness.output` re-exports them beside its
rich helpers, and styles its panels with `PANEL_STYLES`, the one table of the panel's styles.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from compaction import ConfigError


def print_json(obj: object) -> None:
    """Print `obj` as indented JSON with sorted keys (same input, same bytes)."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


API_PHRASES: dict[str, str] = {
    "read with skip_bad_lines=True (CLI: --skip-bad)": "run again with --skip-bad",
    "force it with force=True, CLI --force": "force it with --force",
}
"""Phrases of the Python API's error messages, and how the command line says them."""


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


class EnvValueError(ConfigError):
    """An environment variable that gives an option its default holds a value it cannot take."""

    def __init__(self, name: str, value: str, reason: str) -> None:
        self.name = name
        shown = value if len(value) <= 80 else value[:77] + "..."
        super().__init__(f"{name}={shown!r}: {reason}; fix it or unset it")


EXAMPLES_HEADING = "examples:"


def examples(*lines: str) -> str:
    """Return the epilog of a command's --help: one example command a line."""
    return "\n".join([EXAMPLES_HEADING, *(f"  {line}" for line in lines)])


class HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions as usual, but keeps the examples epilog one command a line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(EXAMPLES_HEADING):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


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


PANEL_STYLES: dict[str, str] = {
    "completed": "green",
    "in_progress": "bold yellow",
    "pending": "dim",
    "deleted": "dim",
}
"""The style of each status's mark (or task line) in a panel, in rich's style words."""
DONE_STYLE = "strike dim"
"""The style of a completed item's content."""
SGR_CODES = {"bold": "1", "dim": "2", "italic": "3", "strike": "9", "green": "32", "yellow": "33"}
"""Each style word of the panels and its ANSI SGR code, in the order rich writes them."""
STYLED_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR")
"""Environment variables that change how rich styles output (the plain path then steps aside)."""


def styled(text: str, *styles: str) -> str:
    """Return `text` wrapped in the ANSI codes of `styles` combined, as rich writes it."""
    words = set(" ".join(styles).split())
    codes = ";".join(code for word, code in SGR_CODES.items() if word in words)
    return f"\x1b[{codes}m{text}\x1b[0m" if codes else text


def plain_terminal() -> bool:
    """Tell whether rich would draw on this stdout exactly as `styled` does (a plain terminal).

    That is a POSIX terminal whose ``TERM`` is not dumb, with none of `STYLED_ENV` set.
    """
    term = os.environ.get("TERM", "").strip().lower()
    return (
        os.name == "posix"
        and term not in ("dumb", "unknown")
        and not any(name in os.environ for name in STYLED_ENV)
    )


__all__ = [
    "API_PHRASES",
    "DONE_STYLE",
    "EXAMPLES_HEADING",
    "PANEL_STYLES",
    "SGR_CODES",
    "STYLED_ENV",
    "EnvValueError",
    "HelpFormatter",
    "cli_text",
    "examples",
    "notes_on_stderr",
    "plain_terminal",
    "positive_int",
    "print_json",
    "styled",
]
