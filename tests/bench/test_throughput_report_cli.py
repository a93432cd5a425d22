"""`python -m benchmarks.speed.throughput_report`: an argparse command line, one-line refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.speed.throughput_report import DEFAULT_RESULTS, main, performance_table

ROOT = Path(__file__).resolve().parents[2]


class TestThroughputReportCli:
    def test_help_prints_the_usage_and_exits_0(self) -> None:
        """``--help`` prints the usage and the options (it printed a traceback), exit 0."""
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.speed.throughput_report", "--help"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("usage: python -m benchmarks.speed.throughput_report ")
        assert "--no-chart" in done.stdout
        assert "Traceback" not in done.stdout + done.stderr

    def test_the_table_of_a_results_file_is_printed(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A results file given prints its table, the same as `performance_table`."""
        path = tmp_path / "t.json"
        path.write_text(DEFAULT_RESULTS.read_text(encoding="utf-8"), encoding="utf-8")
        assert main([str(path), "--no-chart"]) == 0
        expected = performance_table(json.loads(path.read_text(encoding="utf-8")))
        assert capsys.readouterr().out == expected
        assert not path.with_suffix(".png").exists()

    @pytest.mark.parametrize(
        ("content", "error"),
        [
            (None, "cannot read {path}: No such file or directory"),
            ("{not json", "{path} is not JSON: Expecting property name enclosed in double quotes"),
            ('{"points": []}', "{path} is not a throughput results file (no field 'goals')"),
            ("[1, 2]", "{path} is not a throughput results file"),
        ],
    )
    def test_a_bad_results_file_is_one_line_exit_2(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        content: str | None,
        error: str,
    ) -> None:
        """A missing, non-JSON or foreign file is refused in one line after the usage, exit 2."""
        path = tmp_path / "t.json"
        if content is not None:
            path.write_text(content, encoding="utf-8")
        with pytest.raises(SystemExit) as e:
            main([str(path), "--no-chart"])
        assert e.value.code == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        lines = captured.err.strip().splitlines()
        assert lines[0].startswith("usage: python -m benchmarks.speed.throughput_report ")
        prefix = "python -m benchmarks.speed.throughput_report: error: "
        assert lines[-1].startswith(prefix + error.format(path=path))
        assert "Traceback" not in captured.err
