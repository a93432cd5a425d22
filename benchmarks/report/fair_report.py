"""Report sections for a like-for-like comparison: cost, budgets, every-call retention, causes.

Each function reads the derived blocks `benchmarks.report.results_report.write_report` adds to
``results.json`` (``comparison`` from `benchmarks.report.comparison`, ``gap`` from
`benchmarks.report.gap`, ``usage_check`` from `benchmarks.replay.usage_check`) and returns Markdown
lines. `derive` computes those blocks.

Invariants: every figure printed is read from ``results.json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.report.comparison import compare, headline
from benchmarks.report.gap import CAUSES, gap_by_cause

GAP_STRATEGIES: tuple[str, ...] = ("B", "switch:message")


def derive(results: dict[str, Any]) -> None:
    """Add the comparison and the gap analysis to `results` (recomputed from what it holds)."""
    results["comparison"] = compare(results)
    models = [m for m in results["models"]]
    present = {r["strategy"] for r in results["runs"]}
    results["gap"] = {
        s: {m: gap_by_cause(results["runs"], s, m) for m in models}
        for s in GAP_STRATEGIES
        if s in present
    }


def _comparison(results: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return the results' comparison block, computing it when `derive` has not run."""
    comp: Mapping[str, Any] | None = results.get("comparison")
    return comp if comp is not None else compare(results)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _usd(x: float) -> str:
    return f"${x:,.2f}" if x >= 1 else f"${x:.4f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return [*out, ""]


def providers(results: Mapping[str, Any]) -> list[str]:
    """Return the priced providers, in table order."""
    return list(_comparison(results)["prices"]["providers"])


def prices_section(results: Mapping[str, Any]) -> list[str]:
    """The price table the costs use, with its date and sources."""
    prices = _comparison(results)["prices"]
    rows = [
        [
            name,
            p["model"],
            p["input_miss"],
            p["cache_hit"],
            p["cache_write"],
            p["output"],
            f"[source]({p['source']})",
        ]
        for name, p in prices["providers"].items()
    ]
    return [
        "## Prices",
        "",
        f"{prices['currency']} per million tokens, read on {prices['taken']} "
        "(`benchmarks/data/prices.json`, with each row's tier).",
        "",
        *_table(
            ["provider", "model", "input (miss)", "cache hit", "cache write", "output", ""], rows
        ),
    ]


def comparison_section(results: Mapping[str, Any]) -> list[str]:
    """Per session: every run and peer with input split, cost per provider, retention, budget."""
    comp = _comparison(results)
    names = providers(results)
    out = ["## Cost, input and retention per session", ""]
    out += [
        "Summed input tokens split into the fixed prompt (tool catalog + system message of "
        "every request) and messages; `first fixed`: the first request's fixed prompt. Cost: "
        "input priced by each provider's cache model plus the session's output tokens (the "
        "same for every run), plus every summary call (`summary calls`: the request sent to the "
        "summarizer model, priced under the same cache model, and a summary of the recorded "
        "length out; `benchmarks/replay/summary_pricing.py`). `every call`: calls whose request "
        "shows every unfinished todo at "
        "its latest status; `every call (tasks)`: calls whose request shows every unfinished "
        "shared task (id) at its latest status, `-` where none was open; `after compaction`: "
        "unfinished items kept at each compaction and "
        f"the last call (ours). Matched whole-request budget: {comp['budget'] or 'not set'}; "
        "a row marked *other budget* triggered elsewhere and is not compared.",
        "",
    ]
    head = [
        "run / peer",
        "summed input",
        "fixed + messages",
        "first fixed",
        *(f"cost {n}" for n in names),
        "summary calls",
        "every call",
        "every call (tasks)",
        "after compaction",
    ]
    for session, rows in comp["sessions"].items():
        table = [_comparison_row(r, names) for r in sorted(rows, key=lambda r: r["summed_input"])]
        out += [f"### {session}", "", *_table(head, table)]
    return out


