"""One comparison of every strategy run and every peer: tokens, money, retention, budget.

`compare(results)` reads a benchmark run (``results.json``: our runs, the peers' records, the
price table, each session's output tokens) and returns, per session, one row per strategy run
and per peer configuration with:

- ``summed_input``: input tokens over every model call, split into ``fixed`` (the tool catalog
  and the system message of every request) and ``messages`` (the rest);
- ``first_fixed``: the fixed prompt of the first request (what each framework sends before any
  message);
- ``cost``: the session's cost under each provider's prices (`harness.simulation._pricing`): input
  by that provider's cache model, plus the session's output tokens, which every run shares (the
  same scripted replies) and every summary call (`benchmarks.replay.summary_pricing`: the request
  the design sent its summarizer model, priced under the same cache model, and a summary of the
  recorded length out; B's extractive and content-blind runs make none); ``cost_without_summaries``
  leaves those calls out; ``summary_calls``, ``summary_input_tokens``, ``summary_output_tokens``;
- ``every_call``: the share of calls, made while the latest todo list had unfinished items,
  whose request shows every one at its latest status; ``after_compaction``: the same, counted
  over the unfinished items at each compaction and at the last call (ours only);
  ``every_call_tasks``: the same for the shared tasks' unfinished ids at their latest status
  (None where no call had an unfinished task);
- ``after_reset``: the sawtooth of the per-call series: how many compactions (a peer's
  rewrites: requests that do not extend the one before), the message tokens the request right
  after each one keeps (summary and verbatim tail), of them the Checkpoint's (ours), and the
  request just before each;
- ``budget``: the whole-request budget the run triggered at, and whether it is the run's
  matched budget (``matched``); a row at another budget is labelled, never mixed in silently.

`headline(results)` pools B against each peer configuration over the sessions both ran.

Invariants: every figure is read from the results; nothing is computed for a peer that did not
run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.replay.summary_pricing import costs_with_summaries, record_fields
from harness.simulation import PriceTable, default_prices


def _prices(results: Mapping[str, Any]) -> PriceTable:
    return default_prices()


def _costs(
    table: PriceTable,
    prompts: Sequence[int],
    hits: Mapping[str, Sequence[int]],
    output: int,
    summary: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the row's cost fields: with its summary calls, without, and the call counts."""
    with_calls, without = costs_with_summaries(table, prompts, hits, output, summary)
    return {"cost": with_calls, "cost_without_summaries": without, **record_fields(summary)}


