"""`harness demo`: a long generated session through prompts, views and compaction."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from compaction import ConfigError
from harness.commands.env_options import env_value, with_env
from harness.output import HelpFormatter, console, examples, panel_text, positive_int, print_json

if TYPE_CHECKING:
    from harness.simulation import DemoResult

_STAGES = {
    "session": "writing the session, compacting as the policy says",
    "replay": "replaying it request by request (this toolkit)",
    "baseline": "replaying it without compaction (baseline)",
    "list in the messages": "replaying it with the todo list only in the messages",
    "content-blind summary": "replaying it with a content-blind summary",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `demo` command."""
    p = sub.add_parser(
        "demo",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness demo",
            "harness demo --turns 40 --seed 3 --log demo.jsonl",
            "harness demo --profile stepwise --json",
        ),
        help="run a generated long session through prompts, views and compaction",
        description=(
            "Generate a seeded synthetic coding session shaped like the recorded real ones "
            "(user requests, long stretches of tool calls with large outputs, a todo list "
            "rewritten only now and then, a Plan-mode phase), write it into a session log with "
            "compaction, then show the task panel, one compaction's before and after, and the "
            "same session set against the todo list kept only in the messages, a content-blind "
            "summary and no compaction: calls that lost sight of an unfinished task, tasks kept "
            "at compactions, input tokens, cache hits, and the cost under DeepSeek's, OpenAI's "
            "and Anthropic's prices. A contrast that is small on a seed is said to be small."
        ),
    )
    # Defaults are filled in `run`, so the CLI imports the simulation only when the demo runs;
    # tests pin the figures in the help against `harness.simulation`.
    p.add_argument("--turns", type=positive_int, help="user requests to generate (default: 12)")
    p.add_argument("--seed", type=int, help="seed of the generator (default: 7)")
    p.add_argument(
        "--window",
        type=positive_int,
        default=env_value("HARNESS_WINDOW", positive_int, None),
        help=with_env("context window in tokens (default: 32000)", "HARNESS_WINDOW"),
    )
    p.add_argument(
        "--profile",
        metavar="SHAPE",
        help=(
            "the session's shape: 'real' (the default: the todo list written rarely, long work "
            "between, as in the recorded Claude Code sessions) or 'stepwise' (the list rewritten "
            "after every item, so it always sits in the verbatim tail)"
        ),
    )
    p.add_argument("--log", type=Path, help="keep the session log here (default: a temp file)")
    p.add_argument(
        "--json",
        action="store_true",
        help=(
            "print every figure the demo shows as JSON: per design the calls, tokens, cache-hit "
            "rates, tasks in sight and cost per provider; per contrast what it lost"
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo with a progress bar, then print what it showed."""
    from harness.simulation import (
        DEFAULT_SEED,
        DEFAULT_TURNS,
        DEFAULT_WINDOW,
        DEMO_PROFILE,
        PROFILES,
        run_demo,
    )

    args.profile = DEMO_PROFILE if args.profile is None else args.profile
    if args.profile not in PROFILES:
        raise ConfigError(f"--profile must be one of {', '.join(PROFILES)}, not {args.profile!r}")
    args.turns = DEFAULT_TURNS if args.turns is None else args.turns
    args.seed = DEFAULT_SEED if args.seed is None else args.seed
    args.window = DEFAULT_WINDOW if args.window is None else args.window
    with tempfile.TemporaryDirectory() as tmp:
        log = args.log or Path(tmp) / "demo.jsonl"
        if log.exists():
            log.unlink()
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        stderr = Console(stderr=True)
        with Progress(
            *columns, console=stderr, transient=True, disable=not stderr.is_terminal
        ) as bar:
            tasks = {k: bar.add_task(v, total=None) for k, v in _STAGES.items()}

            def progress(stage: str, done: int, total: int) -> None:
                bar.update(tasks[stage], completed=done, total=total)

            result = run_demo(
                turns=args.turns,
                seed=args.seed,
                window=args.window,
                log=log,
                progress=progress,
                profile=args.profile,
            )
        if args.json:
            print_json(result_json(result, args))
        else:
            show(result, args, kept=args.log is not None)
    return 0


def result_json(result: DemoResult, args: argparse.Namespace) -> dict[str, object]:
    """Return what `--json` prints: the run's settings and every figure the demo shows."""
    figures = result.figures()
    ours, base = figures["designs"][0], figures["designs"][-1]
    return {
        "turns": args.turns,
        "seed": args.seed,
        "window": args.window,
        "panel": result.panel.counts_line(),
        **figures,
        # The first figures `--json` carried, kept under their names.
        "prompt_tokens": {
            "ours": ours["summed_input_tokens"],
            "no_compaction": base["summed_input_tokens"],
        },
        "cache_hit_rates": {
            "ours": ours["cache_hit_rates"],
            "no_compaction": base["cache_hit_rates"],
        },
        "plan_refusal": result.plan_refusal,
        "log": str(result.log) if args.log is not None else None,
    }


def show(result: DemoResult, args: argparse.Namespace, *, kept: bool) -> None:
    """Print the panel, one compaction's before and after, and the figures."""
    out = console(wrap=True)
    out.print(
        f"[bold]Session[/bold]: {args.turns} requests (seed {args.seed}, shape "
        f"'{args.profile}'), {result.events} events, a {args.window:,}-token window, "
        f"{len(result.compactions)} compactions."
    )
    out.print(Panel(panel_text(result.panel), title="Task panel (harness todos)", expand=False))
    if result.plan_refusal:
        out.print(Panel(result.plan_refusal, title="todo_write in Plan mode", expand=False))
    if result.compactions:
        out.print(_compaction_panel(result))
    out.print(_figures(result))
    if kept:
        console().print(f"Log kept at {result.log}: try `harness todos {result.log}`.")


def _compaction_panel(result: DemoResult) -> Panel:
    last = result.compactions[-1]
    checkpoint = last.checkpoint
    lines = Text()
    lines.append(
        f"Context {last.tokens_before:,} -> {last.tokens_after:,} tokens "
        f"({last.reduction:.0%} removed): {last.replaced_messages} messages replaced by a "
        f"Checkpoint, {last.kept_messages} kept verbatim.\n",
        style="bold",
    )
    lines.append("Pending Jobs (copied by code):\n")
    for item in checkpoint.pending_jobs or ("(none)",):
        lines.append(f"  ○ {item}\n")
    lines.append("Current Work (copied by code):\n")
    for item in checkpoint.current_work or ("(none)",):
        lines.append(f"  ◉ {item}\n")
    next_step = (checkpoint.next_step or "(none)").splitlines()[0]
    lines.append(f"Next Step (summarizer): {next_step}", style="dim")
    return Panel(
        lines, title=f"Compaction {len(result.compactions)}: before and after", expand=False
    )


def _figures(result: DemoResult) -> Group:
    figures = result.figures()
    designs = {d["design"]: d for d in figures["designs"]}
    ours, base = designs["this toolkit"], designs["no compaction"]
    table = Table(
        title="Input tokens and prompt-cache hits, request by request", title_justify="left"
    )
    table.add_column("")
    table.add_column("this toolkit", justify="right")
    table.add_column("no compaction", justify="right")
    table.add_row("model calls", f"{ours['model_calls']:,}", f"{base['model_calls']:,}")
    table.add_row(
        "summed input tokens",
        f"{ours['summed_input_tokens']:,}",
        f"{base['summed_input_tokens']:,}",
    )
    table.add_row(
        "last request", f"{ours['last_request_tokens']:,}", f"{base['last_request_tokens']:,}"
    )
    for model, rate in ours["cache_hit_rates"].items():
        table.add_row(
            f"cache hits, {model}", f"{rate:.1%}", f"{base['cache_hit_rates'][model]:.1%}"
        )
    table.add_row("cache hits, ideal", f"{ours['ideal_hit_rate']:.1%}", "")
    return Group(table, _contrast(designs), *_verdict(figures))


def _contrast(designs: dict[str, dict[str, Any]]) -> Group:
    """The same session under each design: tasks in sight on every call, then the cost."""
    tasks = Table(
        title="Unfinished todos in sight: the same session under each design",
        title_justify="left",
    )
    tasks.add_column("design", no_wrap=True)
    tasks.add_column("calls that lost sight", justify="right")
    tasks.add_column("every call", justify="right")
    tasks.add_column("kept at compactions", justify="right")
    for label, d in designs.items():
        tasks.add_row(
            label,
            f"{d['calls_lost_sight']}/{d['calls_checked']}",
            f"{d['every_call']:.1%}",
            f"{d['kept_at_compactions']}/{d['expected_at_compactions']}",
        )
    providers = list(designs["this toolkit"]["cost_usd"])
    cost = Table(title="The session's cost (USD) at each provider's prices", title_justify="left")
    cost.add_column("design", no_wrap=True)
    for provider in providers:
        cost.add_column(provider, justify="right")
    for label, d in designs.items():
        cost.add_row(label, *(f"{d['cost_usd'][p]:.3f}" for p in providers))
    return Group(tasks, cost)


def _verdict(figures: dict[str, Any]) -> list[Text]:
    ours = figures["designs"][0]
    lines = [
        Text(
            f"Savings: {figures['savings']:.1%} of input tokens against no compaction; "
            f"{len(figures['unfinished'])} unfinished todos at the end, all carried by every "
            f"checkpoint: {ours['every_call']:.0%} of calls show every one.",
            style="bold green",
        )
    ]
    for c in figures["contrasts"]:
        lines.append(
            Text(
                f"{c['design']}: {c['calls_lost_sight']} of {c['calls_checked']} calls "
                f"({c['share_lost']:.1%}) lost sight of an unfinished task; "
                f"{c['kept_at_compactions']} of {c['expected_at_compactions']} kept at "
                "compactions.",
                style="bold red" if c["calls_lost_sight"] else "bold",
            )
        )
        if c["small"]:
            lines.append(
                Text(
                    "  The contrast is small on this seed: under "
                    f"{figures['small_contrast_below']:.0%} of calls lost sight, mostly because "
                    "the latest list happened to stay in the verbatim tail. Try another --seed, "
                    "or --profile real.",
                    style="yellow",
                )
            )
        dearer = {p: x for p, x in c["extra_cost_of_ours"].items() if x > 0}
        if dearer:
            said = ", ".join(f"{p} {x:+.1%}" for p, x in dearer.items())
            lines.append(
                Text(
                    f"  This toolkit costs more than {c['design']} at {said}: its Checkpoint "
                    "carries the open tasks the other design dropped.",
                    style="yellow",
                )
            )
    return lines
