"""The peers' Markdown tables: one row per record, or one per configuration with sessions pooled.

Invariants: rows come in record order; a record that is not ``ok`` shows its reason, never
numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.simulation import PROVIDER_MODELS


def _task_rate(m: Mapping[str, Any]) -> str:
    """Every-call task retention, or ``-`` where no call had an unfinished shared task."""
    return f"{m['task_retention_rate']:.1%}" if m.get("task_checks") else "-"


def pooled_rate(ms: Sequence[Mapping[str, Any]], rate: str, checks: str) -> str:
    """Return a rate pooled over records: checks passed over checks made (``-`` with none)."""
    made = sum(int(m.get(checks) or 0) for m in ms)
    if not made:
        return "-"
    held = sum(round(float(m.get(rate, 1.0)) * int(m.get(checks) or 0)) for m in ms)
    return f"{held / made:.1%}"


def progress_line(record: dict[str, Any]) -> str:
    """Return the one line a run prints as a record finishes."""
    head = f"{record['peer']}/{record['variant']}/{record['summarizer']} {record['session']}"
    if record["status"] != "ok":
        return f"{head}: {record['status']}: {record.get('reason')}"
    m = record["metrics"]
    return (
        f"{head}: final {m['final_input_tokens']} summed {m['summed_input_tokens']} "
        f"todos {m['unfinished_at_latest_status']}/{m['unfinished_total']} "
        f"first-request {'kept' if m['first_request_kept'] else 'lost'} "
        f"tasks {_task_rate(m)} reuse {m['prefix_reuse_rate']:.3f} wall {m['wall_time_s']:.1f}s"
    )


def markdown_table(records: Sequence[dict[str, Any]]) -> str:
    """Return a Markdown table of the records, one row each (skipped ones with their reason)."""
    head = (
        "| peer | variant | summarizer | session | requests | final | summed | peak "
        "| todos at end | todo retention | task retention | first request | prefix reuse "
        "| cache hit (DeepSeek/OpenAI/Anthropic/vLLM) | wall s |\n"
        "|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|---|--:|\n"
    )
    rows = []
    for r in records:
        lead = f"| {r['peer']} | {r['variant']} | {r['summarizer']} | {r['session']} "
        if r["status"] != "ok":
            rows.append(lead + f"| {r['status']}: {r.get('reason')} |" + " |" * 10)
            continue
        m = r["metrics"]
        hits = "/".join(f"{m['cache_hit_rate'][c.name]:.1%}" for c in PROVIDER_MODELS)
        rows.append(
            lead
            + f"| {m['requests']} | {m['final_input_tokens']:,} | {m['summed_input_tokens']:,} "
            + f"| {m['peak_input_tokens']:,} "
            + f"| {m['unfinished_at_latest_status']}/{m['unfinished_total']} "
            + f"| {m['todo_retention_rate']:.1%} | {_task_rate(m)} "
            + f"| {'kept' if m['first_request_kept'] else 'lost'} "
            + f"| {m['prefix_reuse_rate']:.1%} | {hits} | {m['wall_time_s']:.1f} |"
        )
    return head + "\n".join(rows) + "\n"


def summary_table(records: Sequence[dict[str, Any]]) -> str:
    """Return a Markdown table with one row per (peer, variant, summarizer), sessions pooled.

    Token sums and hit rates pool every session; `final` is the mean over sessions, `peak` the
    largest, todo retention the worst session's and, like task retention, pooled over every
    checked call (`pooled_rate`). Records that are not ``ok`` are left out.
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in records:
        if r["status"] == "ok":
            groups.setdefault((r["peer"], r["variant"], r["summarizer"]), []).append(r["metrics"])
    lines = [
        "| peer | variant | summarizer | sessions | summed input | final (mean) | peak "
        "| unfinished todos at end | todo retention (worst) | todo retention (pooled) "
        "| task retention (pooled) | first request kept | prefix reuse "
        "| cache hit (DeepSeek/OpenAI/Anthropic/vLLM) | summary calls |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|",
    ]
    for (peer, variant, summarizer), ms in groups.items():
        summed = sum(m["summed_input_tokens"] for m in ms)
        later = sum(sum(m["prompt_tokens"][1:]) for m in ms)
        reuse = sum(sum(m["reused_prefix_tokens"]) for m in ms) / later if later else 0.0
        hits = "/".join(
            f"{sum(sum(m['cache_hit_tokens'][c.name]) for m in ms) / summed:.1%}"
            for c in PROVIDER_MODELS
        )
        kept = sum(m["unfinished_at_latest_status"] for m in ms)
        total = sum(m["unfinished_total"] for m in ms)
        lines.append(
            f"| {peer} | {variant} | {summarizer} | {len(ms)} | {summed:,} "
            f"| {sum(m['final_input_tokens'] for m in ms) / len(ms):,.0f} "
            f"| {max(m['peak_input_tokens'] for m in ms):,} | {kept}/{total} "
            f"| {min(m['todo_retention_rate'] for m in ms):.1%} "
            f"| {pooled_rate(ms, 'todo_retention_rate', 'todo_checks')} "
            f"| {pooled_rate(ms, 'task_retention_rate', 'task_checks')} "
            f"| {sum(m['first_request_kept'] for m in ms)}/{len(ms)} | {reuse:.1%} | {hits} "
            f"| {sum(int(m.get('summary_calls') or 0) for m in ms)} |"
        )
    return "\n".join(lines) + "\n"
