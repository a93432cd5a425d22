"""The benchmark run and its report: ``results.json``, ``report.md`` and PNG charts.

`run_bench` replays every strategy (`harness.simulation.STRATEGIES`) on the same seeded
sessions (`harness.simulation.generate`), feeds every request to the four provider cache models
(`harness.simulation.PROVIDER_MODELS`), measures throughput and scaling
(`benchmarks.speed.throughput`), and reads the peers' results (``peers.json``, written by
`benchmarks.peers.run`) when they exist. `write_report` turns the results into Markdown tables and
charts. ``harness bench`` runs both.

Full run: the three sessions the peers also run (12 turns seeds 0 and 1, 24 turns seed 2), a
30,000-token window (compaction at 0.8 of it: 24,000 tokens, the peers' budget), throughput at
10^3 to 10^6 events. Quick run (``--quick``): one 4-turn session, a 12,000-token window, the
Checkpoint probes on one real transcript, and throughput at 500 and 1,000 events, each timed once;
a smoke run of every part, in well under a minute.

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

from benchmarks import RESULTS
from benchmarks.matched import matched_policy
from benchmarks.quality import checkpoint_quality, continuity_report
from benchmarks.replay import real_transcripts, summary_pricing, usage_check
from benchmarks.report import boundary_effect, fair_report, headline_table, like_for_like
from benchmarks.report.report_sections import (
    MODEL_NAMES,
    _pct,
    _quality_line,
    _sessions,
    cache_section,
    peer_headline,
    quality_section,
    retention_section,
    savings_section,
    session_name,
    throughput_section,
)
from benchmarks.report.run_records import run_summary, summarize
from benchmarks.speed import throughput
from benchmarks.speed.throughput_phases import MIN_TIMED_EVENTS
from benchmarks.splits import EVALUATION, TUNING
from compaction import CompactionPolicy, get_tokenizer
from harness.simulation import (
    PROVIDER_MODELS,
    STRATEGIES,
    TODO_STRATEGIES,
    generate,
    output_tokens,
    replay,
)

RESULTS_FORMAT = "context-harness/bench"
RESULTS_VERSION = 1
DEFAULT_OUT = RESULTS
"""Where ``harness bench`` writes by default: ``benchmarks/results/``."""
TRANSCRIPTS = real_transcripts.TRANSCRIPTS
"""Real recorded sessions (``../shared/transcripts``) for the cache-model check."""
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
    """The real transcripts replayed under every run (`real_transcripts`; None: all)."""
    scale_min_timed: int = MIN_TIMED_EVENTS
    """Below this many events a throughput size's append is timed over several rounds, so
    noise averages out (`benchmarks.speed.throughput_phases.rounds_for`); a quick run times each
    size once (0): its figures are a smoke test's, never published, and ten rounds of both
    sizes cost it 7 CPU seconds."""

    @classmethod
    def full(cls) -> BenchConfig:
        """Return the full configuration (the committed report)."""
        return cls(
            (*TUNING, *EVALUATION),
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
            real_sessions=real_transcripts.QUICK_SESSIONS,
            scale_min_timed=0,
        )

    def policy(self) -> CompactionPolicy:
        """Return the compaction policy of every compacting strategy."""
        return matched_policy(self.window_tokens)

    @property
    def budget(self) -> int:
        """The whole-request token count every strategy and peer triggers at."""
        return self.policy().trigger_tokens


# --- running -------------------------------------------------------------------------------------


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


def replay_all(config: BenchConfig, say: Progress, jobs: int) -> list[dict[str, Any]]:
    """Replay every run on every generated session, `jobs` at once; return the summaries."""
    plan = [(t, s, n) for t, s in config.sessions for n in summary_pricing.run_names()]
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
    return runs


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
    outputs = {session_name(t, s): output_tokens(generate(t, s), tok) for t, s in config.sessions}
    runs = replay_all(config, say, jobs)
    quality = checkpoint_quality.run_quality(
        window=config.window_tokens,
        sessions=config.sessions,
        max_transcripts=config.quality_transcripts,
    )
    say("checkpoint probes: " + _quality_line(quality))
    real = real_transcripts.run(
        window=config.window_tokens, sessions=config.real_sessions, progress=say
    )
    scale = throughput.run(config.scale_sizes, progress=say, min_timed=config.scale_min_timed)
    peers = read_peers(peers_path) if peers_path else {"available": False, "reason": "not read"}
    return {
        "format": RESULTS_FORMAT,
        "version": RESULTS_VERSION,
        "config": {
            **asdict(config),
            "threshold": config.policy().threshold,
            "retain": config.policy().retain,
            "boundary": config.policy().boundary_share,
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


# --- summaries -----------------------------------------------------------------------------------


def _intro(results: Mapping[str, Any]) -> list[str]:
    """Return the run line and the pooled headline bullets."""
    cfg = results["config"]
    pooled = results["summary"]["strategies"]
    mode = "quick" if cfg["quick"] else "full"
    b = pooled["B"]
    return [
        "# Benchmark report",
        "",
        f"Run: `harness bench{' --quick' if cfg['quick'] else ''}` ({mode}). Sessions: "
        + ", ".join(f"`{s}`" for s in _sessions(results))
        + f" (`harness.simulation._sessions`). Tokenizer `{cfg['tokenizer']}`; compaction window "
        f"{cfg['window_tokens']:,} tokens (trigger {cfg['threshold']:g}, tail {cfg['retain']:g}"
        + boundary_effect.run_words(cfg.get("boundary"))
        + ");"
        " extractive summarizer. Canonical serialization and cache models: see "
        "`benchmarks/README.md`.",
        "",
        *like_for_like.section(fair_report._comparison(results), fair_report.providers(results)),
        "## Pooled over every session (both splits)",
        "",
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


def render_markdown(results: Mapping[str, Any], charts: Sequence[str]) -> str:
    """Return the Markdown report."""
    lines = _intro(results)
    lines += headline_table.section(
        fair_report._comparison(results), fair_report.providers(results)
    )
    lines += fair_report.headline_lines(results)
    lines += peer_headline(results)
    lines += fair_report.prices_section(results)
    lines += fair_report.comparison_section(results)
    lines += savings_section(results)
    lines += retention_section(results)
    lines += continuity_report.section(results.get("continuity"), results["config"])
    lines += boundary_effect.section(
        results.get("boundary_effect"), fair_report._comparison(results)
    )
    lines += cache_section(results)
    lines += fair_report.gap_section(results)
    lines += fair_report.usage_section(results)
    lines += throughput_section(results)
    lines += quality_section(results)
    if results.get("real_replay"):
        lines += real_transcripts.markdown(results["real_replay"])
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
    from benchmarks.report import charts, fair_charts

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


def read_continuity(results: dict[str, Any], out: Path) -> None:
    """Put the pooled continuity of ``out/continuity.json`` into `results`, when it exists."""
    path = out / "continuity.json"
    if path.is_file():
        grid = json.loads(path.read_text(encoding="utf-8"))
        results["continuity"] = continuity_report.summary(grid)
        results["boundary_effect"] = boundary_effect.collect(grid, results["config"])


def write_report(results: dict[str, Any], out: Path) -> dict[str, Path]:
    """Write ``results.json``, the charts and ``report.md`` into `out`; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    fair_report.derive(results)
    read_continuity(results, out)
    charts, note = write_charts(results, out)
    if "continuity" in results and (out / "continuity.png").is_file():
        charts.append("continuity.png")  # drawn by benchmarks.quality.continuity, not redrawn here
    if note:
        results["charts_note"] = note
    json_path = out / "results.json"
    json_path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    md_path = out / "report.md"
    md_path.write_text(render_markdown(results, charts), encoding="utf-8")
    paths = {"results": json_path, "report": md_path}
    paths.update({c: out / c for c in charts})
    return paths
