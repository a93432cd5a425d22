"""`harness bench --quick` end to end: the report and the JSON exist and agree."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

pytestmark = pytest.mark.slow  # `harness bench --quick` runs the whole benchmark once

MODELS = ("deepseek", "openai", "anthropic", "vllm")
CHECKOUT = Path(__file__).resolve().parents[2]
COMMITTED = CHECKOUT / "benchmarks" / "results"


def results_state() -> str | None:
    """`git status` of the committed results, plus their bytes' digest (None outside a repo)."""
    if shutil.which("git") is None:
        return None
    done = subprocess.run(
        ["git", "status", "--porcelain", "--", str(COMMITTED)],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        return None
    stamps = sorted((p.name, p.stat().st_mtime_ns) for p in COMMITTED.iterdir())
    return done.stdout + repr(stamps)


@pytest.fixture(scope="module")
def quick_run() -> Iterator[tuple[Path, str | None, str | None]]:
    before = results_state()
    done = subprocess.run(
        [sys.executable, "-m", "harness", "bench", "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=CHECKOUT,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("out: "))
    out = Path(line.removeprefix("out: "))
    yield out, before, results_state()
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def bench(quick_run: tuple[Path, str | None, str | None]) -> Path:
    return quick_run[0]


def test_quick_run_leaves_committed_results_alone(quick_run):
    """`bench --quick` writes to a fresh folder it prints; benchmarks/results stays untouched."""
    out, before, after = quick_run
    assert not out.resolve().is_relative_to(COMMITTED.resolve())
    assert (out / "results.json").is_file()
    if before is None:
        pytest.skip("not a git checkout")
    assert after == before


@pytest.fixture(scope="module")
def results(bench: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((bench / "results.json").read_text(encoding="utf-8"))
    return loaded


class TestBenchQuick:
    def test_writes_report_and_json(self, bench):
        """The run writes results.json and report.md with every section."""
        report = (bench / "report.md").read_text(encoding="utf-8")
        for heading in (
            "## Token savings",
            "## Unfinished-todo retention",
            "## Prefix-cache hit rate",
            "## Throughput and scaling",
            "## Prices",
            "## Cost, input and retention per session",
            "## Gap to the ideal hit rate, by cause",
            "## Cache model against real usage",
        ):
            assert heading in report

    def test_every_strategy_on_every_session(self, results):
        """Each strategy ran on each session, with at least one model call."""
        sessions = {r["session"] for r in results["runs"]}
        strategies = set(results["strategies"]) | {"B:blind", "A:blind", "B:llm"}
        assert {(r["strategy"], r["session"]) for r in results["runs"]} == {
            (s, n) for s in strategies for n in sessions
        }
        assert all(r["requests"] > 0 for r in results["runs"])

    def test_b_keeps_every_unfinished_todo(self, results):
        """B compacted and kept 100% of unfinished todos at every check."""
        for r in results["runs"]:
            if r["strategy"] == "B":
                assert r["compactions"] >= 1
                assert r["retention"]["expected"] > 0
                assert r["retention"]["kept"] == r["retention"]["expected"]
                assert r["request_retention"] == 1.0

    def test_hits_bounded(self, results):
        """Per request, every model's hit is at most the ideal, itself at most the prompt."""
        for r in results["runs"]:
            per = r["per_request"]
            for i, prompt in enumerate(per["prompt_tokens"]):
                assert 0 <= per["ideal"][i] <= prompt
                for m in MODELS:
                    assert 0 <= per["hits"][m][i] <= per["ideal"][i]

    def test_totals_match_series(self, results):
        """Summed figures equal the sums of the per-request series."""
        for r in results["runs"]:
            per = r["per_request"]
            assert r["summed_input_tokens"] == sum(per["prompt_tokens"])
            assert r["ideal_hit_tokens"] == sum(per["ideal"])
            for m in MODELS:
                assert r["cache_hit_tokens"][m] == sum(per["hits"][m])
            assert r["compactions"] == len(per["compacted"])

    def test_compaction_saves_against_baseline(self, results):
        """Every compacting strategy saves tokens; the summary agrees with the runs."""
        pooled = results["summary"]["strategies"]
        assert pooled["none"]["savings_vs_baseline"] == 0
        for name in ("A", "B", "C"):
            assert pooled[name]["savings_vs_baseline"] > 0

    def test_report_quotes_the_json(self, bench, results):
        """The headline's retention for B is the JSON's figure."""
        b = results["summary"]["strategies"]["B"]
        kept, expected = b["retention_counts"]
        report = (bench / "report.md").read_text(encoding="utf-8")
        assert f"B 100.0% ({kept}/{expected})" in report

    def test_charts_or_a_reason(self, bench, results):
        """With matplotlib the PNGs exist; without, the report says why they are missing."""
        report = (bench / "report.md").read_text(encoding="utf-8")
        if importlib.util.find_spec("matplotlib") is None:
            assert "Charts skipped" in report
            return
        for name in (
            "context_tokens.png",
            "cache_hit_rate.png",
            "cache_hit_bars.png",
            "retention.png",
            "cost.png",
            "input_per_call.png",
        ):
            png = bench / name
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert f"]({name})" in report

    def test_every_run_priced_at_the_matched_budget(self, results):
        """Each run is priced under the three providers; fixed + messages is its summed input."""
        comparison = results["comparison"]
        assert comparison["budget"] == results["config"]["budget"] == 9_600
        # Generated sessions' runs, and the real transcripts replayed the same way.
        real = [r for r in results["real_replay"].get("records") or () if "per_request" in r]
        runs = {(r["strategy"], r["session"]): r for r in [*results["runs"], *real]}
        for session, rows in comparison["sessions"].items():
            for row in rows:
                # A peer row is priced from the peer's own record, at the budget it ran at (a
                # quick bench reuses the committed peers' records: labelled, not compared).
                if row["kind"] != "peer":
                    assert row["matched"]
                    run = runs[(row["name"], session)]
                    assert row["fixed"] + row["messages"] == run["summed_input_tokens"]
                assert set(row["cost"]) == {"deepseek", "openai", "anthropic"}
                assert all(c["usd"] > 0 for c in row["cost"].values())
        b = next(r for r in comparison["sessions"]["synthetic-t4-s0"] if r["name"] == "B")
        assert b["every_call"] == 1.0

    def test_peak_request_holds_the_budget_after_each_compaction(self, results):
        """Right after a compaction, B's whole request is below the budget it triggered at."""
        budget = results["config"]["budget"]
        b = next(r for r in results["runs"] if r["strategy"] == "B")
        prompts = b["per_request"]["prompt_tokens"]
        assert b["per_request"]["compacted"]
        for i in b["per_request"]["compacted"]:
            assert prompts[i] < budget

    def test_report_only_rewrites_from_json(self, bench):
        """--report-only re-renders the report from results.json without running anything."""
        (bench / "report.md").unlink()
        # In this process (see cli_runner): the quick run above is the one run as a user runs it.
        done = run_cli("bench", "--report-only", "--out", bench)
        assert done.returncode == 0, done.stderr
        assert "## Token savings" in (bench / "report.md").read_text(encoding="utf-8")


def test_quick_run_times_each_throughput_size_once(results: dict[str, Any]) -> None:
    """A smoke run measures every quick size in one round (the full run's rounds cost 7 s)."""
    sizes = results["config"]["scale_sizes"]
    assert [(p["events"], p["rounds"]) for p in results["throughput"]] == [(n, 1) for n in sizes]
    assert results["config"]["scale_min_timed"] == 0


def test_checkpoint_probes_in_results_and_report(bench: Path, results: dict[str, Any]) -> None:
    """The quick run probes every compaction; the report's table quotes the JSON's scores."""
    quality = results["checkpoint_quality"]
    report = (bench / "report.md").read_text(encoding="utf-8")
    assert "## Checkpoint probes" in report
    for name in ("extractive", "openai"):
        generated = quality["scores"][name]["generated"]
        assert generated["compactions"] >= 1
        assert generated["score"] == 1.0, generated["failures"]
        assert f"| {name} | generated | {generated['compactions']} | 100.0% |" in report


def test_real_transcripts_replayed_or_said_missing(bench: Path, results: dict[str, Any]) -> None:
    """The quick run replays the short real transcript under every run, or says it is absent."""
    real = results["real_replay"]
    report = (bench / "report.md").read_text(encoding="utf-8")
    assert "## Real transcripts under every strategy" in report
    assert real["budget"] == results["config"]["budget"]
    if not real["records"]:
        assert real["missing"]
        assert "Skipped:" in report
        return
    runs = {r["strategy"] for r in real["records"]}
    assert runs == set(results["strategies"]) | {"B:blind", "A:blind", "B:llm"}
    assert all(r["session"].startswith("real-") for r in real["records"])


def test_every_record_prices_its_summary_calls(results: dict[str, Any]) -> None:
    """Every record says its summary calls; only B:llm makes any, one per compaction.

    Its cost with them exceeds its cost without; every other run's is the same.
    """
    records = [*results["runs"], *results["real_replay"]["records"]]
    assert records
    for r in records:
        for field in ("summary_calls", "summary_input_tokens", "summary_output_tokens"):
            assert field in r, (r["strategy"], field)
        if r["strategy"] != "B:llm":
            assert r["summary_calls"] == 0
    for r in results["runs"]:
        if r["strategy"] == "B:llm":
            assert r["summary_calls"] == r["compactions"] > 0
    rows = [row for rows in results["comparison"]["sessions"].values() for row in rows]
    for row in rows:
        for name, cost in row["cost"].items():
            without = row["cost_without_summaries"][name]["usd"]
            assert (cost["usd"] > without) == (row["summary_calls"] > 0)
