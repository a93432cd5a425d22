"""`harness todo-write LOG`: run the todo_write tool against a log, as a model would."""

from __future__ import annotations

import argparse
import sys

from harness.commands.stores import LOG_HELP, add_session_option, open_session
from prompts import available_modes, get_mode, run_todo_write


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `todo-write` command."""
    p = sub.add_parser(
        "todo-write",
        help="call todo_write on a log (arguments as JSON on stdin or --json)",
        description=(
            "Call the todo_write tool against LOG with the arguments a model would send. Prints "
            "the model-facing result; exits 1 when the call is rejected (nothing is appended)."
        ),
    )
    p.add_argument("log", metavar="LOG", help=LOG_HELP + "; created if missing")
    add_session_option(p)
    p.add_argument("--json", dest="arguments", metavar="ARGS", help="arguments as a JSON string")
    p.add_argument(
        "--allow-parallel",
        action="store_true",
        help="allow several in_progress items (allow_parallel_in_progress=true)",
    )
    p.add_argument(
        "--mode",
        default="agent",
        help="run under this mode: in plan mode the call is refused and nothing is appended",
    )
    p.add_argument("--modes-file", metavar="FILE", help="user modes (TOML or JSON)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute the call and print the result."""
    raw: str | bytes = args.arguments if args.arguments is not None else sys.stdin.buffer.read()
    mode = get_mode(args.mode, available_modes(args.modes_file))
    if args.allow_parallel:
        todo = mode.todo.model_copy(update={"allow_parallel_in_progress": True})
        mode = mode.model_copy(update={"todo": todo})
    with open_session(args) as session:
        result = run_todo_write(session, raw, mode)
    print(result.content)
    return 1 if result.is_error else 0
