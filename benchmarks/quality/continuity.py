"""Continuity beside cost: what B still has verbatim after each compaction, per setting.

For each setting of B's `CompactionPolicy` (`retain`, `threshold` and the task-boundary trigger
`boundary_threshold`, None for the size trigger alone) and each session (the
benchmark's generated sessions in every shape of `harness.simulation.PROFILES`, and the shared
real transcripts of `benchmarks.replay.real_transcripts.REAL_SESSIONS` that are present), replay the
session under B (`harness.simulation.replay`) and report, beside summed input tokens and cost per
provider: the compactions; the verbatim tail right after each (tokens of the request's messages
after the Checkpoint, `RequestRecord.tail_tokens`: mean, minimum, and how many were empty); the
compactions after which the latest tool result is still in the request; and every-call
retention of unfinished todos. `benchmarks.quality.continuity_report` pools the rows per setting,
draws the chart and picks B's defaults by a stated rule. Run it as ``python -m
benchmarks.quality.continuity --out DIR`` (``--part`` and ``--merge`` split a long grid over
processes).

Invariants: every figure is a pure function of the sessions, the settings and the tokenizer; a
transcript that is not present is left out and named in ``missing``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality import continuity_report
from benchmarks.replay import real_transcripts
from benchmarks.splits import EVALUATION, TUNING
from compaction import CompactionPolicy, EventData, get_tokenizer
from compaction.importers import load
from harness.simulation import (
    PROFILES,
    STRATEGIES,
    default_prices,
    generate,
    log_payloads,
    output_tokens,
    replay,
    session_cost,
)

RETAINS: tuple[float, ...] = (0.05, 0.10, 0.16, 0.25, 0.33)
"""B's tail shares measured (0.1 is the default)."""
THRESHOLDS: tuple[float, ...] = (0.7, 0.8, 0.9)
"""B's trigger shares measured (0.9 is the default; the benchmark's matched budget is 0.8)."""
BOUNDARIES: tuple[float | None, ...] = (None, 0.4, 0.5, 0.6)
"""B's task-boundary floors measured (`CompactionPolicy.boundary_threshold`; None: the size
trigger alone). A floor is measured only where the policy allows it (at most the threshold)."""
GENERATED: tuple[tuple[int, int], ...] = (*TUNING, *EVALUATION)
"""(turns, seed) of the generated sessions, in every shape: the tuning split (the only rows
`continuity_report.choose` is shown) and the evaluation split (`benchmarks.splits`)."""

Progress = Callable[[str], None]
Session = tuple[str, Sequence[EventData], list[dict[str, Any]] | None]
"""(name, payloads, tool specs or None for the generated sessions' catalog)."""