def peer_summary(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Return a peer record's summary block (`summary_pricing`) from its metrics."""
    return {
        "calls": len(metrics.get("summary_prompt_tokens") or ()),
        "prompt_tokens": list(metrics.get("summary_prompt_tokens") or ()),
        "hits": dict(metrics.get("summary_hit_tokens") or {}),
        "input_tokens": metrics.get("summary_input_tokens", 0),
        "output_tokens": metrics.get("summary_output_tokens", 0),
    }


def _task_rate(run: Mapping[str, Any]) -> float | None:
    """Every-call task retention of one of our runs (a generated or a real session's record)."""
    if not run.get("task_checks"):
        return None
    rate = run.get("task_retention", run.get("task_every_call"))
    return None if rate is None else float(rate)


def _ratio(a: float, b: float) -> float:
    return round(a / b, 6) if b else 1.0


def strategy_row(run: Mapping[str, Any], output: int, table: PriceTable) -> dict[str, Any]:
    """Return the comparison row of one of our runs (a ``results.json`` run)."""
    per = run["per_request"]
    prompts, fixed = (
        per["prompt_tokens"],
        per.get("fixed_tokens") or [0] * len(per["prompt_tokens"]),
    )
    ret = run["retention"]
    compacted = per.get("compacted") or []
    checkpoints = per.get("checkpoint_tokens")
    return {
        "name": run["strategy"],
        "kind": "strategy",
        "summed_input": sum(prompts),
        "fixed": sum(fixed),
        "messages": sum(prompts) - sum(fixed),
        "first_fixed": fixed[0] if fixed else 0,
        "peak": max(prompts, default=0),
        **_costs(table, prompts, per["hits"], output, run.get("summary")),
        "every_call": run["request_retention"],
        "every_call_tasks": _task_rate(run),
        "after_compaction": ret["rate"],
        "after_compaction_counts": [ret["kept"], ret["expected"]],
        "compactions": run["compactions"],
        "after_reset": _after_reset(prompts, fixed, compacted, checkpoints),
        "prompt_tokens": list(prompts),
        "budget": run.get("budget"),
    }


def peer_row(record: Mapping[str, Any], output: int, table: PriceTable) -> dict[str, Any] | None:
    """Return the comparison row of a peer record, or None when it did not run."""
    m = record.get("metrics")
    if record.get("status") != "ok" or not m or not m.get("cache_hit_tokens"):
        return None  # not run, or scored before per-request hits were kept
    prompts = m["prompt_tokens"]
    fixed = m.get("fixed_prompt_tokens") or []
    resets = rewrites(prompts, m.get("reused_prefix_tokens"))
    return {
        "name": f"{record['peer']}/{record['variant']} ({record['summarizer']})",
        "kind": "peer",
        "summed_input": m["summed_input_tokens"],
        "fixed": sum(fixed),
        "messages": m["summed_input_tokens"] - sum(fixed),
        "first_fixed": fixed[0] if fixed else 0,
        "peak": m["peak_input_tokens"],
        **_costs(table, prompts, m["cache_hit_tokens"], output, peer_summary(m)),
        "every_call": m["todo_retention_rate"],
        "every_call_tasks": m.get("task_retention_rate") if m.get("task_checks") else None,
        "after_compaction": None,
        "after_compaction_counts": None,
        "compactions": m.get("rewrites", 0),
        "after_reset": _after_reset(prompts, fixed, resets),
        "prompt_tokens": list(prompts),
        "budget": record.get("budget"),
    }


def rewrites(prompts: Sequence[int], reused: Sequence[int] | None) -> list[int]:
    """Return the requests that do not extend the one before (a peer's compactions or trims)."""
    if not reused:
        return []
    return [i for i in range(1, len(prompts)) if reused[i] < prompts[i - 1]]


def _after_reset(
    prompts: Sequence[int],
    fixed: Sequence[int],
    resets: Sequence[int],
    checkpoints: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Sum what the requests right after each compaction (or rewrite) hold, and before it.

    ``kept``: the message tokens of each such request (summary and verbatim tail, the fixed
    prompt left out); ``checkpoint``: of those, the Checkpoint's (ours only; None for a peer,
    whose summary message is not told apart); ``before``: the whole request just before;
    ``growth`` over ``steps``: how much each other request added to the one before.
    """
    resets = [i for i in resets if 0 < i < len(prompts)]
    steps = [i for i in range(1, len(prompts)) if i not in set(resets)]
    return {
        "count": len(resets),
        "steps": len(steps),
        "growth": sum(prompts[i] - prompts[i - 1] for i in steps),
        "kept": sum(prompts[i] - (fixed[i] if i < len(fixed) else 0) for i in resets),
        "checkpoint": sum(checkpoints[i] for i in resets) if checkpoints else None,
        "before": sum(prompts[i - 1] for i in resets),
    }


def compare(results: Mapping[str, Any]) -> dict[str, Any]:
    """Return every session's comparison rows and the matched budget they are judged at."""
    table = _prices(results)
    matched = results["config"].get("budget")
    sessions: dict[str, list[dict[str, Any]]] = {}
    outputs = results.get("outputs") or {}
    for run in results["runs"]:
        session = run["session"]
        if session not in outputs:
            continue
        sessions.setdefault(session, []).append(strategy_row(run, outputs[session], table))
    real = results.get("real_replay") or {}
    for run in real.get("records") or ():
        if "per_request" in run:  # real sessions: replayed like the generated ones
            sessions.setdefault(run["session"], []).append(
                strategy_row(run, run["output_tokens"], table)
            )
            outputs = {**outputs, run["session"]: run["output_tokens"]}
    peers = results.get("peers") or {}
    for record in peers.get("records") or () if peers.get("available") else ():
        session = record.get("session")
        if session not in sessions:
            continue
        row = peer_row(record, outputs[session], table)
        if row is not None:
            sessions[session].append(row)
    for rows in sessions.values():
        for row in rows:
            row["matched"] = row["budget"] == matched
    return {"budget": matched, "prices": table.as_dict(), "sessions": sessions}


def headline(comparison: Mapping[str, Any], ours: str = "B") -> list[dict[str, Any]]:
    """Pool `ours` against each matched peer configuration over the sessions both ran.

    Each entry: the peer's name, the sessions, both sides' summed input tokens and cost per
    provider, the sessions where the peer sends fewer tokens or costs less (by provider), both
    sides' worst every-call retention, and where the token difference lies: ours minus the
    peer's fixed-prompt tokens and message tokens, the compactions (the peer's rewrites),
    each side's mean request right after a compaction and just before one (`_pool_after`), and
    how far the running difference of the two per-call series swings within a session
    (`_swing`).
    """
    mine = {
        s: next(r for r in rows if r["name"] == ours)
        for s, rows in comparison["sessions"].items()
        if any(r["name"] == ours for r in rows)
    }
    names: list[str] = []
    for rows in comparison["sessions"].values():
        names += [r["name"] for r in rows if r["kind"] == "peer" and r["matched"]]
    out = []
    for name in dict.fromkeys(names):
        pairs = [
            (s, mine[s], next(r for r in rows if r["name"] == name))
            for s, rows in comparison["sessions"].items()
            if s in mine and any(r["name"] == name for r in rows)
        ]
        providers = list(pairs[0][1]["cost"])
        out.append(
            {
                "peer": name,
                "sessions": [s for s, _, _ in pairs],
                "ours_input": sum(b["summed_input"] for _, b, _ in pairs),
                "peer_input": sum(p["summed_input"] for _, _, p in pairs),
                "ours_cost": {v: sum(b["cost"][v]["usd"] for _, b, _ in pairs) for v in providers},
                "peer_cost": {v: sum(p["cost"][v]["usd"] for _, _, p in pairs) for v in providers},
                "peer_fewer_tokens": [
                    s for s, b, p in pairs if p["summed_input"] < b["summed_input"]
                ],
                "peer_cheaper": {
                    v: [s for s, b, p in pairs if p["cost"][v]["usd"] < b["cost"][v]["usd"]]
                    for v in providers
                },
                "ours_every_call": min(b["every_call"] for _, b, _ in pairs),
                "peer_every_call": min(p["every_call"] for _, _, p in pairs),
                "fixed_delta": sum(b["fixed"] - p["fixed"] for _, b, p in pairs),
                "messages_delta": sum(b["messages"] - p["messages"] for _, b, p in pairs),
                "ours_compactions": sum(b["compactions"] for _, b, _ in pairs),
                "peer_rewrites": sum(p["compactions"] for _, _, p in pairs),
                "ours_after": _pool_after([b.get("after_reset") for _, b, _ in pairs]),
                "peer_after": _pool_after([p.get("after_reset") for _, _, p in pairs]),
                "running_delta": _swing(
                    [(b.get("prompt_tokens"), p.get("prompt_tokens")) for _, b, p in pairs]
                ),
            }
        )
    return out


def _pool_after(blocks: Sequence[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Pool `_after_reset` blocks: means per compaction, and per request between compactions.

    ``kept``, ``checkpoint`` and ``before`` are means per compaction; ``growth`` is the mean
    growth of a request over the one before it between compactions.
    """
    got = [b for b in blocks if b]
    count = sum(b["count"] for b in got)
    steps = sum(b.get("steps", 0) for b in got)
    checkpoints = [b["checkpoint"] for b in got]
    return {
        "count": count,
        "growth": round(sum(b.get("growth", 0) for b in got) / steps) if steps else None,
        "kept": round(sum(b["kept"] for b in got) / count) if count else None,
        "checkpoint": round(sum(checkpoints) / count)
        if count and all(c is not None for c in checkpoints)
        else None,
        "before": round(sum(b["before"] for b in got) / count) if count else None,
    }


def _swing(series: Sequence[tuple[Sequence[int] | None, Sequence[int] | None]]) -> dict[str, int]:
    """Return the lowest and highest running sum of ours minus the peer's, call by call.

    Over the calls both made in a session; the extremes over every session. Where each side's
    compactions fall decides it: between the peer's compaction and ours, ours pays more each
    call, and the other way round after.
    """
    low = high = 0
    for ours, theirs in series:
        running = 0
        for a, b in zip(ours or (), theirs or (), strict=False):
            running += a - b
            low, high = min(low, running), max(high, running)
    return {"low": low, "high": high}
