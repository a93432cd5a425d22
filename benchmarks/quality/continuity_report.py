"""Continuity tables, the chart, and B's defaults picked from the evidence by a stated rule.

`pooled` sums each setting's rows over every session (input tokens, cost per provider) and
pools its continuity (compactions, empty tails, compactions that kept the latest tool result,
the smallest tail); `choose` applies `RULE` to them; `markdown` writes the pooled table, the
choice and the per-session table; `chart` draws cost against the mean verbatim tail, one panel
per session, the same colour per `retain` and marker per `threshold` on every panel, one legend.

Invariants: every figure is read from the rows; the same rows give the same tables and choice.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from benchmarks.splits import split_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes

RULE = (
    "of the settings that keep every unfinished todo in sight on every call of every session, "
    "those after whose every compaction, on every session, the latest tool result is still in "
    "the request and at least one message is kept verbatim; of those, the lowest pooled cost "
    "(each provider's pooled cost as a ratio to its cheapest such setting, summed over the "
    "providers). When no setting keeps all that, the one that keeps the latest tool result "
    "after the most compactions, then leaves the fewest empty tails, then costs least"
)
"""How `choose` picks B's defaults: continuity first, then cost, pooled over every session."""


def setting(row: Mapping[str, Any]) -> tuple[float, float, float]:
    """Return a row's setting as a sortable key: retain, threshold, boundary floor (-1: none)."""
    boundary = row.get("boundary")
    return (row["retain"], row["threshold"], -1.0 if boundary is None else boundary)


def boundary_text(boundary: float | None) -> str:
    """Return a boundary floor as the tables write it: the share, or ``-`` for none."""
    return "-" if boundary is None else f"{boundary:g}"


def tuning(results: Mapping[str, Any]) -> dict[str, Any]:
    """Return the results with the tuning split's rows only: what `choose` is shown.

    The evaluation sessions (`benchmarks.splits`: the other generated seeds and the real
    transcripts) are measured and tabled, never chosen on.
    """
    return {**results, "rows": [r for r in results["rows"] if split_of(r["session"]) == "tuning"]}


