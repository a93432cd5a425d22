"""The benchmark run and its report: ``results.json``, ``report.md`` and PNG charts.

`run_bench` replays every strategy (`harness.simulation.STRATEGIES`) on the same seeded
sessions (`harness.simulation.generate`), feeds every request to the four provider cache models
(`harness.simulation.PROVIDER_MODELS`), measures throughput and scaling (`benchmarks.throughput`),
and reads the peers' results (``peers.json``, written by `benchmarks.peers.run`) when they exist.
`write_report` turns the results into Markdown tables and charts. ``harness bench`` runs both.

Full run: the three sessions the peers also run (12 turns seeds 0 and 1, 24 turns seed 2), a
30,000-token window (compaction at 0.8 of it: 24,000 tokens, the peers' budget), throughput at
10^3 to 10^6 events. Quick run (``--quick``): one 4-turn session, a 12,000-token window, the
Checkpoint probes on one real transcript, and throughput at 10^3 and 2x10^3 events; a smoke run of
every part, in well under a minute.

Invariants: the results are a pure function of the configuration (wall times aside); every
number in the report is read from ``results.json`` (or from ``peers.json`` for peers); nothing is
made up for a peer that did not run.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import (
    checkpoint_quality,
    fair_report,
    headline_table,
    real_replay,
    summary_pricing,
    throughput,
    usage_check,
)
from compaction import CompactionPolicy, get_tokenizer
from harness.simulation import (
    BASELINE,
    PROVIDER_MODELS,
    STRATEGIES,
    SWITCH_VARIANTS,
    TODO_STRATEGIES,
    ReplayResult,
    generate,
    output_tokens,
    replay,
)

RESULTS_FORMAT = "context-harness/bench"
RESULTS_VERSION = 1
DEFAULT_OUT = Path(__file__).resolve().parent / "results"
"""Where ``harness bench`` writes by default: ``benchmarks/results/``."""
TRANSCRIPTS = real_replay.TRANSCRIPTS
"""Real recorded sessions (``../shared/transcripts``) for the cache-model check."""
MODEL_NAMES: tuple[str, ...] = tuple(m.name for m in PROVIDER_MODELS)
COMPACTING: tuple[str, ...] = tuple(n for n, s in STRATEGIES.items() if s.compaction)
Progress = Callable[[str], None]


@dataclass(frozen=True)
class BenchConfig:
    """What a run measures."""

    sessions: tuple[tuple[int, int], ...]
    """(turns, seed) of each session."""
    window_tokens: int
    """The compaction policy's context window (trigger at 0.8 of it)."""
    scale_sizes: tuple[int, ...]
    """Throughput sizes, in events."""
    chart_session: str
    """The session drawn in the per-request charts."""
    quick: bool = False
    tokenizer: str = "o200k_base"
    real_usage: bool = False
    """Check the Anthropic cache model against the real transcripts' usage (slow: full run)."""
    quality_transcripts: int | None = None
    """How many real transcripts the Checkpoint probes read (None: all; a quick run reads 1)."""
    real_sessions: tuple[str, ...] | None = None
    """The real transcripts replayed under every run (`benchmarks.real_replay`; None: all)."""

    @classmethod
    def full(cls) -> BenchConfig:
        """Return the full configuration (the committed report)."""
        return cls(
            ((12, 0), (12, 1), (24, 2)),
            30_000,
            throughput.FULL_SIZES,
            "synthetic-t24-s2",
            real_usage=True,
        )

    @classmethod
    def quick_run(cls) -> BenchConfig:
        """Return the quick configuration (CI smoke test, under two minutes)."""
        return cls(
            ((4, 0),),
            12_000,
            throughput.QUICK_SIZES,
            "synthetic-t4-s0",
            quick=True,
            quality_transcripts=1,
            real_sessions=real_replay.QUICK_SESSIONS,
        )

    def policy(self) -> CompactionPolicy:
        """Return the compaction policy of every compacting strategy."""
        return CompactionPolicy(window_tokens=self.window_tokens)

    @property
    def budget(self) -> int:
        """The whole-request token count every strategy and peer triggers at."""
        return self.policy().trigger_tokens


def session_name(turns: int, seed: int) -> str:
    """Return a session's name, the same the peers use."""
    return f"synthetic-t{turns}-s{seed}"


# --- running -------------------------------------------------------------------------------------