def _comparison_row(r: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """One row of a session's comparison table: a run's or a peer's figures, formatted."""
    label = r["name"] if r["matched"] else f"{r['name']} *other budget*"
    counts = r["after_compaction_counts"]
    return [
        label,
        f"{r['summed_input']:,}",
        f"{r['fixed']:,} + {r['messages']:,}",
        f"{r['first_fixed']:,}",
        *(_usd(r["cost"][n]["usd"]) for n in names),
        str(r.get("summary_calls", 0)),
        _pct(r["every_call"]),
        "-" if r.get("every_call_tasks") is None else _pct(r["every_call_tasks"]),
        "-" if counts is None else f"{_pct(r['after_compaction'])} ({counts[0]}/{counts[1]})",
    ]


def headline_lines(results: Mapping[str, Any]) -> list[str]:
    """B against each peer configuration at the matched budget: tokens, cost, where B loses."""
    entries = headline(_comparison(results))
    if not entries:
        return []
    names = providers(results)
    out = [
        "B against each peer at the matched budget (sessions pooled; positive: B sends fewer "
        "tokens or costs less):",
        "",
    ]
    for e in entries:
        tokens = 1 - e["ours_input"] / e["peer_input"] if e["peer_input"] else 0.0
        costs = ", ".join(
            f"{n} {_pct(1 - e['ours_cost'][n] / e['peer_cost'][n]) if e['peer_cost'][n] else '-'}"
            for n in names
        )
        losses = sorted(
            {s for v in e["peer_cheaper"].values() for s in v} | set(e["peer_fewer_tokens"])
        )
        where = ""
        if losses:
            where = (
                f"; the peer wins on {', '.join(losses)} (B minus peer: fixed prompts "
                f"{e['fixed_delta']:+,} tokens, messages {e['messages_delta']:+,}; "
                f"{e['ours_compactions']} compactions against {e['peer_rewrites']} rewrites)"
                + why(e)
            )
        out.append(
            f"- {e['peer']}: input {_pct(tokens)}, cost {costs}; every-call retention B "
            f"{_pct(e['ours_every_call'])}, peer {_pct(e['peer_every_call'])}{where}."
        )
    return [*out, ""]


def why(entry: Mapping[str, Any]) -> str:
    """Say where the sawtooths differ: what each side keeps after a compaction, and before."""
    ours, peer = entry.get("ours_after") or {}, entry.get("peer_after") or {}
    if not ours.get("count") or not peer.get("count"):
        return ""
    kept = f"{ours['kept']:,} message tokens"
    if ours.get("checkpoint") is not None:
        kept += (
            f" ({ours['checkpoint']:,} of Checkpoint, {ours['kept'] - ours['checkpoint']:,} of "
            "verbatim tail)"
        )
    tail = ours["kept"] - (ours.get("checkpoint") or 0)
    if ours["kept"] <= peer["kept"]:
        lead = "not by keeping less after a compaction"
    elif tail <= peer["kept"]:
        lead = (
            "the peer keeps less after each compaction, though not less verbatim: B's verbatim "
            "tail alone is no longer than the peer's summary and tail, and B's Checkpoint makes "
            "the difference"
        )
    else:
        lead = "the peer keeps less after each compaction, a shorter verbatim tail than B's"
    return (
        f"; why: {lead}: right after a compaction B's request keeps {kept} on average, the peer's "
        f"{peer['kept']:,} (its summary and tail), {ours['kept'] - peer['kept']:+,} per request "
        f"until the next one; just before one, B's request holds {ours['before']:,} tokens, the "
        f"peer's {peer['before']:,}; between compactions a request grows by {ours['growth']:,} "
        f"tokens a call for B, {peer['growth']:,} for the peer"
        + _swing_text(entry.get("running_delta"))
    )


def _swing_text(swing: Mapping[str, int] | None) -> str:
    if not swing or swing["low"] == swing["high"]:
        return ""
    return (
        "; call by call, the running sum of B minus the peer swings between "
        f"{swing['low']:+,} and {swing['high']:+,} tokens within a session, as the two "
        "sides' compactions fall at different calls"
    )


def gap_section(results: Mapping[str, Any]) -> list[str]:
    """B's gap to the ideal hit rate, by cause, under each cache model."""
    gaps = results.get("gap") or {}
    if not gaps:
        return []
    out = ["## Gap to the ideal hit rate, by cause", ""]
    out += [
        "Points of hit rate lost against the ideal (every token but the new messages), over "
        "every session: right after a compaction, at the first request in a new mode, and to "
        "the provider's granularity everywhere else.",
        "",
    ]
    rows = []
    for strategy, by_model in gaps.items():
        for model, g in by_model.items():
            rows.append(
                [
                    strategy,
                    model,
                    _pct(g["hit_rate"]),
                    _pct(g["ideal_rate"]),
                    f"{g['gap_points']:.2f}",
                    *(f"{g['points'][c]:.2f}" for c in CAUSES),
                ]
            )
    head = ["strategy", "model", "hit rate", "ideal", "gap (points)", *CAUSES]
    return [*out, *_table(head, rows)]


USAGE_HEAD = [
    "session",
    "request",
    "calls",
    "input",
    "provider read",
    "model",
    "model, no expiry",
    "exact",
]
"""The columns of the usage check's table."""


def _usage_rows(files: Mapping[str, Any]) -> list[list[object]]:
    """One row per (transcript, kind of request): input, provider's and model's cache reads."""
    return [
        [
            name.removesuffix(".jsonl"),
            kind,
            k["calls"],
            f"{k['tokens']:,}",
            f"{k['real']:,}",
            f"{k['model']:,}",
            f"{k['model_no_expiry']:,}",
            f"{k['exact']}/{k['calls']}",
        ]
        for name, entry in files.items()
        for kind, k in entry["by_kind"].items()
    ]


def usage_section(results: Mapping[str, Any]) -> list[str]:
    """The Anthropic cache model against real Claude Code usage, by kind of request."""
    check = results.get("usage_check") or {}
    files = check.get("files") or {}
    if not files:
        return ["## Cache model against real usage", "", f"Not run: {check.get('reason', '')}", ""]
    out = ["## Cache model against real usage", ""]
    p = check["pooled"]
    out += [
        "Each recorded Claude Code call rebuilt from its own usage "
        "(`benchmarks/replay/usage_check.py`) "
        "and fed to `AnthropicCache` with its timestamp: the model's cache read against the "
        f"provider's. {p['calls']} calls: provider {_pct(p['real_hit_rate'])} of input read "
        f"from cache, model with expiry {_pct(p['model_hit_rate'])}, without expiry "
        f"{_pct(p['model_no_expiry_hit_rate'])}; {_pct(p['exact_share'])} of calls match to "
        "the token.",
        "",
    ]
    out += _table(USAGE_HEAD, _usage_rows(files))
    misses = [
        [name.removesuffix(".jsonl"), i, r["kind"], r["gap_s"], r["tokens"], r["real"], r["model"]]
        for name, entry in files.items()
        for i, r in enumerate(entry.get("rows") or ())
        if r["model"] != r["real"]
    ]
    if misses:
        head = ["session", "call", "request", "gap", "input", "provider read", "model"]
        out += [
            "Every request where the model and the provider differ (`gap`: seconds since the "
            "previous call):",
            "",
            *_table(head, misses),
        ]
    return out
