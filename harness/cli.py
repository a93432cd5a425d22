"""Entry point of the `harness` command: builds the parser from the command modules.

Each command lives in `harness.commands.<name>` with a `register(subparsers)` function that adds
its parser and sets `func`. Every failure is one line on stderr, never a traceback, and an exit
status (`EXIT_CODES`): 0 success; 1 a rejected tool call (nothing appended); 2 a usage or input
error (bad options, config, templates, a malformed log: `HarnessError`); 3 an I/O error (a file
that cannot be read or written, stdin or stdout closed, a broken pipe); 4 an unexpected error
(set ``HARNESS_DEBUG=1`` for its traceback); 130 interrupted.

Invariants: ``harness --version`` is answered before anything heavy is imported, and a command
line that names a command imports that command's module only (``harness.commands.COMMANDS``);
the toolkit's packages load their parts on first use, so each command pays for what it touches.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from harness.commands import COMMANDS, register_of

DISTRIBUTION = "context-harness"


def version() -> str:
    """Return the installed distribution's version (``context-harness``).

    The version is read from the first ``context_harness-*.dist-info/METADATA`` on `sys.path`
    (the one `importlib.metadata` finds, without importing it: that import alone costs half a
    bare interpreter start); `importlib.metadata` answers when there is none.
    """
    found = _metadata_version()
    if found is not None:
        return found
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _metadata_version() -> str | None:
    """Return the Version field of the distribution's first dist-info on `sys.path`, or None."""
    prefix = DISTRIBUTION.replace("-", "_") + "-"
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(".dist-info"):
                return _version_field(os.path.join(entry or ".", name, "METADATA"))
    return None


def _version_field(path: str) -> str | None:
    """Return the ``Version:`` header of a METADATA file (read at most 64 KiB), or None."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(1 << 16)
    except (OSError, UnicodeDecodeError):
        return None
    for line in head.splitlines():
        if not line:
            break
        if line.startswith("Version:"):
            return line.removeprefix("Version:").strip()
    return None


EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "a rejected tool call (nothing appended)",
    2: "usage or input error (options, config, templates, a malformed log, a transcript given "
    "as a log, a missing extra)",
    3: "I/O error (a file, store or session that is not there or cannot be read or written, "
    "stdin or stdout closed; a broken pipe, quietly)",
    4: "unexpected error (HARNESS_DEBUG=1 shows the traceback)",
    130: "interrupted",
}
"""What each exit status of `harness` means."""


class _VersionAction(argparse.Action):
    """``--version`` that looks the version up only when asked (argparse's reads it up front)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings,
            dest,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(f"harness {version()}")
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser with every command registered, or only `command`.

    Args:
        command: the name of the one command to register (its module alone is imported); None
            registers them all, for ``harness --help`` and for a name that is no command.
    """
    from harness.commands.env_options import environment_epilog
    from harness.plain import HelpFormatter, examples

    parser = argparse.ArgumentParser(
        prog="harness",
        description="Context Harness: todo_write, session logs, per-mode prompts and compaction.",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness demo",
            "harness import auto SESSION.jsonl -o s.jsonl && harness todos s.jsonl",
            "harness COMMAND --help",
            'eval "$(harness completion bash)"',
        )
        + "\n\n"
        + environment_epilog(),
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in [command] if command else COMMANDS:
        register_of(name)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (see `EXIT_CODES`)."""
    if sys.stdout is None:
        _say("harness: stdout is closed; nothing could be printed")
        return 3
    words = list(sys.argv[1:] if argv is None else argv)
    if words == ["--version"]:
        print(f"harness {version()}")
        return 0
    problem = _toolkit_problem()
    if problem is not None:
        print(f"harness: {problem}", file=sys.stderr)
        return 2
    from harness.plain import EnvValueError

    command = words[0] if words and words[0] in COMMANDS else None
    try:
        args = build_parser(command).parse_args(words)
    except EnvValueError as exc:  # a HARNESS_* default that cannot be used
        _say(f"harness: {exc}")
        return 2
    return _run(args)


def _toolkit_problem() -> str | None:
    """Return why the toolkit cannot be imported, in one line (a user's prompts.py), or None."""
    try:
        import compaction  # noqa: F401  (importing it checks no other `prompts` hides ours)
    except ImportError as exc:
        if os.environ.get("HARNESS_DEBUG"):
            raise
        return _one_line(exc)
    return None


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; turn every failure into one stderr line and an exit status."""
    from compaction import HarnessError, LogError
    from harness.plain import cli_text, notes_on_stderr

    name = f"harness {args.command}"
    try:
        with notes_on_stderr(args.command):
            status: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()  # the reader stopped reading (`| head`): quiet, as cat and grep are
        return 3
    except OSError as exc:
        _say(f"{name}: {_os_error(exc, args)}")
        return 3
    except LogError as exc:
        cause = exc.__cause__ or exc.__context__
        if not isinstance(cause, OSError) and (hint := _transcript_hint(args)) is not None:
            _say(f"{name}: {cli_text(hint)}")
            return 2
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


def _transcript_hint(args: argparse.Namespace) -> str | None:
    """The import command for a transcript given as LOG (`stores.transcript_hint`), else None."""
    from harness.commands.stores import transcript_hint

    return transcript_hint(args)


def _os_error(exc: OSError, args: argparse.Namespace) -> str:
    """Return ``FILE: cause`` for an OSError, naming the command's file when the error does not."""
    target = exc.filename or getattr(args, "log", None) or getattr(args, "output", None)
    cause = exc.strerror or str(exc)
    return f"{target}: {cause}" if target else cause


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:2000]


def _say(line: str) -> None:
    from compaction.secrets import redact_url

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
