"""One benchmark run as plain data, and the runs pooled per strategy.

`run_summary` turns a `harness.simulation.ReplayResult` into the record ``results.json`` holds
(per-request series included, summary calls priced by `benchmarks.replay.summary_pricing`);
`summarize` pools the records per strategy: input tokens, cache-hit rates, retention, and the
savings against the no-compaction baseline.

Invariants: a record is a pure function of the replay (wall seconds aside).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.replay import summary_pricing
from benchmarks.report.report_sections import MODEL_NAMES
from benchmarks.splits import split_of
from harness.simulation import BASELINE, ReplayResult


def run_summary(result: ReplayResult) -> dict[str, Any]:
    """Return one strategy-on-session run as plain data, per-request series included."""
    prompts = [r.prompt_tokens for r in result.records]
    summary = summary_pricing.from_replay(result.summary_calls, MODEL_NAMES)
    return {
        "strategy": result.strategy,
        "session": result.session,
        "split": split_of(result.session),
        "requests": len(result.records),
        "compactions": result.compactions,
        "compaction_failures": result.compaction_failures,
        "summed_input_tokens": sum(prompts),
        "final_input_tokens": prompts[-1] if prompts else 0,
        "peak_input_tokens": max(prompts, default=0),
        "cache_hit_tokens": {m: result.total_hits(m) for m in MODEL_NAMES},
        "ideal_hit_tokens": result.total_ideal,
        "retention": {
            "expected": result.expected,
            "kept": result.kept,
            "rate": result.retention,
            "checks": [list(c) for c in result.retention_checks],
        },
        "todo_checks": result.todo_checks,
        "request_retention": result.request_retention,
        "task_checks": result.task_checks,
        "task_retention": result.task_retention,
        "first_request_kept": result.first_request_kept,
        "seconds": round(result.seconds, 3),
        **summary_pricing.record_fields(summary),
        "summary": summary,
        "per_request": {
            "prompt_tokens": prompts,
            "fixed_tokens": [r.fixed_tokens for r in result.records],
            "context_tokens": [r.context_tokens for r in result.records],
            "checkpoint_tokens": [r.checkpoint_tokens for r in result.records],
            "ideal": [r.ideal for r in result.records],
            "hits": {m: [r.hits[m] for r in result.records] for m in MODEL_NAMES},
            "compacted": [r.index for r in result.records if r.compacted],
            "mode": [r.mode for r in result.records],
        },
    }


def _pooled(runs: Sequence[Mapping[str, Any]], strategy: str) -> dict[str, Any]:
    mine = [r for r in runs if r["strategy"] == strategy]
    prompt = sum(r["summed_input_tokens"] for r in mine)
    expected = sum(r["retention"]["expected"] for r in mine)
    kept = sum(r["retention"]["kept"] for r in mine)
    return {
        "summed_input_tokens": prompt,
        "cache_hit_rate": {
            m: _ratio(sum(r["cache_hit_tokens"][m] for r in mine), prompt) for m in MODEL_NAMES
        },
        "ideal_hit_rate": _ratio(sum(r["ideal_hit_tokens"] for r in mine), prompt),
        "retention": _ratio(kept, expected) if expected else 1.0,
        "retention_counts": [kept, expected],
        "compactions": sum(r["compactions"] for r in mine),
    }


def _ratio(a: float, b: float) -> float:
    return round(a / b, 6) if b else 0.0


def summarize(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Pool the runs per strategy; token savings of each against the no-compaction baseline."""
    pooled = {name: _pooled(runs, name) for name in dict.fromkeys(r["strategy"] for r in runs)}
    base = pooled[BASELINE]["summed_input_tokens"]
    for p in pooled.values():
        p["savings_vs_baseline"] = _ratio(base - p["summed_input_tokens"], base)
    return {"strategies": pooled}
