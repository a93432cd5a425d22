"""PNG charts of a benchmark run, drawn with matplotlib (the ``charts`` extra).

Each function takes the ``matplotlib.pyplot`` module (imported lazily by
`benchmarks.report.results_report`, so the package works without matplotlib), the results of
`benchmarks.report.results_report.run_bench` and a path; it writes one PNG and returns its file
name.

Invariants: charts only read the results; the same results draw the same picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes

from benchmarks.report.fair_charts import design_name
from harness.simulation import BASELINE, PROVIDER_MODELS, STRATEGIES, SWITCH_VARIANTS

_COLORS = {
    "A": "tab:orange",
    "B": "tab:blue",
    "C": "tab:red",
    "switch:rebuild+filtered": "tab:purple",
    "switch:rebuild": "tab:green",
    BASELINE: "tab:gray",
}
_PEER_STYLES = ("--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)))
_TITLES = {"deepseek": "DeepSeek", "openai": "OpenAI", "anthropic": "Anthropic", "vllm": "vLLM"}


def _runs(results: Mapping[str, Any], session: str) -> dict[str, Mapping[str, Any]]:
    return {r["strategy"]: r for r in results["runs"] if r["session"] == session}


def _peer_series(results: Mapping[str, Any], session: str) -> list[tuple[str, list[int]]]:
    peers = results.get("peers") or {}
    if not peers.get("available"):
        return []
    out = []
    for rec in peers["records"]:
        m = rec.get("metrics")
        if rec.get("session") == session and rec.get("status") == "ok" and m:
            label = f"{rec['peer']}/{rec['variant']} ({rec['summarizer']})"
            out.append((label, list(m["prompt_tokens"])))
    return out


def _peer_hits(
    results: Mapping[str, Any], session: str, model: str
) -> list[tuple[str, list[float]]]:
    """Running cache-hit rate of each charted peer under one model (empty when absent)."""
    peers = results.get("peers") or {}
    chosen = {label for label, _ in _chart_peers(results, session)}
    out = []
    for rec in peers.get("records") or ():
        m = rec.get("metrics") or {}
        label = f"{rec.get('peer')}/{rec.get('variant')} ({rec.get('summarizer')})"
        hits = (m.get("cache_hit_tokens") or {}).get(model)
        if rec.get("session") == session and label in chosen and hits:
            out.append((label, _cumulative(hits, m["prompt_tokens"])))
    return out


def _chart_peers(results: Mapping[str, Any], session: str) -> list[tuple[str, list[int]]]:
    """One series per peer and variant: the copy-todos summarizer where there is a choice."""
    chosen: dict[str, tuple[str, list[int]]] = {}
    for label, series in _peer_series(results, session):
        key = label.split(" (")[0]
        if key not in chosen or "copy-todos" in label:
            chosen[key] = (label, series)
    return list(chosen.values())


def _trigger_label(results: Mapping[str, Any]) -> tuple[int, str]:
    """Return B's budget (the whole-request trigger) and its legend label."""
    cfg = results["config"]
    budget = cfg.get("budget") or int(cfg["window_tokens"] * cfg["threshold"])
    return budget, f"B's budget: whole-request trigger ({budget:,} tokens)"


def _ours_panel(ax: Axes, runs: Mapping[str, Mapping[str, Any]], session: str) -> None:
    """Draw A, C and B per call, B's compactions marked."""
    for name in ("A", "C", "B"):  # B last, on top: C follows it closely
        series = runs[name]["per_request"]["prompt_tokens"]
        ax.plot(series, color=_COLORS[name], lw=1.3, label=f"{name}: {STRATEGIES[name].title}")
    b = runs["B"]["per_request"]
    marks = b["compacted"]
    ax.plot(
        marks,
        [b["prompt_tokens"][i] for i in marks],
        "v",
        color=_COLORS["B"],
        ms=6,
        label="B: compaction",
    )
    ax.set_title(f"Input tokens per model call, {session}")


def _peers_panel(
    ax: Axes, plt: ModuleType, b: Mapping[str, Any], peers: Sequence[tuple[str, list[int]]]
) -> None:
    """Draw B and each peer per call."""
    ax.plot(b["prompt_tokens"], color=_COLORS["B"], lw=1.6, label="B: this toolkit")
    cmap = plt.get_cmap("tab10")
    for i, (label, series) in enumerate(peers):
        ax.plot(
            series, lw=1.0, color=cmap((i + 3) % 10), ls=_PEER_STYLES[i % 5], label=f"peer {label}"
        )
    ax.set_title("Against the peers (same session, budget, tokenizer and serialization)")


def _baseline_panel(ax: Axes, runs: Mapping[str, Mapping[str, Any]]) -> None:
    """Draw B against the same session without compaction, on a log scale."""
    for name in ("B", BASELINE):
        ax.plot(
            runs[name]["per_request"]["prompt_tokens"],
            color=_COLORS[name],
            lw=1.3,
            label=f"{name}: {STRATEGIES[name].title}",
        )
    ax.set_yscale("log")
    ax.set_xlabel("model call")
    ax.set_ylabel("input tokens (log scale)")
    ax.set_title("Against no compaction")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3, which="both")


