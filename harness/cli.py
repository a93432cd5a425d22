"""Entry point of the `harness` command: builds the parser from the command modules.

Each command lives in `harness.commands.<name>` with a `register(subparsers)` function that adds
its parser and sets `func`. Errors of the toolkit (`HarnessError`) print one clear line and exit
with status 2; a rejected tool call exits with status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from compaction import HarnessError
from harness.commands import COMMANDS
from harness.output import notes_on_stderr


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every command registered."""
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Context Harness: todo_write, session logs, per-mode prompts and compaction.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for register in COMMANDS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with notes_on_stderr(args.command):
            status: int = args.func(args)
    except HarnessError as exc:
        print(f"harness {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return status


if __name__ == "__main__":
    raise SystemExit(main())
