"""Continuity beside cost: what B still has verbatim after each compaction, per setting.

For each setting of B's `CompactionPolicy` (`retain` and `threshold`) and each session (the
generated sessions of every shape, and whichever real transcripts are asked for), replay the
session under B (`harness.simulation.replay`) and report, beside summed input tokens and cost
per provider: the compactions; the verbatim tail right after each (tokens of the request's
messages after the Checkpoint, `RequestRecord.tail_tokens`: mean and minimum); the share of
compactions after which the latest tool result is still in the request; and every-call
retention of unfinished todos. `chart` draws cost against the mean tail, one panel per session,
one marker per setting. Run it as ``python -m benchmarks.continuity --out DIR``.

Invariants: every figure is a pure function of the sessions, the settings and the tokenizer.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compaction import CompactionPolicy, EventData, get_tokenizer
from harness.simulation import (
    STRATEGIES,
    default_prices,
    generate,
    output_tokens,
    replay,
    session_cost,
)

RETAINS: tuple[float, ...] = (0.05, 0.10, 0.16, 0.25)
"""B's tail shares measured (0.16 is the default)."""
THRESHOLDS: tuple[float, ...] = (0.7, 0.8)
"""B's trigger shares measured (0.8 is the default)."""
SESSIONS: tuple[tuple[str, int, int], ...] = (("real", 6, 0), ("real", 6, 1), ("stepwise", 6, 0))
"""(shape, turns, seed) of the generated sessions measured by default."""

Progress = Callable[[str], None]


def measure(
    name: str,
    payloads: Sequence[EventData],
    policy: CompactionPolicy,
) -> dict[str, Any]:
    """Replay one session under B with `policy`; return cost and continuity figures."""
    tok = get_tokenizer()
    result = replay(payloads, STRATEGIES["B"], policy=policy, tokenizer=tok, session_name=name)
    after = [r for r in result.records if r.compacted]
    tails = [r.tail_tokens for r in after]
    with_tool = [r for r in after if r.latest_tool_kept is not None]
    prompts = [r.prompt_tokens for r in result.records]
    out = output_tokens(payloads, tok)
    cost = {
        p: round(
            session_cost(
                price, prompts, [r.hits[price.cache_model] for r in result.records], out
            ).usd,
            6,
        )
        for p, price in default_prices().providers.items()
    }
    return {
        "session": name,
        "retain": policy.retain,
        "threshold": policy.threshold,
        "budget": policy.trigger_tokens,
        "requests": len(result.records),
        "compactions": result.compactions,
        "summed_input_tokens": sum(prompts),
        "cost_usd": cost,
        "tail_mean": round(statistics.fmean(tails), 1) if tails else None,
        "tail_min": min(tails, default=None),
        "latest_tool_kept": (
            round(sum(bool(r.latest_tool_kept) for r in with_tool) / len(with_tool), 4)
            if with_tool
            else None
        ),
        "every_call": round(result.request_retention, 6),
    }


def run(
    *,
    window: int = 30_000,
    sessions: Sequence[tuple[str, int, int]] = SESSIONS,
    retains: Sequence[float] = RETAINS,
    thresholds: Sequence[float] = THRESHOLDS,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Measure every (session, retain, threshold); return plain data."""
    say = progress or (lambda _line: None)
    rows = []
    for shape, turns, seed in sessions:
        name = f"synthetic-{shape}-t{turns}-s{seed}"
        payloads = generate(turns, seed, shape)
        for retain, threshold in itertools.product(retains, thresholds):
            policy = CompactionPolicy(window_tokens=window, retain=retain, threshold=threshold)
            row = measure(name, payloads, policy)
            rows.append(row)
            say(
                f"{name} retain {retain:g} threshold {threshold:g}: "
                f"{row['summed_input_tokens']:,} tokens, tail {row['tail_mean']}"
            )
    return {"window": window, "rows": rows}


def markdown(results: Mapping[str, Any]) -> list[str]:
    """Return the table: one row per (session, setting)."""
    rows = results["rows"]
    if not rows:
        return ["No continuity rows."]
    providers = list(rows[0]["cost_usd"])
    lines = [
        f"Window {results['window']:,} tokens; B with the extractive summarizer. *Tail*: tokens "
        "the request holds verbatim after the Checkpoint, right after each compaction.",
        "",
        "| session | retain | threshold | compactions | summed input | "
        + " | ".join(f"{p} USD" for p in providers)
        + " | tail mean | tail min | latest tool result kept | every call |",
        "|---|---:|---:|---:|---:|" + "---:|" * (len(providers) + 4),
    ]
    for r in rows:
        kept = "-" if r["latest_tool_kept"] is None else f"{r['latest_tool_kept']:.0%}"
        lines.append(
            f"| `{r['session']}` | {r['retain']:g} | {r['threshold']:g} | {r['compactions']} | "
            f"{r['summed_input_tokens']:,} | "
            + " | ".join(f"{r['cost_usd'][p]:.3f}" for p in providers)
            + f" | {r['tail_mean'] if r['tail_mean'] is not None else '-'} | "
            f"{r['tail_min'] if r['tail_min'] is not None else '-'} | {kept} | "
            f"{r['every_call']:.1%} |"
        )
    return lines


def chart(results: Mapping[str, Any], path: Path, provider: str = "openai") -> Path | None:
    """Draw cost against the mean verbatim tail, a panel per session; None without matplotlib."""
    if importlib.util.find_spec("matplotlib") is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sessions = list(dict.fromkeys(r["session"] for r in results["rows"]))
    fig, axes = plt.subplots(1, len(sessions), figsize=(5 * len(sessions), 4.2), squeeze=False)
    markers = dict(zip(sorted({r["threshold"] for r in results["rows"]}), "os^Dv", strict=False))
    for ax, session in zip(axes[0], sessions, strict=True):
        for r in (r for r in results["rows"] if r["session"] == session):
            if r["tail_mean"] is None:
                continue
            ax.scatter(
                r["tail_mean"],
                r["cost_usd"][provider],
                marker=markers[r["threshold"]],
                label=f"retain {r['retain']:g}, threshold {r['threshold']:g}",
            )
        ax.set_title(session, fontsize=9)
        ax.set_xlabel("verbatim tail after a compaction (tokens, mean)")
        ax.set_ylabel(f"session cost at {provider} prices (USD)")
        ax.legend(fontsize=7, loc="best")
    fig.suptitle("B: cost against continuity, per setting")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the grid, write continuity.json, continuity.md and continuity.png to --out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--window", type=int, default=30_000)
    parser.add_argument("--retains", type=float, nargs="+", default=list(RETAINS))
    parser.add_argument("--thresholds", type=float, nargs="+", default=list(THRESHOLDS))
    args = parser.parse_args(argv)
    results = run(
        window=args.window, retains=args.retains, thresholds=args.thresholds, progress=print
    )
    args.out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, indent=1, sort_keys=True) + "\n"
    (args.out / "continuity.json").write_text(text, encoding="utf-8")
    (args.out / "continuity.md").write_text("\n".join(markdown(results)) + "\n", encoding="utf-8")
    chart(results, args.out / "continuity.png")
    print("\n".join(markdown(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
