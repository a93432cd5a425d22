"""`harness modes`: the modes, their todo policy and their sizes in tokens."""

from __future__ import annotations

import argparse
import sys

from compaction import get_tokenizer
from compaction.tools import dump_policies
from harness.commands.env_options import add_tokenizer_option
from harness.commands.prompt_cmd import add_prompt_options, builder_from_args
from harness.output import HelpFormatter, examples, print_json
from prompts import (
    available_modes,
    catalog_text,
    linearize,
    policy_table,
    shared_prefix_tokens,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `modes` command."""
    p = sub.add_parser(
        "modes",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness modes",
            "harness modes --tools-file prompts/examples/coding_tools.json --json",
        ),
        help="list the modes with their sizes in tokens",
        description=(
            "List the modes (built-in and from --modes-file) with their todo policy and the "
            "tokens of their system prompt and tool catalog, then the token prefix all of them "
            "share (what a provider's cache can reuse across a mode switch)."
        ),
    )
    add_prompt_options(p, mode=False)
    add_tokenizer_option(p)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument(
        "--policies",
        action="store_true",
        help=(
            "print the tool policy table the session enforces (mode -> refusals) and exit; "
            "for the built-in modes this is compaction/schemas/mode_policies.json"
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the table."""
    if args.policies:
        sys.stdout.write(dump_policies(policy_table(available_modes(args.modes_file))))
        return 0
    builder = builder_from_args(args)
    tokenizer = get_tokenizer(args.tokenizer)
    rows: list[dict[str, object]] = []
    texts: list[str] = []
    for mode in available_modes(args.modes_file).values():
        layers = builder.layers(mode)
        text = linearize(layers)
        texts.append(text)
        todo = (
            "forbidden"
            if mode.todo.forbidden
            else "parallel"
            if mode.todo.allow_parallel_in_progress
            else "one in progress"
        )
        rows.append(
            {
                "mode": mode.name,
                "todo_write": todo,
                "tools": len(layers.tools),
                "system_tokens": tokenizer.count(layers.system_prompt),
                "tools_tokens": tokenizer.count(catalog_text(layers)),
                "total_tokens": tokenizer.count(text),
                "summary": mode.summary,
            }
        )
    shared = shared_prefix_tokens(tokenizer, texts)
    if args.json:
        print_json({"tokenizer": tokenizer.name, "modes": rows, "shared_prefix_tokens": shared})
        return 0
    head = f"{'mode':<10} {'todo_write':<16} {'tools':>5} {'system':>7} {'catalog':>8} {'total':>7}"
    out = [head]
    for r in rows:
        out.append(
            f"{r['mode']!s:<10} {r['todo_write']!s:<16} {r['tools']!s:>5} "
            f"{r['system_tokens']!s:>7} {r['tools_tokens']!s:>8} {r['total_tokens']!s:>7}  "
            f"{r['summary']}"
        )
    largest = max(int(str(r["total_tokens"])) for r in rows)
    out.append(
        f"shared prefix of all modes: {shared} tokens "
        f"({shared / largest:.1%} of the largest) [{tokenizer.name}]"
    )
    sys.stdout.write("\n".join(out) + "\n")
    return 0
