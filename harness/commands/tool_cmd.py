"""`harness tool LOG NAME`: call a built-in tool on a log under the turn's mode, as a model does."""

from __future__ import annotations

import argparse
import sys

from compaction import BUILTIN_TOOLS, COMPACT_CONTEXT, CompactionPolicy, call_tool
from harness.commands.env_options import env_value, with_env
from harness.commands.stores import LOG_HELP, add_log_argument, add_session_option, open_session
from harness.commands.todo_write_cmd import read_stdin
from harness.output import HelpFormatter, examples, print_json
from harness.plain import positive_int
from prompts import available_modes, get_mode, policy_table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `tool` command."""
    p = sub.add_parser(
        "tool",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness tool team.jsonl task_create --agent lead "
            '--args \'{"subject": "Add the flag"}\'',
            "harness tool team.jsonl task_update --agent worker-1 "
            '--args \'{"id": "1", "status": "in_progress"}\' --json',
            "harness tool team.jsonl task_list",
            "harness tool s.jsonl compact_context --window 32000",
        ),
        help="call a built-in tool (todo_write, task_*, compact_context) on a log",
        description=(
            "Call a built-in tool against LOG through the one dispatcher (compaction.call_tool) "
            "with the arguments a model would send (JSON on stdin, or --args). The mode is LOG's "
            "latest turn's unless --mode is given; a tool the mode forbids is refused. Prints the "
            "model-facing result; exits 1 when the call is rejected or refused (nothing is "
            "appended). compact_context compacts LOG at the next safe cut (as harness compact "
            "--force does) for a --window-token model and prints the span replaced and the "
            "tokens saved."
        ),
    )
    add_log_argument(p, LOG_HELP + "; created if missing")
    add_session_option(p)
    p.add_argument("name", metavar="NAME", choices=BUILTIN_TOOLS, help=", ".join(BUILTIN_TOOLS))
    p.add_argument(
        "--args",
        dest="arguments",
        metavar="ARGS",
        help="the call's arguments as a JSON string (default: read from stdin)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON: is_error, content (the model-facing text)",
    )
    p.add_argument("--agent", default="main", help="the agent making the call (task tools)")
    p.add_argument("--mode", help="run under this mode instead of the latest turn's")
    p.add_argument(
        "--window",
        type=int,
        default=env_value("HARNESS_WINDOW", positive_int, CompactionPolicy().window_tokens),
        metavar="TOKENS",
        help=with_env(
            "compact_context: the model's context window (default %(default)s)", "HARNESS_WINDOW"
        ),
    )
    p.add_argument("--modes-file", metavar="FILE", help="user modes (TOML or JSON)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute the call and print the result."""
    if args.arguments is not None:
        raw: str | bytes = args.arguments
    elif args.name in ("task_list", COMPACT_CONTEXT) and (sys.stdin is None or sys.stdin.isatty()):
        raw = "{}"
    else:
        raw = read_stdin()  # bounded; stdin closed is one line, exit 3
    modes = available_modes(args.modes_file)
    if args.mode is not None:
        get_mode(args.mode, modes)
    table = policy_table(modes)
    policy = CompactionPolicy(window_tokens=args.window)
    with open_session(args, must_exist=False, agent=args.agent, policies=table) as session:
        result = call_tool(session, args.name, raw or "{}", mode=args.mode, policy=policy)
    if args.json:
        print_json({"is_error": result.is_error, "content": result.content})
    else:
        print(result.content)
    return 1 if result.is_error else 0
