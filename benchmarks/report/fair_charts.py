"""Charts of the like-for-like comparison: retention, cost, and per-call input in small multiples.

Each function takes ``matplotlib.pyplot``, the results with their ``comparison`` block
(`benchmarks.report.fair_report.derive`) and a path, writes one PNG and returns its file name.

- `retention_chart`: every-call retention of every run and peer (worst session), with B's
  after-compaction figure beside it.
- `cost_chart`: summed cost over the sessions under each provider, every run and peer at the
  matched budget, in the same order of designs on every panel.
- `per_call_chart`: input tokens per model call on the chart session, one small panel per peer
  configuration, each with B drawn under it for reference.

Invariants: charts only read the results; every chart has a legend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

_OURS = "B"
_OUR_COLOR = "tab:blue"
_PEER_COLOR = "tab:orange"
_OTHER_COLOR = "tab:gray"


DESIGN_NAMES: dict[str, str] = {
    "B": "this toolkit: Checkpoint, list copied by code (B)",
    "B:llm": "this toolkit, model-written summary (B:llm)",
    "B:blind": "this toolkit, one-line blind summary (B:blind)",
    "A": "list as a chat message (A)",
    "A:blind": "list as a chat message, one-line blind summary (A:blind)",
    "C": "list in the system prompt (C)",
    "none": "no compaction",
    "switch:rebuild": "this toolkit, mode switch rebuilds the prompt",
    "switch:rebuild+filtered": "this toolkit, prompt rebuilt, todo tool hidden in Plan mode",
}
"""Each of our runs in words, for a chart's labels (a peer's name is already words)."""


def design_name(name: str) -> str:
    """Return a run's name in words for a chart (peers and unknown names as given)."""
    return DESIGN_NAMES.get(name, name)


def _rows(results: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Rows by name over every session (matched budget only)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rows in results["comparison"]["sessions"].values():
        for r in rows:
            if r["matched"]:
                out.setdefault(r["name"], []).append(r)
    return out


def _kind_handles(plt: ModuleType) -> list[Any]:
    """Return the legend handles of the bar colours: B, this package's other runs, the peers."""
    patch = plt.matplotlib.patches.Patch
    return [
        patch(color=_OUR_COLOR, label="B (this toolkit)"),
        patch(color=_OTHER_COLOR, label="this package's other runs"),
        patch(color=_PEER_COLOR, label="peers"),
    ]


def _color(name: str, kind: str) -> str:
    if name == _OURS:
        return _OUR_COLOR
    return _PEER_COLOR if kind == "peer" else _OTHER_COLOR


def retention_chart(plt: ModuleType, results: Mapping[str, Any], path: Path) -> str:
    """Every-call retention per run and peer (worst session); B's after-compaction figure."""
    rows = _rows(results)
    names = sorted(rows, key=lambda n: (min(r["every_call"] for r in rows[n]), n))
    worst = [100 * min(r["every_call"] for r in rows[n]) for n in names]
    colors = [_color(n, rows[n][0]["kind"]) for n in names]
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(names) + 1.6))
    ax.barh([design_name(n) for n in names], worst, color=colors)
    for y, value in enumerate(worst):
        ax.text(value + 0.3, y, f"{value:.1f}%", va="center", fontsize=7)
    b = rows.get(_OURS)
    if b:
        kept = sum(r["after_compaction_counts"][0] for r in b)
        expected = sum(r["after_compaction_counts"][1] for r in b)
        share = 100 * kept / expected if expected else 100.0
        ax.set_title(
            "Calls whose request shows every unfinished todo at its latest status (worst "
            f"session)\nB after each compaction and at the last call: {share:.1f}% "
            f"({kept}/{expected})",
            fontsize=9,
        )
    ax.set_xlim(0, 112)  # a share starts at 0: a short bar is a real loss
    ax.set_xlabel("every-call retention, %")
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(handles=_kind_handles(plt), fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def cost_chart(plt: ModuleType, results: Mapping[str, Any], path: Path) -> str:
    """Summed session cost under each provider, one panel per provider."""
    rows = _rows(results)
    providers = list(results["comparison"]["prices"]["providers"])
    fig, axes = plt.subplots(
        1,
        len(providers),
        figsize=(4 * len(providers) + 3, 0.3 * len(rows) + 2),
        sharey=True,
        layout="constrained",
    )
    # One order of designs on every panel: by cost at the first provider's prices.
    first = providers[0]
    names = sorted(rows, key=lambda n: (sum(r["cost"][first]["usd"] for r in rows[n]), n))
    for ax, provider in zip(axes, providers, strict=True):
        totals = {n: sum(r["cost"][provider]["usd"] for r in rs) for n, rs in rows.items()}
        ax.barh(
            [design_name(n) for n in names],
            [totals[n] for n in names],
            color=[_color(n, rows[n][0]["kind"]) for n in names],
        )
        price = results["comparison"]["prices"]["providers"][provider]
        ax.set_title(f"{provider} ({price['model']})", fontsize=9)
        ax.set_xlabel("USD, every session summed")
        ax.tick_params(axis="y", labelsize=6)
    axes[-1].legend(handles=_kind_handles(plt), fontsize=7, loc="lower right")
    taken = results["comparison"]["prices"]["taken"]
    fig.suptitle(f"Session cost at the matched budget (prices of {taken})", fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def per_call_chart(plt: ModuleType, results: Mapping[str, Any], path: Path) -> str:
    """Input tokens per call on the chart session: one panel per peer, B drawn in each."""
    session = results["config"]["chart_session"]
    b = next(
        (r for r in results["runs"] if r["session"] == session and r["strategy"] == _OURS), None
    )
    peers = [
        rec
        for rec in (results.get("peers") or {}).get("records") or ()
        if rec.get("session") == session and rec.get("status") == "ok" and rec.get("metrics")
    ]
    panels = max(len(peers), 1)
    cols = min(3, panels)
    lines = math.ceil(panels / cols)
    fig, axes = plt.subplots(
        lines, cols, figsize=(5 * cols, 2.6 * lines), sharey=True, squeeze=False
    )
    for i, ax in enumerate(axes.flat):
        if i >= len(peers):
            ax.axis("off")
            continue
        rec = peers[i]
        if b is not None:
            ax.plot(
                b["per_request"]["prompt_tokens"], color=_OUR_COLOR, lw=0.9, label=design_name("B")
            )
        ax.plot(rec["metrics"]["prompt_tokens"], color=_PEER_COLOR, lw=0.9, label="peer")
        budget_tokens = results["config"].get("budget")
        if budget_tokens:
            ax.axhline(
                budget_tokens, color="tab:red", ls="--", lw=0.8, label="whole-request trigger"
            )
        budget = "" if rec.get("budget") else " (no token budget)"
        ax.set_title(f"{rec['peer']}/{rec['variant']} ({rec['summarizer']}){budget}", fontsize=8)
        ax.tick_params(labelsize=7)
    if not peers:
        axes.flat[0].text(
            0.5, 0.5, "no peer results", ha="center", transform=axes.flat[0].transAxes
        )
    if peers:
        axes.flat[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(
        f"Input tokens per model call, {session}: each peer (orange) over B (blue)", fontsize=10
    )
    fig.supxlabel("model call", fontsize=8)
    fig.supylabel("input tokens", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name