def context_chart(plt: ModuleType, results: Mapping[str, Any], path: Path) -> str:
    """Draw input tokens per request over the long session: the sawtooth of compactions."""
    session = results["config"]["chart_session"]
    runs = _runs(results, session)
    peers = _chart_peers(results, session)
    rows = 3 if peers else 2
    fig, axes = plt.subplots(rows, 1, figsize=(11, 4.2 * rows), sharex=True)
    _ours_panel(axes[0], runs, session)
    if peers:
        _peers_panel(axes[1], plt, runs["B"]["per_request"], peers)
    budget, label = _trigger_label(results)
    for ax in axes[:-1]:
        ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # room for the legend
        ax.axhline(budget, color="k", lw=0.6, ls=":", label=label)
        ax.set_ylabel("input tokens per call")
        ax.legend(fontsize=7.5, loc="upper left", ncol=2)
        ax.grid(alpha=0.3)
    _baseline_panel(axes[-1], runs)
    axes[-1].axhline(budget, color="k", lw=0.6, ls=":", label=label)
    axes[-1].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _rate(hits: Sequence[int], prompts: Sequence[int]) -> list[float]:
    return [h / p if p else 0.0 for h, p in zip(hits, prompts, strict=True)]


def _cumulative(hits: Sequence[int], prompts: Sequence[int]) -> list[float]:
    out, h, p = [], 0, 0
    for hit, prompt in zip(hits, prompts, strict=True):
        h, p = h + hit, p + prompt
        out.append(h / p if p else 0.0)
    return out


def hit_rate_chart(plt: ModuleType, results: Mapping[str, Any], path: Path) -> str:
    """Draw the cache-hit rate per request (dots) and running (lines), per provider model."""
    session = results["config"]["chart_session"]
    runs = _runs(results, session)
    fig, grid = plt.subplots(2, 2, figsize=(12, 9.5), sharex=True, sharey=True)
    for ax, model in zip(grid.flat, PROVIDER_MODELS, strict=True):
        for n, (label, running) in enumerate(_peer_hits(results, session, model.name)):
            hue = plt.get_cmap("tab10")((n + 3) % 10)  # told apart by hue, not grey
            ax.plot(running, color=hue, lw=0.9, ls=_PEER_STYLES[n % 5], label=f"peer {label}")
        for name, marker in (("C", "o"), ("A", "s"), ("B", "^")):
            per = runs[name]["per_request"]
            hits, prompts = per["hits"][model.name], per["prompt_tokens"]
            ax.scatter(
                range(len(prompts)),
                _rate(hits, prompts),
                s=5,
                marker=marker,
                color=_COLORS[name],
                alpha=0.45,
                linewidths=0,
            )
            ax.plot(
                _cumulative(hits, prompts),
                color=_COLORS[name],
                lw=1.8,
                label=f"{design_name(name)}: running rate (dots: each call)",
            )
        per = runs["B"]["per_request"]
        ax.plot(
            _cumulative(per["ideal"], per["prompt_tokens"]),
            color="black",
            lw=1.0,
            ls=":",
            label="ideal, running (B)",
        )
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{_TITLES.get(model.name, model.name)} cache model", fontsize=10)
        ax.grid(alpha=0.3)
    for ax in grid[:, 0]:
        ax.set_ylabel("cache-hit tokens / input tokens")
    for ax in grid[-1, :]:
        ax.set_xlabel(f"model call ({session})")
    handles, labels = grid[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=3)
    fig.suptitle(
        "Cache-hit rate per model call: A (list as message), B (toolkit), C (list in system)"
    )
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def hit_bars_chart(plt: ModuleType, results: Mapping[str, Any], path: Path) -> str:
    """Draw the pooled cache-hit rate per strategy and provider model, next to the ideal."""
    pooled = results["summary"]["strategies"]
    names = ["A", "B", "C", *(n for n in SWITCH_VARIANTS.values() if n != "B")]
    labels = {
        "A": "A: list as message",
        "B": "B: toolkit",
        "C": "C: list in system",
        "switch:rebuild+filtered": "B, rebuild+filtered",
        "switch:rebuild": "B, rebuild+stable",
    }
    models = [m.name for m in PROVIDER_MODELS]
    width = 0.8 / (len(models) + 1)
    fig, ax = plt.subplots(figsize=(11, 5))
    for j, model in enumerate(models):
        xs = [i + j * width for i in range(len(names))]
        ax.bar(
            xs,
            [100 * pooled[n]["cache_hit_rate"][model] for n in names],
            width,
            label=_TITLES.get(model, model),
        )
    xs = [i + len(models) * width for i in range(len(names))]
    ax.bar(
        xs,
        [100 * pooled[n]["ideal_hit_rate"] for n in names],
        width,
        color="black",
        alpha=0.35,
        label="ideal",
    )
    ax.set_xticks([i + width * len(models) / 2 for i in range(len(names))])
    ax.set_xticklabels([labels[n] for n in names], fontsize=9)
    ax.set_ylabel("cache-hit tokens / input tokens (%)")
    ax.set_ylim(0, 118)
    ax.set_title("Prefix-cache hit rate, all sessions pooled")
    ax.legend(fontsize=8, ncol=5, loc="upper center")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name
