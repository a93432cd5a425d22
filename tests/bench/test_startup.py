"""The start-up benchmark: CPU of each command over a bare interpreter, judged by its goal."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.speed.startup import GOALS, child_env, measure


class TestStartup:
    def test_one_run_gives_a_ratio_per_command(self) -> None:
        """Each command of the goals gets its CPU, its ratio to the bare start, and a verdict."""
        figures = measure(runs=1)
        assert figures["bytecode"] == "cached"
        assert figures["bare_ms"] > 0
        assert set(figures["commands"]) == set(GOALS)
        for name, f in figures["commands"].items():
            assert f["cpu_ms"] > 0
            assert f["goal"] == GOALS[name]
            assert abs(f["ratio"] - f["cpu_ms"] / figures["bare_ms"]) < 0.01
            if abs(f["ratio"] - f["goal"]) > 0.01:  # away from the rounding at the limit
                assert f["met"] == (f["ratio"] < f["goal"])

    def test_children_cache_their_bytecode_in_the_temporary_folder(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A shell's PYTHONDONTWRITEBYTECODE is dropped; the cache lives in the run's folder."""
        monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
        env = child_env(str(tmp_path), compile_each_run=False)
        assert "PYTHONDONTWRITEBYTECODE" not in env
        assert Path(env["PYTHONPYCACHEPREFIX"]).parent == tmp_path

    def test_compile_each_run_writes_no_bytecode(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``--compile-each-run``: every child compiles from source, no cache prefix."""
        monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path))
        env = child_env(str(tmp_path), compile_each_run=True)
        assert env["PYTHONDONTWRITEBYTECODE"] == "1"
        assert "PYTHONPYCACHEPREFIX" not in env
