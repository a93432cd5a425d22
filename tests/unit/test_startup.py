"""The start-up benchmark: CPU of each command over a bare interpreter, judged by its goal."""

from __future__ import annotations

from benchmarks.startup import GOALS, measure


class TestStartup:
    def test_one_run_gives_a_ratio_per_command(self) -> None:
        """Each command of the goals gets its CPU, its ratio to the bare start, and a verdict."""
        figures = measure(runs=1)
        assert figures["bare_ms"] > 0
        assert set(figures["commands"]) == set(GOALS)
        for name, f in figures["commands"].items():
            assert f["cpu_ms"] > 0
            assert f["goal"] == GOALS[name]
            assert abs(f["ratio"] - f["cpu_ms"] / figures["bare_ms"]) < 0.01
            if abs(f["ratio"] - f["goal"]) > 0.01:  # away from the rounding at the limit
                assert f["met"] == (f["ratio"] < f["goal"])
