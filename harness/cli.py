"""Entry point of the `harness` command: builds the parser from the command modules.

Each command lives in `harness.commands.<name>` with a `register(subparsers)` function that adds
its parser and sets `func`. Every failure is one line on stderr, never a traceback, and an exit
status (`EXIT_CODES`): 0 success; 1 a rejected tool call (nothing appended); 2 a usage or input
error (bad options, config, templates, a malformed log: `HarnessError`); 3 an I/O error (a file
that cannot be read or written, stdin or stdout closed, a broken pipe); 4 an unexpected error
(set ``HARNESS_DEBUG=1`` for its traceback); 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import metadata

from compaction import HarnessError, LogError, redact_url
from harness.commands import COMMANDS
from harness.output import HelpFormatter, cli_text, examples, notes_on_stderr


def version() -> str:
    """Return the installed distribution's version (``context-harness``)."""
    try:
        return metadata.version("context-harness")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "a rejected tool call (nothing appended)",
    2: "usage or input error (options, config, templates, a malformed log)",
    3: "I/O error (a file cannot be read or written, stdin or stdout closed, broken pipe)",
    4: "unexpected error (HARNESS_DEBUG=1 shows the traceback)",
    130: "interrupted",
}
"""What each exit status of `harness` means."""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every command registered."""
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Context Harness: todo_write, session logs, per-mode prompts and compaction.",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness demo",
            "harness import auto SESSION.jsonl -o s.jsonl && harness todos s.jsonl",
            "harness COMMAND --help",
        ),
    )
    parser.add_argument("--version", action="version", version=f"harness {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for register in COMMANDS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (see `EXIT_CODES`)."""
    if sys.stdout is None:
        _say("harness: stdout is closed; nothing could be printed")
        return 3
    parser = build_parser()
    args = parser.parse_args(argv)
    name = f"harness {args.command}"
    try:
        with notes_on_stderr(args.command):
            status: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        _say(f"{name}: stdout: broken pipe (the reader stopped reading)")
        return 3
    except OSError as exc:
        _say(f"{name}: {_os_error(exc, args)}")
        return 3
    except LogError as exc:
        cause = exc.__cause__ or exc.__context__
        _say(f"{name}: {cli_text(_one_line(exc))}")
        return 3 if isinstance(cause, OSError) else 2
    except HarnessError as exc:
        _say(f"{name}: {cli_text(_one_line(exc))}")
        return 2
    except KeyboardInterrupt:
        return 130
    except (Exception, RecursionError) as exc:  # never a traceback, unless asked for
        if os.environ.get("HARNESS_DEBUG"):
            raise
        _say(f"{name}: unexpected error: {type(exc).__name__}: {_one_line(exc)}")
        return 4
    return status


def _os_error(exc: OSError, args: argparse.Namespace) -> str:
    """Return ``FILE: cause`` for an OSError, naming the command's file when the error does not."""
    target = exc.filename or getattr(args, "log", None) or getattr(args, "output", None)
    cause = exc.strerror or str(exc)
    return f"{target}: {cause}" if target else cause


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:2000]


def _say(line: str) -> None:
    if sys.stderr is not None:
        print(redact_url(line), file=sys.stderr)  # a store URL's password never reaches stderr


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
