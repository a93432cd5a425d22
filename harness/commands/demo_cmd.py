"""`harness demo`: a long generated session through prompts, views and compaction."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

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
        ),
        help="run a generated long session through prompts, views and compaction",
        description=(
            "Generate a seeded synthetic coding session (user requests, tool calls with large "
            "outputs, todo rewrites, a Plan-mode phase), write it into a session log with "
            "compaction, then show the task panel, one compaction's before and after, and the "
            "same session set against the todo list kept only in the messages, a content-blind "
            "summary and no compaction: input tokens, cache hits, unfinished todos kept on "
            "every call, and the cost under DeepSeek's, OpenAI's and Anthropic's prices."
        ),
    )
    # Defaults are filled in `run`, so the CLI imports the simulation only when the demo runs;
    # tests pin the figures in the help against `harness.simulation`.
    p.add_argument("--turns", type=positive_int, help="user requests to generate (default: 24)")
    p.add_argument("--seed", type=int, help="seed of the generator (default: 7)")
    p.add_argument("--window", type=positive_int, help="context window in tokens (default: 32000)")
    p.add_argument("--log", type=Path, help="keep the session log here (default: a temp file)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the figures as JSON: events, compactions, tokens, cache-hit rates",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo with a progress bar, then print what it showed."""
    from harness.simulation import DEFAULT_SEED, DEFAULT_TURNS, DEFAULT_WINDOW, run_demo

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
                turns=args.turns, seed=args.seed, window=args.window, log=log, progress=progress
            )
        if args.json:
            print_json(result_json(result, args))
        else:
            show(result, args, kept=args.log is not None)
    return 0


def result_json(result: DemoResult, args: argparse.Namespace) -> dict[str, object]:
    """Return what `--json` prints: the run's settings and figures."""
    assert result.ours is not None  # run_demo always replays both
    assert result.baseline is not None
    return {
        "turns": args.turns,
        "seed": args.seed,
        "window": args.window,
        "events": result.events,
        "compactions": len(result.compactions),
        "panel": result.panel.counts_line(),
        "unfinished": list(result.unfinished),
        "savings": round(result.savings, 4),
        "prompt_tokens": {
            "ours": result.ours.total_prompt_tokens,
            "no_compaction": result.baseline.total_prompt_tokens,
        },
        "cache_hit_rates": {
            "ours": {k: round(v, 4) for k, v in result.hit_rates(result.ours).items()},
            "no_compaction": {k: round(v, 4) for k, v in result.hit_rates(result.baseline).items()},
        },
        "log": str(result.log) if args.log is not None else None,
    }


def show(result: DemoResult, args: argparse.Namespace, *, kept: bool) -> None:
    """Print the panel, one compaction's before and after, and the figures."""
    out = console(wrap=True)
    out.print(
        f"[bold]Session[/bold]: {args.turns} requests (seed {args.seed}), {result.events} events, "
        f"a {args.window:,}-token window, {len(result.compactions)} compactions."
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
    assert result.ours is not None  # run_demo always replays both
    assert result.baseline is not None
    ours, base = result.ours, result.baseline
    table = Table(
        title="Input tokens and prompt-cache hits, request by request", title_justify="left"
    )
    table.add_column("")
    table.add_column("this toolkit", justify="right")
    table.add_column("no compaction", justify="right")
    table.add_row("model calls", f"{len(ours.records):,}", f"{len(base.records):,}")
    table.add_row(
        "summed input tokens", f"{ours.total_prompt_tokens:,}", f"{base.total_prompt_tokens:,}"
    )
    table.add_row(
        "last request", f"{ours.records[-1].prompt_tokens:,}", f"{base.records[-1].prompt_tokens:,}"
    )
    ours_rates, base_rates = result.hit_rates(ours), result.hit_rates(base)
    for model, rate in ours_rates.items():
        table.add_row(f"cache hits, {model}", f"{rate:.1%}", f"{base_rates[model]:.1%}")
    ideal = ours.total_ideal / (ours.total_prompt_tokens or 1)
    table.add_row("cache hits, ideal", f"{ideal:.1%}", "")
    table.add_row("unfinished todos kept", f"{ours.retention:.0%}", f"{base.retention:.0%}")
    return Group(table, _contrast(result), *_verdict(result))


def _contrast(result: DemoResult) -> Table:
    """The same session under each design: tasks in sight on every call, and the cost."""
    assert result.ours is not None
    assert result.baseline is not None
    runs = {"this toolkit": result.ours, **result.contrasts, "no compaction": result.baseline}
    costs = {label: result.costs(r) for label, r in runs.items()}
    providers = list(costs["this toolkit"])
    table = Table(
        title="Unfinished todos in sight, and the session's cost (USD) at each provider's prices",
        title_justify="left",
    )
    table.add_column("same session")
    table.add_column("every call", justify="right")
    table.add_column("kept at compactions", justify="right")
    for provider in providers:
        table.add_column(provider, justify="right")
    for label, r in runs.items():
        table.add_row(
            label,
            f"{r.request_retention:.1%}",
            f"{r.kept}/{r.expected}",
            *(f"{costs[label][p].usd:.3f}" for p in providers),
        )
    return table


def _verdict(result: DemoResult) -> list[Text]:
    assert result.ours is not None
    lines = [
        Text(
            f"Savings: {result.savings:.1%} of input tokens against no compaction; "
            f"{len(result.unfinished)} unfinished todos at the end, all carried by every "
            f"checkpoint: {result.ours.request_retention:.0%} of calls show every one.",
            style="bold green",
        )
    ]
    for label, other in result.contrasts.items():
        missed = other.todo_checks - other.todo_held
        share = 1 - other.request_retention
        lines.append(
            Text(
                f"{label}: {missed} of {other.todo_checks} calls ({share:.1%}) lost sight of an "
                f"unfinished task; {other.kept} of {other.expected} kept at compactions.",
                style="bold red" if missed else "bold",
            )
        )
    return lines
