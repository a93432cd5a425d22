"""`harness todo-write LOG`: run the todo_write tool against a log, as a model would.

The common case (a JSONL file, or none yet; no ``--session`` or ``--modes-file``; a built-in or
no ``--mode``; arguments the tool accepts) is written without the event models: the JSONL
store appends under the log's lock (`compaction.stores.append_plain`, which folds the log with
the standard library) the line the todo tool decides on (`compaction.tools.plain_todo_call`,
the tool's own rules). Anything else takes the session's tool, which words every error.

Invariants: an accepted call appends the same line and prints the same result on either path
(`tests/e2e/test_todo_write_plain.py` compares them over generated calls and logs).
"""

from __future__ import annotations

import argparse
import errno
import sys
from typing import TYPE_CHECKING

from compaction.contract import MAX_ARGUMENT_BYTES, TODO_WRITE_EVENT
from harness.commands.stores import LOG_HELP, add_log_argument, add_session_option, open_session
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
    add_log_argument(p, LOG_HELP + "; created if missing")
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

    An accepted call on a JSONL file is written without the models (`plain_call`, the same
    bytes); any other call takes the session's tool.
    """
    raw: str | bytes = args.arguments if args.arguments is not None else read_stdin()
    written = plain_call(args, raw)
    if written is None:
        content, is_error, todos = session_call(args, raw)
    else:
        content, is_error, todos = written
    if args.json:
        print_json({"is_error": is_error, "content": content, "todos": todos})
    else:
        print(content)
    return 1 if is_error else 0


def plain_call(args: argparse.Namespace, raw: str | bytes) -> tuple[str, bool, list[object]] | None:
    """Append an accepted call to a JSONL file without the models; None: the full path answers."""
    if args.session is not None or args.modes_file is not None or "://" in args.log:
        return None
    from compaction.stores import PlainLog, append_plain, event_line
    from compaction.tools import plain_todo_call

    recorded: list[dict[str, str]] = []
    answer: list[str] = []

    def line(state: PlainLog) -> bytes | None:
        accepted = plain_todo_call(
            raw,
            mode=args.mode,
            log_mode=state.mode,
            messages=state.messages,
            allow_parallel=args.allow_parallel,
        )
        if accepted is None:
            return None
        recorded[:] = [{"content": text, "status": status} for text, status in accepted.todos]
        answer[:] = [accepted.content]
        return event_line(state.next_seq, TODO_WRITE_EVENT, {"todos": recorded})

    if not append_plain(args.log, line):
        return None
    return answer[0], False, list(recorded)


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
