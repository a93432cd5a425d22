"""The replayer drives OpenAISummarizer against the loopback stand-in model."""

from __future__ import annotations

import pytest

from benchmarks.replay.summary_cache import SummaryCacheReport, main, summary_cache_run
from harness.simulation import DeepSeekCache
from harness.testing import Reply


@pytest.fixture(scope="module")
def report() -> SummaryCacheReport:
    return summary_cache_run(turns=3, seed=0, window=12_000)


class TestSummaryCacheRun:
    def test_every_compaction_is_a_used_summary_call(self, report: SummaryCacheReport) -> None:
        """Each compaction made one summary call, and the stand-in's answers were used."""
        assert report.compactions >= 1
        assert len(report.calls) == report.compactions
        assert report.outcomes == ("ok",) * report.compactions
        assert report.retention == 1.0

    def test_deepseek_serves_all_but_the_new_tokens(self, report: SummaryCacheReport) -> None:
        """Under DeepSeek's 64-token units a summary call hits its ideal, rounded down."""
        for call in report.calls:
            assert call.ideal <= call.prompt_tokens
            assert call.ideal - 64 < call.hits["deepseek"] <= call.ideal
        assert 0 < report.hit_share <= report.ideal_share < 1
        assert report.hit_tokens / report.ideal_tokens > 0.99

    def test_coarser_units_hit_less(self) -> None:
        """A 1024-token unit serves no more than the 64-token unit, on the same replay."""
        coarse = summary_cache_run(turns=3, seed=0, window=12_000, cache=DeepSeekCache(unit=1024))
        fine = summary_cache_run(turns=3, seed=0, window=12_000)
        assert [c.prompt_tokens for c in coarse.calls] == [c.prompt_tokens for c in fine.calls]
        assert coarse.hit_tokens <= fine.hit_tokens
        assert all(c.hits["deepseek"] % 1024 == 0 for c in coarse.calls)

    def test_failing_model_still_keeps_every_task(self) -> None:
        """A stand-in that always fails: every compaction falls back, no task is lost."""
        failing = summary_cache_run(turns=3, seed=0, window=12_000, script=Reply(status=400))
        assert failing.compactions >= 1
        assert all("HTTP 400" in o for o in failing.outcomes)
        assert failing.retention == 1.0

    def test_main_prints_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`python -m benchmarks.replay.summary_cache` prints the figures as JSON."""
        assert main(["--turns", "2", "--window", "8000"]) == 0
        out = capsys.readouterr().out
        assert '"cache_model": "deepseek"' in out
        assert '"hit_share"' in out