def measure(
    name: str,
    payloads: Sequence[EventData],
    policy: CompactionPolicy,
    tools: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Replay one session under B with `policy`; return cost and continuity figures."""
    tok = get_tokenizer()
    result = replay(
        payloads, STRATEGIES["B"], policy=policy, tokenizer=tok, session_name=name, tools=tools
    )
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
    kept = sum(bool(r.latest_tool_kept) for r in with_tool)
    return {
        "session": name,
        "retain": policy.retain,
        "threshold": policy.threshold,
        "boundary": policy.boundary_share,
        "budget": policy.trigger_tokens,
        "requests": len(result.records),
        "compactions": result.compactions,
        "summed_input_tokens": sum(prompts),
        "cost_usd": cost,
        "tails": tails,
        "tail_mean": round(statistics.fmean(tails), 1) if tails else None,
        "tail_min": min(tails, default=None),
        "tail_empty": sum(t == 0 for t in tails),
        "tool_compactions": len(with_tool),
        "tool_kept_count": kept,
        "latest_tool_kept": round(kept / len(with_tool), 4) if with_tool else None,
        "every_call": round(result.request_retention, 6),
    }


def all_sessions(
    *, real: bool = True, generated: Sequence[tuple[int, int]] = GENERATED
) -> Iterator[Session]:
    """Yield the generated sessions in every shape, then the real transcripts present."""
    for shape in PROFILES:
        for turns, seed in generated:
            yield f"synthetic-{shape}-t{turns}-s{seed}", generate(turns, seed, shape), None
    if not real:
        return
    for name, file in real_transcripts.REAL_SESSIONS.items():
        path = real_transcripts.TRANSCRIPTS / file
        if path.is_file():
            payloads = log_payloads(load(path))
            yield name, payloads, real_transcripts.session_tools(payloads)


def missing(*, real: bool = True) -> list[str]:
    """Return the real sessions whose transcript is not present (none when `real` is off)."""
    if not real:
        return []
    folder = real_transcripts.TRANSCRIPTS
    return [n for n, f in real_transcripts.REAL_SESSIONS.items() if not (folder / f).is_file()]


def run(
    *,
    window: int = 30_000,
    sessions: Sequence[Session] | None = None,
    retains: Sequence[float] = RETAINS,
    thresholds: Sequence[float] = THRESHOLDS,
    boundaries: Sequence[float | None] = BOUNDARIES,
    progress: Progress | None = None,
    real: bool = True,
) -> dict[str, Any]:
    """Measure every (session, retain, threshold, boundary floor); return plain data."""
    say = progress or (lambda _line: None)
    chosen = list(sessions) if sessions is not None else list(all_sessions(real=real))
    rows = []
    for name, payloads, tools in chosen:
        for retain, threshold, boundary in itertools.product(retains, thresholds, boundaries):
            if boundary is not None and boundary > threshold:
                continue
            policy = CompactionPolicy(
                window_tokens=window,
                retain=retain,
                threshold=threshold,
                boundary_threshold=boundary,
            )
            row = measure(name, payloads, policy, tools)
            rows.append(row)
            say(
                f"{name} retain {retain:g} threshold {threshold:g} boundary {boundary}: "
                f"{row['summed_input_tokens']:,} tokens, tail {row['tail_mean']}"
            )
    return {"window": window, "rows": rows, "missing": missing(real=real)}


def merge(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Return one result of parts measured at the same window, rows in a stable order."""
    windows = {p["window"] for p in parts}
    if len(windows) != 1:
        raise ValueError(f"parts measured at different windows: {sorted(windows)}")
    rows = sorted(
        (r for p in parts for r in p["rows"]),
        key=lambda r: (r["session"], *continuity_report.setting(r)),
    )
    gone = sorted({n for p in parts for n in p.get("missing", [])})
    return {"window": windows.pop(), "rows": rows, "missing": gone}


def write(results: dict[str, Any], out: Path) -> None:
    """Write continuity.json, continuity.md and continuity.png to `out`."""
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, indent=1, sort_keys=True) + "\n"
    (out / "continuity.json").write_text(text, encoding="utf-8")
    lines = continuity_report.markdown(results)
    (out / "continuity.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    continuity_report.chart(results, out / "continuity.png")


def _chosen(args: argparse.Namespace) -> list[Session]:
    """Return the sessions the command line asks for (--generated, --no-real, --only)."""
    generated = GENERATED
    if args.generated:
        generated = tuple((int(t), int(s)) for t, s in (g.split(":") for g in args.generated))
    found = all_sessions(real=not args.no_real, generated=generated)
    return [s for s in found if args.only is None or s[0] in args.only]


def _boundary(text: str) -> float | None:
    """Parse one ``--boundaries`` value: a share, or ``none``."""
    return None if text.lower() == "none" else float(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the grid (or merge parts); write continuity.json, .md and .png to --out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--window", type=int, default=30_000)
    parser.add_argument("--retains", type=float, nargs="+", default=list(RETAINS))
    parser.add_argument("--thresholds", type=float, nargs="+", default=list(THRESHOLDS))
    parser.add_argument(
        "--boundaries",
        type=_boundary,
        nargs="+",
        default=list(BOUNDARIES),
        metavar="SHARE|none",
        help="task-boundary floors (none: the size trigger alone)",
    )
    parser.add_argument("--no-real", action="store_true", help="generated sessions only")
    parser.add_argument(
        "--generated",
        nargs="+",
        default=None,
        metavar="TURNS:SEED",
        help="the generated sessions (default: both splits of benchmarks.splits)",
    )
    parser.add_argument(
        "--only", nargs="+", default=None, metavar="SESSION", help="measure these sessions only"
    )
    parser.add_argument("--part", action="store_true", help="write only --out/part.json")
    parser.add_argument(
        "--merge", type=Path, nargs="+", metavar="PART", help="merge part.json files"
    )
    args = parser.parse_args(argv)
    if args.merge:
        results = merge([json.loads(p.read_text(encoding="utf-8")) for p in args.merge])
    else:
        results = run(
            window=args.window,
            sessions=_chosen(args),
            retains=args.retains,
            thresholds=args.thresholds,
            boundaries=args.boundaries,
            progress=print,
        )
    if args.part:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "part.json").write_text(json.dumps(results, sort_keys=True), encoding="utf-8")
        return 0
    write(results, args.out)
    print("\n".join(continuity_report.markdown(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
