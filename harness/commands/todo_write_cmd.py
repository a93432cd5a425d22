"""`harness todo-write LOG`: run the todo_write tool against a log, as a model would."""

from __future__ import annotations

import argparse
import errno
import sys
from typing import TYPE_CHECKING

from harness.commands.stores import LOG_HELP, add_session_option, open_session
from harness.commands.todo_write_plain import MAX_ARGUMENT_BYTES, plain_todo_write
from harness.plain import HelpFormatter, examples, print_json

if TYPE_CHECKING:  # imported where used: an accepted call on a JSONL file needs no model
    from compaction import PolicyTable


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `todo-write` command."""
    p = sub.add_parser(
        "todo-write",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness todo-write s.jsonl --args "
            '\'{"todos": [{"content": "Run tests", "status": "in_progress"}]}\'',
            "echo '{\"todos\": []}' | harness todo-write s.jsonl --json",
        ),
        help="call todo_write on a log (arguments as JSON on stdin or --args)",
        description=(
            "Call the todo_write tool against LOG with the arguments a model would send. Prints "
            "the model-facing result; exits 1 when the call is rejected or refused (nothing is "
            "appended). The mode is the one of LOG's latest turn/start unless --mode is given: "
            "in a mode that forbids todo_write (plan) the call is refused."
        ),
    )
    p.add_argument("log", metavar="LOG", help=LOG_HELP + "; created if missing")
    add_session_option(p)
    p.add_argument(
        "--args",
        dest="arguments",
        metavar="ARGS",
        help="the call's arguments as a JSON string (default: read from stdin)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON: is_error, content (the model-facing text), todos",
    )
    p.add_argument(
        "--allow-parallel",
        action="store_true",
        help="allow several in_progress items (default: as the mode says)",
    )
    p.add_argument(
        "--mode",
        help="run under this mode instead of the latest turn's (plan: refused, nothing appended)",
    )
    p.add_argument("--modes-file", metavar="FILE", help="user modes (TOML or JSON)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute the call and print the result.

    An accepted call on a JSONL file is written without the models (`todo_write_plain`, the
    same bytes); any other call takes the session's tool.
    """
    raw: str | bytes = args.arguments if args.arguments is not None else read_stdin()
    written = plain_todo_write(
        args.log,
        raw,
        session=args.session,
        modes_file=args.modes_file,
        mode=args.mode,
        allow_parallel=args.allow_parallel,
    )
    if written is None:
        content, is_error, todos = session_call(args, raw)
    else:
        content, is_error, todos = written.content, False, list(written.todos)
    if args.json:
        print_json({"is_error": is_error, "content": content, "todos": todos})
    else:
        print(content)
    return 1 if is_error else 0


def session_call(args: argparse.Namespace, raw: str | bytes) -> tuple[str, bool, list[object]]:
    """Run the call through `Session.todo_write`; return its text, whether it failed, the list."""
    with open_session(args, must_exist=False, policies=policies(args)) as session:
        result = session.todo_write(
            raw, allow_parallel_in_progress=True if args.allow_parallel else None, mode=args.mode
        )
        todos: list[object] = [t.model_dump() for t in session.todos.todos]
    return result.content, result.is_error, todos


def policies(args: argparse.Namespace) -> PolicyTable:
    """Return the policy table of the modes the call may run under; check ``--mode`` names one.

    Without ``--modes-file`` this is the shipped table of the built-in modes (`builtin_policies`,
    which a test keeps equal to what `prompts` renders), so no template is rendered; `prompts`
    is loaded only for a user's modes, or to word the error for an unknown ``--mode``.

    Raises:
        ConfigError: the modes file is invalid, or ``--mode`` names no mode.
    """
    from compaction import builtin_policies

    if args.modes_file is None and (args.mode is None or args.mode in builtin_policies()):
        return builtin_policies()
    from prompts import available_modes, get_mode, policy_table

    modes = available_modes(args.modes_file)
    if args.mode is not None:
        get_mode(args.mode, modes)
    return policy_table(modes)


def read_stdin() -> bytes:
    """Read the arguments from stdin, at most one byte past the size limit.

    Raises:
        OSError: stdin is closed (``<&-``).
        ConfigError: stdin is a terminal: nobody is sending arguments, so nothing waits for
            them (exit 2).
    """
    if sys.stdin is None:
        raise OSError(
            errno.EBADF, "stdin is closed; send the arguments on stdin or with --args", "stdin"
        )
    if sys.stdin.isatty():
        from compaction import ConfigError

        raise ConfigError(
            "no arguments: stdin is a terminal, so none will come; pass --args JSON or pipe "
            "the JSON on stdin"
        )
    return sys.stdin.buffer.read(MAX_ARGUMENT_BYTES + 1)
