"""The throughput results as a Markdown table and a chart of CPU cost per event against N.

`docs/performance.md` holds `performance_table` of the committed
``benchmarks/results/throughput.json`` (a test keeps the two equal); `draw_chart` draws
``throughput.png`` beside it. Run ``python -m benchmarks.speed.throughput_report [RESULTS]`` to
print the table and redraw the chart (``--no-chart``: the table only).

Invariants: the table and the chart are pure functions of the results.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import RESULTS

DEFAULT_RESULTS = RESULTS / "throughput.json"
STORES: tuple[str, ...] = ("jsonl", "sqlite", "postgres")
"""The stores the benchmark measures, in the order the results list them."""
GOALS: dict[str, float] = {"append_ratio": 1.3, "reopen_ratio": 1.3, "compaction_ratio": 0.8}
"""The goals of issue 28, as ratios to a raw tiktoken pass over the same text."""

PHASES: dict[str, str] = {
    "append_ratio": "append + views",
    "reopen_ratio": "reopen",
    "compaction_ratio": "one compaction",
}
"""The ratio of each phase to raw tiktoken, and its label."""


def machine() -> dict[str, Any]:
    """Describe where the figures were taken."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "clock": "time.process_time (this process's CPU time)",
    }


def goals_met(point: dict[str, Any]) -> dict[str, bool]:
    """Tell, for each goal of `GOALS`, whether a point meets it."""
    return {key: point[key] <= limit for key, limit in GOALS.items()}


def merge(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return `old`'s points that `new` does not measure again, then `new`'s, by size and store."""
    fresh = {(p["events"], p["store"]) for p in new}
    kept = [p for p in old if (p["events"], p["store"]) not in fresh]
    order = {store: i for i, store in enumerate(STORES)}
    return sorted([*kept, *new], key=lambda p: (p["events"], order.get(p["store"], len(order))))


def performance_table(results: Mapping[str, Any]) -> str:
    """Return the Markdown table of the results: one row per size and store."""
    goals = results["goals"]
    head = (
        "| events | store | append + views | reopen | one compaction | raw tiktoken | "
        "reopen peak memory | reopen peak RSS (views / count / + one append) | load (1 min) |\n"
        "|---:|---|---:|---:|---:|---:|---:|---:|---|\n"
    )
    rows = []
    for p in results["points"]:
        cells = [f"{p['events']:,}", p["store"]]
        for key in PHASES:
            mark = "" if p[key] <= goals[key] else " (goal missed)"
            cells.append(f"{p[key]:.2f}x{mark}")
        cells.append(f"{p['tiktoken_us']:.0f} µs/event")
        peak = p["reopen_peak_bytes_per_event"]
        cells.append(f"{peak / 1024:.1f} KiB/event" if peak else "not traced")
        cells.append(_rss_cell(p))
        cells.append(f"{p['load_before']:.1f}-{p['load_after']:.1f}")
        rows.append("| " + " | ".join(cells) + " |")
    goal_line = ", ".join(f"{label} <= {goals[key]}x" for key, label in PHASES.items())
    return head + "\n".join(rows) + f"\n\nGoals (CPU time over a raw tiktoken pass): {goal_line}.\n"


def _rss_cell(point: Mapping[str, Any]) -> str:
    """The reopen's peak RSS: views, `context_tokens`, one append more (older points: two)."""
    figures = [point.get(k) for k in ("reopen_rss_mb", "reopen_usage_rss_mb")]
    if point.get("reopen_append_rss_mb"):
        figures.append(point["reopen_append_rss_mb"])
    if not all(figures):
        return "-"
    return " / ".join(f"{x:.0f}" for x in figures) + " MiB"


def draw_chart(results: Mapping[str, Any], path: Path) -> None:
    """Draw each phase's ratio to raw tiktoken against N (log scale), one line per store.

    Raises:
        ImportError: matplotlib is not installed (the ``charts`` extra).
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(1, len(PHASES), figsize=(13, 4), sharey=False)
    stores = sorted({p["store"] for p in results["points"]})
    for ax, (key, label) in zip(axes, PHASES.items(), strict=True):
        for store in stores:
            points = [p for p in results["points"] if p["store"] == store]
            ax.plot([p["events"] for p in points], [p[key] for p in points], "o-", label=store)
        ax.axhline(results["goals"][key], color="grey", linestyle="--", label="goal")
        ax.set_xscale("log")
        ax.set_title(f"{label} / raw tiktoken (CPU)")
        ax.set_xlabel("events in the log")
        ax.set_ylim(bottom=0)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table of a results file (default: the committed one) and redraw its chart.

    A file that cannot be read, is not JSON or lacks a field the table needs is refused in one
    line (exit 2), as argparse refuses a bad option.
    """
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.speed.throughput_report",
        description="Print the throughput results as a Markdown table and redraw their chart.",
    )
    parser.add_argument(
        "results",
        nargs="?",
        type=Path,
        default=DEFAULT_RESULTS,
        help="a results file written by python -m benchmarks.speed.throughput "
        "(default: the committed "
        "benchmarks/results/throughput.json)",
    )
    parser.add_argument("--no-chart", action="store_true", help="print the table only")
    args = parser.parse_args(argv)
    try:
        results = json.loads(args.results.read_text(encoding="utf-8"))
    except OSError as exc:
        parser.error(f"cannot read {args.results}: {exc.strerror or exc}")
    except ValueError as exc:
        parser.error(f"{args.results} is not JSON: {exc}")
    try:
        table = performance_table(results)
    except KeyError as exc:
        parser.error(f"{args.results} is not a throughput results file (no field {exc})")
    except (TypeError, ValueError):
        parser.error(f"{args.results} is not a throughput results file")
    print(table, end="")
    if args.no_chart:
        return 0
    try:
        draw_chart(results, args.results.with_suffix(".png"))
    except ImportError:
        print("matplotlib is not installed: no chart drawn", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
