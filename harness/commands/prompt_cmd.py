"""`harness prompt --mode M`: a mode's system prompt, or the request skeleton a provider gets.

Also holds the options every prompt-building command shares (`add_prompt_options`,
`builder_from_args`), used by `harness context` and `harness modes`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from compaction import ConfigError
from harness.output import HelpFormatter, examples
from prompts import (
    DEFAULT_MODE,
    TOOL_STRATEGIES,
    Environment,
    Mode,
    PromptBuilder,
    ToolCatalog,
    anthropic_request,
    available_modes,
    dumps,
    get_mode,
    openai_request,
)

FORMATS = ("text", "openai", "anthropic")


LOG_MODE_DEFAULT = (
    f"default: the mode of the log's latest turn/start that names one, else {DEFAULT_MODE}"
)
"""What ``--mode`` defaults to for a command that reads a log."""


def add_prompt_options(
    p: argparse.ArgumentParser, *, mode: bool = True, mode_default: str | None = None
) -> None:
    """Add the options that choose a mode, its tools and its environment.

    Args:
        p: the command's parser.
        mode: add ``--mode``.
        mode_default: what ``--mode`` defaults to, as its help says (default: the default mode).
    """
    if mode:
        default = mode_default or f"default: {DEFAULT_MODE}"
        p.add_argument("--mode", default=None, help=f"the mode ({default})")
    p.add_argument("--modes-file", metavar="FILE", help="user modes (TOML or JSON; see README)")
    p.add_argument(
        "--tools",
        choices=TOOL_STRATEGIES,
        default=None,
        help="how forbidden tools are shown: stable catalog (default) or filtered out",
    )
    p.add_argument(
        "--tools-file", metavar="FILE", help="user tools: a JSON array of OpenAI function tools"
    )
    p.add_argument("--cwd", metavar="DIR", help="working directory for the environment block")
    p.add_argument("--date", metavar="YYYY-MM-DD", help="date for the environment block")
    p.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a user variable for the environment block (repeatable)",
    )


def builder_from_args(args: argparse.Namespace) -> PromptBuilder:
    """Return the prompt builder the options describe."""
    variables: dict[str, str] = {}
    for item in args.var:
        name, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--var {item!r}: expected NAME=VALUE")
        variables[name] = value
    try:
        environment = Environment(date=args.date, cwd=args.cwd, variables=variables)
    except ValidationError as exc:
        raise ConfigError("; ".join(_option_error(e) for e in exc.errors())) from None
    catalog = ToolCatalog.from_file(args.tools_file) if args.tools_file else ToolCatalog()
    return PromptBuilder(catalog, strategy=args.tools, environment=environment)


def _option_error(error: Mapping[str, Any]) -> str:
    """Name the command-line option behind one validation error of `Environment`."""
    match error["loc"][0]:
        case "date":
            return f"--date {error['input']!r}: expected a real date, YYYY-MM-DD"
        case "variables":
            return f"--var: {error['msg'].removeprefix('Value error, ')}"
        case field:
            return f"--{field}: {error['msg']}"


def mode_from_args(args: argparse.Namespace, default: str = DEFAULT_MODE) -> Mode:
    """Return the mode named by ``--mode`` (or `default`), among built-in and user modes."""
    return get_mode(args.mode or default, available_modes(args.modes_file))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `prompt` command."""
    p = sub.add_parser(
        "prompt",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness prompt --mode plan",
            "harness prompt --mode agent --format anthropic --date 2026-11-30",
        ),
        help="print a mode's system prompt or request skeleton",
        description=(
            "Print the system prompt of a mode (text), or the request skeleton a provider gets: "
            "openai (messages holding the system message, and tools) or anthropic (system "
            "blocks with cache_control, and tools)."
        ),
    )
    add_prompt_options(p)
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (text)")
    p.add_argument(
        "--json", action="store_true", help="print JSON: the openai skeleton unless --format says"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the prompt."""
    builder = builder_from_args(args)
    mode = mode_from_args(args)
    if args.json and args.format == "text":
        args.format = "openai"
    if args.format == "text":
        sys.stdout.write(builder.system_prompt(mode) + "\n")
    elif args.format == "openai":
        sys.stdout.write(dumps(openai_request(builder, mode), indent=2) + "\n")
    else:
        request = anthropic_request(builder, mode)
        del request["messages"]  # the skeleton: system blocks and tools only
        sys.stdout.write(dumps(request, indent=2) + "\n")
    return 0