def pooled(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return one row per setting, pooled over every session, in `setting` order."""
    out: dict[tuple[float, float, float], dict[str, Any]] = {}
    for r in results["rows"]:
        p = out.setdefault(
            setting(r),
            {
                "retain": r["retain"],
                "threshold": r["threshold"],
                "boundary": r.get("boundary"),
                "sessions": 0,
                "summed_input_tokens": 0,
                "cost_usd": dict.fromkeys(r["cost_usd"], 0.0),
                "compactions": 0,
                "tail_empty": 0,
                "tool_compactions": 0,
                "tool_kept_count": 0,
                "tails": [],
                "every_call_min": 1.0,
            },
        )
        p["sessions"] += 1
        p["summed_input_tokens"] += r["summed_input_tokens"]
        for provider, usd in r["cost_usd"].items():
            p["cost_usd"][provider] = round(p["cost_usd"][provider] + usd, 6)
        for field in ("compactions", "tail_empty", "tool_compactions", "tool_kept_count"):
            p[field] += r[field]
        p["tails"] += r["tails"]
        p["every_call_min"] = min(p["every_call_min"], r["every_call"])
    return [_finish(out[k]) for k in sorted(out)]


def _finish(p: dict[str, Any]) -> dict[str, Any]:
    tails = p.pop("tails")
    p["tail_mean"] = round(sum(tails) / len(tails), 1) if tails else None
    p["empty_share"] = round(p["tail_empty"] / p["compactions"], 4) if p["compactions"] else 0.0
    tools = p["tool_compactions"]
    p["tool_kept_share"] = round(p["tool_kept_count"] / tools, 4) if tools else 1.0
    return p


def choose(settings: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Return the setting `RULE` picks from `pooled` rows (None when no row qualifies)."""
    sound = [s for s in settings if s["every_call_min"] == 1.0]
    if not sound:
        return None
    whole = [s for s in sound if s["tool_kept_share"] == 1.0 and s["tail_empty"] == 0]
    if not whole:
        return min(
            sound,
            key=lambda s: (-s["tool_kept_share"], s["empty_share"], _cost_ratio(s, sound)),
        )
    return min(whole, key=lambda s: (_cost_ratio(s, whole), *setting(s)))


def _cost_ratio(setting: Mapping[str, Any], among: Sequence[Mapping[str, Any]]) -> float:
    """Sum over providers of the setting's pooled cost over the cheapest of `among`."""
    total = 0.0
    for provider, usd in setting["cost_usd"].items():
        cheapest = min(s["cost_usd"][provider] for s in among)
        total += usd / cheapest if cheapest > 0 else 1.0
    return total


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def pooled_table(settings: Sequence[Mapping[str, Any]]) -> list[str]:
    """Return the pooled table: one row per setting."""
    providers = list(settings[0]["cost_usd"]) if settings else []
    lines = [
        "| retain | threshold | boundary | compactions | empty tails | latest tool result kept | "
        "tail mean | summed input | " + " | ".join(f"{p} USD" for p in providers) + " |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(providers),
    ]
    for s in settings:
        lines.append(
            f"| {s['retain']:g} | {s['threshold']:g} | {boundary_text(s.get('boundary'))} | "
            f"{s['compactions']} | "
            f"{s['tail_empty']} ({_pct(s['empty_share'])}) | "
            f"{s['tool_kept_count']}/{s['tool_compactions']} ({_pct(s['tool_kept_share'])}) | "
            f"{s['tail_mean'] if s['tail_mean'] is not None else '-'} | "
            f"{s['summed_input_tokens']:,} | "
            + " | ".join(f"{s['cost_usd'][p]:.2f}" for p in providers)
            + " |"
        )
    return lines


def session_table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Return the per-session table: one row per (session, setting)."""
    providers = list(rows[0]["cost_usd"]) if rows else []
    lines = [
        "| session | retain | threshold | boundary | compactions | summed input | "
        + " | ".join(f"{p} USD" for p in providers)
        + " | tail mean | tail min | empty tails | latest tool result kept | every call |",
        "|---|---:|---:|---:|---:|---:|" + "---:|" * (len(providers) + 5),
    ]
    for r in rows:
        lines.append(
            f"| `{r['session']}` | {r['retain']:g} | {r['threshold']:g} | "
            f"{boundary_text(r.get('boundary'))} | {r['compactions']} | "
            f"{r['summed_input_tokens']:,} | "
            + " | ".join(f"{r['cost_usd'][p]:.3f}" for p in providers)
            + f" | {r['tail_mean'] if r['tail_mean'] is not None else '-'} | "
            f"{r['tail_min'] if r['tail_min'] is not None else '-'} | {r['tail_empty']} | "
            f"{_pct(r['latest_tool_kept'])} | {r['every_call']:.1%} |"
        )
    return lines


def markdown(results: Mapping[str, Any]) -> list[str]:
    """Return the pooled table, the choice with its rule, and the per-session table."""
    rows = results["rows"]
    if not rows:
        return ["No continuity rows."]
    settings = pooled(results)
    pick = choose(pooled(tuning(results)))
    sessions = len({r["session"] for r in rows})
    lines = [
        f"Window {results['window']:,} tokens; B with the extractive summarizer; {sessions} "
        "sessions. *Tail*: tokens the request holds verbatim after the Checkpoint, right after "
        "each compaction; *empty*: compactions after which no message is kept verbatim; "
        "*boundary*: the task-boundary trigger's floor (`CompactionPolicy.boundary_threshold`: "
        "also compact right after a todo item or task turned completed once the request holds "
        "that share of the window; `-`: the size trigger alone).",
        "",
        "Pooled over every session:",
        "",
        *pooled_table(settings),
        "",
        f"Rule: {RULE}. Applied to the tuning split only (`benchmarks.splits.TUNING`: "
        f"{', '.join(sorted({r['session'] for r in tuning(results)['rows']}))}); the "
        "evaluation sessions are measured, never chosen on.",
        "",
        (
            f"Picked: {picked_text(pick)}."
            if pick
            else "Picked: none (no setting keeps every unfinished todo on every call)."
        ),
    ]
    if results.get("missing"):
        lines += ["", "Not present: " + ", ".join(f"`{n}`" for n in results["missing"]) + "."]
    return [*lines, "", "Per session:", "", *session_table(rows)]


def picked_text(pick: Mapping[str, Any]) -> str:
    """Return a setting in words: its retain, threshold and boundary floor."""
    boundary = pick.get("boundary")
    floor = "no boundary trigger" if boundary is None else f"boundary {boundary:g}"
    return f"retain {pick['retain']:g}, threshold {pick['threshold']:g}, {floor}"


Styles = tuple[dict[float, Any], dict[float, str]]
"""A colour per retain, a marker per threshold."""


def _styles(plt: ModuleType, rows: Sequence[Mapping[str, Any]]) -> Styles:
    """Return a colour per retain and a marker per threshold, the same on every panel."""
    retains = sorted({r["retain"] for r in rows})
    cmap = plt.get_cmap("viridis")
    colours = {x: cmap(i / max(1, len(retains) - 1)) for i, x in enumerate(retains)}
    markers = dict(zip(sorted({r["threshold"] for r in rows}), "os^Dv", strict=False))
    return colours, markers


def _panel(
    ax: Axes, rows: Sequence[Mapping[str, Any]], name: str, provider: str, styles: Styles
) -> None:
    """Draw one session's settings: cost against the mean tail."""
    colours, markers = styles
    for r in (r for r in rows if r["session"] == name):
        filled = r.get("boundary") is not None
        ax.scatter(
            r["tail_mean"],
            r["cost_usd"][provider],
            color=colours[r["retain"]] if filled else "none",
            edgecolors=colours[r["retain"]],
            marker=markers[r["threshold"]],
            s=36,
        )
    ax.set_title(name, fontsize=8)
    ax.set_xlabel("mean verbatim tail after a compaction (tokens)", fontsize=7)
    ax.set_ylabel(f"cost at {provider} prices (USD)", fontsize=7)
    ax.tick_params(labelsize=7)


def _legend(styles: Styles, floor: float | None) -> list[Any]:
    """Return the legend's handles: a colour per retain and a marker per threshold, then fills."""
    from matplotlib.lines import Line2D

    colours, markers = styles
    handles = [
        Line2D(
            [],
            [],
            linestyle="",
            color=colours[r],
            marker=markers[t],
            label=f"retain {r:g}, threshold {t:g}",
        )
        for r in colours
        for t in markers
    ]
    if floor is not None:
        hollow = Line2D(
            [],
            [],
            linestyle="",
            color="grey",
            marker="o",
            markerfacecolor="none",
            label="hollow: size trigger only",
        )
        filled = Line2D(
            [], [], linestyle="", color="grey", marker="o", label=f"filled: boundary {floor:g}"
        )
        handles += [hollow, filled]
    return handles


def chart(results: Mapping[str, Any], path: Path, provider: str = "openai") -> Path | None:
    """Draw cost against the mean verbatim tail, a panel per session; None without matplotlib.

    Hollow markers: the size trigger alone; filled: with the boundary floor the rule picked on
    the tuning split (other floors are in the tables only, so each panel stays readable).
    """
    if importlib.util.find_spec("matplotlib") is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pick = choose(pooled(tuning(results)))
    floor = pick.get("boundary") if pick else None
    rows = [
        r
        for r in results["rows"]
        if r["tail_mean"] is not None and r.get("boundary") in (None, floor)
    ]
    names = list(dict.fromkeys(r["session"] for r in rows))
    if not names:
        return None
    cols = min(4, len(names))
    grid = -(-len(names) // cols)
    fig, axes = plt.subplots(grid, cols, figsize=(4.6 * cols, 3.6 * grid + 0.9), squeeze=False)
    styles = _styles(plt, rows)
    for ax, name in zip(axes.flat, names, strict=False):
        _panel(ax, rows, name, provider, styles)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    handles = _legend(styles, floor)
    fig.legend(
        handles=handles, loc="lower center", ncol=min(5, len(handles)), fontsize=7, frameon=False
    )
    fig.suptitle(f"B: cost against continuity per setting (window {results['window']:,})")
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def summary(results: Mapping[str, Any]) -> dict[str, Any]:
    """Return what the benchmark report carries: the pooled rows, the rule and the pick."""
    settings = pooled(results)
    return {
        "window": results["window"],
        "sessions": sorted({r["session"] for r in results["rows"]}),
        "tuning_sessions": sorted({r["session"] for r in tuning(results)["rows"]}),
        "pooled": settings,
        "rule": RULE,
        "picked": choose(pooled(tuning(results))),
        "missing": list(results.get("missing", [])),
    }


def _verdict(pick: Mapping[str, Any] | None, config: Mapping[str, Any]) -> str:
    """Say what the rule picked and whether the run's policy (the shipped defaults) is it."""
    if pick is None:
        return "Picked: none (no setting keeps every unfinished todo on every call)."
    ours = {
        "retain": config.get("retain"),
        "threshold": config.get("threshold"),
        "boundary": config.get("boundary"),
    }
    said = f"Picked: {picked_text(pick)}."
    if (ours["retain"], ours["boundary"]) == (pick["retain"], pick.get("boundary")):
        return (
            said + " The run's policy has the pick's tail and boundary floor; its threshold is "
            "the benchmark's matched budget."
            if ours["threshold"] != pick["threshold"]
            else said + " The run's policy is the pick."
        )
    return (
        f"{said} The run's policy ({picked_text(ours)}, the shipped defaults) is not the "
        'pick; why: `benchmarks/README.md`, "Choosing B\'s defaults".'
    )


def section(block: Mapping[str, Any] | None, config: Mapping[str, Any]) -> list[str]:
    """Return the report's continuity section from a `summary` block (none without one)."""
    if not block:
        return []
    return [
        "## Continuity beside cost (B's settings)",
        "",
        f"B replayed at every setting on {len(block['sessions'])} sessions (the generated "
        "sessions in every shape and the real transcripts), window "
        f"{block['window']:,} (`benchmarks/quality/continuity.py`; per session: `continuity.md`, "
        "`continuity.png`). Pooled over every session:",
        "",
        *pooled_table(block["pooled"]),
        "",
        f"Rule: {block['rule']}. Applied to the tuning split only: "
        + ", ".join(f"`{n}`" for n in block.get("tuning_sessions", []))
        + ".",
        "",
        _verdict(block["picked"], config),
        "",
    ]
