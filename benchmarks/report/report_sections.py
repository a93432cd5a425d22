"""The report's Markdown sections: token savings, retention, cache hits, throughput, probes.

Each `*_section` function takes the results of `benchmarks.report.results_report.run_bench` (with
the peers' records read in) and returns Markdown lines;
`benchmarks.report.results_report.render_markdown` puts them in order. The peer helpers
(`peer_rows`, `peer_label`, `pooled_peer_rates`) pick and name the peers' records of our sessions.

Invariants: every number is read from the results; a peer that did not run shows its status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.quality import checkpoint_quality
from harness.simulation import (
    BASELINE,
    PROVIDER_MODELS,
    STRATEGIES,
    SWITCH_VARIANTS,
    TODO_STRATEGIES,
)

MODEL_NAMES: tuple[str, ...] = tuple(m.name for m in PROVIDER_MODELS)


def session_name(turns: int, seed: int) -> str:
    """Return a session's name, the same the peers use."""
    return f"synthetic-t{turns}-s{seed}"


def _quality_line(quality: Mapping[str, Any]) -> str:
    return "; ".join(
        f"{name} {corpus} {tally['score']:.1%}"
        for name, corpora in quality["scores"].items()
        for corpus, tally in corpora.items()
    )


def quality_section(results: Mapping[str, Any]) -> list[str]:
    """The checkpoint probes of `benchmarks.quality.checkpoint_quality`, when the run has them."""
    quality = results.get("checkpoint_quality")
    if not quality:
        return []
    return [
        "## Checkpoint probes",
        "",
        "At every compaction, deterministic probes on the request the model sees next "
        "(`benchmarks/quality/checkpoint_quality.py`, an implementation of their own in "
        "`benchmarks/quality/checkpoint_probes.py`): first and latest request present, "
        "no injected, "
        "shell or hook text as a request, Next Step naming the work in progress (a task by id "
        "and subject) and nothing completed, every unfinished task and its blockers carried, "
        "the latest failing error and recorded failure present, every edited file present "
        "(relative to the recorded working directory), project names before common ones, no "
        "constraint from an ended mode.",
        "",
        *checkpoint_quality.markdown(quality),
        "",
    ]


# --- peers ---------------------------------------------------------------------------------------


def peer_rows(peers: Mapping[str, Any], sessions: Sequence[str]) -> list[dict[str, Any]]:
    """Return the peers' records on our sessions (every status, so skips are shown)."""
    if not peers.get("available"):
        return []
    return [r for r in peers["records"] if r.get("session") in sessions]