def run_summary(result: ReplayResult) -> dict[str, Any]:
    """Return one strategy-on-session run as plain data, per-request series included."""
    prompts = [r.prompt_tokens for r in result.records]
    summary = summary_pricing.from_replay(result.summary_calls, MODEL_NAMES)
    return {
        "strategy": result.strategy,
        "session": result.session,
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


def read_peers(path: Path) -> dict[str, Any]:
    """Read the peers' results, or say why there are none."""
    if not path.is_file():
        return {
            "available": False,
            "reason": f"{path} not found (run python -m benchmarks.peers.run)",
        }
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        return {"available": False, "reason": f"{path} is not valid JSON: {exc}"}
    if not isinstance(doc, dict) or not isinstance(doc.get("records"), list):
        return {"available": False, "reason": f"{path} has no records list"}
    return {"available": True, "path": str(path), **doc}


def replay_one(config: BenchConfig, turns: int, seed: int, run_name: str) -> dict[str, Any]:
    """Replay one run (a strategy, or a content-blind run) on one session; return its summary."""
    tok = get_tokenizer(config.tokenizer)
    with summary_pricing.run_summarizer(run_name, tok) as summarizer:
        result = replay(
            generate(turns, seed),
            summary_pricing.strategy_of(run_name),
            policy=config.policy(),
            tokenizer=tok,
            session_name=session_name(turns, seed),
            summarizer=summarizer,
        )
    result.strategy = run_name
    return {**run_summary(result), "budget": config.budget}


def run_bench(
    config: BenchConfig,
    *,
    peers_path: Path | None = None,
    progress: Progress | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """Run every strategy on every session, the throughput sizes, and read the peers.

    `jobs` replays that many runs at once, in separate processes (the figures are the same:
    each replay is a pure function of its inputs).
    """
    say = progress or (lambda _line: None)
    tok = get_tokenizer(config.tokenizer)
    names = summary_pricing.run_names()
    plan = [(t, s, n) for t, s in config.sessions for n in names]
    outputs = {session_name(t, s): output_tokens(generate(t, s), tok) for t, s in config.sessions}
    runs: list[dict[str, Any]] = []

    def done(run: dict[str, Any]) -> None:
        runs.append(run)
        say(
            f"{run['session']} {run['strategy']}: {run['requests']} calls, "
            f"{run['compactions']} compactions, {run['summed_input_tokens']:,} input tokens"
        )

    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for run in pool.map(replay_one, *zip(*[(config, *p) for p in plan], strict=True)):
                done(run)
    else:
        for p in plan:
            done(replay_one(config, *p))
    quality = checkpoint_quality.run_quality(
        window=config.window_tokens,
        sessions=config.sessions,
        max_transcripts=config.quality_transcripts,
    )
    say("checkpoint probes: " + _quality_line(quality))
    real = real_replay.run(window=config.window_tokens, sessions=config.real_sessions, progress=say)
    scale = throughput.run(config.scale_sizes, progress=say)
    peers = read_peers(peers_path) if peers_path else {"available": False, "reason": "not read"}
    return {
        "format": RESULTS_FORMAT,
        "version": RESULTS_VERSION,
        "config": {
            **asdict(config),
            "threshold": config.policy().threshold,
            "retain": config.policy().retain,
            "budget": config.budget,
        },
        "environment": {"python": platform.python_version(), "machine": platform.machine()},
        "models": {m.name: asdict(m) for m in PROVIDER_MODELS},  # type: ignore[call-overload]
        "strategies": {n: asdict(s) for n, s in STRATEGIES.items()},
        "runs": runs,
        "outputs": outputs,
        "summary": summarize(runs),
        "throughput": scale,
        "checkpoint_quality": quality,
        "real_replay": real,
        "peers": peers,
        "usage_check": check_usage(TRANSCRIPTS)
        if config.real_usage
        else {"reason": "quick run (the full run checks the real transcripts)"},
    }


def check_usage(folder: Path) -> dict[str, Any]:
    """Check the Anthropic cache model against the real transcripts' usage, or say why not."""
    if not folder.is_dir():
        return {"reason": f"{folder} not found"}
    files = usage_check.check_transcripts(folder)
    return {"folder": folder.name, "files": files, "pooled": usage_check.pooled(files)}


def _quality_line(quality: Mapping[str, Any]) -> str:
    return "; ".join(
        f"{name} {corpus} {tally['score']:.1%}"
        for name, corpora in quality["scores"].items()
        for corpus, tally in corpora.items()
    )


def quality_section(results: Mapping[str, Any]) -> list[str]:
    """The checkpoint probes of `benchmarks.checkpoint_quality`, when the run has them."""
    quality = results.get("checkpoint_quality")
    if not quality:
        return []
    return [
        "## Checkpoint probes",
        "",
        "At every compaction, deterministic probes on the request the model sees next "
        "(`benchmarks/checkpoint_quality.py`, an implementation of their own in "
        "`benchmarks/checkpoint_probes.py`): first and latest request present, no injected, "
        "shell or hook text as a request, Next Step naming the work in progress (a task by id "
        "and subject) and nothing completed, every unfinished task and its blockers carried, "
        "the latest failing error and recorded failure present, every edited file present "
        "(relative to the recorded working directory), project names before common ones, no "
        "constraint from an ended mode.",
        "",
        *checkpoint_quality.markdown(quality),
        "",
    ]


# --- summaries -----------------------------------------------------------------------------------


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


def render_markdown(results: Mapping[str, Any], charts: Sequence[str]) -> str:
    """Return the Markdown report."""
    cfg = results["config"]
    pooled = results["summary"]["strategies"]
    mode = "quick" if cfg["quick"] else "full"
    lines = ["# Benchmark report", ""]
    lines += [
        f"Run: `harness bench{' --quick' if cfg['quick'] else ''}` ({mode}). Sessions: "
        + ", ".join(f"`{s}`" for s in _sessions(results))
        + f" (`harness.simulation.sessions`). Tokenizer `{cfg['tokenizer']}`; compaction window "
        f"{cfg['window_tokens']:,} tokens (trigger {cfg['threshold']:g}, tail {cfg['retain']:g});"
        " extractive summarizer. Canonical serialization and cache models: see "
        "`benchmarks/README.md`.",
        "",
        "## Headline",
        "",
    ]
    b = pooled["B"]
    lines += [
        f"- B (this toolkit) sends {_pct(b['savings_vs_baseline'])} fewer input tokens than "
        "the same sessions without compaction.",
        f"- Unfinished-todo retention after every compaction: B {_pct(b['retention'])} "
        f"({b['retention_counts'][0]}/{b['retention_counts'][1]}), A "
        f"{_pct(pooled['A']['retention'])}, C {_pct(pooled['C']['retention'])}.",
        "- Cache-hit rate (DeepSeek / OpenAI / Anthropic / vLLM, ideal): "
        + "; ".join(
            f"{n} "
            + " / ".join(_pct(pooled[n]["cache_hit_rate"][m]) for m in MODEL_NAMES)
            + f" ({_pct(pooled[n]['ideal_hit_rate'])})"
            for n in TODO_STRATEGIES
        )
        + ".",
        "",
    ]
    lines += headline_table.section(
        fair_report._comparison(results), fair_report.providers(results)
    )
    lines += fair_report.headline_lines(results)
    lines += peer_headline(results)
    lines += fair_report.prices_section(results)
    lines += fair_report.comparison_section(results)
    lines += savings_section(results)
    lines += retention_section(results)
    lines += cache_section(results)
    lines += fair_report.gap_section(results)
    lines += fair_report.usage_section(results)
    lines += throughput_section(results)
    lines += quality_section(results)
    if results.get("real_replay"):
        lines += real_replay.markdown(results["real_replay"])
    lines += ["## Charts", ""]
    lines += [f"![{c}]({c})" for c in charts] if charts else [results.get("charts_note", "")]
    return "\n".join(lines).rstrip("\n") + "\n"


# --- charts --------------------------------------------------------------------------------------


def write_charts(results: Mapping[str, Any], out: Path) -> tuple[list[str], str | None]:
    """Draw the PNG charts; return their file names, or none and why (matplotlib missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return (
            [],
            "Charts skipped: matplotlib is not installed (pip install 'context-harness[charts]').",
        )
    from benchmarks import charts, fair_charts

    names = [
        charts.context_chart(plt, results, out / "context_tokens.png"),
        charts.hit_rate_chart(plt, results, out / "cache_hit_rate.png"),
        charts.hit_bars_chart(plt, results, out / "cache_hit_bars.png"),
        fair_charts.retention_chart(plt, results, out / "retention.png"),
        fair_charts.cost_chart(plt, results, out / "cost.png"),
        fair_charts.per_call_chart(plt, results, out / "input_per_call.png"),
    ]
    return names, None


def reread(out: Path, peers_path: Path | None) -> dict[str, Any]:
    """Load an earlier run's ``results.json`` from `out` and refresh its peers' results.

    Raises:
        FileNotFoundError: `out` holds no ``results.json``.
        ValueError: the file is not a benchmark results file.
    """
    path = out / "results.json"
    results: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if results.get("format") != RESULTS_FORMAT:
        raise ValueError(f"{path} is not a {RESULTS_FORMAT} file")
    results.pop("charts_note", None)
    if peers_path is not None:
        results["peers"] = read_peers(peers_path)
    return results


def write_report(results: dict[str, Any], out: Path) -> dict[str, Path]:
    """Write ``results.json``, the charts and ``report.md`` into `out`; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    fair_report.derive(results)
    charts, note = write_charts(results, out)
    if note:
        results["charts_note"] = note
    json_path = out / "results.json"
    json_path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    md_path = out / "report.md"
    md_path.write_text(render_markdown(results, charts), encoding="utf-8")
    paths = {"results": json_path, "report": md_path}
    paths.update({c: out / c for c in charts})
    return paths
