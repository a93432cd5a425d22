from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.replay import real_transcripts
from benchmarks.report.results_report import (
    BenchConfig,
    read_peers,
    render_markdown,
    replay_all,
    reread,
    run_bench,
    write_report,
)

# One short real transcript, as `bench --quick` replays (with every shared transcript this
# module's two runs cost 400 s of CPU; no test here reads the real replays' figures).
CONFIG = BenchConfig(
    ((3, 0),),
    6_000,
    (200,),
    "synthetic-t3-s0",
    quick=True,
    quality_transcripts=1,
    real_sessions=real_transcripts.QUICK_SESSIONS,
    scale_min_timed=0,
)


def fake_peers(path: Path, results: dict[str, Any]) -> Path:
    b = next(r for r in results["runs"] if r["strategy"] == "B")
    metrics = {
        "summed_input_tokens": b["summed_input_tokens"] * 2,
        "final_input_tokens": 100,
        "peak_input_tokens": 200,
        "rewrites": 3,
        "prompt_tokens": [100, 200, 150],
        "unfinished_total": 3,
        "unfinished_at_latest_status": 1,
        "todo_retention_rate": 0.5,
        "first_request_kept": False,
        "cache_hit_rate": {"deepseek": 0.5, "openai": 0.4, "anthropic": 0.3, "vllm": 0.6},
    }
    records = [
        {
            "peer": "langchain",
            "variant": "summarization",
            "summarizer": "copy",
            "session": "synthetic-t3-s0",
            "status": "ok",
            "metrics": metrics,
        },
        {
            "peer": "openhands",
            "variant": "condenser",
            "summarizer": "copy",
            "session": "synthetic-t3-s0",
            "status": "skipped",
            "reason": "no Python 3.12",
        },
    ]
    path.write_text(json.dumps({"format": "context-harness/peers", "records": records}))
    return path


@pytest.fixture(scope="module")
def results():
    return run_bench(CONFIG)


class TestReadPeers:
    def test_missing_file_says_why(self, tmp_path):
        """A missing peers file is reported as unavailable, with the path."""
        got = read_peers(tmp_path / "peers.json")
        assert got["available"] is False
        assert "not found" in got["reason"]

    @pytest.mark.parametrize(
        ("text", "match"), [("{not json", "not valid JSON"), ('{"x": 1}', "no records")]
    )
    def test_bad_files(self, tmp_path, text, match):
        """A malformed peers file is unavailable and says what is wrong."""
        path = tmp_path / "peers.json"
        path.write_text(text)
        assert match in read_peers(path)["reason"]


class TestReport:
    def test_peers_appear_next_to_ours(self, tmp_path, results):
        """A peer that ran gets rows in every table; a skipped one shows its reason."""
        results = {**results, "peers": read_peers(fake_peers(tmp_path / "p.json", results))}
        text = render_markdown(results, [])
        assert "langchain/summarization (copy)" in text
        assert "| 50.0% |" in text  # B saves half against a peer that sends twice as much
        assert "skipped: no Python 3.12" in text
        assert "1/3 (end)" in text
        assert "### Peers (their sessions pooled)" in text
        assert "- langchain/summarization (copy): B  50.0%" in text

    def test_charts_skipped_without_matplotlib(self, tmp_path, results, monkeypatch):
        """Without matplotlib the report is written and says why there are no charts."""
        monkeypatch.setitem(sys.modules, "matplotlib", None)
        paths = write_report(dict(results), tmp_path)
        assert set(paths) == {"results", "report"}
        assert "Charts skipped: matplotlib is not installed" in paths["report"].read_text()
        assert not list(tmp_path.glob("*.png"))

    def test_reread_refreshes_peers(self, tmp_path, results, monkeypatch):
        """Rereading loads results.json and replaces the peers with the file given."""
        monkeypatch.setitem(sys.modules, "matplotlib", None)
        write_report(dict(results), tmp_path)
        again = reread(tmp_path, fake_peers(tmp_path / "p.json", results))
        assert again["peers"]["available"] is True
        assert again["runs"] == json.loads(json.dumps(results["runs"]))

    def test_reread_rejects_other_json(self, tmp_path):
        """A results.json of another kind is refused."""
        (tmp_path / "results.json").write_text('{"format": "x"}')
        with pytest.raises(ValueError, match="not a context-harness/bench file"):
            reread(tmp_path, None)


class TestParallelRuns:
    def test_jobs_give_the_same_figures(self, results):
        """Replaying in two processes gives every run's figures as one process does.

        `jobs` reaches only the replays (`replay_all`), so only they run again: the probes, the
        real replay and the throughput sizes of a second whole bench run did not depend on it.
        """
        parallel = {"runs": replay_all(CONFIG, lambda _line: None, 2)}

        def figures(res):
            return [{k: v for k, v in r.items() if k != "seconds"} for r in res["runs"]]

        assert figures(parallel) == figures(results)
        assert {r["strategy"] for r in parallel["runs"]} >= {"B", "B:blind", "A:blind"}