def pooled_peer_rates(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Pool each peer configuration's cache-hit rates over sessions, weighted by input tokens."""
    sums: dict[str, dict[str, float]] = {}
    for r in records:
        m = r.get("metrics")
        if r.get("status") != "ok" or not m or not m.get("cache_hit_rate"):
            continue
        acc = sums.setdefault(peer_label(r), {"_tokens": 0.0})
        acc["_tokens"] += m["summed_input_tokens"]
        for model in MODEL_NAMES:
            rate = m["cache_hit_rate"].get(model, 0.0)
            acc[model] = acc.get(model, 0.0) + rate * m["summed_input_tokens"]
    return {
        label: {m: acc.get(m, 0.0) / acc["_tokens"] if acc["_tokens"] else 0.0 for m in MODEL_NAMES}
        for label, acc in sums.items()
    }


def peer_label(record: Mapping[str, Any]) -> str:
    """Return ``peer/variant (summarizer)``."""
    return f"{record.get('peer')}/{record.get('variant')} ({record.get('summarizer')})"


# --- Markdown ------------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return [*out, ""]


def _sessions(results: Mapping[str, Any]) -> list[str]:
    return [session_name(t, s) for t, s in results["config"]["sessions"]]


SAVINGS_HEAD = [
    "strategy / peer",
    "summed input tokens",
    "saved vs no compaction",
    "final",
    "peak",
    "compactions (peers: rewrites)",
    "B saves vs this",
]
"""The columns of a session's token-savings table."""


def _strategy_row(name: str, r: Mapping[str, Any], base: int, b: int) -> list[object]:
    """One strategy's savings row: its tokens against no compaction (`base`) and B's (`b`)."""
    total = r["summed_input_tokens"]
    return [
        f"{name}",
        f"{total:,}",
        _pct(1 - total / base),
        f"{r['final_input_tokens']:,}",
        f"{r['peak_input_tokens']:,}",
        r["compactions"],
        "-" if name == "B" else _pct(1 - b / total),
    ]


def _peer_savings_row(rec: Mapping[str, Any], base: int, b: int) -> list[object]:
    """One peer's savings row, or its status when it did not run."""
    m = rec.get("metrics")
    if rec.get("status") != "ok" or not m:
        return [peer_label(rec), f"{rec.get('status')}: {rec.get('reason', '')}", *[""] * 5]
    total = m["summed_input_tokens"]
    return [
        peer_label(rec),
        f"{total:,}",
        _pct(1 - total / base),
        f"{m['final_input_tokens']:,}",
        f"{m['peak_input_tokens']:,}",
        m.get("rewrites", ""),
        _pct(1 - b / total) if total else "-",
    ]


def savings_section(results: Mapping[str, Any]) -> list[str]:
    """Token savings per session: every strategy, and every peer that ran."""
    out = ["## Token savings", ""]
    out += [
        "Summed input tokens over every model call of a session (what the session pays for "
        "input), against the same session run without compaction. Lower is better.",
        "",
    ]
    runs = results["runs"]
    peers = results["peers"]
    for session in _sessions(results):
        mine = {r["strategy"]: r for r in runs if r["session"] == session}
        base = mine[BASELINE]["summed_input_tokens"]
        b = mine["B"]["summed_input_tokens"]
        rows = [_strategy_row(name, r, base, b) for name, r in mine.items()]
        rows += [_peer_savings_row(rec, base, b) for rec in peer_rows(peers, [session])]
        out += [f"### {session}", ""]
        out += _table(SAVINGS_HEAD, rows)
    if not peers.get("available"):
        out += [f"Peers: not available ({peers.get('reason')}).", ""]
    return out


def retention_section(results: Mapping[str, Any]) -> list[str]:
    """Unfinished-todo retention per session."""
    out = ["## Unfinished-todo retention", ""]
    out += [
        "After each compaction and at the last call: the unfinished items (pending, in "
        "progress) of the latest todo list that the request shows verbatim at their latest "
        "status (kept / expected). *Every call*: share of calls, made while the list had "
        "unfinished items, whose request shows all of them. B must be 100% everywhere.",
        "",
    ]
    rows: list[list[object]] = []
    for r in results["runs"]:
        ret = r["retention"]
        rows.append(
            [
                r["session"],
                r["strategy"],
                f"{ret['kept']}/{ret['expected']}",
                _pct(ret["rate"]),
                _pct(r["request_retention"]),
                "yes" if r["first_request_kept"] else "no",
            ]
        )
    for rec in peer_rows(results["peers"], _sessions(results)):
        m = rec.get("metrics")
        if rec.get("status") == "ok" and m:
            rows.append(
                [
                    rec["session"],
                    peer_label(rec),
                    f"{m['unfinished_at_latest_status']}/{m['unfinished_total']} (end)",
                    _pct(m["unfinished_at_latest_status"] / m["unfinished_total"])
                    if m["unfinished_total"]
                    else "-",
                    _pct(m["todo_retention_rate"]),
                    "yes" if m["first_request_kept"] else "no",
                ]
            )
    out += _table(
        [
            "session",
            "strategy / peer",
            "kept / expected",
            "retention",
            "every call",
            "first request kept",
        ],
        rows,
    )
    return out


def cache_section(results: Mapping[str, Any]) -> list[str]:
    """Cache-hit rate per provider model for A, B, C and the mode-switch variants."""
    pooled = results["summary"]["strategies"]
    out = ["## Prefix-cache hit rate", ""]
    out += [
        "Cache-hit tokens over input tokens, every session pooled, under each provider's "
        "cache model, next to the ideal (every token but the newly appended messages). ",
        "",
    ]
    head = ["strategy", *MODEL_NAMES, "ideal"]
    rows = [
        [
            f"{n}: {STRATEGIES[n].title}",
            *(_pct(pooled[n]["cache_hit_rate"][m]) for m in MODEL_NAMES),
            _pct(pooled[n]["ideal_hit_rate"]),
        ]
        for n in (*TODO_STRATEGIES, BASELINE)
    ]
    out += ["### Where the todo list lives", "", *_table(head, rows)]
    rows = [
        [
            label,
            *(_pct(pooled[n]["cache_hit_rate"][m]) for m in MODEL_NAMES),
            _pct(pooled[n]["ideal_hit_rate"]),
        ]
        for label, n in SWITCH_VARIANTS.items()
    ]
    out += ["### Mode switch (Plan mode and back)", "", *_table(head, rows)]
    pooled_peers = pooled_peer_rates(peer_rows(results["peers"], _sessions(results)))
    if pooled_peers:
        rows = [
            [label, *(_pct(rates[m]) for m in MODEL_NAMES), "-"]
            for label, rates in pooled_peers.items()
        ]
        out += ["### Peers (their sessions pooled)", "", *_table(head, rows)]
    return out


def throughput_section(results: Mapping[str, Any]) -> list[str]:
    """Throughput and scaling table."""
    out = ["## Throughput and scaling", ""]
    out += [
        "Per event, on this machine (times vary; the ratios to raw tiktoken on the same text "
        "are the portable figures). Peak memory is traced in a separate pass.",
        "",
    ]
    rows = []
    for p in results["throughput"]:
        mem = (
            f"{p['append_peak_mb']:.1f} / {p['reopen_peak_mb']:.1f}"
            if p["append_peak_mb"] is not None
            else "not traced"
        )
        rows.append(
            [
                f"{p['events']:,}",
                f"{p['message_tokens']:,}",
                f"{p['append_us']:.0f} µs ({p['append_ratio']:.2f}x)",
                f"{p['reopen_us']:.0f} µs ({p['reopen_ratio']:.2f}x)",
                f"{p['tiktoken_us']:.0f} µs",
                f"{p['context_tokens_ns']:.0f} ns",
                f"{p['compaction_s']:.2f} s ({p['compaction_ratio']:.2f}x, "
                f"-{_pct(p['compaction_reduction'])})",
                f"{p['assembly_ms']:.2f} ms",
                mem,
            ]
        )
    out += _table(
        [
            "events",
            "message tokens",
            "append + views",
            "reopen",
            "raw tiktoken",
            "context_tokens read",
            "one compaction",
            "request assembly",
            "peak MiB append / reopen",
        ],
        rows,
    )
    return out


def peer_headline(results: Mapping[str, Any]) -> list[str]:
    """One line per peer configuration: B's summed input tokens against it, same sessions."""
    b_by_session = {
        r["session"]: r["summed_input_tokens"] for r in results["runs"] if r["strategy"] == "B"
    }
    totals: dict[str, list[int]] = {}
    for r in peer_rows(results["peers"], _sessions(results)):
        m = r.get("metrics")
        if r.get("status") == "ok" and m:
            acc = totals.setdefault(peer_label(r), [0, 0])
            acc[0] += m["summed_input_tokens"]
            acc[1] += b_by_session[r["session"]]
    if not totals:
        return []
    out = [
        "Against the peers (summed input tokens over the sessions each ran; positive: B sends "
        "fewer):",
        "",
    ]
    out += [
        f"- {label}: B {_pct(1 - b / peer):>6} ({b:,} vs {peer:,})"
        for label, (peer, b) in totals.items()
    ]
    return [*out, ""]
