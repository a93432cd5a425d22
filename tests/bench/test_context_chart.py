"""`benchmarks.report.charts.context_chart` draws B's whole-request budget on every panel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.report import charts

plt = pytest.importorskip("matplotlib.pyplot")


def _run(strategy: str, prompts: list[int]) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "session": "s",
        "per_request": {"prompt_tokens": prompts, "compacted": [2] if strategy == "B" else []},
    }


def test_every_panel_draws_b_budget_as_the_whole_request_trigger(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The dotted line sits at the run's budget and says it is B's whole-request trigger."""
    figures: list[Any] = []
    monkeypatch.setattr(plt, "close", figures.append)
    results = {
        "config": {"chart_session": "s", "budget": 700, "window_tokens": 1000, "threshold": 0.8},
        "runs": [_run(n, [100, 900, 300]) for n in ("A", "B", "C", "none")],
        "peers": {"available": False},
    }
    charts.context_chart(plt, results, tmp_path / "c.png")
    (fig,) = figures
    assert len(fig.axes) == 2
    for ax in fig.axes:
        lines = [ln for ln in ax.get_lines() if "budget" in str(ln.get_label())]
        assert [str(ln.get_label()) for ln in lines] == [
            "B's budget: whole-request trigger (700 tokens)"
        ]
        assert list(lines[0].get_ydata()) == [700, 700]
        assert ax.get_legend() is not None
