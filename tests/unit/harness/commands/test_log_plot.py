"""`harness log LOG --plot`: request sizes per model call, compactions marked, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import (
    Message,
    Session,
    UsageReportData,
    compact,
    get_tokenizer,
    read_events,
)
from harness.commands import log_plot
from harness.commands.log_plot import request_series
from harness.simulation import generate


def write_log(path: Path, *, usage_at: int | None = None) -> tuple[list[int], list[int]]:
    """Write a generated session, compacting half-way; return the context before each call.

    With `usage_at`, a ``turn`` usage report (prompt 777,777) precedes that call, and a
    ``summary`` one (which the plot ignores) precedes the call after it.
    """
    payloads = generate(3, 0)
    expected: list[int] = []
    compacted: list[int] = []
    with Session(path) as session:
        for i, p in enumerate(payloads):
            if i == len(payloads) // 2:
                compact(session, force=True)
                compacted.append(len(expected))
            if isinstance(p, Message) and p.role == "assistant":
                calls = len(expected)
                if calls == usage_at:
                    session.append(
                        UsageReportData(
                            purpose="turn", model="m", prompt_tokens=777_777, completion_tokens=1
                        )
                    )
                if usage_at is not None and calls == usage_at + 1:
                    session.append(
                        UsageReportData(
                            purpose="summary", model="m", prompt_tokens=5, completion_tokens=1
                        )
                    )
                expected.append(session.context_tokens)
            session.append(p)
    return expected, compacted


class TestRequestSeries:
    def test_counted_sizes_are_the_context_before_each_call(self, tmp_path):
        """Without reports, each call's size is the context the session counted just before it."""
        log = tmp_path / "s.jsonl"
        expected, compacted = write_log(log)
        series = request_series(read_events(log), get_tokenizer())
        assert series.sizes == expected
        assert series.reported == [False] * len(expected)
        assert series.compactions == compacted
        assert 0 < compacted[0] < len(expected)

    def test_a_turn_report_wins_and_a_summary_report_does_not(self, tmp_path):
        """A ``turn`` usage report gives that call's size; a ``summary`` report is not a call's."""
        log = tmp_path / "s.jsonl"
        expected, _ = write_log(log, usage_at=2)
        series = request_series(read_events(log), get_tokenizer())
        assert series.sizes[2] == 777_777
        assert series.reported_calls == 1
        assert series.reported[2]
        assert series.sizes[:2] == expected[:2]
        assert series.sizes[3:] == expected[3:]

    def test_a_mixed_series_is_drawn_in_one_scale(self, tmp_path):
        """Counted sizes are scaled by the reported/counted ratio before one line joins them."""
        log = tmp_path / "s.jsonl"
        expected, _ = write_log(log, usage_at=2)
        series = request_series(read_events(log), get_tokenizer())
        scale = 777_777 / expected[2]
        assert series.scale() == pytest.approx(scale)
        drawn = series.plotted()
        assert drawn[2] == 777_777
        assert drawn[3] == round(expected[3] * scale)
        assert drawn[0] == round(expected[0] * scale)

    def test_one_source_is_drawn_as_it_is(self, tmp_path):
        """A series counted throughout is drawn unscaled."""
        log = tmp_path / "s.jsonl"
        expected, _ = write_log(log)
        series = request_series(read_events(log), get_tokenizer())
        assert series.scale() is None
        assert series.plotted() == expected


class TestPlotCommand:
    def test_writes_a_png_and_says_what_it_drew(self, tmp_path):
        """--plot writes a PNG and one line: calls, reports, compactions, peak, window."""
        pytest.importorskip("matplotlib")
        log, png = tmp_path / "s.jsonl", tmp_path / "out" / "r.png"
        expected, compacted = write_log(log)
        done = run_cli("log", log, "--plot", png, "--window", "50000")
        assert done.returncode == 0, done.stderr
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"{len(expected)} model calls (0 from usage/report)" in done.stdout
        assert f"{len(compacted)} compactions, peak {max(expected):,} tokens" in done.stdout
        figures = json.loads(run_cli("log", log, "--plot", png, "--json").stdout)
        assert figures["model_calls"] == len(expected)
        assert figures["window"] == 128_000

    @pytest.mark.parametrize(
        ("setup", "args", "message"),
        [
            ("no-charts", (), "--plot needs matplotlib"),
            ("no-calls", (), "holds no model call"),
            ("ok", ("--window", "0"), "--window"),
        ],
    )
    def test_failures_are_one_line(self, tmp_path, monkeypatch, setup, args, message):
        """No matplotlib, a log with no model call, a bad window: exit 2, one error line."""
        log = tmp_path / "s.jsonl"
        if setup == "no-calls":
            with Session(log) as session:
                session.append(Message(role="user", content="hello"))
        else:
            write_log(log)
        if setup == "no-charts":
            monkeypatch.setattr(log_plot, "charts_available", lambda: False)
        done = run_cli("log", log, "--plot", tmp_path / "r.png", *args)
        assert done.returncode == 2
        assert "Traceback" not in done.stderr
        # One error line (argparse prints its usage above a bad option's line).
        assert message in done.stderr.strip().splitlines()[-1]
        assert not (tmp_path / "r.png").exists()
