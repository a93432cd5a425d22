from __future__ import annotations

from typing import Any

import pytest

from benchmarks.report import fair_charts
from benchmarks.report.comparison import compare

plt = pytest.importorskip("matplotlib.pyplot")
MODELS = ("deepseek", "openai", "anthropic", "vllm")


def _results():
    per = {
        "prompt_tokens": [1000, 1200, 1400],
        "fixed_tokens": [10, 10, 10],
        "ideal": [0, 990, 1190],
        "hits": {m: [0, 960, 1152] for m in MODELS},
        "compacted": [],
        "mode": ["agent"] * 3,
    }
    run = {
        "strategy": "B",
        "session": "s",
        "compactions": 0,
        "budget": 100,
        "request_retention": 1.0,
        "retention": {"kept": 2, "expected": 2, "rate": 1.0},
        "per_request": per,
    }
    peer = {
        "peer": "p",
        "variant": "v",
        "summarizer": "structural",
        "session": "s",
        "status": "ok",
        "budget": 100,
        "metrics": {
            "summed_input_tokens": 3900,
            "peak_input_tokens": 1500,
            "prompt_tokens": [1100, 1300, 1500],
            "fixed_prompt_tokens": [20, 20, 20],
            "cache_hit_tokens": {
                m: [0, 1024, 1280] for m in ("deepseek", "openai", "anthropic", "vllm")
            },
            "todo_retention_rate": 0.5,
            "rewrites": 1,
        },
    }
    results = {
        "config": {"budget": 100, "chart_session": "s"},
        "runs": [run],
        "outputs": {"s": 30},
        "peers": {"available": True, "records": [peer]},
    }
    results["comparison"] = compare(results)
    return results


@pytest.mark.parametrize(
    "draw", [fair_charts.retention_chart, fair_charts.cost_chart, fair_charts.per_call_chart]
)
def test_each_chart_writes_a_png(tmp_path, draw):
    """Every chart draws from the comparison block and writes a PNG under its own name."""
    path = tmp_path / "chart.png"
    assert draw(plt, _results(), path) == "chart.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_per_call_chart_without_peers(tmp_path):
    """With no peer results the per-call chart still draws and says so."""
    results = _results()
    results["peers"] = {"available": False}
    path = tmp_path / "calls.png"
    assert fair_charts.per_call_chart(plt, results, path) == "calls.png"
    assert path.stat().st_size > 0


def _drawn(monkeypatch, tmp_path, draw):
    """Draw a chart and return its figure (kept open instead of closed)."""
    figures: list[Any] = []
    monkeypatch.setattr(plt, "close", figures.append)
    draw(plt, _results(), tmp_path / "c.png")
    (fig,) = figures
    return fig


@pytest.mark.parametrize(
    "draw", [fair_charts.retention_chart, fair_charts.cost_chart, fair_charts.per_call_chart]
)
def test_every_chart_has_a_legend(monkeypatch, tmp_path, draw):
    """Each chart carries a legend naming what its colours or lines are."""
    fig = _drawn(monkeypatch, tmp_path, draw)
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends or fig.legends
    texts = {t.get_text() for lg in legends for t in lg.get_texts()}
    assert texts & {"B (this toolkit)", fair_charts.design_name("B")}
    assert not texts & {"A", "B", "C", "A:blind", "B:blind"}  # designs named in words


def test_bars_name_designs_in_words_and_retention_starts_at_zero(monkeypatch, tmp_path):
    """The retention chart's bars carry words, and its axis starts at 0."""
    fig = _drawn(monkeypatch, tmp_path, fair_charts.retention_chart)
    (ax,) = fig.axes
    labels = {t.get_text() for t in ax.get_yticklabels()}
    assert fair_charts.design_name("B") in labels
    assert "B" not in labels
    assert ax.get_xlim()[0] == 0


def test_cost_panels_share_one_order(monkeypatch, tmp_path):
    """Every provider's panel lists the designs in the same order: one shared y axis."""
    fig = _drawn(monkeypatch, tmp_path, fair_charts.cost_chart)
    first, *rest = fig.axes
    assert len(rest) == 2
    assert all(first.get_shared_y_axes().joined(first, ax) for ax in rest)
    fig.canvas.draw()
    names = [t.get_text() for t in first.get_yticklabels()]
    assert len(names) == len(set(names)) > 1
    for ax in rest:  # the shared names are drawn once, on the first panel, so none is cut
        assert not any(t.get_visible() and t.get_text() for t in ax.get_yticklabels())


def test_per_call_chart_draws_the_trigger(monkeypatch, tmp_path):
    """The per-call panels draw the whole-request trigger B and the peers use."""
    fig = _drawn(monkeypatch, tmp_path, fair_charts.per_call_chart)
    lines = [ln for ax in fig.axes for ln in ax.get_lines()]
    trigger = [ln for ln in lines if ln.get_label() == "whole-request trigger"]
    assert trigger
    assert list(trigger[0].get_ydata()) == [100, 100]
